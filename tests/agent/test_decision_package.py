"""A model's open_app decision names a package as the whole text, or it is not acted on."""

from __future__ import annotations

import pytest

from sentinel_mcp.agent.decision import UnusableDecision, parse_decision
from sentinel_mcp.agent.screen import Screen

SCREEN = Screen.from_result({"snapshot_id": "s-1", "package": "com.android.launcher", "elements": []})


@pytest.mark.parametrize("package", ["com.android.settings\n", "com.android.settings\n;reboot", " com.x.y"])
def test_open_app_with_more_than_a_package_name_is_unusable(package):
    # `$` matches before a final newline: "com.android.settings\n" passed as a package name
    with pytest.raises(UnusableDecision, match="package"):
        parse_decision({"action": "open_app", "text": package}, SCREEN, set())


def test_open_app_with_a_package_name_is_taken():
    assert parse_decision({"action": "open_app", "text": "com.android.settings"}, SCREEN, set()).text == (
        "com.android.settings"
    )
