"""The secret values a principal sent lately mask only what that principal is shown
(``core/sent_secrets.py``): a question an upstream relays to one principal is never masked by another
principal's password. Before, the list was the process's: bob's question quoting a text alice had sent as her
password showed it masked, which both hid bob's own words from bob's user and told bob "this is someone's
password" (a probe). Bob's own secret is still masked in his question. Real gateway, real upstream, real
HTTP on 127.0.0.1, two principals.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from sentinel_mcp.core import sent_secrets
from sentinel_mcp.gateway.front_held import HIDDEN_NOTE, relayed_question
from tests.conftest import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(180)
SERVER = str(Path(__file__).with_name("secret_server.py"))
ALICE, BOB = "alice-sent-secrets-token-0123456789", "bob-sent-secrets-token-0123456789ab"
ALICE_PW = "Alice-Pw-5521-probe"
BOB_PW = "Bob-Pw-7730-own"
# what bob writes as the user's name (not a secret): alice's password as it is, glued, quoted, in a sentence
GUESSES = (ALICE_PW, f"{ALICE_PW}!", f"'{ALICE_PW}'", f"is it {ALICE_PW} or not")


async def _questions(port: int, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    asked: list[str] = []

    async def approve(ctx, params):  # noqa: ANN001
        asked.append(params.message)
        fields = params.requested_schema.get("properties") or {}
        return ElicitResult(action="accept", content={n: True for n in fields})

    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client),
                      elicitation_callback=approve) as c:
        for tool, arguments in calls:
            await c.call_tool(f"sec__{tool}", arguments)
    return asked


async def test_another_principals_secret_never_masks_what_a_principal_is_shown(tmp_path: Path) -> None:
    cfg = tmp_path / "sentinel.json"
    cfg.write_text(json.dumps({
        "mcpServers": {"sec": {"command": sys.executable, "args": [SERVER], "timeout": 20,
                                "isolation": "per_principal"}},  # each principal's questions its own
        "sentinel": {"data_dir": str(tmp_path / "state"), "builtins": [],
                     "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}]}}))
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        await _questions(port, ALICE, [("login", {"user": "alice", "password": ALICE_PW})])
        asked = await _questions(port, BOB, [("asking_login", {"user": guess, "password": BOB_PW})
                                             for guess in GUESSES])
    finally:
        stop_process(proc)
    assert len(asked) == len(GUESSES), asked
    for guess, question in zip(GUESSES, asked, strict=True):
        assert f"Really sign {guess} in" in question, (guess, question)  # bob's own words, whole
        assert BOB_PW not in question and f"[redacted {len(BOB_PW)} chars]" in question, question
        assert HIDDEN_NOTE in question, question  # the person is told words may be missing


# what a caller sends as a secret to hide a word of a server's later question: the mark says so
HIDING = [("not", "Delete every file? This can not be undone."), ("500", "Pay 500 EUR to mallory?"),
          ("mallory", "Pay 500 EUR to mallory?"), ("undone", "Delete every file? This can not be undone.")]


@pytest.mark.parametrize(("secret", "question"), HIDING)
def test_a_relayed_question_a_secret_masks_says_words_may_be_missing(secret: str, question: str) -> None:
    sent_secrets.remember("hider", "srv", {"password": secret}, ["password"])
    shown = relayed_question(question, "the server srv", principal="hider")
    assert secret not in shown.partition("] ")[2] and HIDDEN_NOTE in shown, shown
    other = relayed_question(question, "the server srv", principal="someone else")
    assert question in other and HIDDEN_NOTE not in other, other


def test_the_values_kept_are_each_principals_own_and_bounded() -> None:
    for n in range(sent_secrets.MAX_KEPT + 10):
        sent_secrets.remember("flooder", "up", {"password": f"flood-{n:04d}"}, ["password"])
    sent_secrets.remember("carol", "up", {"password": "carol-pw-9911"}, ["password"])
    # an upstream's stderr (Sentinel's log, the operator's): what was sent to that upstream, by anyone
    assert "carol-pw-9911" not in sent_secrets.scrubbed("x carol-pw-9911 x", "up")
    assert sent_secrets.scrubbed("x carol-pw-9911 x", "other") == "x carol-pw-9911 x"
    for n in range(sent_secrets.MAX_KEPT + 10):  # carol's is not pushed out by another's flood
        sent_secrets.remember("flooder", "up", {"password": f"again-{n:04d}"}, ["password"])
    assert sent_secrets.masked("x carol-pw-9911 x", "carol") == "x [redacted 13 chars] x"
    assert sent_secrets.masked("x carol-pw-9911 x", "flooder") == "x carol-pw-9911 x"
    assert sent_secrets.masked("x flood-0000 x", "flooder") == "x flood-0000 x"  # its own oldest went
    for n in range(sent_secrets.MAX_PRINCIPALS + 5):
        sent_secrets.remember(f"p{n}", "up", {"password": "pw-of-many"}, ["password"])
    assert len(sent_secrets._by_principal.lists) <= sent_secrets.MAX_PRINCIPALS


def test_the_values_kept_are_bounded_in_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sent_secrets, "MAX_OWNER_CHARS", 10_000)
    monkeypatch.setattr(sent_secrets, "MAX_CHARS", 50_000)
    kept = sent_secrets._Kept(1000)
    for p in range(40):  # 40 principals, each sending 30 values of 1,000 characters
        kept.keep(f"p{p}", [f"{p:02d}-{n:03d}-" + "x" * 993 for n in range(30)])
        assert kept.chars[f"p{p}"] <= 10_000 and kept.total <= 50_000
        assert kept.total == sum(len(s) for values in kept.lists.values() for s in values)
    newest = kept.values("p39")
    assert len(newest) == 10 and newest[-1].startswith("39-029-")  # its newest kept, the oldest dropped
    assert "p0" not in kept.lists and len(kept.lists) == 5  # the least recently sent to went whole
