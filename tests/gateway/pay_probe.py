"""The rig of the argument-shape tests: the pay upstream (``pay_upstream.py``, a real stdio subprocess that
logs each ``tools/call`` line as received) behind a gateway whose guards read arguments the schema gives
defaults, and what reached the upstream read back from its log."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from sentinel_mcp.paths import RULEBASES_DIR

PAY = str(Path(__file__).with_name("pay_upstream.py"))
ROOT = str(Path(__file__).parents[2])
# each guard reads "absent" as the safe case; the upstream's declared default is the unsafe one
RULES = """
guard('pay__transfer', [args(A), amount = M],
      ( option_value(A, currency, 'USD', C), ( C == 'USD' -> true ; M =< 10 ) )).
guard('pay__ship', [args(A)],
      ( option_value(A, options, json([]), O), ( json_get(O, express, E) -> E \\== true ; true ) )).
guard('pay__ship', [args(A)],
      ( option_value(A, items, [], Is), \\+ ( member(I, Is), json_get(I, qty, Q), Q > 5 ) )).
guard('pay__settle', [args(A)],
      ( option_value(A, method, json([]), M), ( json_get(M, instant, I) -> I \\== true ; true ) )).
"""


def pay_config(tmp: Path, undeclared: str | None = None, **sentinel: Any) -> dict[str, Any]:
    rules = tmp / "pay.pl"
    rules.write_text(RULES)
    log = tmp / "pay.log"
    log.write_text("")
    server: dict[str, Any] = {"command": sys.executable, "args": [PAY], "env": {"PAY_LOG": str(log)}}
    if undeclared is not None:
        server["undeclared_arguments"] = undeclared
    return {
        "mcpServers": {"pay": server},
        "sentinel": {
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(rules)],
            "data_dir": str(tmp / "state"),
            "policy": {"default": "allow"},
            **sentinel,
        },
    }


def received(tmp: Path) -> list[str]:
    """The text of each ``tools/call`` line the upstream read, in order."""
    return [line for line in (tmp / "pay.log").read_text().splitlines() if line.strip()]


def arguments(tmp: Path) -> list[dict[str, Any]]:
    """The arguments of each call the upstream received, as it parsed them."""
    return [json.loads(line)["params"]["arguments"] for line in received(tmp)]
