"""Sentinel's own Prolog core precompiled (``.qlf``) at install, loaded from it only while it is the build's.

Loading ``sentinel_core.pl`` and the ~60 files it includes from source costs 1.7 M inferences (~0.28 s of CPU)
in every process that loads it: the gateway's engine, every rulebase rehearsal child (each gateway start, each
check) and the query worker. From ``.qlf`` files, 0.45 M and ~0.1 s (issue 21; benchmarks/README.md, hp-qlf).

Who writes them: the install only. ``build`` compiles each of the core's modules (``MODULES``) beside its
source and writes ``MANIFEST``: the SHA-256 of every ``.pl`` in the directory and of every ``.qlf``, and the
SWI-Prolog version that built them. setup.py's build runs it (a wheel carries them) and ``make bytecode`` for
a checkout. Nothing at run time writes one: the core's files are loaded one by one by their full path
(``prolog/core_files.pl``), never by a name SWI-Prolog would resolve to a ``.qlf`` by itself (its own lookup
compares times and, where it can write, recompiles into the package).

What is loaded: ``load_plan`` hashes the directory's sources and ``.qlf`` files against the manifest; any
difference (a source edited, a ``.qlf`` truncated or replaced, one missing, no manifest) and the plan is the
sources, counted in ``FALLBACKS`` by a reason of a fixed set (``REASONS``: the operator's /metrics shows it)
and logged once. The Prolog side then refuses ``.qlf`` files of another SWI-Prolog (the manifest's version
against its own, and SWI's own reading of each header) and loads the sources instead: a start never fails for
a ``.qlf``. A child told to load the ``.qlf`` says how it loaded the core (the query worker's ping, the
rehearsal's report); one that loaded the sources is counted under ``REFUSED`` (``prolog_refused``). Only
this package's directory is read; rulebases (user files) are always loaded from source, through every check
they had.
"""

from __future__ import annotations

# the standard library only: setup.py's build runs this file before anything it imports is installed

import hashlib
import json
import logging
import os
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path

PROLOG_DIR = Path(__file__).with_name("prolog")
# the core's modules, each after the modules it uses: each is loaded by path before a later one names it, so
# a ``use_module(name)`` inside finds it loaded and SWI-Prolog never looks for a .qlf of its own accord
MODULES = (
    "unicode_categories", "code_words", "person_key_letters", "calendar_texts", "person_names", "sentinel_rt",
    "sentinel_core",
)
MANIFEST = "core_qlf.json"
LOADER = "core_files.pl"
# bytes: the build writes a manifest of ~8 KB, files of at most ~170 KB; a larger one is not the build's (and
# is not read whole: a sparse file of terabytes would be)
MANIFEST_MOST, FILE_MOST = 1 << 20, 16 << 20
# why a plan fell back to the sources: a fixed set, so /metrics may label by it (a file's name goes to the log
# alone: the manifest names files, and what it names is not the build's word once the plan falls back)
REASONS = (
    "no manifest", "manifest not a plain file", "manifest unreadable", "sources added or removed",
    "file not a plain file", "file unreadable", "file changed", "qlf refused by SWI-Prolog",
)
REFUSED = REASONS[-1]  # the plan was the .qlf; the Prolog side (core_files.pl) loaded the sources
FALLBACKS: Counter[str] = Counter()  # plans that fell back to the sources, by reason (one of REASONS)
log = logging.getLogger(__name__)


def load_plan(directory: Path | None = None) -> tuple[list[str], int]:
    """The core's files to load in order, and the SWI-Prolog version their ``.qlf`` need (0: the sources)."""
    directory = directory or PROLOG_DIR
    why, name, version = _built(directory)
    if why is None:
        return [str(directory / f"{m}.qlf") for m in MODULES], version
    if why != "no manifest" and why not in FALLBACKS:  # a checkout never built is the ordinary case, no news
        log.info("Sentinel's Prolog core loads from source: %s%s", why, f" ({name!r})" if name else "")
    FALLBACKS[why] += 1
    return [str(directory / f"{m}.pl") for m in MODULES], 0


