"""A candidate rulebase in the console (the editor's check and the what-if replay) is code run in the live
engine, so only the owner may try one; and even the owner's (a console form: a browser's text) reads no file
but the policy documents the rulebase in force cites (a citation quotes what it reads: any other path would
hand the page the host's files) and is held to the inference budget in force. Real Sentinel, real HTTP,
signed-in principals; the secrets are files beside the config."""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path

import pytest
from tests.console.console_rig import (
    BOB,
    CAROL,
    OWNER_TOKEN,
    console_config,
    http_sentinel,
    mcp_client,
    signed_in,
)
from tests.identity.identity_rig import BOOKINGS_PL

from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from sentinel_mcp.policy.untrusted_rules import UntrustedRules

pytestmark = pytest.mark.timeout(240)
TERMS = "# Terms\n\nA booking may be cancelled only while it is confirmed.\n"
CITES_TERMS = "policy_document(terms, 'terms.md').\n"


def _setup(tmp: Path) -> tuple[Path, str, Path]:
    """The console rig plus a rulebase in force that cites terms.md, and a secret file beside the config."""
    cfg = console_config(tmp)
    rules = tmp / "rules"
    rules.mkdir()
    (rules / "terms.md").write_text(TERMS)
    words = rules / "words.pl"
    words.write_text(CITES_TERMS)
    body = json.loads(cfg.read_text())
    body["sentinel"]["rulebases"].append(str(words))
    cfg.write_text(json.dumps(body))
    secret = "SECRET" + uuid.uuid4().hex
    (tmp / "secret.txt").write_text(f"# Keys\n\nThe key is {secret} here.\n")
    os.symlink(tmp / "secret.txt", rules / "innocent.md")
    return cfg, secret, rules


def _leaking(path: str) -> str:
    """bookings.pl plus a document at ``path`` and a guard quoting it (its first letter is in any file)."""
    return (
        BOOKINGS_PL.read_text() + f"\npolicy_document(leak, {_quoted(path)}).\n"
        "guard('bk__merge_bookings', [first = F], require(F == none, 'x', policy_ref(leak, 'e'))).\n"
    )


def _quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _problems(r) -> list[str]:  # type: ignore[no-untyped-def]
    assert r.status_code == 200, r.text[:500]
    return [p["message"] for p in r.json()["problems"]]


async def test_a_candidate_reads_only_the_documents_in_force_and_never_says_which_files_exist(tmp_path):
    cfg, secret, rules = _setup(tmp_path)
    spellings = [
        str(tmp_path / "secret.txt"),  # absolute
        str(rules / "innocent.md"),  # a symlink out
        "../secret.txt",  # relative to the rulebase, the project, the working directory
        str(cfg),  # the config (principals' tokens)
        str(tmp_path / "state" / "http-token"),
        "/etc/hostname",
        "/etc/./passwd",
        f"{rules}/../secret.txt",
        "~/.bashrc",
        str(rules / "terms.md") + "/../../secret.txt",
        str(tmp_path / "no-such-file.md"),  # one that does not exist: the same answer
    ]
    with http_sentinel(cfg) as (base, _):
        async with (
            signed_in(base, OWNER_TOKEN) as owner,
            mcp_client(base, OWNER_TOKEN, mode="auto") as client,
        ):
            await client.call_tool(
                "bk__merge_bookings", {"first": "BK-1", "second": "BK-2"}
            )  # a record to replay
            said = []
            for path in spellings:
                r = await owner.post(
                    "/console/policy/check",
                    {"file": "bookings.pl", "candidate": _leaking(path)},
                    headers={"x-console-live": "check"},
                )
                messages = _problems(r)
                assert secret not in r.text
                refused = [
                    m for m in messages if "not one of the documents the rulebase in force declares" in m
                ]
                assert refused, (path, messages)
                said.append(refused[0].replace(path, "<path>"))
                page = await owner.post(
                    "/console/policy/whatif", {"file": "bookings.pl", "candidate": _leaking(path)}
                )
                assert page.status_code == 200 and secret not in page.text, path
                assert "the key is" not in page.text.lower()
            assert len(set(said)) == 1, set(said)  # an existing file and a missing one: one answer
            # the document the rulebase in force cites, in another spelling of its path: it may be cited
            r = await owner.post(
                "/console/policy/check",
                {
                    "file": "bookings.pl",
                    "candidate": _leaking(str(rules / "." / "terms.md"))
                    .replace("leak", "terms")
                    .replace("policy_document(terms", "policy_document(terms2"),
                },
                headers={"x-console-live": "check"},
            )
            assert not [m for m in _problems(r) if "not one of the documents" in m]
            r = await owner.post(
                "/console/policy/check",
                {"file": "words.pl", "candidate": CITES_TERMS},
                headers={"x-console-live": "check"},
            )
            assert not [m for m in _problems(r) if "document" in m], r.text


