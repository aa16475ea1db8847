"""DeviceRuntime: what every tool module needs (the gate, the actuator, settings, the data dir)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .actuator import Actuator
from .backend import DeviceBackend
from .gate import CommandGate
from .settings import DeviceSettings


@dataclass
class DeviceRuntime:
    backend: DeviceBackend
    gate: CommandGate
    actuator: Actuator
    settings: DeviceSettings
    data_dir: Path

    def __post_init__(self) -> None:
        self._log_lock = threading.Lock()

    def record_decision(self, decision: dict[str, Any]) -> None:
        """Append every security decision to ``decisions.jsonl`` in the data dir (local provenance trail)."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with self._log_lock, open(self.data_dir / "decisions.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(decision, sort_keys=True, default=str) + "\n")
