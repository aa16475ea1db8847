"""What a build's runner writes as it runs, signed on a server store: its plan, its report, its counters and
warnings (one MAC per part, each written in the statement that writes the part; the cluster's key "swarm
build", purpose per part).

Nothing acts on these values (every cap is counted in the runner's memory, ``limits.Budget``): they are what
the build's principal is shown (``swarm_status``, ``swarm_list``, the console). Unsigned, a database writer
without the seal key could rewrite a build's plan or report, or raise its counters past the caps, and the
principal was shown that as the build's own. A part that fails its check is withheld (``None``), named in the
task's ``unverified`` and logged; a part still at its default (nothing written yet) claims nothing and needs
no signature. An embedded SQLite store is not signed (its readers trust the file, as its audit's do).
"""

from __future__ import annotations

import logging
from typing import Any

from sentinel_mcp.storage.row_signature import sign_row, signed_row

log = logging.getLogger(__name__)

# part -> (its MAC column, the columns it covers after the task id, their defaults: nothing claimed)
PARTS: dict[str, tuple[str, tuple[str, ...], tuple[Any, ...]]] = {
    "plan": ("plan_mac", ("plan_json",), (None,)),
    "report": ("report_mac", ("report_json",), (None,)),
    "counters": ("counters_mac", ("model_calls", "prompt_tokens", "completion_tokens", "warnings_json"),
                 (0, 0, 0, "[]")),
}
# what a withheld part hides, as the task dict names it (``state._task_dict``)
SHOWN = {"plan": ("plan_json",), "report": ("report_json",),
         "counters": ("model_calls", "prompt_tokens", "completion_tokens", "warnings_json")}
SCHEMA = ";\n".join(f"ALTER TABLE tasks ADD COLUMN IF NOT EXISTS {column} TEXT"
                    for column, _, _ in PARTS.values())


def mac(key: bytes, part: str, task_id: str, values: tuple[Any, ...]) -> str:
    return sign_row(key, f"swarm build {part}", (task_id, *values))


def checked(key: bytes, row: dict[str, Any]) -> dict[str, Any]:
    """The row with each part that fails its check withheld (its columns None) and named in
    ``unverified`` (the task dict's names: plan, report, model_calls, ...)."""
    out = dict(row)
    unverified: list[str] = []
    for part, (column, covered, defaults) in PARTS.items():
        values = tuple(row.get(c) for c in covered)
        if values == defaults and row.get(column) is None:
            continue  # nothing written yet: nothing claimed
        if signed_row(key, row.get(column), f"swarm build {part}", (row.get("task_id"), *values)):
            continue
        for c in SHOWN[part]:
            out[c] = None
        unverified += [c.removesuffix("_json") for c in SHOWN[part]]
    if unverified:
        out["unverified"] = unverified
        log.warning("swarm: build %s: %s not signed by this cluster (written outside Sentinel, or from "
                    "before progress was signed): withheld", row.get("task_id"), ", ".join(unverified))
    return out
