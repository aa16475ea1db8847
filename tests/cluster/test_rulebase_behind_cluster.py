"""A replica that knows it is behind the cluster's newest rulebase version refuses to decide (real
PostgreSQL, the replica's guard in process, the other replica played by rows written to
``rulebase_versions``).

Attacks: another replica tightened the policy and this replica cannot load the new version (a syntax error, a
malformed version name, a malformed body, a file name that leaves its directory), so it would go on allowing
what the cluster now denies; a replica started while such a version is newest; a replica whose follower has
not read the cluster's versions for longer than its bound. Each is refused, naming the versions; a version
that loads heals it."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any, Callable

import psycopg
import pytest

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.decision import Allow, Ask, Deny, ToolCall
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.shared_rulebases import PURPOSE
from sentinel_mcp.storage.row_signature import PROCESS_KEY, sign

pytestmark = pytest.mark.timeout(120)

ALLOW = "guard('srv__pay', [n = _], true).\n"
TIGHT = "guard('srv__pay', [n = _], fail).\n"


def pay() -> ToolCall:
    return ToolCall(
        name="srv__pay",
        server="srv",
        tool="pay",
        arguments={"n": 1},
        session_id="alice/s1",
        principal="alice",
    )


def unknown() -> ToolCall:  # a tool no rulebase governs: the default guard's (it would ask)
    return ToolCall(
        name="srv__wipe", server="srv", tool="wipe", arguments={}, session_id="alice/s1", principal="alice"
    )


async def replica(tmp: Path, name: str, url: str, text: str = ALLOW) -> PolicyGuard:
    rules = tmp / name / "rules" / "gate.pl"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text(text)
    g = PolicyGuard(
        [rules],
        None,
        store_path=url,
        seeds={},
        local_dir=tmp / name,
        settings=PolicySettings(guard_timeout=20.0),
    )
    g.join_cluster(name)
    await g.start(watch=False)
    return g


def publish(url: str, version: str, body: str) -> None:
    """As replica-a publishes it (signed: the guards here have no seal key, so with this process's)."""
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO rulebase_versions (version, replica, cause, body, at, mac) "
            "VALUES (%s, 'replica-a', 'hot reload', %s, 0, %s)",
            (version, body, sign(PROCESS_KEY, PURPOSE, version, "replica-a", body)),
        )


def files(text: str, name: str = "gate.pl") -> str:
    return json.dumps({"files": [{"name": name, "text": text}]})


async def until(check: Callable[[], Any]) -> None:
    deadline = time.monotonic() + 30
    while not check():
        assert time.monotonic() < deadline, "never got there"
        await asyncio.sleep(0.05)


# another replica's newer version that this replica cannot take: it would go on with its old policy
UNLOADABLE = [
    ("tight00000000001", files("guard('srv__pay', [n = _], (fail.\n")),  # a syntax error
    ("tight00000000002", files(TIGHT, name="../escape.pl")),  # a file name that leaves the directory
    ("tight00000000003", "{not json"),  # a malformed body
    ("../../etc", files(TIGHT)),  # a version name that is no module or directory name
]


@pytest.mark.parametrize(("version", "body"), UNLOADABLE, ids=["syntax", "file-name", "body", "version-name"])
async def test_a_replica_behind_the_cluster_refuses_until_it_loads_the_newest(
    pg_url: str, tmp_path: Path, version: str, body: str
) -> None:
    b = await replica(tmp_path, "replica-b", pg_url)
    try:
        old = b.version
        assert isinstance(await b.decide(pay()), Allow)
        publish(pg_url, version, body)
        await until(lambda: version in (b.cluster_problem or ""))
        assert b.version == old  # it could not load the newer version
        for call in (pay(), unknown()):  # a guarded tool and one the default guard decides
            d = await b.decide(call)
            assert isinstance(d, Deny), (call.name, d)
            assert old in d.reason and version in d.reason, d.reason
            assert d.unmet == ["rulebase_behind_cluster"]
        # a newer version that loads heals it: decided again, on that version
        publish(pg_url, "healed0000000001", files(TIGHT))
        await until(lambda: b.version == "healed0000000001")
        d = await b.decide(pay())
        assert isinstance(d, Deny) and "not allowed" in d.reason, d
        assert isinstance(await b.decide(unknown()), Ask)
    finally:
        await b.close()


async def test_a_replica_started_while_it_cannot_load_the_newest_version_refuses(
    pg_url: str, tmp_path: Path
) -> None:
    a = await replica(tmp_path, "replica-a", pg_url)  # publishes its version first
    await a.close()
    publish(pg_url, "tight00000000009", files("guard('srv__pay', [n = _], (fail.\n"))
    # its own files allow; the cluster's newest does not load here
    b = await replica(tmp_path, "replica-b", pg_url)
    try:
        assert "tight00000000009" in (b.cluster_problem or "")
        d = await b.decide(pay())
        assert isinstance(d, Deny) and "tight00000000009" in d.reason and b.version in d.reason, d
    finally:
        await b.close()


