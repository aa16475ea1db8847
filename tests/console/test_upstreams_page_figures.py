"""The Upstreams page's shared figures are the owner's.

An upstream's reconnects and last error move with every principal's calls ("connection closed during a
call": someone's call was running when it died) and say what the upstream answered them. A principal other
than the owner sees each upstream it may use, its state, breaker and its own tools; the reconnects and the
last error are the owner's (as /metrics' upstream figures are the operator's).

One real Sentinel over HTTP (the console rig) with an extra upstream whose process exits at once, so it has a
last error and reconnects; signed-in browsers for the pages."""

from __future__ import annotations

import json
import re
import sys

import pytest

from tests.console.console_rig import OWNER_TOKEN, console_config, signed_in
from tests.identity.identity_rig import ALICE, http_sentinel

pytestmark = pytest.mark.timeout(180)

ROW = re.compile(r"<tr><td><code>dead</code></td>(.*?)</tr>", re.S)
CELLS = re.compile(r"<td>(.*?)</td>", re.S)


async def test_reconnects_and_last_error_are_the_owners(tmp_path):
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["mcpServers"]["dead"] = {"command": sys.executable, "args": ["-c", "import sys; sys.exit(3)"]}
    cfg.write_text(json.dumps(body))
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner, signed_in(base, ALICE) as alice:
            owners = CELLS.findall(ROW.search(await owner.page("/console/upstreams")).group(1))
            assert owners[-1].strip(), owners  # the owner reads its last error
            alices = CELLS.findall(ROW.search(await alice.page("/console/upstreams")).group(1))
            state, reconnects, last_error = alices[0], alices[3], alices[-1]
            assert state == owners[0]  # its state is hers to read: her calls to it depend on it
            assert not last_error.strip() and not re.search(r"\d", reconnects), alices
