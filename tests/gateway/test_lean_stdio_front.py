"""The lean path over stdio (gateway/stdio_lean_calls.py): a modern connection's common ``tools/call`` is
served without the SDK's dispatcher, and answers as the SDK does; everything else still goes to the SDK.

The same call is sent twice on one connection: plain (the lean path) and with a progress token in ``_meta``
(which the lean path leaves to the SDK; a tool that reports no progress gets the same answer there). Answers
are compared whole after JSON parsing, with only the per-call random values masked. Then what a client could
try against it: cancelling, ending the connection mid-call, enveloped calls on a handshake connection, and
the malformed-message corpus with the envelope added.
"""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.core.call_meta import SESSION_KEY
from sentinel_mcp.gateway.call_record import META_KEY
from sentinel_mcp.gateway.stdio_lean_calls import StdioLeanCalls
from tests.gateway.helpers import TOOLBOX
from tests.records.fuzz_corpus import corpus
from tests.records.rig import audit_rows, kill_tree

pytestmark = pytest.mark.timeout(180)

MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientInfo": {"name": "lean-stdio-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
RANDOM_KEYS = {SESSION_KEY, META_KEY, "requestState", "decision_id"}
ROOT = Path(__file__).resolve().parents[2]


class Wire:
    """A ``serve`` over stdio, spoken to line by line; its lines read by a thread (so a wait has a bound)."""

    def __init__(self, tmp: Path) -> None:
        cfg = tmp / "sentinel.json"
        cfg.write_text(json.dumps({"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
                                   "sentinel": {"data_dir": str(tmp / "state"), "builtins": []}}))
        self.store = tmp / "state" / "sentinel.db"
        self.proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=ROOT, start_new_session=True)
        self.lines: queue.Queue[Any] = queue.Queue()
        self.early: list[Any] = []  # frames read while waiting for another id
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))
        self.lines.put(None)

    def send(self, message: Any) -> None:
        assert self.proc.stdin is not None
        raw = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.proc.stdin.write(raw + b"\n")
        self.proc.stdin.flush()

    def answer(self, rid: Any, timeout: float = 60.0) -> dict[str, Any]:
        for i, frame in enumerate(self.early):
            if _answers(frame, rid):
                return self.early.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            frame = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            assert frame is not None, f"the gateway ended before answering {rid!r}"
            if _answers(frame, rid):
                return frame
            self.early.append(frame)

    def frames_for(self, rid: Any, seconds: float) -> list[Any]:
        """Every answer to ``rid`` that arrives within ``seconds``."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                frame = self.lines.get(timeout=0.05)
            except queue.Empty:
                continue
            if frame is None:
                break
            self.early.append(frame)
        return [f for f in self.early if _answers(f, rid)]

    def close(self) -> None:
        kill_tree(self.proc)


def _answers(frame: Any, rid: Any) -> bool:
    return isinstance(frame, dict) and frame.get("id") == rid and ("result" in frame or "error" in frame)


_ABSENT = object()


def call(rid: Any, name: Any, arguments: Any = _ABSENT, *, token: Any = None, modern: bool = True,
         **extra: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, **({"_meta": dict(ENVELOPE)} if modern else {}), **extra}
    if arguments is not _ABSENT:
        params["arguments"] = arguments
    if token is not None:
        params.setdefault("_meta", {})["progressToken"] = token
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<random>" if k in RANDOM_KEYS else masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def open_modern(wire: Wire) -> None:
    """The opening request decides the era; it is the SDK's (never the lean path's)."""
    wire.send({"jsonrpc": "2.0", "id": "open", "method": "tools/list", "params": {"_meta": ENVELOPE}})
    names = [t["name"] for t in wire.answer("open")["result"]["tools"]]
    assert "tb__echo" in names


def open_legacy(wire: Wire) -> None:
    """A handshake-era connection (as Claude Desktop opens one), taking elicitation and log lines."""
    wire.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
        "clientInfo": {"name": "lean-stdio-test", "version": "1"}}})
    assert wire.answer("init")["result"]["protocolVersion"] == "2025-11-25"
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire.send({"jsonrpc": "2.0", "id": "level", "method": "logging/setLevel", "params": {"level": "debug"}})
    assert wire.answer("level")["result"] == {}


def _opened(tmp: Path, opening: Any) -> Any:
    w = Wire(tmp)
    try:
        opening(w)
        yield w
    finally:
        w.close()


@pytest.fixture(scope="module")
def wire(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from _opened(tmp_path_factory.mktemp("lean-stdio"), open_modern)


@pytest.fixture(scope="module")
def legacy(tmp_path_factory: pytest.TempPathFactory) -> Any:
    yield from _opened(tmp_path_factory.mktemp("lean-stdio-legacy"), open_legacy)


SHAPES = [
    ("echo", ["tb__echo", {"text": "hello"}], {}),
    ("noop without arguments", ["tb__noop"], {}),
    ("text beyond ASCII", ["tb__echo", {"text": "h\u00e9llo \u2603 \U0001f600"}], {}),
    ("an unknown tool", ["tb__nothing_here", {}], {}),
    ("an argument of the wrong type", ["tb__echo", {"text": 5}], {}),
    ("a required argument missing", ["tb__echo", {}], {}),
    ("an argument not in the schema", ["tb__echo", {"text": "x", "extra": 1}], {}),
    ("a name not a string", [7, {}], {}),
    ("arguments an array", ["tb__echo", ["x"]], {}),
    ("arguments null", ["tb__echo", None], {}),
    ("a destructive tool (the guard asks)", ["tb__delete_thing", {"name": "a"}], {}),
    ("another server's namespace", ["other__echo", {"text": "x"}], {}),
    ("the gateway's own namespace", ["sentinel__facts", {}], {}),
    ("an extra params key", ["tb__echo", {"text": "x"}], {"task": {"ttl": 1}}),
]


@pytest.mark.parametrize("shape", SHAPES, ids=[s[0] for s in SHAPES])
def test_a_lean_answer_is_the_sdks_answer(wire: Wire, shape: Any) -> None:
    name, args, extra = shape
    wire.send(call(f"lean-{name}", *args, **extra))
    lean = wire.answer(f"lean-{name}")
    wire.send(call(f"sdk-{name}", *args, token=f"t-{name}", **extra))
    sdk = wire.answer(f"sdk-{name}")
    lean.pop("id"), sdk.pop("id")
    assert masked(lean) == masked(sdk)


@pytest.mark.parametrize("shape", SHAPES, ids=[s[0] for s in SHAPES])
def test_a_lean_answer_is_the_sdks_answer_on_a_handshake_connection(legacy: Wire, shape: Any) -> None:
    name, args, extra = shape
    if name == "a destructive tool (the guard asks)":
        return  # the guard asks the person mid-call on this era: test_a_lean_call_asks_the_person_...
    legacy.send(call(f"lean-{name}", *args, modern=False, **extra))
    lean = legacy.answer(f"lean-{name}")
    legacy.send(call(f"sdk-{name}", *args, token=f"t-{name}", modern=False, **extra))
    sdk = legacy.answer(f"sdk-{name}")
    lean.pop("id"), sdk.pop("id")
    assert masked(lean) == masked(sdk)


@pytest.mark.parametrize("token", [None, "via-sdk"], ids=["lean", "sdk"])
@pytest.mark.parametrize("approve", [True, False], ids=["approved", "refused"])
def test_a_lean_call_asks_the_person_through_the_sdks_dispatcher(
        legacy: Wire, token: Any, approve: bool) -> None:
    """On the handshake era the guard asks mid-call (``elicitation/create``); the client's answer comes back
    on stdin to the SDK's dispatcher, which hands it to the lean call waiting for it."""
    rid = f"delete-{token}-{approve}"
    legacy.send(call(rid, "tb__delete_thing", {"name": "a"}, token=token, modern=False))
    while True:
        asked = legacy.lines.get(timeout=60)
        if isinstance(asked, dict) and asked.get("method") == "elicitation/create":
            break
        legacy.early.append(asked)
    assert "tb__delete_thing" in asked["params"]["message"]
    legacy.send({"jsonrpc": "2.0", "id": asked["id"],
                 "result": {"action": "accept", "content": {"approve": approve}}})
    answer = legacy.answer(rid)["result"]
    text = answer["content"][0]["text"]
    if approve:
        assert answer.get("isError") is not True and "deleted a" in text, answer
    else:
        assert answer["isError"] is True and "deleted a" not in text, answer