def core_arguments(directory: Path | None = None) -> list[str]:
    """``load_plan`` as a child's last two arguments (core_files:load_core/3: files in JSON, version)."""
    files, version = load_plan(directory)
    return [json.dumps(files), str(version)]


def prolog_refused(arguments: list[str], how: object) -> None:
    """A child given ``arguments`` (``core_arguments``) says it loaded the core ``how`` (core_files.pl: "qlf"
    or "source"): the .qlf planned and not loaded is counted under ``REFUSED`` (logged the first time)."""
    if arguments[-1] == "0" or how == "qlf":
        return
    if not FALLBACKS[REFUSED]:
        log.info("Sentinel's Prolog core loads from source: its .qlf were refused by SWI-Prolog (built by "
                 "another version, or unreadable to it)")
    FALLBACKS[REFUSED] += 1


def _built(directory: Path) -> tuple[str | None, str, int]:
    """Why the directory's ``.qlf`` may not be loaded (None: every file is the build's; else one of
    ``REASONS``), the file it concerns (or ""), and the ``.qlf`` files' version."""
    try:
        text = _plain_bytes(directory / MANIFEST, MANIFEST_MOST)
        if text is None:
            return "manifest not a plain file", "", 0
        manifest = json.loads(text)
        recorded, version = manifest["files"], int(manifest["swipl_version"])
    except FileNotFoundError:
        return "no manifest", "", 0
    # (RecursionError: nested too deep for the parser; OverflowError: a version of Infinity)
    except (OSError, ValueError, KeyError, TypeError, RecursionError, OverflowError):
        return "manifest unreadable", "", 0
    if not isinstance(recorded, dict):
        return "manifest unreadable", "", 0
    if _names(directory) != set(recorded):
        return "sources added or removed", "", 0
    for name in sorted(recorded):
        try:
            data = _plain_bytes(directory / name, FILE_MOST)
            if data is None:
                return "file not a plain file", name, 0
            digest = hashlib.sha256(data).hexdigest()
        except OSError:
            return "file unreadable", name, 0
        if digest != recorded[name]:
            return "file changed", name, 0
    return None, "", version


def _plain_bytes(path: Path, most: int) -> bytes | None:
    """The file's bytes; None if it is not a plain file (a link names a file elsewhere, which others may
    change after the hash; a FIFO's open would wait for a writer forever) or is longer than ``most``. Opened
    once, then looked at: what is read is what was looked at."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode) or seen.st_size > most:
            return None
        data = f.read(seen.st_size + 1)  # (a byte past: one written since is not what was looked at)
    return data if len(data) <= seen.st_size else None


def _names(directory: Path) -> set[str]:
    """What the manifest vouches for: every source in the directory (any may be included), each qlf."""
    return {p.name for p in directory.glob("*.pl")} | {f"{m}.qlf" for m in MODULES}


def build(directory: Path = PROLOG_DIR, swipl: str = "swipl") -> None:
    """Compile the core's modules beside their sources and write the manifest (an install's step, never run
    by the gateway). The old manifest goes first: a build that fails half-way leaves the sources in use."""
    (directory / MANIFEST).unlink(missing_ok=True)
    files = [str(directory / f"{m}.pl") for m in MODULES]
    # one process, the modules in order: each compiled after those it uses are loaded (not compiled into it)
    goal = "forall(member(F, Fs), qcompile(F)), current_prolog_flag(version, V), print(V), nl"
    out = subprocess.run(
        [swipl, "-f", "none", "-q", "-g", f"Fs = {json.dumps(files)}, {goal}", "-t", "halt"],
        capture_output=True, text=True, check=True, timeout=300,
    )
    version = int(out.stdout.split()[-1])
    digests = {n: hashlib.sha256((directory / n).read_bytes()).hexdigest() for n in sorted(_names(directory))}
    manifest = json.dumps({"swipl_version": version, "files": digests}, indent=1, sort_keys=True)
    tmp = directory / f"{MANIFEST}.tmp"
    tmp.write_text(manifest + "\n")
    tmp.replace(directory / MANIFEST)


if __name__ == "__main__":  # python -m sentinel_mcp.policy.core_qlf [directory]
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else PROLOG_DIR)
