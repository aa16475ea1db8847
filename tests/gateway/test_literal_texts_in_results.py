"""A JSON boolean or null and the text that spells it are different values in a read tool's result too.

A bound read tool's result became facts through SWI-Prolog's JSON reading, where a text is an atom and the
literals ``true``, ``false`` are the atoms ``true``, ``false``: the text ``"true"`` an upstream answered was
the boolean to the guard. A guard written as strictly as it can be (``A == true``: only a document the
upstream says is approved) let a write through on a document whose upstream answered the text ``"true"``
(a sloppy serializer, or a hostile server that wants the write). Over real HTTP, through the real gateway,
a real rulebase and a real upstream subprocess, on both ways a result becomes a term (built in C, or the
JSON text read by Prolog when a value is outside the C function's common case, an integer past 64 bits, or
when the C function is off).

Now a text of a result spelling ``true``, ``false`` or ``null`` (a value, or a member's name read with
``key(...)``) reaches a rule as a string, never as the literal's atom; every other text is an atom as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port, stop_process, wait_http
from tests.gateway.test_lean_calls import TOKEN, call, headers_for, post

pytestmark = pytest.mark.timeout(120)

DOCS = str(Path(__file__).with_name("typed_results_server.py"))
RULES = """
binding(doc_approved(D, A), tool('dc__get_doc', [doc_id = D]), extract([A = '/approved']), [ttl(60)]).
binding(doc_locked(D, L), tool('dc__get_doc', [doc_id = D]), extract([L = '/locked']), [ttl(60)]).
binding(doc_review(D, By, Ok), tool('dc__get_doc', [doc_id = D]),
        extract([By = '/reviews/*/by', Ok = '/reviews/*/ok']), [ttl(60)]).
binding(doc_mark(D, M), tool('dc__get_doc', [doc_id = D]), extract([M = key('/marks/*')]), [ttl(60)]).
binding(doc_hold(D, H), tool('dc__get_doc', [doc_id = D]), extract([H = '/hold']), [ttl(60)]).
read_only('dc__get_doc').

guard('dc__publish', [doc_id = D], ( doc_approved(D, A), require(A == true, 'not approved') )).
guard('dc__unlock', [doc_id = D], ( doc_locked(D, L), require(L == false, 'locked') )).
guard('dc__release', [doc_id = D], require(doc_review(D, _, true), 'no approving review')).
guard('dc__stamp', [doc_id = D], require(doc_mark(D, true), 'not marked')).
guard('dc__clear', [doc_id = D], ( doc_hold(D, H), require(H == null, 'held') )).
"""


@pytest.fixture(scope="module", params=["native", "ctypes"])
def gateway(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Any:
    """The gateway with the C function (the result built as a term in C) and without it (the result's JSON
    text read by Prolog: ``SENTINEL_PROLOG_CALL=ctypes``)."""
    tmp: Path = tmp_path_factory.mktemp("typed_results")
    rules = tmp / "docs.pl"
    rules.write_text(RULES)
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps({"mcpServers": {"dc": {"command": sys.executable, "args": [DOCS]}},
                               "sentinel": {"data_dir": str(tmp / "state"), "http": {"token": TOKEN},
                                            "rulebases": [str(rules)]}}))
    port = free_port()
    env = {**os.environ, "SENTINEL_PROLOG_CALL": "ctypes" if request.param == "ctypes" else ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
        yield port
    finally:
        stop_process(proc)


def answer(port: int, name: str, doc: str) -> tuple[bool, str]:
    """(whether the guard let the write through, the text answered)."""
    status, _, body = post(port, json.dumps(call(name, {"doc_id": doc})), headers_for(name))
    assert status == 200, body
    result = body["result"]
    return not result.get("isError"), result["content"][0]["text"]


WRITES = ["dc__publish", "dc__unlock", "dc__release", "dc__stamp", "dc__clear"]


@pytest.mark.parametrize("doc", ["d_text", "d_text_big", "d_spelled"])
@pytest.mark.parametrize("name", WRITES)
def test_a_result_text_spelling_a_literal_is_not_the_literal(gateway: int, name: str, doc: str) -> None:
    allowed, text = answer(gateway, name, doc)
    assert not allowed and "ED " + doc not in text, (name, doc, text)


@pytest.mark.parametrize("doc", ["d_bool", "d_bool_big"])
@pytest.mark.parametrize("name", ["dc__publish", "dc__unlock", "dc__release"])
def test_the_literals_of_a_result_read_as_before(gateway: int, name: str, doc: str) -> None:
    allowed, text = answer(gateway, name, doc)
    assert allowed and text.endswith("ED " + doc), (name, doc, text)


def test_a_member_named_true_read_with_key_is_a_text(gateway: int) -> None:
    """``{"marks": {"true": 1}}``: the member's name is a text the upstream wrote, never the boolean."""
    allowed, text = answer(gateway, "dc__stamp", "d_bool")
    assert not allowed, text
