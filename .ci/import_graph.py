"""Print the import graph between Sentinel's areas (docs/architecture.md, "Import graph"): for each area, the
areas it imports directly, function-level imports included (as grimp, and so import-linter, reads them).

Usage: python .ci/import_graph.py
"""

from __future__ import annotations

import grimp

AREAS = [
    "device_tools", "device_tools.sensors", "sentinel_mcp.a2a", "sentinel_mcp.agent", "sentinel_mcp.app",
    "sentinel_mcp.console", "sentinel_mcp.gateway", "sentinel_mcp.llm", "sentinel_mcp.policy",
    "sentinel_mcp.search", "sentinel_mcp.swarm", "sentinel_mcp.tls", "sentinel_mcp.core",
    "sentinel_mcp.storage",
]
NOTHING = "(nothing of Sentinel's)"
TARGETS = [*AREAS, "sentinel_mcp.config", "sentinel_mcp.paths", "sentinel_mcp.identity"]


def main() -> None:
    graph = grimp.build_graph("sentinel_mcp", "device_tools")
    for area in AREAS:
        imported = sorted(
            other.removeprefix("sentinel_mcp.")
            for other in TARGETS
            if other != area
            and not other.startswith(area + ".")
            and not area.startswith(other + ".")
            and graph.direct_import_exists(importer=area, imported=other, as_packages=True)
        )
        print(f"{area.removeprefix('sentinel_mcp.'):22s}-> {', '.join(imported) or NOTHING}")


if __name__ == "__main__":
    main()
