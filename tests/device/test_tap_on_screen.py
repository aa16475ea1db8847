"""A tap goes only to a point on the screen: an element whose centre lies outside every window (off the
screen's edge, at a negative coordinate, at int32's end, past its size) is refused, on the simulated phone as
on adb, and the control beside it is still tapped. Held already (the window list, ``window_list.covering``);
kept as the extremes' regression. Simulated phone (real uiautomator XML), real MCP client."""

from __future__ import annotations

import pytest
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id
from tests.device.test_screen_meaning import SHOP, button, show
from tests.device.test_tap_integrity import phone_of, taps

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize("bounds", ["[1100,900][1400,1000]", "[-400,900][-100,1000]", "[200,2450][800,2600]",
                                    "[-2147483648,0][-2147483000,10]", "[0,-900][100,-800]"])
async def test_an_element_whose_centre_is_off_the_screen_is_not_tapped(tmp_path, bounds):
    server = sim_server(tmp_path)
    phone = phone_of(server)
    show(phone, "shop", SHOP, button(SHOP, "Gift", bounds), button(SHOP, "Home", "[0,0][200,100]"))
    async with connect(server, "legacy", Answers("yes")) as client:
        screen = await client.call_tool("screen_read", {})
        r = await client.call_tool("click", {"element_id": element(screen, text="Gift")["id"],
                                             "snapshot_id": snapshot_id(screen)})
        assert r.is_error and "lies under" in r.content[0].text, r.content[0].text
        assert taps(phone) == []
        ok = await client.call_tool("click", {"element_id": element(screen, text="Home")["id"],
                                              "snapshot_id": snapshot_id(screen)})
    assert not ok.is_error and len(taps(phone)) == 1, ok.content[0].text
