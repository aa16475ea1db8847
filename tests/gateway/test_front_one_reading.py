"""One message, one reading, on every front and path: a name given twice in one object and a text not in
Unicode NFC are refused before anything runs, over real HTTP (the lean 2026 path, the SDK's 2026 path, a
handshake-era session's lean path and the SDK's behind it) and over stdio (a modern and a handshake-era
connection). A name twice inside ``params`` is invalid params (-32602), elsewhere an invalid request (-32600),
answered with the request's id unless the id itself is the name given twice. Before, the last of two values
was judged and forwarded (one key), while a reader that keeps the first (Go's ``encoding/json``, a logger, a
stream parser) read the other; and ``e`` + U+0301 was judged as two code points a rule's ``é`` is not."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.gateway.test_front_strict_requests import PATHS, audit_before, audit_unchanged, ran, send
from tests.gateway.test_lean_calls import call as http_call
from tests.gateway.test_lean_calls import gateway  # noqa: F401 - its fixture
from tests.gateway.test_lean_stdio_front import Wire, _opened, call, open_legacy, open_modern

pytestmark = pytest.mark.timeout(180)



def _swap(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    return lambda body: body.replace(old, new, 1)


ARGS = b'{"text": "must-not-run"}'
# (the case, what the body's bytes become, the error's code, the id answered)
TWICE = [
    ("in the arguments", _swap(ARGS, b'{"text": "ok", "text": "must-not-run"}'), -32602, 9),
    ("in the arguments, the name escaped", _swap(ARGS, b'{"text": "ok", "\\u0074ext": "x"}'), -32602, 9),
    ("the tool's name", _swap(b'"name": "tb__echo"', b'"name": "tb__x", "name": "tb__echo"'), -32602, 9),
    ("the envelope's version", _swap(b'"jsonrpc": "2.0"', b'"jsonrpc": "1.0", "jsonrpc": "2.0"'), -32600, 9),
    ("the id", _swap(b'"id": 9', b'"id": 9, "id": 8'), -32600, None),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("case", "edit", "code", "rid"), TWICE, ids=[t[0] for t in TWICE])
def test_a_name_given_twice_is_refused_on_every_http_path(
        gateway: int, path: str, case: str, edit: Any, code: int, rid: Any,  # noqa: F811
        request: pytest.FixtureRequest) -> None:
    before = audit_before(request)
    status, _, answer = send(gateway, path, "must-not-run", edit=edit)
    assert status == 400, (case, status, answer)
    assert answer["error"]["code"] == code and "twice" in answer["error"]["message"], (case, answer)
    assert answer["id"] == rid, (case, answer)
    audit_unchanged(request, before)  # nothing was decided, nothing ran


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("text", ["cafe\u0301", "\u1100\u1161", "\u212a", "c\u0327\u0301"])
def test_a_text_not_in_nfc_is_refused_on_every_http_path(gateway: int, path: str, text: str) -> None:  # noqa: F811
    _, _, answer = send(gateway, path, text)
    assert not ran(answer, text), (text, answer)
    said = answer["error"]["message"] if "error" in answer else answer["result"]["content"][0]["text"]
    assert "NFC" in said, (text, answer)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("text", ["caf\u00e9", "\uac00", "K", "\u1e09", "\uff43\uff41\uff46\u00e9", "\ufb01"])
def test_a_text_in_nfc_runs_on_every_http_path(gateway: int, path: str, text: str) -> None:  # noqa: F811
    status, _, answer = send(gateway, path, text)
    assert status == 200 and ran(answer, text), (text, answer)


@pytest.fixture(scope="module", params=["modern", "legacy"])
def stdio(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Any:
    opening = open_modern if request.param == "modern" else open_legacy
    for w in _opened(tmp_path_factory.mktemp("one-reading"), opening):
        w.modern = request.param == "modern"  # type: ignore[attr-defined]
        yield w


def test_a_name_given_twice_and_a_text_not_in_nfc_are_refused_over_stdio(stdio: Wire) -> None:
    modern = stdio.modern  # type: ignore[attr-defined]
    line = b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"tb__echo","arguments":%s%s}}'
    meta = b',"_meta":' + json.dumps(call(0, "x")["params"]["_meta"]).encode() if modern else b""
    stdio.send(line % (b'{"text":"ok","text":"must-not-run"}', meta))
    assert stdio.answer(41)["error"]["code"] == -32602
    stdio.send(b'{"jsonrpc":"2.0","id":42,"id":43,"method":"ping"}')
    assert all(f.get("id") not in (42, 43) or "error" in f for f in stdio.frames_for(42, 0.5))
    stdio.send(line.replace(b"41", b"44") % (b'{"text":"cafe\\u0301"}', meta))
    answer = stdio.answer(44)
    said = answer["error"]["message"] if "error" in answer else answer["result"]["content"][0]["text"]
    assert "NFC" in said and not ("result" in answer and not answer["result"].get("isError")), answer
    stdio.send(line.replace(b"41", b"45") % (b'{"text":"caf\\u00e9"}', meta))
    assert stdio.answer(45)["result"]["content"][0]["text"] == "caf\u00e9"


def test_each_case_is_a_distinct_rewrite() -> None:
    """Every edit above changes the body it is given (a rewrite that matched nothing would test nothing)."""
    body = json.dumps(http_call("tb__echo", {"text": "must-not-run"}, 9)).encode()
    for case, edit, _, _ in TWICE:
        assert edit(body) != body, case
