"""Red team 'swarm' 5: what a build writes and what a caller reads back stay within the caps.

* ``max_file_bytes`` holds for every file a build writes, the ones written from the spec (Gradle files, the
  string resources, the manifest) as much as the model's.
* ``swarm://<task_id>/<path>`` serves a file the build wrote, never one planted beside it: a file larger than
  any a build writes, a hard link (its data may be any file of the disk), anything that is no regular file.
* ``swarm_status`` lists a bounded number of a workspace's files, and says when there are more.

A workspace is written by the build only; the planted files stand for anything else that reaches that
directory (a tool run in it, another process of the account): the console's pages were bounded against the
same (red team 'console', findings 3 and 7), the MCP resources were not."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from tests.swarm.support.scripted_model import SPEC
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS

from sentinel_mcp.core.builtin import BuiltinContext
from sentinel_mcp.swarm.limits import HARD_MAX_FILE_BYTES
from sentinel_mcp.swarm.server import create_server
from sentinel_mcp.swarm.workspace import MAX_LISTED_FILES

pytestmark = pytest.mark.timeout(90)
MANIFEST = "app/src/main/AndroidManifest.xml"
SECRET = "the-gateway-account-secret-0123456789"
NAMES = ("pipe.txt",)


def swarm(tmp_path: Path, **section: Any):
    settings = {"backend": "openai", "openai": FAST_OPENAI, "verify": NO_TOOLS} | section
    return create_server(BuiltinContext(name="swarm", data_dir=tmp_path / "swarm", settings=settings))


def data(result) -> dict[str, Any]:
    assert not result.is_error, result.content
    sc = result.structured_content
    return sc.get("result", sc) if isinstance(sc, dict) and set(sc) == {"result"} else sc


def sizes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("cap", [64, 256, 700])
async def test_every_file_a_build_writes_is_within_max_file_bytes(tmp_path, openai_env, cap) -> None:
    async with Client(swarm(tmp_path, limits={"max_file_bytes": cap})) as client:
        result = data(await client.call_tool("swarm_build", {"spec": SPEC, "wait": True}))
    written = sizes(tmp_path / "swarm" / result["task_id"])
    over = {p: n for p, n in written.items() if n > cap}
    assert over == {}, (cap, over, result["error"])
    # app/build.gradle.kts (775 bytes, from the spec) does not fit any of these caps: the build says so
    assert result["state"] == "FAILED" and "over max_file_bytes" in result["error"], result
    assert "app/build.gradle.kts" not in written


async def _completed(client: Client) -> str:
    result = data(await client.call_tool("swarm_build", {"spec": SPEC, "wait": True}))
    assert result["state"] == "COMPLETED", result
    return result["task_id"]


def _plant(kind: str, ws: Path, outside: Path) -> str:
    """Put ``kind`` into the workspace; the path a caller asks for it by."""
    planted = ws / "app" / "planted"
    planted.mkdir(exist_ok=True)
    if kind == "larger than any file a build writes":
        (planted / "huge.txt").write_bytes(b"a" * (HARD_MAX_FILE_BYTES + 1))
        return "app/planted/huge.txt"
    if kind == "8 MiB of Kotlin":
        (planted / "Huge.kt").write_text("// " + "x" * (8 * 1024 * 1024))
        return "app/planted/Huge.kt"
    if kind == "hard link to a file outside":  # no symlink on the way, its data elsewhere
        os.link(outside, planted / "linked.txt")
        return "app/planted/linked.txt"
    if kind == "generated file linked from outside, then rewritten there":  # its data changed by another name
        os.link(ws / MANIFEST, outside.parent / "manifest-copy.xml")
        with open(outside.parent / "manifest-copy.xml", "r+b") as f:  # in place: the workspace's name sees it
            f.write(SECRET.encode())
        return MANIFEST
    if kind == "fifo":  # opened for reading, it waits for a writer without end
        os.mkfifo(planted / "pipe.txt")
        return "app/planted/pipe.txt"
    if kind == "not UTF-8":
        (planted / "binary.bin").write_bytes(b"\xff\xfe\x00" * 10)
        return "app/planted/binary.bin"
    raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind",
    [
        "larger than any file a build writes",
        "8 MiB of Kotlin",
        "hard link to a file outside",
        "generated file linked from outside, then rewritten there",
        "fifo",
        "not UTF-8",
    ],
)
async def test_a_file_the_build_did_not_write_is_not_served(tmp_path, openai_env, kind) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text(SECRET)
    async with Client(swarm(tmp_path)) as client:
        task_id = await _completed(client)
        ws = tmp_path / "swarm" / task_id
        rel = _plant(kind, ws, outside)
        with anyio.fail_after(20):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(f"swarm://{task_id}/{rel}")
        assert SECRET not in str(refused.value) and "xxxx" not in str(refused.value)
        # what the build wrote alone is still served
        served = await client.read_resource(f"swarm://{task_id}/app/build.gradle.kts")
        assert served.contents[0].text == (ws / "app/build.gradle.kts").read_text()


async def test_a_data_dir_copied_with_hard_links_still_serves_what_the_build_wrote(tmp_path, openai_env):
    """Red team 'device' 6.3: a data directory copied with ``cp -al`` (hard links: a backup, a move to a new
    disk layout) gives every build file a second name, and the one-name rule refused them all ("a file with
    other names") with no word of why. A build now records each file's SHA-256 as it writes it, and a file
    with other names is served when what is read is what the build wrote (its content can then be no other
    file's); a file whose build recorded no digest (before this) is refused saying why and what to do."""
    import subprocess

    first = tmp_path / "first"
    first.mkdir()
    async with Client(swarm(first)) as client:
        task_id = await _completed(client)
    ws = first / "swarm" / task_id
    wrote = (ws / MANIFEST).read_text()
    copy = tmp_path / "copy"
    subprocess.run(["cp", "-al", str(first), str(copy)], check=True)
    assert (copy / "swarm" / task_id / MANIFEST).stat().st_nlink == 2
    async with Client(swarm(copy)) as client:
        served = await client.read_resource(f"swarm://{task_id}/{MANIFEST}")
        assert served.contents[0].text == wrote
        # the other name (the original directory) rewrites the data in place: no longer what the build wrote
        with open(ws / MANIFEST, "r+b") as f:
            f.write(SECRET.encode())
        with pytest.raises(MCPError, match="not what the build wrote") as refused:
            await client.read_resource(f"swarm://{task_id}/{MANIFEST}")
        assert SECRET not in str(refused.value)
        # a build from before digests were recorded: refused, saying why and what to do
        from sentinel_mcp.swarm.state import SwarmStore

        async with SwarmStore(copy / "swarm" / "swarm.db") as store:
            await store.db.write("UPDATE steps SET sha256=NULL WHERE task_id=?", (task_id,))
        with pytest.raises(MCPError, match=r"hard link.*cp -al.*cp -a\b") as refused:
            await client.read_resource(f"swarm://{task_id}/app/build.gradle.kts")
        assert SECRET not in str(refused.value)


async def test_status_lists_a_bounded_number_of_files(tmp_path, openai_env) -> None:
    async with Client(swarm(tmp_path)) as client:
        task_id = await _completed(client)
        ws = tmp_path / "swarm" / task_id
        many = ws / "app" / "many"
        many.mkdir()
        for i in range(MAX_LISTED_FILES + 500):
            (many / f"f{i}.txt").touch()
        status = data(await client.call_tool("swarm_status", {"task_id": task_id}))
        assert len(status["files"]) <= MAX_LISTED_FILES and status["more_files"] is True
        (ws / "app" / "many").rename(tmp_path / "moved")
        status = data(await client.call_tool("swarm_status", {"task_id": task_id}))
        assert status["more_files"] is False and MANIFEST in status["files"]


@pytest.mark.parametrize(
    "path",
    [
        "a%0Ab.kt",  # a line break, percent-encoded (the URI template decodes it)
        "a%0A[COMPLETED]%20completed",
        "a%0D%0Aforged",
        "a%1B[31mred",  # a terminal escape
        "a\u202egnp.kt",  # a direction override
        "a%E2%80%AEgnp.kt",
        "a%00b",
        "x" * 20000,  # no bound on the path
        "app/" + "%0A" * 3000,
    ],
)
async def test_a_refused_file_read_never_echoes_the_callers_path_raw(tmp_path, openai_env, path) -> None:
    async with Client(swarm(tmp_path)) as client:
        for task_id in ("t20260101-000000-abcdef", await _completed(client)):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(f"swarm://{task_id}/{path}")
            text = str(refused.value)
            assert not any(c in text for c in "\n\r\x1b\x00\u202e"), (path[:40], text[:300])
            assert len(text) < 2000, (path[:40], len(text))
