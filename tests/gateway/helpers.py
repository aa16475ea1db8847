"""Helpers for gateway tests: configs over the toolbox upstream, Sentinel as an HTTP process, child-process
inspection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sentinel_mcp.config import Config, parse_config

from ..conftest import free_port, stop_process, wait_http
from ..support.forked_upstreams import forked_spec

TOOLBOX = str(Path(__file__).with_name("toolbox_server.py"))


def toolbox_stdio(*, fork: bool = False, **extra: Any) -> dict[str, Any]:
    """``fork``: started through the worker's fork server (support/forked_upstreams.py), opted into by files
    not about the upstream's own process."""
    if fork:
        return {**forked_spec(TOOLBOX), **extra}
    return {"command": sys.executable, "args": [TOOLBOX], **extra}


def make_config(data_dir: Path, servers: dict[str, Any] | None = None, *, fork: bool = False,
                **sentinel: Any) -> Config:
    """``fork``: the default toolbox forked (``toolbox_stdio``)."""
    sentinel.setdefault("data_dir", str(data_dir))
    return parse_config({"mcpServers": servers if servers is not None else {"tb": toolbox_stdio(fork=fork)},
                         "sentinel": sentinel}, source="<test>", base_dir=data_dir)


def descendants(pid: int) -> set[int]:
    """All live descendant pids of ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            state, ppid = fields[0], int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
        if state != "Z":
            children.setdefault(ppid, []).append(int(entry))
    out: set[int] = set()
    stack = [pid]
    while stack:
        for c in children.get(stack.pop(), []):
            if c not in out:
                out.add(c)
                stack.append(c)
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@contextmanager
def sentinel_http(tmp: Path, config: dict[str, Any]) -> Iterator[str]:
    """``sentinel serve --http`` as a process with ``config`` (written to ``tmp``); yields its /mcp URL."""
    cfg = tmp / "sentinel.json"
    cfg.write_text(json.dumps(config))
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


@contextmanager
def served_http(script: str, *args: str) -> Iterator[str]:
    """A test upstream ``script`` serving streamable HTTP on 127.0.0.1 (``script --http PORT *args``) as a
    process; yields its /mcp URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, script, "--http", str(port), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/mcp", proc=proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)
