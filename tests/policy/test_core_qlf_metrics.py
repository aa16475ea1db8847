"""Why the Prolog core was loaded from source instead of its built ``.qlf`` (policy/core_qlf.py) is on the
operator's /metrics: ``sentinel_core_qlf_fallbacks_total`` by reason, one series per reason of a fixed set
(zero included), never a file's name or other text read from the directory (the manifest names the files,
and a manifest the plan refuses is not the build's word). A person other than the operator does not read it.

A real Sentinel over HTTP (the identity rig's bookings server) whose core is a copy of the package's Prolog
directory, built as an install builds it, then left as built or with one source edited."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from sentinel_mcp.policy import core_qlf
from tests.support.core_copy import core_built
from sentinel_mcp.policy.core_qlf import MANIFEST, REASONS, load_plan

from ..identity.identity_rig import (
    BOB, OWNER_TOKEN, env_for, free_port, stop_process, wait_http, write_config,
)
from .test_core_qlf import STALE, _stale

pytestmark = pytest.mark.timeout(240)
SERVE = Path(__file__).with_name("core_copy_serve.py")
SERIES = re.compile(r'^sentinel_core_qlf_fallbacks_total\{reason="([^"]*)"\} (\d+)$', re.M)


@pytest.fixture
def built(tmp_path: Path) -> Path:
    directory = core_built(tmp_path)
    return directory


@pytest.mark.parametrize("how", STALE)
def test_every_fallback_counts_under_a_reason_of_the_fixed_set(built: Path, how: str) -> None:
    _stale(built, how)
    before = dict(core_qlf.FALLBACKS)
    load_plan(built)
    moved = {k for k, n in core_qlf.FALLBACKS.items() if n != before.get(k, 0)}
    assert len(moved) == 1 and moved <= set(REASONS), moved


def test_a_name_the_manifest_vouches_for_is_no_reason(built: Path) -> None:
    """A file the manifest names, changed: its name (the directory's text) goes to the log, not to a label."""
    name = 'x"} 1\nsentinel_forged_total 9\n.pl'
    (built / name).write_text("% a source with a name made to be a label\n")
    manifest = json.loads((built / MANIFEST).read_text())
    manifest["files"][name] = "0" * 64
    (built / MANIFEST).write_text(json.dumps(manifest))
    before = dict(core_qlf.FALLBACKS)
    load_plan(built)
    assert {k: n - before.get(k, 0) for k, n in core_qlf.FALLBACKS.items() if n != before.get(k, 0)} == {
        "file changed": 1}


@contextlib.contextmanager
def serving(core: Path, tmp_path: Path):
    cfg = write_config(tmp_path, http={"token": OWNER_TOKEN})
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVE), str(core), "-c", str(cfg), "serve", "--http",
                             f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, env=env_for(cfg))
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(proc)


@pytest.mark.parametrize("edited", [False, True, "another SWI-Prolog"])
def test_the_operator_reads_why_the_core_came_from_source(built: Path, tmp_path: Path,
                                                          edited: bool | str) -> None:
    if edited == "another SWI-Prolog":  # the plan takes the .qlf; SWI-Prolog refuses them (core_files.pl)
        manifest = json.loads((built / MANIFEST).read_text())
        manifest["swipl_version"] += 1
        (built / MANIFEST).write_text(json.dumps(manifest))
    elif edited:
        _stale(built, "source edited")
    with serving(built, tmp_path) as base:
        owner = httpx2.get(f"{base}/metrics", headers={"Authorization": f"Bearer {OWNER_TOKEN}"}, timeout=30)
        bob = httpx2.get(f"{base}/metrics", headers={"Authorization": f"Bearer {BOB}"}, timeout=30)
    assert owner.status_code == 200 and bob.status_code == 200
    found = {reason: int(n) for reason, n in SERIES.findall(owner.text)}
    assert list(found) == list(REASONS), owner.text  # every reason, and nothing else
    assert "# TYPE sentinel_core_qlf_fallbacks_total counter" in owner.text
    # the engine and the rehearsal at start planned from the edited copy; the built one, never from source
    if edited == "another SWI-Prolog":  # both were refused the .qlf by SWI-Prolog itself
        assert found["qlf refused by SWI-Prolog"] >= 2 and sum(found.values()) == found[
            "qlf refused by SWI-Prolog"], found
    else:
        assert (found["file changed"] >= 2) if edited else (found["file changed"] == 0)
        assert sum(found.values()) == found["file changed"]
    assert "rule_compiler" not in owner.text
    assert "sentinel_core_qlf" not in bob.text
