"""Attacks on how retail.pl reads the look-ups that locate the user (``absent_on_error``): the store answers
"not found" with an error, which lets the name and zip code be asked; a hostile upstream's error never says
who the user is, an upstream that errs for every look-up authenticates nobody (asking each question once),
and Sentinel's own error (the upstream gone) is no "not found". The upstream is the retail example with its
look-ups replaced (tests/retail/hostile_lookups.py) in a subprocess, behind the real gateway."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.retail.retail_rig import AnsweringUser, conversation, data_of, retail_runtime, text_of

pytestmark = pytest.mark.timeout(180)

SPELLINGS = ["json", "structured", "bare", "words", "busy", "not_found"]
OLIVIA_BY_NAME = [
    ("email address of your account", "olivia.ito5204@example.com"),
    ("first name", "Olivia"),
    ("last name", "Ito"),
    ("zip code", "80218"),
    ("Why do you want to cancel", "no longer needed"),
    ("Cancel this order?", True),
]


def hostile(which: str, spelling: str) -> list[str]:
    return ["-m", "tests.retail.hostile_lookups", which, spelling]


def asked_once_each(user: AnsweringUser, *texts: str) -> None:
    for text in texts:
        assert sum(text in m for m in user.messages()) == 1, (text, user.messages())


@pytest.mark.parametrize("spelling", SPELLINGS)
async def test_an_error_naming_a_user_id_is_no_user_id(tmp_path: Path, spelling: str) -> None:
    """'you have to authenticate the user identity by locating their user id via email, or via name + zip
    code' / 'You can only help one user per conversation': the email look-up errs, with another customer's
    user id in its text or beside it; that is never that customer. Only the store's own "not found" (its text
    as its API writes it, retail.pl's absent_on_error(['Error: User not found'])) lets the user be located by
    name and zip code instead (Olivia); an error of any other text (the store busy, or words around an id)
    says nothing about the email: the look-up failed, the call is denied saying so, and nothing is asked in
    its stead (before, any error read as "not found"). The other customer's data stays out of reach."""
    user = AnsweringUser(OLIVIA_BY_NAME)
    async with retail_runtime(tmp_path, server=hostile("email", spelling)) as rt, conversation(rt, user) as c:
        r = await c.call_tool("retail__get_order_details", {"order_id": "#W2417020"})
        assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
        r = await c.call_tool("retail__get_user_details", {"user_id": "emma_smith_8564"})
        assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
        r = await c.call_tool("retail__get_order_details", {"order_id": "#W5442520"})
        if spelling == "not_found":
            assert not r.is_error and data_of(r)["user_id"] == "olivia_ito_3591", text_of(r)
            asked_once_each(user, "email address", "first name", "last name", "zip code")
        else:
            assert r.is_error and "find_user_id_by_email returned an error" in text_of(r), text_of(r)
            asked_once_each(user, "email address")
            assert not any("first name" in m for m in user.messages()), user.messages()


@pytest.mark.parametrize("spelling", ["words", "not_found"])
async def test_an_upstream_that_errs_for_every_look_up_authenticates_nobody(
    tmp_path: Path, spelling: str
) -> None:
    """'you have to authenticate the user identity ... even when the user already provides the user id': both
    look-ups err (each with a user id in its text, or beside the store's own "not found"): nobody is
    authenticated, every call on a customer's data is denied, and each question is asked once however many
    calls are tried (no loop of look-ups or questions)."""
    user = AnsweringUser(OLIVIA_BY_NAME)
    async with retail_runtime(tmp_path, server=hostile("all", spelling)) as rt, conversation(rt, user) as c:
        for name, args in [
            ("retail__get_order_details", {"order_id": "#W5442520"}),
            ("retail__get_order_details", {"order_id": "#W2417020"}),
            ("retail__get_user_details", {"user_id": "olivia_ito_3591"}),
            ("retail__get_user_details", {"user_id": "emma_smith_8564"}),
            ("retail__cancel_pending_order", {"order_id": "#W5442520", "reason": "no longer needed"}),
            ("retail__cancel_pending_order", {"order_id": "#W2417020", "reason": "no longer needed"}),
        ]:
            r = await c.call_tool(name, args)
            why = "must be authenticated first" if spelling == "not_found" else "returned an error"
            assert r.is_error and why in text_of(r), (name, text_of(r))
        if spelling == "not_found":
            asked_once_each(user, "email address", "first name", "last name", "zip code")
        else:
            asked_once_each(user, "email address")
        assert not any("Cancel this order?" in m for m in user.messages())


async def test_sentinel_own_error_is_not_a_user_not_found(tmp_path: Path) -> None:
    """'authenticate the user identity by locating their user id via email, or via name + zip code': only the
    store's own answer says the email is not found; the upstream going down during the look-up is Sentinel's
    error (nothing known about the email), so the name and zip code are not asked in its stead, and the call
    is denied."""
    user = AnsweringUser(OLIVIA_BY_NAME)
    async with retail_runtime(tmp_path, server=hostile("crash", "json")) as rt, conversation(rt, user) as c:
        r = await c.call_tool("retail__get_order_details", {"order_id": "#W5442520"})
        assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
        assert not any("first name" in m for m in user.messages()), user.messages()

