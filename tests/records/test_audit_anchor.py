"""The audit anchor (``gateway/audit_anchor.py``): someone who can write the data dir, but not the anchor
directory outside it, cannot cut, rewind, recompute, roll back, remove, hide, graft or swap a chain without
`audit verify` saying BROKEN. Real gateways (in process and ``serve --http`` killed with -9), real SQLite, the
real CLI. Each attack also runs with the anchor turned off (``audit_anchor: false``), where the chain alone
says intact: the anchor is what catches it."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from mcp import Client

import sentinel_mcp.gateway.audit_anchor as anchor_module
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway.audit import canonical, chain_hash
from sentinel_mcp.gateway.audit_anchor import KEY, LOG, AnchorError
from sentinel_mcp.gateway.audit_schema import GENESIS, HASHED
from sentinel_mcp.paths import default_anchor_dir
from sentinel_mcp.storage.instances import instance_dirs

from tests.support.cli_in_process import run_main

from .anchor_templates import Templates
from .rig import RECORDER, kill_tree, start_http, write_config


def gateway_config(tmp: Path, data: Path, **sentinel: Any) -> Any:
    return parse_config(
        {"mcpServers": {"rec": {"command": sys.executable, "args": [RECORDER],
                                "env": {"RECORDER_LOG": str(tmp / "executed.log")}}},
         "sentinel": {"data_dir": str(data), "builtins": [], **sentinel}},
        source="<test>", base_dir=tmp,
    )


async def run_calls(tmp: Path, data: Path, marks: list[str], **sentinel: Any) -> list[str]:
    """The calls through a gateway on ``data``; its start-up problems."""
    async with running_gateway(gateway_config(tmp, data, **sentinel)) as rt:
        async with Client(rt.front.server) as c:
            for m in marks:
                assert not (await c.call_tool("rec__do", {"mark": m})).is_error
        return list(rt.problems)


def verify(tmp: Path, data: Path, *extra: str, **sentinel: Any) -> subprocess.CompletedProcess:
    cfg = tmp / "verify.json"
    cfg.write_text(json.dumps({"sentinel": {"data_dir": str(data), "builtins": [], **sentinel}}))
    # in this process: the real CLI's main, without a fresh interpreter each time (the kill -9 test below runs
    # the CLI as its own process)
    return run_main(["-c", str(cfg), "audit", "verify", *extra])


def broken(run: subprocess.CompletedProcess, *words: str) -> bool:
    out = run.stdout + run.stderr
    return (run.returncode == 1 and "BROKEN" in out and "Traceback" not in out
            and all(w in out for w in words))


async def three_instances(tmp: Path) -> Path:
    data = tmp / "data"
    for k in range(3):
        await run_calls(tmp, data, [f"g{k}-{i}" for i in range(4)])
    assert len(instance_dirs(data)) == 3
    return data


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Templates:
    return Templates(tmp_path_factory.mktemp("three-instances"), three_instances)


def sql(db: Path, *statements: Any) -> None:
    conn = sqlite3.connect(db)
    for s in statements:
        conn.execute(*s) if isinstance(s, tuple) else conn.execute(s)
    conn.commit()
    conn.close()


def stored_hash(db: Path, position: int) -> str:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT hash FROM audit ORDER BY id LIMIT 1 OFFSET ?", (position - 1,)).fetchone()
        return row[0]
    finally:
        conn.close()


def rewind(db: Path) -> None:
    """Cut the last 3 rows and set the head to the row before them: no computation, only copying."""
    conn = sqlite3.connect(db)
    n = conn.execute("SELECT count(*) FROM audit").fetchone()[0]
    conn.close()
    keep = n - 3
    sql(db, ("UPDATE audit_head SET hash = ?, rows = ?", (stored_hash(db, keep), keep)),
        ("DELETE FROM audit WHERE id NOT IN (SELECT id FROM audit ORDER BY id LIMIT ?)", (keep,)))


def recompute(db: Path) -> None:
    """Edit an early row, then recompute the whole chain and its head (plain sha256, no key needed)."""
    conn = sqlite3.connect(db)
    conn.execute("UPDATE audit SET decision = 'deny', reason = 'forged' WHERE id = 2")
    prev = GENESIS
    rows = conn.execute(f"SELECT id, {', '.join(HASHED)} FROM audit ORDER BY id").fetchall()
    for row in rows:
        new = chain_hash(prev, canonical(tuple(row[1:])))
        conn.execute("UPDATE audit SET prev_hash = ?, hash = ? WHERE id = ?", (prev, new, row[0]))
        prev = new
    conn.execute("UPDATE audit_head SET hash = ?, rows = ?", (prev, len(rows)))
    conn.commit()
    conn.close()


def _files(data: Path) -> list[Path]:
    return [d / "sentinel.db" for d in instance_dirs(data)]


def remove_chain(data: Path) -> None:
    sql(_files(data)[1], "DELETE FROM audit", "DELETE FROM audit_head")


def remove_instance(data: Path) -> None:
    shutil.rmtree(instance_dirs(data)[1])


def hide_instance(data: Path) -> None:
    d = instance_dirs(data)[1]
    d.rename(d.with_name("." + d.name))


def swap_files(data: Path) -> None:
    a, b = _files(data)[0], _files(data)[2]
    tmp = a.with_name("swap")
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)


ATTACKS: dict[str, tuple[Callable[[Path], None], tuple[str, ...]]] = {
    "tail cut, head rewound": (lambda d: rewind(_files(d)[1]), ("were anchored",)),
    "chain recomputed after an edit": (lambda d: recompute(_files(d)[0]), ("not the one anchored",)),
    "chain and head deleted": (remove_chain, ("0 rows are there", "were anchored")),
    "instance directory removed": (remove_instance, ("is missing",)),
    "instance directory hidden": (hide_instance, ("is missing", "found as .")),
    "instance files swapped": (swap_files, ("holds chain",)),
}


@pytest.mark.parametrize("compacted", [False, True], ids=["as-written", "compacted"])
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_an_attack_on_the_data_dir_is_caught_by_the_anchor(
    tmp_path: Path, attack: str, compacted: bool, templates: Templates
) -> None:
    data = templates.fresh(compacted)
    if compacted:
        kinds = [json.loads(x)["kind"] for x in _anchor(data).read_text().splitlines()]
        assert kinds.count("genesis") == 1 and "carried" in kinds and len(kinds) < 8, kinds
    ok = verify(tmp_path, data)
    assert ok.returncode == 0 and "24 rows in 3 chain(s)" in ok.stdout and "anchored" in ok.stdout, ok.stdout
    tamper, words = ATTACKS[attack]
    tamper(data)
    assert broken(verify(tmp_path, data), *words), verify(tmp_path, data).stdout
    # without the anchor the chain alone says intact: this is what the anchor adds
    assert verify(tmp_path, data, audit_anchor=False).returncode == 0


async def test_an_older_copy_restored_is_caught(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with running_gateway(gateway_config(tmp_path, data)) as rt:
        async with Client(rt.front.server) as c:
            for i in range(3):
                await c.call_tool("rec__do", {"mark": f"early{i}"})
            [live] = _files(data)
            for suffix in ("", "-wal"):  # a backup taken while it ran (every call's rows are committed)
                shutil.copyfile(f"{live}{suffix}", tmp_path / f"backup.db{suffix}")
            for i in range(5):
                await c.call_tool("rec__do", {"mark": f"late{i}"})
    assert verify(tmp_path, data).returncode == 0
    for suffix in ("", "-wal"):
        shutil.copyfile(tmp_path / f"backup.db{suffix}", f"{live}{suffix}")
    assert broken(verify(tmp_path, data), "6 rows are there but 16 were anchored")
    assert verify(tmp_path, data, audit_anchor=False).returncode == 0


async def test_an_instance_grafted_from_another_data_dir_is_caught(
    tmp_path: Path, templates: Templates
) -> None:
    data = templates.fresh()
    await run_calls(tmp_path, tmp_path / "other", ["foreign"])
    [foreign] = instance_dirs(tmp_path / "other")
    shutil.copytree(foreign, data / "instances" / foreign.name)
    assert broken(verify(tmp_path, data), "never anchored", foreign.name)
    assert verify(tmp_path, data, audit_anchor=False).returncode == 0


def _anchor(data: Path) -> Path:
    return default_anchor_dir(data) / LOG


async def test_an_edited_cut_or_reordered_anchor_is_broken_naming_the_line(
    tmp_path: Path, templates: Templates
) -> None:
    data = templates.fresh()
    path = _anchor(data)
    original = path.read_bytes()
    lines = original.splitlines(keepends=True)
    assert len(lines) >= 7  # genesis, then each instance's start and stop (and a periodic one on a slow run)

    def with_lines(new: list[bytes]) -> subprocess.CompletedProcess:
        path.write_bytes(b"".join(new))
        return verify(tmp_path, data)

    edited = json.loads(lines[2])
    edited["rows"] = 1  # the MAC no longer matches
    assert broken(with_lines([*lines[:2], json.dumps(edited).encode() + b"\n", *lines[3:]]),
                  "line 3", "MAC does not match")
    # one line cut from the middle, two swapped
    assert broken(with_lines([*lines[:3], *lines[4:]]), "line 4", "does not follow")
    assert broken(with_lines([lines[0], lines[2], lines[1], *lines[3:]]), "line 2", "does not follow")
    assert broken(with_lines([*lines[:3], b"{not json\n", *lines[3:]]), "line 4", "not JSON")
    assert broken(with_lines([*lines[:3], b"[1, 2]\n", *lines[3:]]), "line 4", "not an anchor record")
    assert broken(with_lines([original[: len(original) // 2]]), "incomplete last line")  # cut in the middle
    typed = json.loads(lines[2])
    typed["rows"] = "8"
    assert broken(with_lines([*lines[:2], json.dumps(typed).encode() + b"\n", *lines[3:]]), "line 3", "type")
    assert broken(with_lines([]), "cannot verify", "empty")
    path.unlink()
    assert broken(verify(tmp_path, data), "cannot verify", "missing")
    path.write_bytes(original)
    assert verify(tmp_path, data).returncode == 0


async def test_a_wrong_key_breaks_the_first_line_and_a_key_others_may_read_is_refused(
    tmp_path: Path, templates: Templates
) -> None:
    data = templates.fresh()
    key = default_anchor_dir(data) / KEY
    original = key.read_bytes()
    key.write_text("ab" * 32 + "\n")
    assert broken(verify(tmp_path, data), "line 1", "not the key that wrote it")
    key.write_bytes(original)
    assert verify(tmp_path, data).returncode == 0
    key.chmod(0o640)
    assert broken(verify(tmp_path, data), "group or others", "0640")
    with pytest.raises(AnchorError, match="group or others"):  # and a gateway does not start with it
        await run_calls(tmp_path, data, ["x"])
    key.chmod(0o600)
    key.unlink()
    assert broken(verify(tmp_path, data), "cannot verify", "no anchor key")
    os.symlink(tmp_path / "elsewhere", key)
    (tmp_path / "elsewhere").write_bytes(original)
    os.chmod(tmp_path / "elsewhere", 0o600)
    assert broken(verify(tmp_path, data), "regular file")
    key.unlink()
    key.mkdir()
    assert broken(verify(tmp_path, data), "regular file")
    with pytest.raises(AnchorError, match="regular file"):
        await run_calls(tmp_path, data, ["x"])
    key.rmdir()
    key.write_text("not a key")
    key.chmod(0o600)
    assert broken(verify(tmp_path, data), "not a Sentinel anchor key")


async def test_the_anchor_may_not_live_inside_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with pytest.raises(AnchorError, match="inside the data dir"):
        await run_calls(tmp_path, data, ["x"], audit_anchor=str(data / "anchor"))
    assert broken(verify(tmp_path, data, audit_anchor=str(data / "anchor")), "inside the data dir")


async def test_a_configured_anchor_directory_and_json_output(tmp_path: Path) -> None:
    data, anchor = tmp_path / "data", tmp_path / "elsewhere" / "anchor"
    await run_calls(tmp_path, data, ["a", "b"], audit_anchor=str(anchor))
    assert (anchor / KEY).stat().st_mode & 0o777 == 0o600 and (anchor / LOG).stat().st_mode & 0o777 == 0o600
    assert anchor.stat().st_mode & 0o777 == 0o700
    good = json.loads(verify(tmp_path, data, "--json", audit_anchor=str(anchor)).stdout)
    assert good["ok"] and good["rows"] == 4 and good["anchor_records"] == 3, good
    # the default place knows nothing of this data dir: cannot verify, never OK
    assert broken(verify(tmp_path, data), "cannot verify")
    rewind(_files(data)[0])
    run = verify(tmp_path, data, "--json", audit_anchor=str(anchor))
    bad = json.loads(run.stdout)
    assert run.returncode == 1 and not bad["ok"] and "were anchored" in bad["problem"], bad
    with pytest.raises(Exception, match="audit_anchor"):  # an empty path is a config error, not "off"
        gateway_config(tmp_path, data, audit_anchor="")


async def test_restarts_many_instances_and_chains_from_before_anchoring_verify(tmp_path: Path) -> None:
    data = tmp_path / "data"
    # two gateways from before anchoring (or with it off): nothing is anchored
    for k in range(2):
        await run_calls(tmp_path, data, [f"old{k}", f"old{k}b"], audit_anchor=False)
    assert broken(verify(tmp_path, data), "cannot verify")
    # the first anchoring gateway adopts them as they are; later ones anchor their own
    problems = [await run_calls(tmp_path, data, [f"new{k}-{i}" for i in range(3)]) for k in range(4)]
    assert any("adopted 2 chain(s)" in p for p in problems[0]), problems[0]  # said at start-up, once
    assert not any("adopted" in p for later in problems[1:] for p in later)
    run = verify(tmp_path, data)
    assert run.returncode == 0 and "32 rows in 6 chain(s)" in run.stdout, run.stdout
    rewind(_files(data)[0])  # an adopted chain is protected from then on
    assert broken(verify(tmp_path, data), "were anchored")


async def test_an_unanchored_chain_is_never_adopted_by_a_later_start(
    tmp_path: Path, templates: Templates
) -> None:
    data = templates.fresh()
    other = tmp_path / "other"
    # copied while it ran: as if it had crashed (its write-ahead log not folded back)
    async with running_gateway(gateway_config(tmp_path, other)) as rt:
        async with Client(rt.front.server) as c:
            await c.call_tool("rec__do", {"mark": "foreign"})
            [foreign] = instance_dirs(other)
            shutil.copytree(foreign, data / "instances" / foreign.name)
    assert (data / "instances" / foreign.name / "sentinel.db-wal").stat().st_size > 0
    await run_calls(tmp_path, data, ["after the graft"])  # a restart does not launder it
    lines = [json.loads(x) for x in _anchor(data).read_text().splitlines()]
    assert any(x["kind"] == "settled" and x["chain"] == foreign.name for x in lines)  # seen, not vouched for
    assert broken(verify(tmp_path, data), "never anchored", foreign.name)


async def test_kill_9_then_verify_and_the_next_start_anchors_what_the_killed_one_left(tmp_path: Path) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from .rig import AUTH

    config = write_config(tmp_path)
    data = tmp_path / "data"

    def cli(*extra: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "sentinel_mcp", "-c", str(config), "audit", "verify", *extra]
        return subprocess.run(command, capture_output=True, text=True, timeout=60)

    for round_ in range(2):
        proc, port = await asyncio.to_thread(start_http, config)
        try:
            async with httpx2.AsyncClient(timeout=30, headers=AUTH) as http, \
                    Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c:
                for i in range(5):
                    assert not (await c.call_tool("rec__do", {"mark": f"k{round_}-{i}"})).is_error
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
        finally:
            kill_tree(proc)
        run = cli()
        assert run.returncode == 0 and "anchored" in run.stdout, run.stdout + run.stderr
    # the second start anchored the first (killed) instance's head as it found it: its 10 rows are covered now
    first = instance_dirs(data)[0]
    lines = [json.loads(x) for x in _anchor(data).read_text().splitlines()]
    assert {"kind": "settled", "chain": first.name, "rows": 10}.items() <= next(
        x for x in lines if x["kind"] == "settled").items(), lines
    rewind(first / "sentinel.db")
    assert broken(cli(), "were anchored")
async def test_a_running_gateway_anchors_its_chain_while_it_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sentinel_mcp.gateway.audit_anchoring as anchoring

    monkeypatch.setattr(anchoring, "ANCHOR_EVERY", 0.05)
    data = tmp_path / "data"
    async with running_gateway(gateway_config(tmp_path, data)) as rt:
        async with Client(rt.front.server) as c:
            for i in range(3):
                await c.call_tool("rec__do", {"mark": f"m{i}"})
            heads: list[dict] = []
            for _ in range(600):  # bounded wait for the side task (no timing is asserted)
                heads = [json.loads(x) for x in _anchor(data).read_text().splitlines()]
                if any(h["kind"] == "head" and h["rows"] == 6 for h in heads):
                    break
                await asyncio.sleep(0.05)
            assert any(h["kind"] == "head" and h["rows"] == 6 for h in heads), heads
    assert verify(tmp_path, data).returncode == 0


@pytest.mark.parametrize(
    "change, words",
    [
        ({"rows": -1}, "not an anchor record this Sentinel writes"),
        ({"rows": True}, "wrong type"),
        ({"rows": 1.5}, "wrong type"),
        ({"hash": None}, "wrong type"),
        ({"kind": "genesis"}, "second genesis"),
        ({"kind": "bogus"}, "not an anchor record this Sentinel writes"),
        ({"v": 2}, "not an anchor record this Sentinel writes"),
        ({"extra": 1}, "fields differ"),
        ({"chain": "x" * 20000}, "too long"),
    ],
)
def test_an_anchor_line_of_the_wrong_shape_is_broken_even_with_a_valid_mac(
    tmp_path: Path, change: dict, words: str
) -> None:
    """Type-strict reading: even a line whose MAC verifies (as if the key leaked) is refused by its shape."""
    from sentinel_mcp.gateway.audit_anchor import AnchorLog, Head, record_mac

    data, anchor_dir = tmp_path / "data", tmp_path / "anchor"
    data.mkdir()
    log = AnchorLog(anchor_dir, data)
    key = log.open_for_writing()
    log.append(key, [("start", Head("instances/a/sentinel.db", "a", 0, GENESIS))], lambda: [])
    lines = log.path.read_text().splitlines()
    last = json.loads(lines[-1])
    hostile = {**{k: v for k, v in last.items() if k != "mac"}, **change}
    hostile["mac"] = record_mac(key, hostile)
    log.path.write_text("\n".join([*lines[:-1], json.dumps(hostile)]) + "\n")
    with pytest.raises(AnchorError, match=words):
        log.read(key)
    assert broken(verify(tmp_path, data, audit_anchor=str(anchor_dir)), words)


def test_an_anchor_directory_others_may_write_is_refused(tmp_path: Path) -> None:
    from sentinel_mcp.gateway.audit_anchor import AnchorLog

    data, anchor_dir = tmp_path / "data", tmp_path / "anchor"
    data.mkdir()
    anchor_dir.mkdir(mode=0o700)
    anchor_dir.chmod(0o777)
    with pytest.raises(AnchorError, match="group or others"):
        AnchorLog(anchor_dir, data).open_for_writing()


def _as_directory(anchor: Path) -> Callable[[], None]:
    moved = anchor.with_name("moved-away")
    anchor.rename(moved)
    anchor.mkdir()

    def undo() -> None:
        anchor.rmdir()
        moved.rename(anchor)

    return undo


def _foreign_last_line(anchor: Path) -> Callable[[], None]:
    # under the writers' lock: between an append's tail read and write it landed before the gateway's line
    lock = os.open(anchor.parent / anchor_module.LOCK, os.O_RDWR)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        kept = anchor.read_bytes()
        with anchor.open("ab") as f:
            f.write(b'{"seq": 99, "mac": "not this key"}\n')
    finally:
        os.close(lock)
    return lambda: anchor.write_bytes(kept)


@pytest.mark.parametrize("breaking", [_as_directory, _foreign_last_line])
async def test_an_anchor_that_fails_while_running_refuses_calls_until_it_is_written_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, breaking: Callable[[Path], Callable[[], None]]
) -> None:
    """As at start (which it stops), an anchor that cannot be appended refuses calls, never an unanchored
    run; health names it, and calls go through again once an append works."""
    import sentinel_mcp.gateway.audit_anchoring as anchoring

    from .rig import executed

    monkeypatch.setattr(anchoring, "ANCHOR_EVERY", 0.05)
    data = tmp_path / "data"
    async with running_gateway(gateway_config(tmp_path, data)) as rt:
        async with Client(rt.front.server) as c:
            assert not (await c.call_tool("rec__do", {"mark": "before"})).is_error
            undo = breaking(_anchor(data))
            problem = None
            for _ in range(600):  # noticed at the next append (a bounded wait, no timing asserted)
                problem = await rt.gateway.records.problem()
                if problem:
                    break
                await asyncio.sleep(0.05)
            assert problem and "audit anchor" in problem, problem
            refused = await c.call_tool("rec__do", {"mark": "while-broken"})
            assert refused.is_error and "audit anchor" in refused.content[0].text
            undo()
            for _ in range(600):
                if await rt.gateway.records.problem() is None:
                    break
                await asyncio.sleep(0.05)
            assert not (await c.call_tool("rec__do", {"mark": "after"})).is_error
    assert executed(tmp_path) == ["before", "after"]
    assert verify(tmp_path, data).returncode == 0


def _heads(log: Any, key: bytes, *heads: tuple[str, str, int, str]) -> None:
    from sentinel_mcp.gateway.audit_anchor import Head

    log.append(key, [("head", Head(*h)) for h in heads], lambda: [])


def _anchor_with_a_chain(tmp: Path) -> tuple[Any, bytes, str]:
    """An anchor for a fresh data dir, with one chain (``a``) started in it."""
    from sentinel_mcp.gateway.audit_anchor import AnchorLog, Head

    data = tmp / "data"
    data.mkdir()
    log = AnchorLog(tmp / "anchor", data)
    key = log.open_for_writing()
    a = "instances/a/sentinel.db"
    log.append(key, [("start", Head(a, "a", 0, GENESIS))], lambda: [])
    return log, key, a


def test_compaction_keeps_the_highest_first_said_mark_and_a_later_rewind_stays_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewound chain settled by a later start says fewer rows; compaction keeps the mark with the most rows
    (first said), so the rewind is still caught; a chain only ever settled stays unvouched."""
    from sentinel_mcp.gateway.audit_anchor import Head
    from sentinel_mcp.gateway.audit_anchor_check import anchored_marks

    log, key, a = _anchor_with_a_chain(tmp_path)
    _heads(log, key, (a, "a", 5, "h5"), (a, "a", 9, "h9"), (a, "a", 9, "h9-other"))
    log.append(key, [("settled", Head(a, "a", 6, "h6")), ("settled", Head("instances/b/x.db", "b", 4, "hb"))],
               lambda: [])
    monkeypatch.setattr(anchor_module, "COMPACT_AT", 1)
    _heads(log, key, ("instances/c/sentinel.db", "c", 0, GENESIS))
    records = log.read(key)
    assert [(r["kind"], r["chain"], r["rows"], r["hash"]) for r in records] == [
        ("genesis", "", 0, GENESIS), ("carried", "a", 9, "h9"), ("settled", "b", 4, "hb"),
        ("head", "c", 0, GENESIS),
    ]
    marks = anchored_marks(records)
    assert marks[a]["a"][9][0] == "h9" and "instances/b/x.db" not in marks
    # compacted before each append: the chain's highest mark carried, the new line after it
    _heads(log, key, (a, "a", 12, "h12"))
    _heads(log, key, (a, "a", 13, "h13"))
    again = anchored_marks(log.read(key))
    assert {n: h for n, (h, _) in again[a]["a"].items()} == {12: "h12", 13: "h13"}


