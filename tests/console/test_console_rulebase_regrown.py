"""A rulebase file replaced after it loaded, by a FIFO or by a file past the loader's bound
(``clause_bounds.MAX_FILE_BYTES``): the loader refuses such a set, but what shows the files in force read them
whole with no bound, each from its path: the console's policy page (its text and the key of its remembered
check) and the ``sentinel://rulebase`` resource. A FIFO held each of them waiting for a writer for ever; a
2 GB file was read whole. Now each shows the file as unreadable, naming why, and answers."""

from __future__ import annotations

import html
import json
import os

import pytest
from tests.console.console_rig import OWNER_TOKEN, console_config, http_sentinel, mcp_client, signed_in

from sentinel_mcp.policy.clause_bounds import MAX_FILE_BYTES

pytestmark = pytest.mark.timeout(240)


def _fifo(path):
    os.mkfifo(path)


def _huge(path):
    with open(path, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk spent; just past the bound (2 GB reads the same)


@pytest.mark.parametrize("replace,why", [(_fifo, "not a regular file"),
                                         (_huge, f"more than {MAX_FILE_BYTES:,}")])
async def test_a_rulebase_file_replaced_after_load_is_shown_unreadable_not_read_whole(tmp_path, replace, why):
    cfg = console_config(tmp_path)
    extra = tmp_path / "extra.pl"
    extra.write_text("fact(extra_marker/1).\n")
    body = json.loads(cfg.read_text())
    body["sentinel"]["rulebases"].append(str(extra))
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _):
        extra.unlink()
        replace(extra)
        async with signed_in(base, OWNER_TOKEN) as owner:
            page = html.unescape(await owner.page("/console/policy?file=extra.pl"))
        assert "extra.pl" in page and why in page, page[-3000:]
        assert len(page) < MAX_FILE_BYTES // 4
        async with mcp_client(base, OWNER_TOKEN) as c:
            shown = str(await c.read_resource("sentinel://rulebase"))
        assert f"{extra}: unreadable" in shown and why in shown, shown[-2000:]
        assert len(shown) < MAX_FILE_BYTES // 4
