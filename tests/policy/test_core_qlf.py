"""Sentinel's Prolog core loads from its precompiled ``.qlf`` (built at install, policy/core_qlf.py) when they
are the ones built, and from source otherwise with the same answers: a source edited after the build, a
``.qlf`` missing, truncated, garbage or of another SWI-Prolog, no manifest. Nothing at run time writes a
``.qlf``, and a ``.qlf`` the manifest does not vouch for is never loaded (SWI-Prolog's own look-up beside a
source loaded one whose time was newer, and recompiled one into the package where it could write). Real
SWI-Prolog: the rulebase rehearsal child (every gateway start and check) and the engine (in a child process:
one per process), each on a copy of the package's Prolog directory."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sentinel_mcp.policy import core_qlf, load_rehearsal
from tests.support.core_copy import core_built
from sentinel_mcp.policy.core_qlf import MANIFEST, MODULES, load_plan

from ..conftest import ROOT

BROKEN = "allow(X) :- foo(.\nallow(read_file) :- true.\n"


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A copy of the package's Prolog directory, its core compiled as an install compiles it."""
    directory = core_built(tmp_path)
    return directory


def rehearse(directory: Path, monkeypatch: pytest.MonkeyPatch, files: list[Path]) -> dict[str, object]:
    """The gateway's rehearsal child (load_rehearsal._spawn) on ``directory``'s core: its whole report."""
    monkeypatch.setattr(load_rehearsal, "SCRIPT", directory / "load_rehearsal.pl")
    monkeypatch.setattr(core_qlf, "PROLOG_DIR", directory)

    async def run() -> tuple[bytes, bytes, int]:
        proc = await load_rehearsal._spawn(files, 60)
        assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
        out, err = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
        proc.stdin.close()
        return out, err, await proc.wait()

    out, err, code = asyncio.run(run())
    assert code == 0, err.decode()
    found: dict[str, object] = json.loads(out)
    return found


@pytest.fixture
def rulebases(tmp_path: Path) -> list[list[Path]]:
    broken = tmp_path / "broken.pl"
    broken.write_text(BROKEN)
    return [[ROOT / "rulebases" / "airline.pl"], [broken]]


def answers(directory: Path, monkeypatch: pytest.MonkeyPatch, rulebases: list[list[Path]]) -> list[object]:
    found = [rehearse(directory, monkeypatch, files) for files in rulebases]
    return [{k: v for k, v in f.items() if k != "core"} for f in found] + [f["core"] for f in found]


def test_rehearsal_loads_the_core_from_qlf_with_the_same_answers(
    built: Path, monkeypatch: pytest.MonkeyPatch, rulebases: list[list[Path]]
) -> None:
    fast = answers(built, monkeypatch, rulebases)
    assert fast[-2:] == ["qlf", "qlf"]
    (built / MANIFEST).unlink()
    slow = answers(built, monkeypatch, rulebases)
    assert slow[-2:] == ["source", "source"]
    assert fast[:-2] == slow[:-2]
    assert any(f["errors"] for f in fast[:-2])  # type: ignore[index]  # the broken one's errors, both ways


def test_a_touched_source_is_still_the_one_built(built: Path) -> None:
    """Content, not times: a checkout's times say nothing (git sets them), and a touch is no edit."""
    later = (built / "sentinel_core.qlf").stat().st_mtime + 100
    for p in built.glob("*.pl"):
        os.utime(p, (later, later))
    files, version = load_plan(built)
    assert version and all(f.endswith(".qlf") for f in files)