def test_a_broken_anchor_is_never_compacted_and_the_append_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, key, a = _anchor_with_a_chain(tmp_path)
    for n in range(1, 6):
        _heads(log, key, (a, "a", n, f"h{n}"))
    lines = log.path.read_text().splitlines()
    edited = json.loads(lines[3])
    edited["rows"] = 99  # the MAC no longer matches: the evidence of an edit
    text = "\n".join([*lines[:3], json.dumps(edited), *lines[4:]]) + "\n"
    log.path.write_text(text)
    monkeypatch.setattr(anchor_module, "COMPACT_AT", 1)
    with pytest.raises(AnchorError, match="line 4"):
        _heads(log, key, (a, "a", 6, "h6"))
    assert log.path.read_text() == text
    assert not [p for p in log.dir.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_writers_racing_a_compaction_lose_no_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several gateways append to one anchor; one compacts (replaces the file) while others wait for its
    lock on the old file: each notices, opens the new one, and its head is there at the end."""
    import threading

    from sentinel_mcp.gateway.audit_anchor import AnchorLog, Head

    data = tmp_path / "data"
    data.mkdir()
    key = AnchorLog(tmp_path / "anchor", data).open_for_writing()
    monkeypatch.setattr(anchor_module, "COMPACT_AT", 1500)
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        log = AnchorLog(tmp_path / "anchor", data)  # its own handle, as another gateway would
        place = f"instances/w{w}/sentinel.db"
        try:
            log.append(key, [("start", Head(place, f"w{w}", 0, GENESIS))], lambda: [])
            for n in range(1, 41):
                log.append(key, [("head", Head(place, f"w{w}", n, f"w{w}-{n}"))], lambda: [])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    marks = anchored_marks_of(tmp_path / "anchor", data, key)
    for w in range(4):
        place = f"instances/w{w}/sentinel.db"
        assert max(marks[place][f"w{w}"]) == 40 and marks[place][f"w{w}"][40][0] == f"w{w}-40"
    assert (tmp_path / "anchor" / LOG).stat().st_size < 20_000  # compacted along the way


def anchored_marks_of(anchor_dir: Path, data: Path, key: bytes) -> dict:
    from sentinel_mcp.gateway.audit_anchor import AnchorLog
    from sentinel_mcp.gateway.audit_anchor_check import anchored_marks

    return anchored_marks(AnchorLog(anchor_dir, data).read(key))
