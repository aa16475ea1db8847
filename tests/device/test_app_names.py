"""The person's question names the app by what people call it; an app whose package only ends like a known
app's name ("org.evil.messages", "com.x.settings") must not be named as that app: the question would say "in
Messages" for a stranger's screen. Simulated phone through the device server, the person says no."""

from __future__ import annotations

import pytest
from tests.device.device_helpers import Answers, sim_server
from tests.device.test_tap_integrity import new_screen, node, phone_of, tap

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("package,posing", [
    ("org.evil.messages", "Messages"), ("com.x.settings", "Settings"), ("net.y.phone", "Phone"),
    ("com.z.chrome", "Chrome"),
    # a reserved word anywhere in the name: Sentinel's own voice, or a known app's, with a word added
    ("com.x.sentinel_verified", "Sentinel Verified"), ("com.x.verified_by_sentinel", "Verified By Sentinel"),
    ("org.x.system_update", "System Update"), ("com.x.messages_backup", "Messages Backup"),
])
async def test_a_stranger_is_not_named_as_a_known_app(tmp_path, package, posing):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    send = node(text="Send", rid=f"{package}:id/send", pkg=package, bounds="[90,1000][990,1140]")
    new_screen(phone, "stranger", package, [send], f"{package}:id/send")
    answers = Answers("no")
    await tap(server, answers, text="Send")
    assert len(answers.questions) == 1, answers.questions
    assert f"in {posing}?" not in answers.questions[0] and package in answers.questions[0], answers.questions


async def test_a_known_app_keeps_its_name(tmp_path):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    package = "com.google.android.apps.messaging"
    send = node(text="Send", rid=f"{package}:id/send", pkg=package, bounds="[90,1000][990,1140]")
    new_screen(phone, "known", package, [send], f"{package}:id/send")
    answers = Answers("no")
    await tap(server, answers, text="Send")
    assert "in Messages?" in answers.questions[0], answers.questions
