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
from .network_names import NAMES_TIMEOUT, NetworkNames
from .personal_apps import personal_apps
from .screen_privacy import ScreenPrivacy
from .settings import DeviceSettings
from sentinel_mcp.core.decision_record import BuiltinRecord, Outcome, RecordNotWritten


@dataclass
class DeviceRuntime:
    backend: DeviceBackend
    gate: CommandGate
    actuator: Actuator
    settings: DeviceSettings
    data_dir: Path

    def __post_init__(self) -> None:
        self._log_lock = threading.Lock()
        # the names Settings shows are read from the phone through the gate (read-only, recorded)
        names = NetworkNames(lambda argv: self.gate.read(argv, timeout=NAMES_TIMEOUT))
        self.privacy = ScreenPrivacy(personal_apps(self.settings.personal_apps), self.actuator.registry,
                                     names)

    def record_decision(self, decision: dict[str, Any]) -> None:
        """Append a security decision to ``decisions.jsonl`` in the data dir: a ``BuiltinRecord`` (typed
        outcome, redacted like the gateway's audit rows) pointing to the gateway's decision (``decision_id``).
        Raises ``RecordNotWritten`` when it cannot be stored: the actuator then refuses (fail closed)."""
        try:
            record = BuiltinRecord("device", Outcome(decision.get("outcome", "error")),
                                   str(decision.get("decision_id", "")), details=decision)
            line = json.dumps(record.redacted(), sort_keys=True, default=str) + "\n"
            self.data_dir.mkdir(parents=True, exist_ok=True)
            with self._log_lock, open(self.data_dir / "decisions.jsonl", "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
        except (OSError, ValueError) as e:
            raise RecordNotWritten(f"the device's decision record: {e}") from None
