"""Device tools benchmark: registry build time for a generated 500-node dump, and one action's round
trip on the simulated phone, direct (Python API) vs through the MCP server in-process (mcp.Client,
both protocol eras). Prints one table.

Run: .venv/bin/python benchmarks/device_actions.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from device_tools import commands as C
from device_tools.actions import ProposedAction, Target
from device_tools.element_registry import parse_dump
from device_tools.server import create_server
from sentinel_mcp.core.builtin import BuiltinContext

FLAGS = (
    'checkable="false" checked="false" enabled="true" focused="false" long-clickable="false" '
    'password="false" selected="false"'
)


def generated_dump(nodes: int = 500) -> str:
    """A realistic shape: nested layouts holding list rows (row + icon + title + subtitle) and buttons."""
    out, count, y = [], 0, 0

    def node(
        cls: str, text: str, rid: str, clickable: bool, scrollable: bool = False, close: bool = True
    ) -> str:
        nonlocal count, y
        count += 1
        y += 4
        b = f"[0,{y % 2300}][1080,{y % 2300 + 90}]"
        tail = " />" if close else ">"
        return (
            f'<node index="{count}" text="{text}" resource-id="{"com.bench:id/" + rid if rid else ""}" '
            f'class="android.widget.{cls}" '
            f'package="com.bench" content-desc="" clickable="{str(clickable).lower()}" '
            f'focusable="{str(clickable).lower()}" '
            f'scrollable="{str(scrollable).lower()}" {FLAGS} bounds="{b}"{tail}'
        )

    out.append(node("FrameLayout", "", "root", False, close=False))
    out.append(node("RecyclerView", "", "list", False, scrollable=True, close=False))
    row = 0
    while count < nodes - 5:
        row += 1
        out.append(node("LinearLayout", "", "row", True, close=False))
        out.append(node("ImageView", "", "", False))  # decorative: no id, no label -> filtered out
        out.append(node("TextView", f"Item {row}", "title", False))
        out.append(node("TextView", f"Details for item {row}", "subtitle", False))
        out.append("</node>")
    out.append("</node>")
    while count < nodes:
        out.append(node("Button", f"Action {count}", "action", True))
    out.append("</node>")
    return (
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        + "".join(out)
        + "</hierarchy>"
    )


def timed(samples: list[float]) -> str:
    ms = [s * 1000 for s in samples]
    return f"{statistics.median(ms):8.3f} ms  (p90 {sorted(ms)[int(len(ms) * 0.9) - 1]:.3f}, n={len(ms)})"


async def main(runs: int) -> None:
    dump = generated_dump(500)
    node_count = dump.count("<node ")
    parse_samples = []
    for _ in range(runs):
        t = time.perf_counter()
        snap = parse_dump(dump)
        parse_samples.append(time.perf_counter() - t)
    rows = [
        (f"registry build, {node_count}-node dump ({len(snap.elements)} elements kept)", timed(parse_samples))
    ]

    # Direct: the actuator's Python API (dump, staleness check, firewall, gate, tap, dump for the new view).
    server = create_server(BuiltinContext(name="device", data_dir=Path(tempfile.mkdtemp())))
    rt = server.runtime
    act = rt.actuator
    home = await act.observe()
    clock = next(e for e in home.elements if e.text == "Clock")  # no scripted effect: the screen stays put
    direct = []
    for _ in range(runs):
        t = time.perf_counter()
        element, _ = await act.target(clock.id, home.snapshot_id)
        argv = C.tap(*element.center)
        action = ProposedAction(
            kind="click", tool="click", target=Target.of(element), package=element.package
        )

        async def run(approval, argv=argv):
            await rt.gate.run(argv, approval)
            return {"message": "tapped"}

        await act.guarded(None, action, [argv], run)
        await act.observe()
        direct.append(time.perf_counter() - t)
    rows.append(("click round trip, direct (Python API, simulated phone)", timed(direct)))

    from mcp import Client

    for mode in ("legacy", "auto"):
        async with Client(server, mode=mode) as client:
            version = client.protocol_version
            samples = []
            for _ in range(runs):
                t = time.perf_counter()
                r = await client.call_tool("click", {"element_id": clock.id, "snapshot_id": home.snapshot_id})
                samples.append(time.perf_counter() - t)
                assert not r.is_error, r.content[0].text
            read = []
            for _ in range(runs):
                t = time.perf_counter()
                await client.call_tool("screen_read", {})
                read.append(time.perf_counter() - t)
        rows.append((f"click round trip, MCP in-process ({mode}: {version})", timed(samples)))
        rows.append((f"screen_read round trip, MCP in-process ({mode})", timed(read)))

    width = max(len(r[0]) for r in rows)
    print(f"{'measurement'.ljust(width)}  median")
    print("-" * (width + 40))
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    anyio.run(main, parser.parse_args().runs)
