"""An element reference is a grounded id or a short index in ASCII digits: "²" passed ``str.isdigit`` and
``int`` refused it, as it refuses 5,000 digits, so ``element_info`` answered with an unexpected error (and the
actuator's lookup raised the same ValueError); "٣" was read as the index 3."""

from __future__ import annotations

import pytest
from tests.device.device_helpers import connect, sim_server

from device_tools.element_registry import parse_dump

DUMP = ('<hierarchy rotation="0"><node index="0" text="OK" class="android.widget.Button" package="com.x" '
        'clickable="true" bounds="[0,0][100,100]" /><node index="1" text="Pay" class="android.widget.Button" '
        'package="com.x" clickable="true" bounds="[0,200][100,300]" /></hierarchy>')


@pytest.mark.parametrize("ref", ["²", "#²", "9" * 5000, "٢", "#٢", "𝟐", "2\u200b"])
def test_a_reference_not_in_ascii_digits_names_nothing(ref):
    assert parse_dump(DUMP).find(ref) is None


@pytest.mark.parametrize("ref,text", [("1", "OK"), ("#2", "Pay"), (" 2 ", "Pay")])
def test_an_index_names_its_element(ref, text):
    found = parse_dump(DUMP).find(ref)
    assert found is not None and found.text == text


async def test_element_info_answers_a_bad_reference_with_a_clear_error(tmp_path):
    async with connect(sim_server(tmp_path)) as client:
        screen = await client.call_tool("screen_read", {})
        sid = screen.structured_content["snapshot_id"]
        for ref in ("²", "9" * 5000):
            r = await client.call_tool("element_info", {"snapshot_id": sid, "element_id": ref})
            assert r.is_error and "no element" in r.content[0].text, r.content[0].text
