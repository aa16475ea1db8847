"""A candidate text of one rulebase file, written apart (a private temporary directory) among the files it is
read with: the console's editor offers every file of the rulebase in force, the files an include brings in as
well as the configured ones (``airline/trips.pl`` is where most of the airline's rules live)."""

from __future__ import annotations

from pathlib import Path

from sentinel_mcp.console.replay import candidate_files
from sentinel_mcp.core.outside_file import TooLarge, read_regular_bytes
from sentinel_mcp.policy.clause_bounds import MAX_FILE_BYTES
from sentinel_mcp.policy.rulebase_includes import copy_included, included_files, named_files


def editable_files(files: list[Path]) -> dict[str, Path]:
    """Each file of the set by the name a person knows it by (a configured file by its own name, an included
    one by the name its include gives). Only these names are accepted back from a form: a name is looked up,
    never joined to a directory as given."""
    out: dict[str, Path] = {}
    for name, path in named_files(files):
        out.setdefault(name, path)  # (two configured directories including one name: the first is offered)
    return out


def write_candidate(files: list[Path], editable: dict[str, Path], chosen: str, text: str,
                    into: Path) -> tuple[list[Path], Path]:
    """The candidate set with ``chosen`` (a name of ``editable``: ``editable_files(files)``, which the caller
    has read already) holding ``text``, written below ``into``, and the changed file's path there. A
    configured file is written with the files it includes beside it; an included one, with the configured file
    that includes it and that file's other includes (the set reads the copy, so the change is read where it
    stands)."""
    top = next((f for f in files if f.name == chosen), None)
    if top is None:
        target = editable[chosen]
        top = next(t for t in files if target in included_files([t])[1:])
        try:
            (into / top.name).write_bytes(read_regular_bytes(top, MAX_FILE_BYTES))
        except (OSError, TooLarge):
            # changed since: the check says what is missing
            (into / top.name).write_text("", encoding="utf-8")
    path = into / chosen
    copy_included(top, into)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return candidate_files(files, [into / top.name]), path
