"""A writer that ignores the anchor's lock (``gateway/audit_anchor.py``): whatever it slips into the anchor
file (between two appends, or between an append's read and its write) is noticed by the running gateway's
next append, which refuses, as it does for a bad last line, for as long as the file holds it; ``audit
verify`` is not the only one to find it. Real files, a real gateway with real SQLite and a real MCP server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from mcp import Client

import sentinel_mcp.gateway.audit_anchor as anchor_module
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.audit_anchor import AnchorError, AnchorLog, ForeignAnchor, Head
from sentinel_mcp.gateway.audit_schema import GENESIS

from .test_audit_anchor import _anchor, gateway_config, verify

PLACE = "instances/a/sentinel.db"


def _log(tmp: Path) -> tuple[AnchorLog, bytes]:
    data = tmp / "data"
    data.mkdir()
    log = AnchorLog(tmp / "anchor", data)
    key = log.open_for_writing()
    log.append(key, [("start", Head(PLACE, "a", 0, GENESIS))], lambda: [])
    for n in (1, 2):
        _head(log, key, n)
    return log, key


def _head(log: AnchorLog, key: bytes, n: int) -> None:
    log.append(key, [("head", Head(PLACE, "a", n, f"h{n}"))], lambda: [])


def _other_key_line(log: AnchorLog, key: bytes) -> bytes:
    """A well-formed record that follows the last line, with a MAC made by another key."""
    last = json.loads(log.path.read_bytes().splitlines()[-1])
    rec = {**last, "seq": last["seq"] + 1, "prev": last["mac"], "rows": 99}
    rec["mac"] = anchor_module.record_mac(b"k" * 32, rec)
    return json.dumps(rec).encode() + b"\n"


# what a writer without the lock slips in: each is the shape of a line this key never appended there
SHAPES: dict[str, Callable[[AnchorLog, bytes], bytes]] = {
    "garbage": lambda log, key: b"not an anchor record\n",
    "empty line": lambda log, key: b"\n",
    "its own last line replayed": lambda log, key: log.path.read_bytes().splitlines(keepends=True)[-1],
    "an older line replayed": lambda log, key: log.path.read_bytes().splitlines(keepends=True)[1],
    "another key's record": _other_key_line,
    "a JSON array": lambda log, key: b"[1, 2, 3]\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_line_slipped_in_between_read_and_write_is_noticed_and_refuses_until_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shape: str
) -> None:
    """The foreign line lands after the append's read of the tail and before its write: the gateway's own
    line after it looks good, and yet this append says so and every later one refuses while it is there."""
    log, key = _log(tmp_path)
    foreign = SHAPES[shape](log, key)
    real_check = anchor_module.AnchorLog._check_since
    at = []

    def read_then_foreign(self: AnchorLog, fd: int, k: bytes, size: int) -> None:
        real_check(self, fd, k, size)  # the append has read and checked the file: its write comes next
        at.append(size)
        with self.path.open("ab") as f:  # no lock taken: the writer this is about
            f.write(foreign)
        monkeypatch.setattr(anchor_module.AnchorLog, "_check_since", real_check)

    monkeypatch.setattr(anchor_module.AnchorLog, "_check_since", read_then_foreign)
    with pytest.raises(ForeignAnchor, match="does not take its lock"):
        _head(log, key, 3)
    held = log.path.read_bytes()
    assert foreign in held
    with pytest.raises(ForeignAnchor, match="not appending"):
        _head(log, key, 4)
    assert log.path.read_bytes() == held  # refused: nothing written
    # gone (the evidence taken away): the gateway's own line after it follows on, and appends resume
    log.path.write_bytes(held[: at[0]] + held[at[0] + len(foreign):])
    _head(log, key, 5)
    assert [r["rows"] for r in log.read(key)][-2:] == [3, 5]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_line_slipped_in_between_two_appends_is_noticed(tmp_path: Path, shape: str) -> None:
    log, key = _log(tmp_path)
    with log.path.open("ab") as f:
        f.write(SHAPES[shape](log, key))
    held = log.path.read_bytes()
    with pytest.raises(AnchorError, match="not appending"):
        _head(log, key, 3)
    assert log.path.read_bytes() == held


def test_the_file_cut_back_to_an_earlier_line_is_noticed(tmp_path: Path) -> None:
    """A last line with a good MAC is not enough: this gateway's own last record went missing."""
    log, key = _log(tmp_path)
    lines = log.path.read_bytes().splitlines(keepends=True)
    with log.path.open("r+b") as f:  # the same file, cut: as a writer without the lock would
        f.truncate(len(b"".join(lines[:-1])))
    with pytest.raises(ForeignAnchor, match="cut or rewritten"):
        _head(log, key, 3)


