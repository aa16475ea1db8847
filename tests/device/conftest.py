from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # --import-mode=importlib: make the helper importable

from device_fake_adb import FakeAdbServer  # noqa: E402
import helpers  # noqa: E402,F401


@pytest.fixture
def fake_adb():
    server = FakeAdbServer().start()
    yield server
    server.stop()
