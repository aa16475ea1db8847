"""Included rulebase files: ``:- include_rules('bags.pl').`` reads another file as if its text stood there.

What a rulebase includes is settled here, before Prolog reads a byte of it, and handed to the loader as a
table (file, line, name -> path): the loader includes only a declaration this table names at that file and
line, and refuses one it does not, and one of the table it never read (a line that looks like an include but
is in a comment or a quoted text). So the set of files is one answer, whoever asks: the loader, the version's
digest, the rehearsal, the hot reload's watch.

Confined, because a rulebase file names another file: the name is a relative path of plain ASCII segments
ending ``.pl`` (no absolute path, no ``..``, no escape, no look-alike dot or slash, no percent sign), the file
it resolves to (symlinks followed) lies in the directory of the configured file it is included from or
below, and it is a regular file within the loader's size bound; a file is read once in a set (twice, or
in a cycle, is refused), at most ``MAX_DEPTH`` includes deep and ``MAX_INCLUDED`` in all.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from sentinel_mcp.core.outside_file import TooLarge, open_regular, read_regular_bytes, read_to
from sentinel_mcp.policy.clause_bounds import MAX_FILE_BYTES

MAX_DEPTH = 4
MAX_INCLUDED = 64
MAX_NAME = 200

# the whole declaration on one line, its name in single quotes with nothing Prolog would read otherwise
# (no backslash escape, no doubled quote): the loader's atom is then these very characters
_DECLARATION = re.compile(r"[ \t]*:-[ \t]*include_rules\([ \t]*'([^'\\\n]*)'[ \t]*\)[ \t]*\.[ \t]*(%.*)?")
_NAME = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_-]*/)*[A-Za-z0-9_][A-Za-z0-9_-]*\.pl", re.ASCII)
HOW = "write it alone on its line as :- include_rules('name.pl'). (a file in this directory or below)"


@dataclass
class IncludePlan:
    """The files a rulebase set reads (the configured ones, then each one's includes), the table the loader
    includes by, and what was refused (file, line, message)."""

    files: list[Path] = field(default_factory=list)
    edges: list[tuple[str, int, str, str]] = field(default_factory=list)  # including file, line, name, path
    problems: list[tuple[str, int, str]] = field(default_factory=list)

    def loader_argument(self, top: list[str]) -> list[str] | dict[str, object]:
        """What the loader is given: the configured files alone when nothing is included (as before)."""
        if not self.edges and not self.problems:
            return top
        return {"files": top, "includes": [list(e) for e in self.edges],
                "refused": [list(p) for p in self.problems]}


def loader_files(files: list[str]) -> list[str] | dict[str, object]:
    """The loader's argument for these configured files (``sn_load_bounded/4``, ``sn_load_files/3``): every
    caller that has Prolog load a rulebase gives it this, so each reads the same includes."""
    paths = [Path(f) for f in files]
    plan = include_plan(paths)
    # with includes, each as its Path spells it ("./a.pl" is "a.pl"): the table names the including file so
    return plan.loader_argument([str(p) for p in paths]) if plan.edges or plan.problems else list(files)


def include_name(name: str) -> bool:
    """Whether ``name`` is one an include may give (and a replica may write an included file under)."""
    return len(name) <= MAX_NAME and _NAME.fullmatch(name) is not None


def declared_includes(text: str) -> list[tuple[int, str]]:
    """Each line (1-based) that reads as an include declaration, and the name it gives."""
    out = []
    for n, line in enumerate(text.removeprefix("\ufeff").split("\n"), 1):
        if "include_rules" in line and (m := _DECLARATION.fullmatch(line.removesuffix("\r"))):
            out.append((n, m.group(1)))
    return out


def include_plan(files: list[Path]) -> IncludePlan:
    plan = IncludePlan(files=list(files))
    seen = {os.path.realpath(f) for f in files}
    for top in files:
        root = os.path.realpath(top.parent)
        _walk(plan, top, root, 1, seen)
    return plan


def included_files(files: list[Path]) -> list[Path]:
    """The configured files and every file they include (a refused include is not one of them)."""
    return include_plan(files).files


def named_files(files: list[Path]) -> list[tuple[str, Path]]:
    """Each file of the set by the name a reader knows it by: a configured file by its own, an included one by
    the name its include gives (below its configured file's directory: ``airline/trips.pl``)."""
    out = [(f.name, f) for f in files]
    for f in included_files(files)[len(files):]:
        top = next(t for t in files if f.is_relative_to(t.parent))  # each is below its configured file's
        out.append((f.relative_to(top.parent).as_posix(), f))
    return out


def copy_included(original: Path, into: Path) -> None:
    """The files ``original`` includes, copied below ``into`` at the names it includes them by: a text of
    ``original`` written in ``into`` (a candidate checked apart) then includes what the one in force does."""
    for f in included_files([original])[1:]:
        try:
            data = read_regular_bytes(f, MAX_FILE_BYTES)
        except (OSError, TooLarge):
            continue  # changed since: the candidate's check says it cannot read it
        to = into / f.relative_to(original.parent)
        to.parent.mkdir(parents=True, exist_ok=True)
        to.write_bytes(data)


def _text(path: Path) -> str | None:
    """The file's text, or None when it cannot be read (the loader says why, for this file, as always)."""
    try:
        fd, size = open_regular(path)
    except OSError:
        return None
    try:
        if size > MAX_FILE_BYTES:
            return None
        return read_to(lambda n: os.read(fd, n), MAX_FILE_BYTES).decode("utf-8", errors="replace")
    except (OSError, TooLarge):
        return None
    finally:
        os.close(fd)


def _walk(plan: IncludePlan, path: Path, root: str, depth: int, seen: set[str]) -> None:
    text = _text(path)
    if text is None:
        return
    for line, name in declared_includes(text):
        why, target = _refusal(path, name, root, depth, seen, len(plan.edges))
        if why is not None:
            plan.problems.append((str(path), line, f"include_rules({name!r}): {why}"))
            continue
        assert target is not None
        seen.add(os.path.realpath(target))
        plan.files.append(target)
        plan.edges.append((str(path), line, name, str(target)))
        _walk(plan, target, root, depth + 1, seen)


def _refusal(path: Path, name: str, root: str, depth: int, seen: set[str],
             count: int) -> tuple[str | None, Path | None]:
    if not include_name(name):
        return f"not a name of a rulebase file: {HOW}", None
    if depth > MAX_DEPTH:
        return f"included more than {MAX_DEPTH} deep", None
    if count >= MAX_INCLUDED:
        return f"more than {MAX_INCLUDED} included files in one rulebase set", None
    target = path.parent / name
    real = os.path.realpath(target)
    if not real.startswith(root.rstrip(os.sep) + os.sep):
        return f"it leads out of {root} (the directory of the configured file)", None
    if real in seen:
        return "this file is read already in this rulebase set (included twice, or in a cycle)", None
    try:
        fd, size = open_regular(real)
    except OSError as e:
        return ("not a regular file (a FIFO, device or directory)" if e.errno == errno.ENXIO
                else f"cannot be read: {e.strerror or e}"), None
    os.close(fd)
    if size > MAX_FILE_BYTES:
        return f"the file is {size:,} bytes, more than {MAX_FILE_BYTES:,}", None
    return None, target