def test_log_lines_of_a_lean_call_come_before_its_answer(legacy: Wire) -> None:
    for i in range(10):
        legacy.send(call(f"chatty-{i}", "tb__chatty", {}, modern=False))
        frames: list[Any] = []
        while not frames or not _answers(frames[-1], f"chatty-{i}"):
            frames.append(legacy.lines.get(timeout=60))
        logs = [f["params"]["data"] for f in frames if f.get("method") == "notifications/message"]
        assert logs == ["chatty: first line", "chatty: second line"], frames


def _running(held: Path) -> None:
    """The toolbox's ``held`` call has reached the upstream (it wrote its marker), bounded."""
    for _ in range(3000):
        if held.exists():
            return
        time.sleep(0.01)
    raise AssertionError(f"the held call never reached the upstream ({held})")


# how long a cancelled call is watched for an answer after its upstream call was let go (held + ".go"): an
# answer it should not get would follow at once
AFTER_RELEASE = 1.5


@pytest.mark.parametrize("token", [None, "via-sdk"], ids=["lean", "sdk"])
def test_a_cancelled_call_on_a_handshake_connection_is_never_answered(
        legacy: Wire, token: Any, tmp_path: Path) -> None:
    held = tmp_path / "held"
    legacy.send(call(f"cancel-{token}", "tb__held", {"path": str(held)}, token=token, modern=False))
    _running(held)
    legacy.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": f"cancel-{token}"}})
    legacy.send(call(f"after-{token}", "tb__echo", {"text": "on"}, modern=False))
    assert legacy.answer(f"after-{token}")["result"]["content"][0]["text"] == "on"
    (tmp_path / "held.go").touch()  # the upstream's call ends now (answered, if it was not cancelled there)
    assert legacy.frames_for(f"cancel-{token}", AFTER_RELEASE) == []


