"""Rewrites imports of modules that moved between floors (docs/architecture.md, "Moves"), in place.

Run it after merging a branch written before the moves: ``python .ci/rewrite_moved_imports.py [PATH ...]``
(default: sentinel_mcp, device_tools, tests, benchmarks, examples, docs). Dotted names and slash paths both.
"""

from __future__ import annotations

import pathlib
import re
import sys

MOVES = {  # old module -> new module (one git mv each)
    "sentinel_mcp.gateway.decision": "sentinel_mcp.core.decision",
    "sentinel_mcp.gateway.port": "sentinel_mcp.core.port",
    "sentinel_mcp.gateway.builtin": "sentinel_mcp.core.builtin",
    "sentinel_mcp.gateway.call_meta": "sentinel_mcp.core.call_meta",
    "sentinel_mcp.gateway.display_text": "sentinel_mcp.core.display_text",
    "sentinel_mcp.gateway.answer_validation": "sentinel_mcp.core.answer_validation",
    "sentinel_mcp.gateway.redactor": "sentinel_mcp.core.redactor",
    "sentinel_mcp.gateway.caller_link": "sentinel_mcp.core.caller_link",
    "sentinel_mcp.gateway.default_guard": "sentinel_mcp.policy.default_guard",
    "sentinel_mcp.gateway.runtime": "sentinel_mcp.app.runtime",
    "sentinel_mcp.gateway.serve": "sentinel_mcp.app.serve",
    "sentinel_mcp.gateway.http_app": "sentinel_mcp.app.http_app",
    "sentinel_mcp.gateway.http_extras": "sentinel_mcp.app.http_extras",
    "sentinel_mcp.gateway.cli": "sentinel_mcp.app.gateway_cli",
    "sentinel_mcp.gateway.consent_cli": "sentinel_mcp.app.consent_cli",
    "sentinel_mcp.gateway.terminal_client": "sentinel_mcp.app.terminal_client",
    "sentinel_mcp.policy.cli": "sentinel_mcp.app.policy_cli",
    "sentinel_mcp.gateway.wire_limits": "sentinel_mcp.core.wire_limits",
    "sentinel_mcp.policy.stored_text": "sentinel_mcp.core.stored_text",
    "sentinel_mcp.agent.chat_cli": "sentinel_mcp.app.chat_cli",
    "sentinel_mcp.agent.chat_link": "sentinel_mcp.app.chat_link",
    "sentinel_mcp.agent.chat_terminal": "sentinel_mcp.app.chat_terminal",
    "device_tools.sensors.kinds": "sentinel_mcp.core.sensor_kinds",
    "device_tools.sensors.messages": "sentinel_mcp.core.sensor_messages",
}
SUFFIXES = {".py", ".md", ".toml", ".cfg", ".ini", ".txt", ".json", ".sh", ".pl"}


def _patterns() -> list[tuple[re.Pattern[str], str]]:
    out = []
    for old, new in MOVES.items():
        out.append((re.compile(re.escape(old) + r"\b"), new))
        out.append((re.compile(re.escape(old.replace(".", "/")) + r"\.py\b"), new.replace(".", "/") + ".py"))
        package, _, name = old.rpartition(".")
        new_package, _, new_name = new.rpartition(".")
        # `from sentinel_mcp.gateway import runtime` style
        out.append(
            (
                re.compile(rf"from {re.escape(package)} import {name}\b"),
                f"from {new_package} import {new_name}"
                if new_name == name
                else f"from {new_package} import {new_name} as {name}",
            )
        )
    return out


def rewrite(paths: list[pathlib.Path]) -> int:
    patterns, changed = _patterns(), 0
    for root in paths:
        files = (
            [root]
            if root.is_file()
            else [p for p in root.rglob("*") if p.suffix in SUFFIXES and p.name != "architecture.md"]
        )  # its move list stays
        for f in files:
            if any(part in {".venv", "node_modules", ".git"} for part in f.parts):
                continue
            text = f.read_text(encoding="utf-8", errors="surrogateescape")
            new = text
            for pattern, replacement in patterns:
                new = pattern.sub(replacement, new)
            if new != text:
                f.write_text(new, encoding="utf-8", errors="surrogateescape")
                changed += 1
                print(f)
    return changed


if __name__ == "__main__":
    args = sys.argv[1:] or [
        "sentinel_mcp",
        "device_tools",
        "tests",
        "benchmarks",
        "examples",
        "docs",
        "README.md",
    ]
    print(f"{rewrite([pathlib.Path(a) for a in args if pathlib.Path(a).exists()])} files rewritten")
