"""The Builds page: each principal sees only its own swarm builds (progress, steps, files), never another's,
and no build step, file name or file content is ever markup; a file is read only inside its build's
workspace (no traversal, no links out). The builds are recorded through the swarm's own store and workspace
(a real model build needs a model; what the page reads is the same)."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import os
import re
from pathlib import Path

import pytest
from tests.console.console_rig import ALICE, BOB, console_config, http_sentinel, signed_in

from sentinel_mcp.swarm.state import SwarmStore
from sentinel_mcp.swarm.task_lock import TaskLock
from sentinel_mcp.swarm.workspace import Workspace

pytestmark = pytest.mark.timeout(180)
ALICE_TASK, BOB_TASK, RUNNING_TASK = (
    "t20260101-000000-aaaaaa",
    "t20260101-000001-bbbbbb",
    "t20260101-000002-cccccc",
)
XSS_STEP = '<script>alert("step")</script>'
XSS_FILE = '"><img src=x onerror=alert(1)>.kt'


def _with_swarm(tmp_path: Path) -> Path:
    """The console rig's config with the swarm built-in mounted (its builds on the console's pages)."""
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["builtins"] = [*body["sentinel"]["builtins"], "swarm"]
    cfg.write_text(json.dumps(body))
    return cfg


async def seed(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    async with SwarmStore(root / "swarm.db") as store:
        async def create(task_id: str, who: str, name: str) -> None:
            ws = Workspace(root / task_id).create()
            await store.create_task(task_id, {"app_name": name}, ws.root, principal=who, backend="scripted")
            await store.set_plan(task_id, {"steps": [{"file": "a"}, {"file": "b"}, {"file": "c"}]})

        await create(ALICE_TASK, "alice", "Notes<b>")
        await create(BOB_TASK, "bob", "BobSecretApp")
        await store.record_step(ALICE_TASK, 1, 1, "app/Main.kt", "ACCEPTED", [], [], 10)
        await store.record_step(ALICE_TASK, 2, 1, XSS_STEP, "REJECTED", [{"message": XSS_STEP}], [], 0)
        await store.record_step(ALICE_TASK, 2, 2, "app/Other.kt", "ACCEPTED", [], [], 5)
        await store.set_state(ALICE_TASK, "FAILED", error="<img src=y onerror=alert(2)> stopped")
        # one unfinished build per principal (the store's own rule): her running one after the failed one
        await create(RUNNING_TASK, "alice", "Running")
        await store.set_state(RUNNING_TASK, "EXECUTING")
    Workspace(root / ALICE_TASK).write_file(
        "app/Main.kt", 'fun main() = println("</pre><script>x()</script>\u202e")'
    )
    (root / ALICE_TASK / XSS_FILE).write_text("hostile name")  # a build tool may name files anything
    Workspace(root / BOB_TASK).write_file("secret.txt", "bob's secret")
    (root / ALICE_TASK / "leak.txt").symlink_to(root / BOB_TASK / "secret.txt")  # a link out of the workspace


async def test_builds_are_per_principal_and_never_markup(tmp_path):
    cfg = _with_swarm(tmp_path)
    await seed(tmp_path / "state" / "swarm")
    # the running build's process: this test holds the build slot, as the process running a build does (a
    # build nobody holds it for is a dead process's, and the console ends it)
    running = TaskLock(tmp_path / "state" / "swarm" / "swarm.lock")
    running.acquire(RUNNING_TASK)
    with contextlib.ExitStack() as held, http_sentinel(cfg) as (base, _):
        held.callback(running.release)
        async with signed_in(base, ALICE) as alice, signed_in(base, BOB) as bob:
            page = await alice.page("/console/builds")
            assert (
                ALICE_TASK in page
                and RUNNING_TASK in page
                and BOB_TASK not in page
                and "BobSecretApp" not in page
            )
            assert (
                'http-equiv="refresh"' in page
            )  # one build runs: the page refreshes itself, no script needed
            assert "2 / 3 steps" in page and "Notes&lt;b&gt;" in page
            detail = await alice.page(f"/console/builds/{ALICE_TASK}")
            assert (
                'id="build-progress">2 / 3<' in detail
                and "app/Main.kt" in detail
                and "leak.txt" not in detail
            )
            assert 'http-equiv="refresh"' not in detail  # it has ended
            main = detail[detail.index("<main") :]
            for raw in ("<script>alert", "<img src=x", "<img src=y", "<b>"):
                assert raw not in main, raw
            assert html.escape(XSS_STEP, quote=False) in main or "&lt;script&gt;" in main
            links = re.findall(r'href="(/console/builds/[^"]+/files/[^"]+)"', detail)
            assert len(links) == 1, links  # the hostile name is listed (as text) but not opened
            assert html.escape(XSS_FILE) in main or "&#34;&gt;&lt;img src=x" in main
            for link in links:
                r = await alice.get(html.unescape(link))
                assert r.status_code == 200, (link, r.text[:300])
                assert "<script>x()" not in r.text and "<img src=x" not in r.text[r.text.index("<main") :]
            shown = await alice.page(f"/console/builds/{ALICE_TASK}/files/app/Main.kt")
            assert "&lt;/pre&gt;&lt;script&gt;" in shown and "\u202e" not in shown
            # bob: alice's builds are not there, by list, by id, or by file
            assert ALICE_TASK not in await bob.page("/console/builds")
            for path in (f"/console/builds/{ALICE_TASK}", f"/console/builds/{ALICE_TASK}/files/app/Main.kt"):
                r = await bob.get(path)
                assert r.status_code == 404 and "fun main" not in r.text, path
            # alice: bob's build is as unknown as a made-up one
            for path in (
                f"/console/builds/{BOB_TASK}",
                f"/console/builds/{BOB_TASK}/files/secret.txt",
                "/console/builds/t20260101-000009-ffffff",
                "/console/builds/%2e%2e",
                "/console/builds/%2e%2e%2fswarm.db",
            ):
                r = await alice.get(path)
                # a build id that is a dot segment or holds a slash is refused before any look-up (400)
                assert (
                    r.status_code == (400 if "%2e" in path else 404)
                    and "bob&#39;s secret" not in r.text and "bob's secret" not in r.text
                ), (path, r.status_code)
            # traversal out of alice's own workspace, in many spellings: never bob's file, the store, or /etc
            for rel in (
                "../" + BOB_TASK + "/secret.txt",
                "%2e%2e/" + BOB_TASK + "/secret.txt",
                "%2e%2e%2f" + BOB_TASK + "%2fsecret.txt",
                "..%2f..%2fswarm.db",
                "%2fetc%2fpasswd",
                "/etc/passwd",
                "leak.txt",
                "app/../leak.txt",
                "..%5c" + BOB_TASK + "%5csecret.txt",
                "app%00/Main.kt",
                "app//Main.kt",
                "~/.ssh/id_rsa",
            ):
                r = await alice.http.get(f"{base}/console/builds/{ALICE_TASK}/files/{rel}")
                assert r.status_code in (404, 400), (rel, r.status_code)
                assert "bob's secret" not in r.text and "root:" not in r.text and "SQLite" not in r.text, rel
    assert os.path.islink(tmp_path / "state" / "swarm" / ALICE_TASK / "leak.txt")
    await asyncio.sleep(0)


def _peak_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))


async def test_a_huge_build_file_is_shown_from_its_head_without_reading_it_whole(tmp_path):
    """Before, a file's page read the whole file (``read_text``) to show its first 200,000 characters: a
    200 MB file a build's tool wrote took 500 MB of the gateway's memory on every view, any number of views at
    once. Now only the head is read; a character the cut splits is kept out, never an error."""
    cfg = _with_swarm(tmp_path)
    root = tmp_path / "state" / "swarm"
    await seed(root)
    size = 96 * 1024 * 1024
    workspace = root / ALICE_TASK
    # 1, 2 and 4 bytes a character, and 4 bytes in a 3-byte-per-character cycle (the cut splits a character)
    files = {"ascii.txt": "a", "accents.txt": "\u00e9", "emoji.txt": "\U0001f600", "odd.txt": "x\u20ac"}
    for name, unit in files.items():
        with open(workspace / name, "wb") as f:
            f.write(unit.encode() * (size // len(unit.encode())))
    with http_sentinel(cfg) as (base, proc):
        async with signed_in(base, ALICE) as alice:
            await alice.page(f"/console/builds/{ALICE_TASK}/files/app/Main.kt")
            before = _peak_kb(proc.pid)
            for name, unit in files.items():
                r = await alice.get(f"/console/builds/{ALICE_TASK}/files/{name}")
                assert r.status_code == 200, (name, r.status_code, r.text[:300])
                assert "(cut: the file is longer)" in r.text and unit * 500 in r.text, name
            grown = _peak_kb(proc.pid) - before
            assert grown < 48 * 1024, f"the gateway's peak memory grew by {grown} kB showing 96 MB files"


async def test_a_build_with_very_many_files_lists_a_bounded_number_of_them(tmp_path):
    """Before, a build's page listed every file its workspace held: 100,000 files a build's tool made gave a
    31 MB page whose rendering held the gateway's event loop (every other call) for 6 s, again on each of the
    running page's 5 s refreshes. Now at most 1,000 are listed, and the page says there are more; flat,
    nested and linked files alike."""
    cfg = _with_swarm(tmp_path)
    root = tmp_path / "state" / "swarm"
    await seed(root)
    workspace = root / ALICE_TASK
    for i in range(6000):  # flat
        (workspace / f"flat{i:05d}.txt").touch()
    for i in range(3000):  # nested, one directory each
        (workspace / "deep" / f"d{i:05d}").mkdir(parents=True)
        (workspace / "deep" / f"d{i:05d}" / "f.txt").touch()
    for i in range(3000):  # links (never listed) beside the rest
        (workspace / f"link{i:05d}").symlink_to(workspace / "flat00000.txt")
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, ALICE) as alice:
            page = await alice.page(f"/console/builds/{ALICE_TASK}")
            start = page.index('<ul class="files">')
            files = page[start : page.index("</ul>", start)]
            listed = files.count("<li>")
            assert 0 < listed <= 1000, listed
            assert 'id="more-files"' in page and "link0" not in files
            few = await alice.page(f"/console/builds/{RUNNING_TASK}")  # an ordinary build: no note
            assert 'id="more-files"' not in few


async def test_a_hard_link_in_a_build_is_not_shown(tmp_path):
    """Red team 'swarm' 5: a file's page refused symlinks on the way, but a hard link needs none: a second
    name in alice's workspace for bob's file (or any file of the same disk the gateway can read) showed its
    data. A build writes each file once, by rename: a file with another name is not only the build's."""
    cfg = _with_swarm(tmp_path)
    root = tmp_path / "state" / "swarm"
    await seed(root)
    workspace = root / ALICE_TASK
    os.link(root / BOB_TASK / "secret.txt", workspace / "hard.txt")
    os.link(root / BOB_TASK / "secret.txt", workspace / "app" / "Hard.kt")
    outside = tmp_path / "account-secret.txt"
    outside.write_text("the gateway account's secret")
    os.link(outside, workspace / "outside.txt")
    os.mkfifo(workspace / "pipe.txt")
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, ALICE) as alice:
            for name in ("hard.txt", "app/Hard.kt", "outside.txt", "pipe.txt"):
                r = await alice.get(f"/console/builds/{ALICE_TASK}/files/{name}")
                assert r.status_code == 404, (name, r.status_code)
                assert "bob's secret" not in r.text and "account's secret" not in r.text, name
            r = await alice.get(f"/console/builds/{ALICE_TASK}/files/app/Main.kt")
            assert r.status_code == 200 and "println" in r.text


