"""The embedded default config (no config file) as plain data: standard library only, no pydantic.

``config.embedded_default`` parses it; ``serve`` reads its stdio upstreams from it before importing the config
models, so that the airline upstream's start (its interpreter, its imports) begins while the gateway still
imports pydantic and parses its config (issue 21, cold start). The launch is adopted only when the parsed
config asks for exactly the same spawn (``gateway/early_spawn.py``); otherwise it is discarded.
"""

from __future__ import annotations

import sys
from typing import Any

from sentinel_mcp.paths import RULEBASES_DIR

DEFAULT_RULEBASES = ("default.pl", "airline.pl", "device.pl", "sensors.pl", "swarm.pl", "a2a.pl")


def embedded_default_data() -> dict[str, Any]:
    """The airline example, the simulated device, the shipped rulebases."""
    return {
        "mcpServers": {
            "airline": {"command": sys.executable, "args": ["-m", "examples.airline"], "protocol": "auto"},
        },
        "sentinel": {
            "rulebases": [str(RULEBASES_DIR / n) for n in DEFAULT_RULEBASES if (RULEBASES_DIR / n).exists()],
            "seeds": {"current_user": "mia_li_3668", "today": "2024-05-15"},
            "builtins": ["sentinel", "device", "sensors", "llm", "swarm", "a2a", "agent"],
            # RiskRules decide (measured in benchmarks/risk_classifier.py); the shipped 270M model made them
            # worse where it was asked, so it is not asked until a better model is configured ("rules+model")
            "device": {"backend": "simulated", "risk_classifier": "rules"},
            "sensors": {"source": "simulated"},
        },
    }


def default_stdio_upstreams() -> list[tuple[str, str, list[str]]]:
    """(name, command, args) of the embedded default's stdio upstreams, as its parse will give them (no env,
    no cwd)."""
    servers: dict[str, dict[str, Any]] = embedded_default_data()["mcpServers"]
    return [(name, spec["command"], list(spec["args"])) for name, spec in servers.items()]
