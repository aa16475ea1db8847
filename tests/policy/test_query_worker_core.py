"""The query worker (policy/query_worker.py, prolog/query_worker.pl) loads Sentinel's core from its built
``.qlf`` when the manifest vouches for them and this SWI-Prolog may read them, and from source otherwise: a
source edited or a ``.qlf`` replaced since the build (refused by the plan, policy/core_qlf.py), a manifest of
another SWI-Prolog or naming a ``.qlf`` re-hashed after it was swapped, garbled or cut short (refused by
core_files.pl, past the manifest). It answers the same either way, and writes no ``.qlf``. Real swipl: the
worker as the gateway starts it, on a copy of the package's Prolog directory; its ``ping`` says how it loaded
the core."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy import core_qlf, load_rehearsal, query_worker
from tests.support.core_copy import core_built
from sentinel_mcp.policy.core_qlf import MANIFEST
from sentinel_mcp.policy.query_worker import QueryWorker

from .test_core_qlf import _stale

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the package's Prolog directory built as an install builds it, the worker's core from it."""
    directory = core_built(tmp_path)
    monkeypatch.setattr(core_qlf, "PROLOG_DIR", directory)
    monkeypatch.setattr(query_worker, "WORKER", directory / "query_worker.pl")
    return directory


async def _worker_answers(directory: Path) -> tuple[str, dict]:
    """How the worker loaded its core, and its answer to a goal over the default rulebase."""
    async def dump() -> str:
        return ""

    qw = QueryWorker()
    try:
        out = await qw.query(rb_module="rb_core", rb_version="1",
                             rb_files=[str(RULEBASES_DIR / "default.pl")],
                             session_module="s_core", generation=1, dump_session=dump,
                             goal="X = 1, Y = [a]")
        assert qw._worker is not None
        ping = await qw._request(qw._worker, {"op": "ping"}, 30)
    finally:
        await qw.close()
    assert ping.get("ok") is True, ping
    out.pop("goal", None)  # the goal as read back: its variables' numbers are the process's own
    return str(ping.get("core")), out


def _rehash(directory: Path, name: str, version_step: int = 0) -> None:
    """The manifest rewritten to vouch for ``name`` as it is now (one who could write both did)."""
    manifest = json.loads((directory / MANIFEST).read_text())
    manifest["files"][name] = hashlib.sha256((directory / name).read_bytes()).hexdigest()
    manifest["swipl_version"] += version_step
    (directory / MANIFEST).write_text(json.dumps(manifest))


async def test_the_worker_loads_the_built_qlf(built: Path) -> None:
    how, out = await _worker_answers(built)
    assert how == "qlf"
    assert out["status"] == "proved" and out["solutions"][0]["bindings"] == {"X": 1, "Y": ["a"]}, out


@pytest.mark.parametrize("how", ["source edited", "qlf garbage", "qlf swapped", "qlf missing", "no manifest"])
async def test_a_qlf_the_manifest_refuses_is_not_loaded(built: Path, how: str) -> None:
    _, fast = await _worker_answers(built)
    _stale(built, how)
    before = {p.name: p.read_bytes() for p in built.glob("*.qlf")}
    loaded, slow = await _worker_answers(built)
    assert loaded == "source"
    assert slow == fast
    assert {p.name: p.read_bytes() for p in built.glob("*.qlf")} == before  # nothing wrote a qlf


@pytest.mark.parametrize("how", ["another SWI-Prolog", "swapped", "garbage", "truncated"])
async def test_a_qlf_past_the_manifest_is_refused_by_the_worker_itself(built: Path, how: str) -> None:
    """The manifest vouches for what is there now; the worker's own reading (core_files.pl) refuses it."""
    _, fast = await _worker_answers(built)
    if how == "another SWI-Prolog":
        _rehash(built, "sentinel_core.qlf", version_step=1)
    elif how == "swapped":  # a real qlf, of another module
        shutil.copy(built / "code_words.qlf", built / "person_names.qlf")
        _rehash(built, "person_names.qlf")
    elif how == "garbage":
        (built / "sentinel_rt.qlf").write_bytes(b"\x00garbage" * 100)
        _rehash(built, "sentinel_rt.qlf")
    else:
        data = (built / "sentinel_core.qlf").read_bytes()
        (built / "sentinel_core.qlf").write_bytes(data[: len(data) // 2])
        _rehash(built, "sentinel_core.qlf")
    assert core_qlf.load_plan(built)[0][0].endswith(".qlf")  # the plan is the qlf: the worker refuses them
    before = dict(core_qlf.FALLBACKS)
    loaded, slow = await _worker_answers(built)
    assert loaded == "source"
    assert slow == fast
    # counted for the operator's /metrics under the fixed reason, as the plan's own refusals are
    moved = {k: n - before.get(k, 0) for k, n in core_qlf.FALLBACKS.items() if n != before.get(k, 0)}
    assert moved == {"qlf refused by SWI-Prolog": 1}, moved


async def test_a_qlf_the_worker_loads_counts_no_fallback(built: Path) -> None:
    before = dict(core_qlf.FALLBACKS)
    assert (await _worker_answers(built))[0] == "qlf"
    assert dict(core_qlf.FALLBACKS) == before


async def test_a_qlf_the_rehearsal_child_refuses_is_counted_too(built: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The rulebase rehearsal (every start and check) is the other child told to load the .qlf."""
    monkeypatch.setattr(load_rehearsal, "SCRIPT", built / "load_rehearsal.pl")
    _rehash(built, "sentinel_core.qlf", version_step=1)  # another SWI-Prolog's, by the manifest's word
    before = dict(core_qlf.FALLBACKS)
    found = await load_rehearsal._verdict(await load_rehearsal._spawn([RULEBASES_DIR / "default.pl"], 60), 60)
    assert found["errors"] == [], found
    moved = {k: n - before.get(k, 0) for k, n in core_qlf.FALLBACKS.items() if n != before.get(k, 0)}
    assert moved == {"qlf refused by SWI-Prolog": 1}, moved
