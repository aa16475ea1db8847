"""The gateway's engine starts SWI-Prolog without the user's init file, as the rulebase rehearsal and the
query worker do (``swipl -f none``): pyswip starts it with ``PL_initialise`` and no ``-f``, so
``~/.config/swi-prolog/init.pl`` (``$XDG_CONFIG_HOME``) or ``~/.swiplrc`` ran inside the gateway's engine: a
rulebase could load there otherwise than in the rehearsal that checked it (an init file's flags, expansions,
operators), and code no one reviewed ran in the guard's process. Each start is a real child process with the
real SWI-Prolog."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("swipl") is None, reason="needs swipl")

CHILD = """
import asyncio, json
from sentinel_mcp.policy.engine import shared_engine
async def main():
    row = await shared_engine().run(lambda p: [str(r["X"]) for r in p.query("X is 40 + 2")])
    goal = "(current_prolog_flag(sentinel_planted, V) -> true ; V = none)"
    flag = await shared_engine().run(lambda p: [str(r["V"]) for r in p.query(goal)])
    print(json.dumps({"row": row, "flag": flag}))
asyncio.run(main())
"""


@pytest.mark.parametrize("where", ["xdg", "home_config", "swiplrc"])
def test_the_users_init_file_never_runs_in_the_engine(tmp_path: Path, where: str) -> None:
    home = tmp_path / "home"
    marker = tmp_path / "ran"
    init = {
        "xdg": tmp_path / "xdg" / "swi-prolog" / "init.pl",
        "home_config": home / ".config" / "swi-prolog" / "init.pl",
        "swiplrc": home / ".swiplrc",
    }[where]
    init.parent.mkdir(parents=True, exist_ok=True)
    init.write_text(
        f":- open({json.dumps(str(marker))}, write, S), close(S).\n"
        ":- create_prolog_flag(sentinel_planted, yes, []).\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CONFIG_HOME", "SENTINEL_SHARED_FILES")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    if where == "xdg":
        env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    p = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out == {"row": ["42"], "flag": ["none"]}
    assert not marker.exists()


def test_a_plain_swipl_does_run_it(tmp_path: Path) -> None:
    """The planted file is live: SWI-Prolog started as pyswip starts it, without ``-f none``, runs it (else
    the test above could pass for a file SWI-Prolog never looks at)."""
    home, marker = tmp_path / "home", tmp_path / "ran"
    init = home / ".config" / "swi-prolog" / "init.pl"
    init.parent.mkdir(parents=True)
    init.write_text(f":- open({json.dumps(str(marker))}, write, S), close(S).\n")
    env = {k: v for k, v in os.environ.items() if k != "XDG_CONFIG_HOME"}
    env["HOME"] = str(home)
    subprocess.run(["swipl", "-q", "-g", "halt"], env=env, cwd=tmp_path, capture_output=True, timeout=60,
                   check=True)
    assert marker.exists()


async def test_the_users_init_file_never_runs_in_the_query_worker_or_the_rehearsal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other two children that load rulebases: the rehearsal (``swipl -f none``) and the query worker
    (it ran ``swipl ... query_worker.pl`` with no ``-f``: the init file ran there before the fix)."""
    from sentinel_mcp.paths import RULEBASES_DIR
    from sentinel_mcp.policy.load_rehearsal import rehearse
    from sentinel_mcp.policy.query_worker import QueryWorker

    home, marker = tmp_path / "home", tmp_path / "ran"
    init = home / ".config" / "swi-prolog" / "init.pl"
    init.parent.mkdir(parents=True)
    init.write_text(f":- open({json.dumps(str(marker))}, write, S), close(S).\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    async def dump() -> str:
        return ""

    qw = QueryWorker()
    try:
        out = await qw.query(rb_module="rb_init", rb_version="1",
                             rb_files=[str(RULEBASES_DIR / "default.pl")], session_module="s_init",
                             generation=1, dump_session=dump, goal="X = 1")
    finally:
        await qw.close()
    assert out["status"] == "proved", out
    verdict = await rehearse([RULEBASES_DIR / "default.pl"], key=None)
    assert not verdict.get("errors"), verdict
    assert not marker.exists()
