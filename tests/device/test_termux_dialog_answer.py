"""Only a JSON object answering "text": "yes" is a yes from Termux's confirm dialog; anything else it prints
is a no, never an error out of the wait (nested past the JSON parser: RecursionError went up through the
confirmation and the action's decision was never written)."""

from __future__ import annotations

import pytest

from device_tools.gate import CommandGate
from device_tools.termux_backend import TermuxBackend


@pytest.mark.parametrize("output", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b"\xff\xfe\x00\xd8",
    b'{"text": "yes"} trailing',
])
async def test_a_dialog_answer_that_does_not_parse_is_a_no(output):
    gate = CommandGate(TermuxBackend(lambda argv, timeout: output))
    assert await gate.wait_for_key("KEY_VOLUMEUP", timeout=5, question="Send the SMS?") is False
