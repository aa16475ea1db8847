"""Files that become code in Sentinel's process or run as its account: a program it runs (the ``termux-*``
commands, a helper found on ``PATH``) and a model file native code parses (a GGUF: llama.cpp's parser is
code that has had memory-safety bugs). Whoever may change one runs code as Sentinel's user, so each is held,
each time it is about to be used, to the rule of every file Sentinel trusts (``trusted_path.py``: owned by
root or this account, nobody else may write it or any folder its name is looked up in).

``SENTINEL_SHARED_FILES=trust`` (the deployer's word for a container's bind mount; a file's writer cannot set
it) keeps such a file in use, logged as a warning the first time each reason is found. A relative ``PATH``
entry (``.``, an empty one: the working folder) is never searched: what it names changes with the folder
Sentinel runs in.

The program or model is used by its path after the check: with every folder on the way and the file judged,
no other account can change what the path names between the check and the use."""

from __future__ import annotations

import logging
import os
import stat

from sentinel_mcp.core.errors import SentinelError
from sentinel_mcp.core.trusted_path import walk

log = logging.getLogger(__name__)

OPT_OUT = "SENTINEL_SHARED_FILES"  # "trust": keep a file others could change, said loud as a problem
OPT_OUT_VALUE = "trust"
MAX_SAID = 1024  # reasons already logged under the opt-out (bounded; the paths are the config's)
_said: set[str] = set()


def opted_out() -> bool:
    return os.environ.get(OPT_OUT, "") == OPT_OUT_VALUE


def refusal(what: str, path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` (``what`` names it) must not be used as code, or None: trusted, missing (the user says
    so), or kept by the opt-out (logged)."""
    try:
        walked = walk(path)
    except OSError:
        return None
    os.close(walked.fd)
    if walked.why is None:
        return None
    if opted_out():
        if walked.why not in _said:  # once per reason: a program is looked up before every run
            if len(_said) < MAX_SAID:
                _said.add(walked.why)
            log.warning("%s %s is used although another account could change it (%s=%s): %s",
                        what, os.fspath(path), OPT_OUT, OPT_OUT_VALUE, walked.why)
        return None
    return (f"{what} {os.fspath(path)} is refused: another account could change it, and so run code as "
            f"Sentinel's user: {walked.why} (or, for a file you cannot own, start with {OPT_OUT}="
            f"{OPT_OUT_VALUE})")


def trusted_search_path(search: str | None = None) -> str:
    """``search`` (None: ``$PATH``) with only the entries a program may be looked up in: absolute, and no
    other account could change them; for a library that runs a program by name on ``PATH`` itself."""
    entries = (os.environ.get("PATH", os.defpath) if search is None else search).split(os.pathsep)
    return os.pathsep.join(e for e in entries if os.path.isabs(e) and refusal("the PATH entry", e) is None)


class ProgramRefused(SentinelError, OSError):
    """A program found only where another account could change it (the message says where and why)."""


def find_program(command: str, search: str | None = None) -> str | None:
    """Where ``command`` is run from: the first trusted executable of that name on ``search`` (a
    ``PATH``-like list; None: ``$PATH``), as ``shutil.which`` finds it, skipping relative entries and
    entries where another account could change it. None when there is none; ``ProgramRefused`` when the only
    ones found are not trusted (the message says why). A ``command`` with a slash is that file, judged."""
    if os.sep in command:
        return _judged(command, command)
    entries = (os.environ.get("PATH", os.defpath) if search is None else search).split(os.pathsep)
    refused: str | None = None
    for entry in entries:
        if not os.path.isabs(entry):
            continue
        candidate = os.path.join(entry, command)
        try:
            st = os.stat(candidate)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or not os.access(candidate, os.X_OK):
            continue
        why = refusal("the program", candidate)
        if why is None:
            return candidate
        refused = refused or why  # one another account could change: never run, go on looking
    if refused is not None:
        raise ProgramRefused(refused)
    return None


def _judged(what: str, path: str) -> str | None:
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return None
    why = refusal("the program", path)
    if why is not None:
        raise ProgramRefused(why)
    return path
