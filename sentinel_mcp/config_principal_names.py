"""Principal names that read as another's: refused at load, naming the file and the line.

A principal's name is what the audit, the console, an approval and a policy rule go by. ``alice`` beside
``Alice`` (or ``a1ice``, ``rn`` for ``m``) is two principals a person takes for one, and a rule written for
one misses the other; ``Owner`` reads as the owner. So every name the config gives a principal (a configured
principal, an A2A key's peer, the A2A bearer's identity, the orchestrator) must read as itself: the same
spelling twice is one principal, but two spellings that fold alike (case, Unicode form) or look alike (UTS
#39's skeleton, ``core/look_alike_names.py``) are refused, and so is a name that reads as a reserved one."""

from __future__ import annotations

import unicodedata
from typing import Any

from sentinel_mcp.config_lines import Lines, at_line, line_of
from sentinel_mcp.core.errors import ConfigError
from sentinel_mcp.core.look_alike_names import looks_alike


def check_principal_names(sentinel: Any, reserved: tuple[str, ...], source: str, lines: Lines | None) -> None:
    """ConfigError naming the second of two principal names that read as one (or one that reads as a reserved
    name), where it is written and its line."""
    seen: dict[str, str] = {}  # a name's folded form -> the name as first written
    for name, where, loc in _named(sentinel):
        if name in seen.values():
            continue  # the same principal named again (an A2A key of a configured principal)
        flaw = None
        taken = next((r for r in reserved if _reads_as(name, r)), None)
        if taken is not None:
            flaw = f"{name!r} reads as the reserved name {taken!r}; choose another name"
        else:
            other = seen.get(_folded(name)) or next((n for n in seen.values() if looks_alike(n, name)), None)
            if other is not None:
                flaw = (f"the principal names {other!r} and {name!r} read as one (case, Unicode form or "
                        "look-alike letters): a person reading the audit or an approval, or a policy rule, "
                        "could take one for the other; rename one")
        if flaw is not None:
            raise ConfigError(f"invalid config {source}:\n  " + at_line(f"{where}: {flaw}",
                                                                        line_of(lines, ("sentinel", *loc))))
        seen.setdefault(_folded(name), name)


def _named(sentinel: Any) -> list[tuple[str, str, tuple[str | int, ...]]]:
    """Each principal name the config writes: (name, where, its path under ``sentinel``)."""
    out: list[tuple[str, str, tuple[str | int, ...]]] = [
        (p.name, f"sentinel.principals[{i}].name", ("principals", i, "name"))
        for i, p in enumerate(sentinel.principals)
    ]
    a2a = sentinel.builtin_settings("a2a")
    for name in a2a.get("api_keys") or {}:
        if isinstance(name, str):
            out.append((name, f"sentinel.a2a.api_keys.{name}", ("a2a", "api_keys", name)))
    for key in ("token_identity", "orchestrator_principal"):
        name = a2a.get(key)
        if isinstance(name, str) and (key != "token_identity" or a2a.get("token") is not None):
            out.append((name, f"sentinel.a2a.{key}", ("a2a", key)))
    return out


def _reads_as(name: str, reserved: str) -> bool:
    return name != reserved and (_folded(name) == _folded(reserved) or looks_alike(name, reserved))


def _folded(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()
