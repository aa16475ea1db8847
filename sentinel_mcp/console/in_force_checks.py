"""The rulebase in force's check results, remembered for its page: a check runs in a child process
(``policy/check_process``: about 1.5 s, one of two places), and every view of the policy page shows it.

Without this, each view started a child, and two readers reloading the page took both places: the owner's
live check of a candidate got "busy". A result is reused only for exactly what was checked: the bytes of
every file, the tools the check named (the viewer's reach), and the size and change time of every document
the rulebase in force cites; and never past ``TTL_SECONDS`` (a document the loaded version does not yet cite,
read by changed files, is seen again within that)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from sentinel_mcp.policy.rulebase_file_text import RulebaseFileUnreadable, rulebase_file_bytes
from sentinel_mcp.policy.rulebase_includes import included_files

TTL_SECONDS = 60.0
MAX_ENTRIES = 32  # distinct reaches (principals' catalogs) remembered at once


def _file_key(path: Path) -> str:
    try:
        return hashlib.sha256(rulebase_file_bytes(path)).hexdigest()
    # unreadable now (a FIFO, huge): its own key, so a readable one later is checked afresh
    except RulebaseFileUnreadable as e:
        return f"unreadable:{e}"


def _doc_key(path: Path) -> tuple[str, int, int]:
    try:
        st = path.stat()
    except OSError:
        return (str(path), -1, -1)
    return (str(path), st.st_mtime_ns, st.st_size)


def check_key(files: list[Path], tools: list[Any] | None, documents: frozenset[Path]) -> str:
    """What one check's result depends on, as one digest."""
    shown = None if tools is None else [t.model_dump(mode="json", by_alias=True) for t in tools]
    parts = {
        "files": [(str(f), _file_key(f)) for f in included_files(files)],  # and what they include
        "tools": shown,
        "documents": sorted(_doc_key(d) for d in documents),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class InForceChecks:
    """A bounded, short-lived memory of check results by ``check_key``."""

    def __init__(self, ttl: float = TTL_SECONDS, max_entries: int = MAX_ENTRIES) -> None:
        self.ttl, self.max_entries = ttl, max_entries
        self._kept: dict[str, tuple[float, list[Any]]] = {}

    def get(self, key: str) -> list[Any] | None:
        kept = self._kept.get(key)
        if kept is None or time.monotonic() - kept[0] > self.ttl:
            self._kept.pop(key, None)
            return None
        return list(kept[1])

    def put(self, key: str, problems: list[Any]) -> None:
        self._kept.pop(key, None)
        while len(self._kept) >= self.max_entries:
            self._kept.pop(next(iter(self._kept)))  # the oldest
        self._kept[key] = (time.monotonic(), list(problems))