def test_numeric_and_odd_ids_are_answered_under_the_same_id(wire: Wire) -> None:
    for rid in (0, -1, 2**53 - 1, "x" * 200, "\u00e9"):
        wire.send(call(rid, "tb__echo", {"text": "id"}))
        assert wire.answer(rid)["result"]["content"][0]["text"] == "id"


@pytest.mark.parametrize("token", [None, "via-sdk"], ids=["lean", "sdk"])
def test_a_cancelled_call_is_never_answered_and_the_connection_goes_on(wire: Wire, token: Any) -> None:
    wire.send(call("to-cancel", "tb__slow", {"seconds": 3}, token=token))
    time.sleep(0.5)
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": "to-cancel", "reason": "changed my mind"}})
    wire.send(call("after-cancel", "tb__echo", {"text": "still here"}))
    assert wire.answer("after-cancel")["result"]["content"][0]["text"] == "still here"
    assert wire.frames_for("to-cancel", 4.0) == []
    # its record is whole either way: the forwarded call's outcome is written when the upstream answers
    rows = [r for r in audit_rows(wire.store) if r["tool"] == "tb__slow"]
    assert rows[-1]["event"] == "outcome", rows[-1]


def test_a_cancellation_naming_another_id_cancels_nothing(wire: Wire) -> None:
    wire.send(call(41, "tb__slow", {"seconds": 1}))
    # (the text "41" would name it: the SDK correlates ids as text too)
    for other in (410, "4l", None, True, {"id": 41}, [41]):
        wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": other}})
    assert "result" in wire.answer(41, timeout=30)


@pytest.mark.parametrize("token", [None, "via-sdk"], ids=["lean", "sdk"])
def test_a_call_running_when_the_client_leaves_is_answered_connection_closed(
        tmp_path: Path, token: Any) -> None:
    w = Wire(tmp_path)
    try:
        open_modern(w)
        held = tmp_path / "held"  # never let go: the call runs until the client leaves
        w.send(call("running", "tb__held", {"path": str(held)}, token=token))
        _running(held)
        assert w.proc.stdin is not None
        w.proc.stdin.close()
        answer = w.answer("running", timeout=30)
        assert answer["error"]["message"] == "Connection closed", answer
        assert w.proc.wait(timeout=30) == 0
    finally:
        w.close()


