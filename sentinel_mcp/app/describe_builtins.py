"""Write ``gateway/builtin_descriptions.json``: the deferrable built-ins (``RECORDED``), built eagerly with
the embedded default's settings, as the gateway sees them
(``python -m sentinel_mcp.app.describe_builtins``)."""

from __future__ import annotations

import json
from typing import Any

import anyio

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import Config, embedded_default
from sentinel_mcp.gateway.builtin_description import FILE, RECORDED, plain, record
from sentinel_mcp.gateway.upstream import BuiltinTarget


async def describe_all(config: Config) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with running_gateway(config, lazy_builtins=False) as rt:
        for name in RECORDED:
            up = rt.manager.upstreams.get(name)
            if up is None or up.client is None or not isinstance(up.target, BuiltinTarget):
                continue
            settings = plain(config.sentinel.builtin_settings(name))
            out[name] = {"settings": settings, **record(up, up.target.server)}
    return out


def default_without_upstreams() -> Config:
    config = embedded_default()
    config.mcp_servers.clear()
    return config


def main() -> None:
    described = anyio.run(describe_all, default_without_upstreams())
    FILE.write_text(json.dumps(described, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {FILE} ({', '.join(described)})")


if __name__ == "__main__":
    main()
