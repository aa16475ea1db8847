"""``running_loop``: the loop ``asyncio.get_running_loop`` gives, without its ``getpid`` per call, and never a
loop that does not run on the calling thread (another thread, a later loop, a forked child)."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from unittest import mock

import pytest

from sentinel_mcp.core.running_loop import running_loop


def test_the_running_loop_each_time_and_none_outside() -> None:
    async def main() -> tuple[asyncio.AbstractEventLoop, ...]:
        return running_loop(), running_loop(), asyncio.get_running_loop()

    a = asyncio.run(main())
    assert a[0] is a[1] is a[2]
    b = asyncio.run(main())  # a later loop on the same thread: never the one kept from before
    assert b[0] is b[2] and b[0] is not a[0]
    with pytest.raises(RuntimeError):
        running_loop()  # none runs here now, though one was kept


def test_another_thread_never_gets_the_loop_kept() -> None:
    seen: list[object] = []

    def other() -> None:
        try:
            seen.append(running_loop())
        except RuntimeError as e:
            seen.append(e)

    async def main() -> None:
        running_loop()
        t = threading.Thread(target=other)
        t.start()
        t.join()

    asyncio.run(main())
    assert isinstance(seen[0], RuntimeError)


def test_asked_of_asyncio_once_while_the_loop_runs() -> None:
    async def main() -> None:
        running_loop()
        with mock.patch("asyncio.get_running_loop", side_effect=AssertionError("asked again")):
            for _ in range(100):
                running_loop()

    asyncio.run(main())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_never_gets_its_parents_loop(tmp_path: Path) -> None:
    out = tmp_path / "child"

    async def main() -> None:
        running_loop()  # kept in the parent
        pid = os.fork()
        if pid == 0:  # the child: the same thread id, a copy of the running loop; it must not be handed back
            try:
                running_loop()
                out.write_text("got the parent's loop")
            except RuntimeError:
                out.write_text("none")
            finally:
                os._exit(0)
        os.waitpid(pid, 0)

    asyncio.run(main())
    assert out.read_text() == "none"
