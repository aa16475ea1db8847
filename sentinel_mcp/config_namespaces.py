"""Server namespaces in a config: a prefix that would put one server's tools under another's names, and
server names that do not read as themselves or read as another's."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from sentinel_mcp.config_lines import Lines, at_line, line_of
from sentinel_mcp.core.errors import ConfigError
from sentinel_mcp.core.look_alike_names import looks_alike, name_flaw


def check_prefixes(servers: Mapping[str, Any], builtins: list[str]) -> None:
    """A prefix that puts a server's tools in another server's namespace would shadow that server's (guarded)
    tools: refused here, naming both servers. (A tool of a transparent ``""`` server that takes another
    server's name is withheld by the catalog when the tools are known.)"""
    for name in servers:
        if name in builtins:
            raise ValueError(f"mcpServers.{name}: {name!r} is also a built-in; rename the server")
    names = set(servers) | set(builtins)
    seen: dict[str, str] = {b: b for b in builtins}
    for name, spec in servers.items():
        prefix = name if spec.prefix is None else spec.prefix
        if prefix == "":
            continue
        owner = next(
            (n for n in sorted(names) if n != name and (prefix == n or prefix.startswith(f"{n}__"))), None
        )
        if owner is None and prefix in seen:
            owner = seen[prefix]
        if owner is not None:
            raise ValueError(
                f"mcpServers.{name}.prefix {prefix!r} puts its tools under the names of server "
                f"{owner!r}: servers {name!r} and {owner!r} would shadow each other; choose another "
                "prefix"
            )
        seen[prefix] = name


def check_server_names(names: list[str], source: str, lines: Lines | None) -> None:
    """Each server's name reads as itself and as no other's: it is the namespace policy patterns and a person
    reading a tool's name go by, so ``github`` beside ``GitHub`` (or a composed and a decomposed ``café``, a
    Cyrillic ``а`` in ``paypal``) would be two servers that read as one (a deny of ``github__*`` missed
    ``GitHub__delete_repo``). A name with a hidden character, or none, reads as nothing. A ConfigError naming
    the server and its line."""
    seen: dict[str, str] = {}
    for name in names:
        where = f"mcpServers.{name[:64]!r}"
        flaw = "its name is empty" if not name.strip() else name_flaw(name)
        if flaw is None:
            other = seen.get(_folded(name)) or next((n for n in seen.values() if looks_alike(n, name)),
                                                    None)
            if other is not None:
                flaw = (f"the names {other!r} and {name!r} read as one (case, Unicode form or look-alike "
                        "letters): a policy pattern or a person reading a tool's name could take one "
                        "server's tools for the other's; rename one")
        if flaw is not None:
            if not flaw.startswith(("its name", "the names")):
                flaw = f"its name cannot be read as itself: {flaw}"
            raise ConfigError(f"invalid config {source}:\n  " + at_line(f"{where}: {flaw}",
                                                                        line_of(lines, ("mcpServers", name))))
        seen.setdefault(_folded(name), name)


def _folded(name: str) -> str:
    return unicodedata.normalize("NFKC", name).casefold()  # as peer names are compared (a2a card_signature)
