"""The gateway of the airline example in front of the permissive upstream (it checks nothing itself), so
that what a test sees allowed or refused is the rulebase's doing alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.forked_upstreams import forked_spec
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR


def permissive_airline_config(data_dir: Path, user: str, env: dict[str, str] | None = None) -> Any:
    # forked from a warm interpreter (~1 s of CPU less a start: support/forked_upstreams.py)
    upstream: dict[str, Any] = {**forked_spec("-m", "examples.airline", "--permissive"),
                                "cwd": str(PROJECT_ROOT)}
    if env:
        upstream["env"] = env
    return parse_config({
        "mcpServers": {"airline": upstream},
        "sentinel": {"rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "airline.pl")],
                     "builtins": ["sentinel"], "data_dir": str(data_dir), "seeds": {"current_user": user}},
    }, base_dir=str(data_dir))