def test_an_enveloped_call_on_a_handshake_connection_is_refused_as_the_sdk_refuses_it(tmp_path: Path) -> None:
    w = Wire(tmp_path)
    try:
        w.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}})
        assert "result" in w.answer("init")
        w.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        w.send(call("enveloped", "tb__echo", {"text": "x"}))
        refused = w.answer("enveloped")
        assert refused["error"]["code"] == -32600, refused
        w.send({"jsonrpc": "2.0", "id": "plain", "method": "tools/call",
                "params": {"name": "tb__echo", "arguments": {"text": "legacy"}}})
        assert w.answer("plain")["result"]["content"][0]["text"] == "legacy"
        executed = [r for r in audit_rows(w.store) if r["tool"] == "tb__echo"]
        assert len([r for r in executed if r["outcome"] == "ok"]) == 1
    finally:
        w.close()


def _enveloped(raw: bytes) -> bytes:
    """A corpus line with the 2026 envelope added to a tools/call's params, when it has an object of them."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    if isinstance(message, dict) and message.get("method") == "tools/call":
        params = message.get("params")
        if isinstance(params, dict) and not isinstance(params.get("_meta"), dict):
            params["_meta"] = dict(ENVELOPE)
            return json.dumps(message).encode()
    return raw


def test_every_malformed_line_on_a_modern_connection_is_answered(wire: Wire) -> None:
    unanswered = []
    for i, (name, raw) in enumerate(corpus()):
        line = _enveloped(raw)
        try:
            own = json.loads(line).get("id")
        except (ValueError, AttributeError, RecursionError):
            own = None
        if isinstance(own, bool) or not isinstance(own, (str, int)):
            own = None
        wire.early = []
        marker = f"marker-{i}"
        wire.send(line)
        wire.send({"jsonrpc": "2.0", "id": marker, "method": "tools/list", "params": {"_meta": ENVELOPE}})
        assert "result" in wire.answer(marker), name
        # a refusal comes before the marker's answer (under the line's id, or null when it has none the
        # gateway can read); a forwarded call's result may come after it
        if not any(_answers(f, own) or _answers(f, None) for f in wire.early):
            try:
                wire.answer(own, timeout=20)
            except queue.Empty:
                unanswered.append(name)
        wire.early = []
    assert unanswered == []


def test_the_era_is_decided_by_the_first_request_only() -> None:
    """A unit check of the era rule: notifications do not decide it; ``initialize`` opens the handshake era
    even when it carries the envelope; the first request decides for good."""
    lean = StdioLeanCalls(lambda: None)
    lean.seen({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert lean.modern is None
    lean.seen({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"_meta": ENVELOPE}})
    assert lean.modern is False
    lean.seen({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": ENVELOPE}})
    assert lean.modern is False
    assert lean.take(call(3, "tb__echo", {"text": "x"})) is False


async def test_only_the_common_call_of_a_modern_connection_is_taken() -> None:
    """The eligibility rule, unit by unit: what ``take`` serves and what it leaves to the SDK."""
    spawned: list[Any] = []
    lean = StdioLeanCalls(lambda: (object(), object()))

    async def send_line(text: str) -> None:
        return None

    lean.bind(send_line, str)
    lean._spawn = lambda *args: spawned.append(args)  # type: ignore[method-assign]
    plain = call(1, "tb__echo", {"text": "x"})
    assert lean.take(plain) is False  # no request seen yet: the era is not decided
    lean.seen({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": ENVELOPE}})
    assert lean.modern is True
    assert lean.take(plain) is True and len(spawned) == 1
    logged = call(2, "tb__echo", {"text": "x"})
    logged["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "debug"
    no_envelope = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "tb__echo"}}
    half_envelope = call(4, "tb__echo")
    del half_envelope["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    old_version = call(5, "tb__echo")
    old_version["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2025-11-25"
    left = [
        call(6, "tb__echo", {"text": "x"}, token="p"),
        logged, no_envelope, half_envelope, old_version,
        {**plain, "method": "tools/list"}, {**plain, "id": True}, {**plain, "id": 1.5}, {**plain, "id": None},
        {k: v for k, v in plain.items() if k != "id"}, {**plain, "params": [1]},
        {**plain, "params": {"name": "tb__echo", "_meta": "x"}},
    ]
    for message in left:
        assert lean.take(message) is False, message
    assert len(spawned) == 1
    lean.target = lambda: None  # the server not (or no longer) serving
    assert lean.take(plain) is False


async def test_only_the_common_call_of_an_initialized_handshake_connection_is_taken() -> None:
    spawned: list[Any] = []
    lean = StdioLeanCalls(lambda: (object(), object()))

    async def send_line(text: str) -> None:
        return None

    lean.bind(send_line, str, send_line)
    lean._spawn = lambda *args: spawned.append(args)  # type: ignore[method-assign]
    lean.seen({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}})
    plain = call(1, "tb__echo", {"text": "x"}, modern=False)
    assert lean.take(plain) is False  # the handshake loop has not started: no dispatcher yet

    class Opening:
        initialize_accepted = False

    class Dispatcher:  # its table of calls in flight (``take`` enters each call there before it starts)
        _in_flight: dict[Any, Any] = {}

    connection = Opening()
    lean.adopt(Dispatcher(), connection)  # type: ignore[arg-type]
    assert lean.take(plain) is False  # not initialized: the SDK answers as before the handshake
    connection.initialize_accepted = True
    assert lean.take(plain) is True and len(spawned) == 1
    assert lean.take({**plain, "params": {**plain["params"], "_meta": {}}}) is True
    traced = {**plain, "params": {**plain["params"], "_meta": {"traceparent": "00-abc-def-01"}}}
    left = [
        call(2, "tb__echo", {"text": "x"}),  # the 2026 envelope: the SDK refuses it on this era
        call(3, "tb__echo", {"text": "x"}, token="p", modern=False),
        traced, {**plain, "params": {**plain["params"], "_meta": "x"}},
        {**plain, "method": "tools/list"}, {**plain, "params": None},
    ]
    for message in left:
        assert lean.take(message) is False, message
    assert len(spawned) == 2
    lean.adopt(None, None)
    assert lean.take(plain) is False


def test_the_running_set_holds_only_calls_still_running() -> None:
    """Each lean call leaves ``_tasks`` as it ends (no done callback), whether it answered, raised or was
    cancelled; ``close`` cancels and waits for what is left, those not yet started included."""
    lean = StdioLeanCalls(lambda: None)

    async def body() -> tuple[int, int, list[str]]:
        ran: list[str] = []

        async def answers() -> None:
            ran.append("answered")

        async def raises() -> None:
            raise ValueError("a call's own error")

        async def waits() -> None:
            try:
                await asyncio.sleep(30)
            finally:
                ran.append("cancelled")

        for fn in (answers, raises, waits, waits):
            lean._spawn(fn)
        await asyncio.sleep(0.05)
        running = len(lean._tasks)
        lean._spawn(waits)  # not started yet when close cancels it
        await lean.close()
        return running, sum(not t.done() for t in lean._tasks), ran

    running, left, ran = asyncio.run(body())
    assert running == 2  # the two waiting; the answered and the failed ones left by themselves
    assert left == 0 and ran.count("answered") == 1 and ran.count("cancelled") == 2


@pytest.mark.parametrize("later_token", [False, True], ids=["later-lean", "later-sdk"])
@pytest.mark.parametrize("first", ["running", "cancelled-early", "cancelled-running"])
@pytest.mark.parametrize("token", [None, "via-sdk"], ids=["lean", "sdk"])
def test_a_call_in_flight_on_either_path_holds_up_no_later_call(
        tmp_path: Path, token: Any, first: str, later_token: bool) -> None:
    """A 2026-era stdio client's calls take two paths (the lean one; the SDK's, for a call with a progress
    token): both are the one pipe, one party at a handshake-era upstream (``party_turns``), so its calls
    overlap whichever path each takes. A call in flight, or cancelled and still running at the upstream for
    as long as it likes, never holds up the calls after it."""
    w = Wire(tmp_path)
    held = tmp_path / "held"
    try:
        open_modern(w)
        w.send(call("first", "tb__held", {"path": str(held)}, token=token))
        if first != "cancelled-early":
            _running(held)
        if first != "running":
            w.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": "first", "reason": "changed my mind"}})
        for i in range(3):
            w.send(call(f"after-{i}", "tb__echo", {"text": f"still here {i}"},
                        token=f"t{i}" if later_token else None))
            assert w.answer(f"after-{i}", timeout=20)["result"]["content"][0]["text"] == f"still here {i}"
        if first == "running":
            Path(str(held) + ".go").touch()
            assert w.answer("first", timeout=20)["result"]["content"][0]["text"] == "released"
        else:
            assert w.frames_for("first", 0.5) == []
    finally:
        Path(str(held) + ".go").touch()
        w.close()