def _stale(directory: Path, how: str) -> None:
    if how == "source edited":
        with (directory / "rule_compiler.pl").open("a") as f:
            f.write("\n% edited after the build\n")
    elif how == "source added":
        (directory / "new_part.pl").write_text("% a file the build never saw\n")
    elif how == "qlf missing":
        (directory / "sentinel_rt.qlf").unlink()
    elif how == "qlf truncated":
        data = (directory / "sentinel_core.qlf").read_bytes()
        (directory / "sentinel_core.qlf").write_bytes(data[: len(data) * 9 // 10])
    elif how == "qlf garbage":
        (directory / "code_words.qlf").write_bytes(b"\x00garbage" * 100)
    elif how == "qlf swapped":  # each is a real qlf, of another module
        a, b = (directory / "person_names.qlf").read_bytes(), (directory / "calendar_texts.qlf").read_bytes()
        (directory / "person_names.qlf").write_bytes(b)
        (directory / "calendar_texts.qlf").write_bytes(a)
    elif how == "qlf a link":  # to the same bytes, in a place others could write
        outside = directory.parent / "elsewhere.qlf"
        shutil.copy(directory / "sentinel_core.qlf", outside)
        (directory / "sentinel_core.qlf").unlink()
        (directory / "sentinel_core.qlf").symlink_to(outside)
    elif how == "manifest naming a file outside":
        manifest = json.loads((directory / MANIFEST).read_text())
        manifest["files"]["../elsewhere.qlf"] = manifest["files"]["sentinel_core.qlf"]
        (directory / MANIFEST).write_text(json.dumps(manifest))
    elif how == "manifest garbage":
        (directory / MANIFEST).write_text("{not json")
    elif how == "manifest of another shape":
        (directory / MANIFEST).write_text(json.dumps({"swipl_version": 1, "files": ["sentinel_core.qlf"]}))
    elif how == "no manifest":
        (directory / MANIFEST).unlink()
    else:
        raise AssertionError(how)


STALE = ["source edited", "source added", "qlf missing", "qlf truncated", "qlf garbage", "qlf swapped",
         "qlf a link", "manifest naming a file outside", "manifest garbage", "manifest of another shape",
         "no manifest"]


@pytest.mark.parametrize("how", STALE)
def test_anything_not_built_loads_the_sources_with_the_same_answers(
    built: Path, monkeypatch: pytest.MonkeyPatch, rulebases: list[list[Path]], how: str
) -> None:
    fast = answers(built, monkeypatch, rulebases)
    _stale(built, how)
    before = {p.name: p.read_bytes() for p in built.glob("*.qlf")}
    counted = sum(core_qlf.FALLBACKS.values())
    files, version = load_plan(built)
    assert version == 0 and all(f.endswith(".pl") for f in files)
    assert sum(core_qlf.FALLBACKS.values()) == counted + 1
    slow = answers(built, monkeypatch, rulebases)
    assert slow[-2:] == ["source", "source"]
    assert slow[:-2] == fast[:-2]
    # nothing wrote a qlf: SWI-Prolog's own look-up recompiles a stale one it can write
    assert {p.name: p.read_bytes() for p in built.glob("*.qlf")} == before


LOAD = textwrap.dedent(
    """
    :- initialization(main, main).
    main :-
        current_prolog_flag(argv, [Loader, FilesJson, VersionText]),
        use_module(Loader),
        atom_json_term(FilesJson, Files, []), atom_number(VersionText, Version),
        core_files:load_core(user:Files, Version, How),
        ( catch(sentinel_rt:planted, _, fail) -> Planted = planted ; Planted = clean ),
        sentinel_core:to_json_atom(json([how=How, planted=Planted]), Out),
        format('~w~n', [Out]).
    :- use_module(library(http/json)).
    """
)


def load_in_child(directory: Path, files: list[str], version: int) -> dict[str, str]:
    script = directory.parent / "load.pl"
    script.write_text(LOAD)
    out = subprocess.run(
        ["swipl", "-f", "none", "-q", str(script), "--", str(directory / "core_files.pl"), json.dumps(files),
         str(version)], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    found: dict[str, str] = json.loads(out.stdout.splitlines()[-1])
    return found


@pytest.mark.parametrize("how", ["another SWI-Prolog", "garbage", "truncated", "of another module"])
def test_the_prolog_side_refuses_a_qlf_the_manifest_cannot_see(built: Path, how: str) -> None:
    """Past the manifest: the version it names against this SWI-Prolog, and each qlf's header (format, VM,
    its source) as SWI-Prolog reads it; a load that fails even so reloads every source."""
    files, version = load_plan(built)
    if how == "another SWI-Prolog":
        version += 1
    elif how == "garbage":
        Path(files[2]).write_bytes(b"garbage")
    elif how == "truncated":
        data = Path(files[-1]).read_bytes()
        Path(files[-1]).write_bytes(data[: len(data) // 2])
    else:
        shutil.copy(files[0], files[1])
    assert load_in_child(built, files, version)["how"] == "source"


def test_a_qlf_beside_a_source_is_never_looked_for(built: Path) -> None:
    """No manifest, and a sentinel_rt.qlf newer than its source but compiled from another text (one with a
    predicate ``planted``): SWI-Prolog's own look-up loaded it (on main, a use_module(sentinel_rt) inside
    the core did); the core is read from its sources, and the qlf is not rewritten."""
    source = built / "sentinel_rt.pl"
    original = source.read_text()
    source.write_text(original.replace(":- module(sentinel_rt, [", ":- module(sentinel_rt, [planted/0, ", 1)
                      + "\nplanted.\n")
    subprocess.run(["swipl", "-f", "none", "-q", "-g", f"qcompile('{source}')", "-t", "halt"], check=True,
                   capture_output=True, timeout=120)
    source.write_text(original)
    qlf = built / "sentinel_rt.qlf"
    later = source.stat().st_mtime + 100
    os.utime(qlf, (later, later))
    planted = qlf.read_bytes()
    (built / MANIFEST).unlink()
    files, version = load_plan(built)
    assert load_in_child(built, files, version) == {"how": "source", "planted": "clean"}
    assert qlf.read_bytes() == planted


def test_the_plan_names_only_the_package_directory(built: Path) -> None:
    files, _ = load_plan(built)
    assert [Path(f).parent for f in files] == [built] * len(MODULES)
    assert [Path(f).stem for f in files] == list(MODULES)


ENGINE = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from sentinel_mcp.policy import engine_thread
    from sentinel_mcp.policy.engine import shared_engine

    engine_thread.CORE = Path(sys.argv[1]) / "sentinel_core.pl"

    async def main():
        engine = shared_engine()
        how = await engine.json_query(
            "core_files:core_loaded(H), sentinel_core:to_json_atom(json([h=H]), Out)")
        leaked = await engine.json_query(
            "( predicate_property(user:uc_category(_, _), visible) -> L = yes ; L = no ), "
            "sentinel_core:to_json_atom(json([l=L]), Out)")
        print(how["h"], leaked["l"])

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("fresh", [True, False])
def test_the_engine_loads_the_core_from_qlf_when_built(built: Path, fresh: bool) -> None:
    """The gateway's own engine too; only sentinel_core's exports reach ``user`` (as use_module of it did)."""
    if not fresh:
        _stale(built, "source edited")
    out = subprocess.run([sys.executable, "-c", ENGINE, str(built)], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["qlf" if fresh else "source", "no"]
