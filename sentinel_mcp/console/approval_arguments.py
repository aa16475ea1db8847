"""A call's arguments as the person approving it reads them: what will run, but the tool's own secrets.

The inbox showed a call's arguments as the audit keeps them (``core.redactor.redact_value``), whose scrubber
masks any text shaped like a secret (``token="..."``, ``bearer ...``, a nested key named ``password``). The
client writes that text: it wrapped the part that mattered in such a shape, the card read
``token=[redacted]``, and the person approved a call whose hidden part ran. Only a value the tool itself
says is a secret is masked here, by its argument's name: one the tool's schema declares sensitive
(``writeOnly``, ``format: password``, ``_meta["sentinel/sensitive"]``) or a property the schema lists under a
secret's name (``password``, ``api_key``). A client chooses neither; every other value is shown as sent
(marked where it is shown, never changed).
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.redactor import mask, secret_name, sensitive_fields_of


def approval_arguments(tool: Any, arguments: Any) -> Any:
    """``arguments`` with the values of the tool's own secret arguments masked, the rest as sent."""
    if not isinstance(arguments, dict):
        return arguments
    declared = (getattr(tool, "input_schema", None) or {}).get("properties") if tool is not None else None
    names = set(declared) if isinstance(declared, dict) else set()
    secret = sensitive_fields_of(tool) if tool is not None else set()
    secret |= {n for n in names if isinstance(n, str) and secret_name(n)}
    return {
        k: (_masked(v) if k in secret and v not in (None, "", [], {}) else v) for k, v in arguments.items()
    }


def _masked(value: Any) -> str:
    return "[redacted]" if isinstance(value, (dict, list)) else mask(value)