async def test_a_build_file_with_a_second_name_is_shown_while_it_holds_what_the_build_wrote(tmp_path):
    """Red team 'device' 6.3: a data directory copied with ``cp -al`` gives every build file a second name,
    and the one-name rule refused them all. A file whose build recorded its SHA-256 is shown while its content
    is that; rewritten in place through its other name, it is not (nor is any file of no recorded digest)."""
    import hashlib

    cfg = _with_swarm(tmp_path)
    root = tmp_path / "state" / "swarm"
    await seed(root)
    main = root / ALICE_TASK / "app" / "Main.kt"
    digest = hashlib.sha256(main.read_bytes()).hexdigest()
    async with SwarmStore(root / "swarm.db") as store:
        await store.record_step(ALICE_TASK, 1, 2, "app/Main.kt", "ACCEPTED", [], [], 10, digest)
    os.link(main, tmp_path / "backup-Main.kt")
    os.link(root / BOB_TASK / "secret.txt", root / ALICE_TASK / "app" / "Other.kt")  # recorded with no digest
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, ALICE) as alice:
            r = await alice.get(f"/console/builds/{ALICE_TASK}/files/app/Main.kt")
            assert r.status_code == 200 and "println" in r.text, r.text[:300]
            r = await alice.get(f"/console/builds/{ALICE_TASK}/files/app/Other.kt")
            assert r.status_code == 404 and "bob's secret" not in r.text
            with open(tmp_path / "backup-Main.kt", "r+b") as f:
                f.write(b"// the other name's words")
            r = await alice.get(f"/console/builds/{ALICE_TASK}/files/app/Main.kt")
            assert r.status_code == 404 and "other name's words" not in r.text
