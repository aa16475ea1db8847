"""The bounds of a rulebase that is a client's text (a console candidate to check or replay): it runs in the
live Prolog engine, so it is held to what the rulebase in force may do, never more."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from sentinel_mcp.paths import PROJECT_ROOT


@dataclass(frozen=True)
class UntrustedRules:
    # the only files its policy_document/2 may name: those the rulebase in force cites (a path names a
    # file to read, and a citation quotes it back: any other path would read the host's files for a client)
    documents: frozenset[Path]
    # a proof's inference budget at most (its own option(inference_limit(N)) is the client's too: a larger
    # one would hold the engine every principal's decisions wait for)
    inference_limit: int
    # file name -> the directory of the file in force of that name (a candidate replaces it, and its relative
    # document paths mean what they meant there)
    homes: Mapping[str, Path] = field(default_factory=dict)

    def resolve(self, path: str, declared_in: str) -> Path | None:
        """The document a candidate's declared path names, if it is one the rulebase in force cites; None
        otherwise, whether or not such a file exists (which files exist is not told either)."""
        p = Path(path).expanduser()
        here = Path(declared_in)
        bases = [self.homes.get(here.name), here.parent, PROJECT_ROOT, Path.cwd()]
        candidates = [p] if p.is_absolute() else [b / p for b in bases if b is not None]
        return next((c.resolve() for c in candidates if c.resolve() in self.documents), None)
