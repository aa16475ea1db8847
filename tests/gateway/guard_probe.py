"""The rig of the guard attack tests: the bank upstream (``bank_upstream.py``, a real stdio subprocess) behind
a gateway whose rulebase freezes account 13, and what reached the upstream read back from its log."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from sentinel_mcp.paths import RULEBASES_DIR

BANK = str(Path(__file__).with_name("bank_upstream.py"))
FOLDING = str(Path(__file__).with_name("folding_upstream.py"))  # reads keys as Go's encoding/json does
ROOT = str(Path(__file__).parents[2])
RULES = """
frozen_account(13).
guard('bank__transfer', [account = A, amount = M], ( \\+ frozen_account(A), M =< 100 )).
guard('bank__close_account', [account = A, force = F], ( \\+ frozen_account(A), F \\== true )).
guard('bank__statement', [accounts = As],
      ( atom(As) -> As \\== all ; forall(member(A, As), \\+ frozen_account(A)) )).
binding(balance_of(A, B), tool('bank__balance', [account = A]), extract([B = '/balance']), [ttl(60)]).
guard('bank__balance', [account = A], \\+ frozen_account(A)).
guard('bank__rate', [account = A, rate = R], ( \\+ frozen_account(A), R =< 5 )).
"""


def bank_config(tmp: Path, upstream: str = BANK, **sentinel: Any) -> dict[str, Any]:
    """The config as JSON (a file for ``sentinel serve``, or ``parse_config``'s input)."""
    rules = tmp / "bank.pl"
    rules.write_text(RULES)
    log = tmp / "bank.log"
    log.write_text("")
    return {
        "mcpServers": {
            "bank": {
                "command": sys.executable,
                "args": [upstream],
                "env": {"BANK_LOG": str(log), "PYTHONPATH": ROOT},
            }
        },
        "sentinel": {
            "rulebases": [str(RULEBASES_DIR / "default.pl"), str(rules)],
            "data_dir": str(tmp / "state"),
            **sentinel,
        },
    }


def reached(tmp: Path) -> list[dict[str, Any]]:
    """Every call the upstream's tools ran, in order: tool, arguments and their Python types there."""
    return [json.loads(line) for line in (tmp / "bank.log").read_text().splitlines() if line.strip()]


def wire_headers(token: str, name: str = "bank__transfer") -> dict[str, str]:
    """The headers of one 2026-07-28 ``tools/call`` POST (each request stands alone) as ``token``'s caller."""
    return {
        "MCP-Protocol-Version": "2026-07-28",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {token}",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
