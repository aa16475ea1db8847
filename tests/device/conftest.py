from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # --import-mode=importlib: make the helper importable

import device_helpers  # noqa: F401
from device_fake_adb import FakeAdbServer


@pytest.fixture
def fake_adb():
    server = FakeAdbServer().start()
    yield server
    server.stop()