def test_an_older_copy_put_in_its_place_is_noticed(tmp_path: Path) -> None:
    """Every line of the older copy has a good MAC, and it is another file (as after a compaction): this
    gateway's last head is not in it."""
    log, key = _log(tmp_path)
    older = log.path.read_bytes()
    _head(log, key, 3)
    copy = log.path.with_name("older")
    copy.write_bytes(older)
    copy.chmod(0o600)
    copy.replace(log.path)
    with pytest.raises(ForeignAnchor, match="is gone"):
        _head(log, key, 4)


def test_other_writers_that_take_the_lock_are_followed(tmp_path: Path) -> None:
    """Another gateway's appends (its own handle) between this one's follow on: nothing is refused."""
    log, key = _log(tmp_path)
    other = AnchorLog(log.dir, log.store_dir)
    other.append(key, [("start", Head("instances/b/sentinel.db", "b", 0, GENESIS))], lambda: [])
    _head(log, key, 3)
    other.append(key, [("head", Head("instances/b/sentinel.db", "b", 1, "hb"))], lambda: [])
    _head(log, key, 4)
    assert len(log.read(key)) == 8


async def test_a_running_gateway_refuses_calls_when_a_line_slips_under_its_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race against the gateway's own anchoring: health names the anchor, calls are refused, and once
    the foreign line is gone calls go through and ``audit verify`` is intact."""
    import sentinel_mcp.gateway.audit_anchoring as anchoring

    from .rig import executed

    monkeypatch.setattr(anchoring, "ANCHOR_EVERY", 0.05)
    data = tmp_path / "data"
    foreign = b'{"slipped": "in"}\n'
    slipped = asyncio.Event()
    loop = asyncio.get_running_loop()
    real_check = anchor_module.AnchorLog._check_since

    def read_then_foreign(self: AnchorLog, fd: int, k: bytes, size: int) -> None:
        real_check(self, fd, k, size)
        if not slipped.is_set():
            with self.path.open("ab") as f:
                f.write(foreign)
            loop.call_soon_threadsafe(slipped.set)

    async with running_gateway(gateway_config(tmp_path, data)) as rt:
        async with Client(rt.front.server) as c:
            assert not (await c.call_tool("rec__do", {"mark": "before"})).is_error
            monkeypatch.setattr(anchor_module.AnchorLog, "_check_since", read_then_foreign)
            await asyncio.wait_for(slipped.wait(), 30)
            problem = await _problem(rt, want=True)
            assert problem and "audit anchor" in problem and "not appending" in problem, problem
            refused = await c.call_tool("rec__do", {"mark": "while-foreign"})
            assert refused.is_error and "audit anchor" in refused.content[0].text
            anchor = _anchor(data)
            anchor.write_bytes(anchor.read_bytes().replace(foreign, b"", 1))
            assert await _problem(rt, want=False) is None
            assert not (await c.call_tool("rec__do", {"mark": "after"})).is_error
    assert executed(tmp_path) == ["before", "after"]
    assert verify(tmp_path, data).returncode == 0


async def _problem(rt: Any, *, want: bool) -> str | None:
    problem = None
    for _ in range(600):  # noticed at the next append (a bounded wait, no timing asserted)
        problem = await rt.gateway.records.problem()
        if bool(problem) == want:
            break
        await asyncio.sleep(0.05)
    return problem