async def test_only_the_owner_tries_a_candidate_and_the_policy_page_checks_within_the_viewers_reach(tmp_path):
    """A candidate is code run in Sentinel's engine, whose budget bounds steps, not a builtin's own work (a
    format/3 repeat count, msort over a long list): a principal other than the owner is refused both forms
    with its own valid token, and its policy page shows no editor; the page's check of the rulebase in force
    names no annotation of a tool outside the viewer's reach (carol reaches bk__list_bookings only)."""
    cfg, _, _ = _setup(tmp_path)
    candidate = (
        BOOKINGS_PL.read_text()
        + "\nbinding(probe(X), tool('bk__cancel_booking', [booking_id = X]), extract([]), []).\n"
    )
    with http_sentinel(cfg) as (base, _):
        async with (
            signed_in(base, CAROL) as carol,
            signed_in(base, BOB) as bob,
            signed_in(base, OWNER_TOKEN) as owner,
        ):
            # carol may not read sentinel://rulebase: her page shows none of it (test_console_rulebase_reach)
            for person, note in ((carol, "rulebase-out-of-reach"), (bob, "owner-only")):
                page = await person.page("/console/policy")
                assert f'id="{note}"' in page and 'id="candidate-text"' not in page
                assert "not read-only" not in page
                for path in ("/console/policy/check", "/console/policy/whatif"):
                    for live in ({}, {"x-console-live": "check"}):
                        r = await person.post(
                            path, {"file": "bookings.pl", "candidate": candidate}, headers=live
                        )
                        assert r.status_code == 403, (path, live, r.text[:200])
            r = await owner.post(
                "/console/policy/check",
                {"file": "bookings.pl", "candidate": candidate},
                headers={"x-console-live": "check"},
            )
            assert any("bk__cancel_booking" in m and "not read-only" in m for m in _problems(r))


SPIN = """
option(inference_limit(50000000)).
spin(0) :- !.
spin(K) :- K1 is K - 1, spin(K1).
guard('bk__merge_bookings', [first = _], spin(5000000)).
"""


async def test_a_candidates_inference_budget_is_never_above_the_rulebase_in_forces(tmp_path):
    """The candidate raises its own budget to 50M and loops 5M times: held to the 2M of the rulebase in force
    it is denied for its inferences (a trusted rulebase with the same option proves it)."""
    rb = tmp_path / "spin.pl"
    rb.write_text(SPIN)
    call = ToolCall(
        name="bk__merge_bookings",
        server="bk",
        tool="merge_bookings",
        arguments={"first": "A", "second": "B"},
        session_id="s",
    )
    decided = {}
    for name, untrusted in (("trusted", None), ("candidate", UntrustedRules(frozenset(), 2_000_000))):
        guard = PolicyGuard(
            [rb], None, store_path=tmp_path / f"{name}.db", engine=shared_engine(), untrusted=untrusted
        )
        await guard.start(watch=False)
        try:
            decided[name] = await guard.decide(call)
        finally:
            await guard.close()
    assert isinstance(decided["trusted"], Allow), decided["trusted"]
    assert isinstance(decided["candidate"], Deny) and "inference limit" in decided["candidate"].reason


async def test_the_what_if_of_a_looping_candidate_is_held_to_the_budget_in_force(tmp_path):
    """The owner's recorded read (allowed by the default policy) replayed under a candidate that guards it
    with the 5M-step loop and a 300M budget of its own: the decision changes to a denial for the proof's
    inferences (under the candidate's own budget it would prove, and nothing would change)."""
    cfg, _, _ = _setup(tmp_path)
    looping = SPIN.replace("bk__merge_bookings', [first = _]", "bk__list_bookings', [user_id = _]")
    with http_sentinel(cfg) as (base, _):
        async with (
            signed_in(base, OWNER_TOKEN) as owner,
            mcp_client(base, OWNER_TOKEN, mode="auto") as client,
        ):
            read = await client.call_tool("bk__list_bookings", {"user_id": "u_123"})
            assert not read.is_error, read
            r = await owner.post(
                "/console/policy/whatif",
                {"file": "bookings.pl", "candidate": BOOKINGS_PL.read_text() + looping},
            )
            assert r.status_code == 200, r.text[:500]
            report = re.sub(r"\s+", " ", r.text[r.text.index('id="whatif-report"') :])
            assert re.search(r'id="change-count">1<', report), report[:3000]
            assert "exceeded its inference limit" in report, report[:3000]


async def test_a_candidate_of_a_file_that_includes_others_includes_the_ones_in_force(tmp_path):
    """The candidate is written apart (a private directory): the files the one in force includes are written
    beside it, so its include reads them rather than find no file; its own errors are still its own."""
    cfg, _, rules = _setup(tmp_path)
    (rules / "more").mkdir()
    (rules / "more" / "extra.pl").write_text("extra_ok(x).\n:- public extra_ok/1.\n")
    (rules / "words.pl").write_text(CITES_TERMS + ":- include_rules('more/extra.pl').\n")
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner:
            keep = CITES_TERMS + ":- include_rules('more/extra.pl').\n"
            r = await owner.post("/console/policy/check", {"file": "words.pl", "candidate": keep},
                                 headers={"x-console-live": "check"})
            assert _problems(r) == []
            broken = keep + "also :- shell(ls).\n"
            r = await owner.post("/console/policy/check", {"file": "words.pl", "candidate": broken},
                                 headers={"x-console-live": "check"})
            assert any("shell" in m for m in _problems(r)), _problems(r)
            r = await owner.post("/console/policy/whatif", {"file": "words.pl", "candidate": keep})
            assert r.status_code == 200, r.text[:500]
            # (the page shows the candidate's text: its declaration is there, no problem of it)
            assert "include_rules(&#39;more/extra.pl&#39;):" not in r.text, r.text[-3000:]
