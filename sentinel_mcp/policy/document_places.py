"""Where a rulebase's ``policy_document(Name, Path)`` may point: inside the directory of the file that
declares it, never out of it.

A document is read whole and quoted back in denials, proofs and the console, so its path names a file the
gateway reads for whoever sees those: ``policy_document(d, '/etc/passwd')`` would quote the host's files. The
path is taken relative to the declaring file's directory (its home); a ``..`` segment is refused as written
(whatever it would resolve to), an absolute path must already lie in the home, and the resolved file (every
symbolic link followed) must still lie in it. Sentinel's shipped rulebases (``rulebases/``) name the shipped
examples' policies: their home is the project (a checkout's top, or where a wheel puts ``sentinel_mcp`` and
``examples`` side by side). A path is judged on its text and the links on the
way, not on whether the file exists (a missing one is reported where the documents are read). A document
another account could change (the file, or a folder up to ``/``) is refused as a rulebase would be.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from sentinel_mcp.config_file_trust import opted_out
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR
from sentinel_mcp.tls.file_modes import replaceable_by_others


def home_of(declared_in: str) -> Path:
    """The directory a rulebase file's documents must lie in."""
    here = Path(declared_in).resolve().parent
    return PROJECT_ROOT.resolve() if here == RULEBASES_DIR.resolve() else here


def document_place(path: str, declared_in: str) -> tuple[Path | None, str | None]:
    """(the file a declared path names, None) when it lies in the declaring file's home; else (None, why)."""
    home = home_of(declared_in)
    if not path or "\x00" in path:
        return None, "the path is empty or holds a NUL character"
    written = PurePath(path)
    if ".." in written.parts:
        return None, "the path has a '..' segment (a document must lie in the rulebase's own directory)"
    named = home / written  # an absolute ``written`` replaces ``home``
    target = named.resolve()
    if not target.is_relative_to(home):
        if Path(os.path.normpath(named)).is_relative_to(home):
            return None, f"the path leads out of the rulebase's own directory ({home}) through a link"
        return None, f"the path is outside the rulebase's own directory ({home})"
    # quoted as the policy's own words: a file another account could change is refused, as the rulebase
    # that names it would be (config_file_trust.py)
    why = replaceable_by_others(target)
    if why is not None and not opted_out():  # the deployer's opt-out keeps it, as it keeps the rulebase
        return None, f"another account could change the document: {why}"
    return target, None
