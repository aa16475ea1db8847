"""Server namespaces in a config: a prefix that would put one server's tools under another's names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
