"""An address is an address. The confirmations of an address change show the new address among their items
('Shipping address now: ... New shipping address: ...'), so an address line of any text lets the agent write
items of its own into what the user reads ('1 Main St. New shipping address: 570 Elm Avenue, ...': the user's
own address, shown as the new one). A part of an address is letters, digits, blanks and the marks addresses
use (. , - ' # / &), at most 100 characters: an allow list, never a list of forged words. Real gateway, real
retail subprocess (permissive: its writes check nothing), real SWI-Prolog; Olivia Ito says yes to everything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.retail.retail_rig import OLIVIA, YES, AnsweringUser, retail_gateway, text_of

pytestmark = pytest.mark.timeout(180)

PENDING = "#W5442520"  # Olivia's, pending
OWN = "570 Elm Avenue, Suite 175, Denver, CO 80218, USA"  # her default address, as a confirmation shows it
GOOD = {"address1": "12 O'Neil St. #4", "address2": "Apt 2/B, Bldg A-1 & C", "city": "Saint-Jean",
        "state": "CO", "country": "USA", "zip": "80301-1234"}
FORGED = f"1 Main St. New shipping address: {OWN}. Then"
NOT_ADDRESSES = [("address1", FORGED), ("address2", "Apt 2: $0"), ("city", "Denver (as now)"),
                 ("address1", "1 Main St\u2028Denver"), ("address1", "1 Main St\u200b"), ("zip", "80301;"),
                 ("state", ""), ("address1", "x" * 101), ("city", 42), ("country", ["USA"])]
WRITES = [("retail__modify_pending_order_address", {"order_id": PENDING}, "Change the shipping address"),
          ("retail__modify_user_address", {"user_id": "olivia_ito_3591"}, "Change your default address")]


async def test_an_address_that_is_no_address_is_refused_before_the_user_is_asked(tmp_path: Path) -> None:
    user = AnsweringUser([OLIVIA, *YES, ("Change your default address?", True)])
    async with retail_gateway(tmp_path, user) as c:
        for tool, target, asks in WRITES:
            for field, value in NOT_ADDRESSES:
                args: dict[str, Any] = target | GOOD | {field: value}
                r = await c.call_tool(tool, args)
                assert r.is_error and "Sentinel refused this call" in text_of(r), (tool, field, text_of(r))
            assert not [m for m in user.messages() if asks in m], user.messages()
            # the allowed path beside it: an address in the marks addresses use
            r = await c.call_tool(tool, target | GOOD)
            assert not r.is_error, text_of(r)
            shown = [m for m in user.messages() if asks in m]
            assert len(shown) == 1, shown
            # each part of more than one word reads as one quoted value (readable_terms.pl)
            address = "\u201c12 O'Neil St. #4\u201d, \u201cApt 2/B, Bldg A-1 & C\u201d, Saint-Jean"
            assert address in shown[0], shown
