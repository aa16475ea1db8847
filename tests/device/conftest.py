from __future__ import annotations


import pytest

from tests.device.device_fake_adb import FakeAdbServer


@pytest.fixture
def fake_adb():
    server = FakeAdbServer().start()
    yield server
    server.stop()