async def test_a_replica_that_cannot_read_the_cluster_versions_beyond_its_bound_refuses(
    pg_url: str, tmp_path: Path
) -> None:
    b = await replica(tmp_path, "replica-b", pg_url)
    try:
        shared = b.shared_versions
        assert shared is not None
        await shared.close()  # its follower stops (stuck, or the store unreadable): nothing read any more
        now = [time.monotonic()]
        shared.clock = lambda: now[0]
        await shared.poll_once()  # one read on the test's clock
        assert isinstance(await b.decide(pay()), Allow)
        now[0] += shared.stale_after + 1  # the bound passes without a read: a newer version may exist
        d = await b.decide(pay())
        assert isinstance(d, Deny) and d.unmet == ["rulebase_behind_cluster"], d
        assert "could not read" in d.reason and b.version in d.reason, d.reason
        assert isinstance(await b.decide(unknown()), Deny)
        assert b.cluster_problem is not None and "could not read" in b.cluster_problem
        await shared.poll_once()  # read again: decided again
        assert isinstance(await b.decide(pay()), Allow)
        assert b.cluster_problem is None
    finally:
        await b.close()


async def test_a_rulebase_version_written_in_sql_is_adopted_by_no_replica(
    pg_url: str, tmp_path: Path
) -> None:
    """Someone with write access to the database but without the cluster's seal key publishes an allow-all
    rulebase (unsigned, signed with another key, or a real signature over other texts): no replica adopts
    it; it keeps its version and, being behind the cluster, refuses until a signed version comes."""
    b = await replica(tmp_path, "replica-b", pg_url, text=TIGHT)
    try:
        old = b.version
        assert isinstance(await b.decide(pay()), Deny)
        allow = files(ALLOW)
        forged = [
            ("forged0000000001", ""),
            ("forged0000000002", sign(b"x" * 32, PURPOSE, "forged0000000002", "replica-a", allow)),
            ("forged0000000003", sign(PROCESS_KEY, PURPOSE, "forged0000000003", "replica-a", files(TIGHT))),
        ]
        for version, mac in forged:
            with psycopg.connect(pg_url) as conn:
                conn.execute(
                    "INSERT INTO rulebase_versions (version, replica, cause, body, at, mac) "
                    "VALUES (%s, 'replica-a', 'hot reload', %s, 0, %s)",
                    (version, allow, mac),
                )
            # acted on: refused (saying why) or adopted (the hole)
            refused = f"{version} (published by replica-a) does not load"
            await until(lambda r=refused: r in (b.cluster_problem or "") or b.version != old)
            assert b.version == old and "not signed" in (b.cluster_problem or ""), b.version
            d = await b.decide(pay())
            assert isinstance(d, Deny) and d.unmet == ["rulebase_behind_cluster"], d
        publish(pg_url, "signed0000000001", allow)  # a real replica's version is adopted
        await until(lambda: b.version == "signed0000000001")
        assert isinstance(await b.decide(pay()), Allow)
    finally:
        await b.close()


@pytest.mark.parametrize("edit", ["tightened", "not utf-8", "emptied"])
async def test_a_file_edited_after_its_version_loaded_is_never_published_under_that_version(
    pg_url: str, tmp_path: Path, edit: str
) -> None:
    """A version's name is its files' digest, and every replica loads the published text under that name:
    publishing reads the files as they are now, so an edit landing between the load and the publish would
    have gone out as another text under the loaded version's name (the cluster's replicas deciding on
    different rules under one name in the audit). Now such a body is not published, the replica says why in
    its problem, and the version in force is still what it loaded."""
    a = await replica(tmp_path, "replica-a", pg_url)
    try:
        shared = a.shared_versions
        assert shared is not None
        loaded = a.version
        rules = tmp_path / "replica-a" / "rules" / "gate.pl"
        rules.write_bytes({"tightened": TIGHT.encode(), "not utf-8": b"\xff\xfe", "emptied": b""}[edit])
        await shared._publish_own("hot reload: changed gate.pl")
        assert "changed on disk since it loaded" in (shared.problem or ""), shared.problem
        with psycopg.connect(pg_url) as conn:
            bodies = conn.execute("SELECT version, body FROM rulebase_versions ORDER BY id").fetchall()
        assert [v for v, _ in bodies] == [loaded]  # only the start-up's, with the text it loaded
        assert json.loads(bodies[0][1])["files"][0]["text"] == ALLOW
        assert a.version == loaded and isinstance(await a.decide(pay()), Allow)
    finally:
        await a.close()
