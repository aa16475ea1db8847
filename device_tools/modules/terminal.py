"""Terminal: one device shell command from an allow list, with a timeout and an output cap.

No shell injection through arguments: the command is an argv (allow-listed program words plus the
caller's arguments), and the transport quotes every element with ``shlex.quote``, so ``;``, ``|``,
``$(...)`` and quotes in an argument are just characters of that argument. Programs that would run
their arguments as code (``sh``, ``xargs``, ``find -exec``, ``am``, ``settings put``) are not listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from ..actions import ProposedAction, Risk
from ..actuator import UNTRUSTED_KEY
from ..arg_shapes import MAX_ARG, terminal_refusal
from ..device_paths import normal_path, path_operands, private_path, sensor_state_path
from ..readable_config import ReadableNames
from ..errors import DeviceError
from ..gate import Approval
from ..results import DEVICE_OUTPUT, error_result
from ..runtime import DeviceRuntime
from ..ui_tools import SELF_CONFIRMS, Result, finish

RUN = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)


@dataclass(frozen=True)
class Allowed:
    words: tuple[str, ...]
    shape: str  # arg_shapes.TERMINAL_SHAPES: what the whole argument list may be (its count too)
    risk: Risk = "low"


DEFAULT_ALLOW: dict[str, Allowed] = {
    " ".join(a.words): a
    for a in [
        Allowed(("getprop",), "prop"),
        Allowed(("date",), "none"),
        Allowed(("uptime",), "none"),
        Allowed(("whoami",), "none"),
        Allowed(("id",), "none"),
        Allowed(("ls",), "listing"),
        Allowed(("df",), "disk"),
        Allowed(("ps",), "process"),
        Allowed(("pm", "list", "packages"), "packages"),
        # not "dumpsys battery": the battery is a sensor (health, temperature, voltage), read through the
        # sensors' consent, scope and redaction, never around them
        Allowed(("wm", "size"), "none"),
        Allowed(("wm", "density"), "none"),
        Allowed(("settings", "get"), "setting"),
        Allowed(("echo",), "words"),
        Allowed(("cat",), "file", risk="medium"),
    ]
}


def allow_list(custom: list[str] | None) -> dict[str, Allowed]:
    if custom is None:
        return DEFAULT_ALLOW
    # A configured entry "prog sub" takes texts (the echo shape: up to 20, no control character) at medium
    # risk, unless it is a default one. device.pl knows only the defaults: a gateway with it refuses the
    # others.
    return {c: DEFAULT_ALLOW.get(c, Allowed(tuple(c.split()), "words", risk="medium")) for c in custom}


def build_argv(command: str, args: list[str], allowed: dict[str, Allowed],
               added: ReadableNames | None = None) -> tuple[list[str], Allowed]:
    key = " ".join(command.split())
    entry = allowed.get(key)
    if entry is None:
        raise ValueError(f"{command!r} is not on the terminal allow list: {', '.join(sorted(allowed))}")
    for a in args:
        if not isinstance(a, str) or "\x00" in a or len(a) > MAX_ARG:
            raise ValueError(f"bad argument {a!r}: text up to {MAX_ARG} characters, no NUL")
    # however the path is spelled (//data, /./data, /sdcard/../data, data/data, /DATA, /proc/self/root/data)
    private = [a for a in path_operands(args) if private_path(a)]
    if private:
        raise ValueError(
            f"{private[0]!r} is private app data (read as {normal_path(private[0])}); off limits"
        )
    sensed = [a for a in path_operands(args) if sensor_state_path(a)]
    if sensed:
        raise ValueError(
            f"{sensed[0]!r} is the phone's sensor, input or network state, its boot identifiers or under "
            f"/proc past the kernel's version, memory and load and a process's status (read as "
            f"{normal_path(sensed[0])}); read sensors through the sensors built-in (sensor_read, under the "
            "user's consent)"
        )
    refusal = terminal_refusal(entry.shape, args, added)
    if refusal is not None:
        raise ValueError(f"{key}: {refusal}; refused: {args!r}")
    return [*entry.words, *args], entry


def not_text(output: str) -> bool:
    """Output that is not text: a NUL, or bytes the decoding replaced (a photo, a database, a device node). A
    file's bytes decoded so still carry what it holds in bytes below 0x80 (a photo's EXIF position)."""
    return "\x00" in output or "\ufffd" in output


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    allowed = allow_list(rt.settings.terminal_allow)
    cap = rt.settings.terminal_output_cap
    timeout = rt.settings.terminal_timeout

    @mcp.tool(annotations=RUN, meta=SELF_CONFIRMS)
    async def terminal_run(command: str, ctx: Context, args: list[str] | None = None) -> Result:
        """Run an allow-listed device shell command (e.g. command="getprop", args=["ro.product.model"]).
        Arguments are passed literally, never interpreted by the shell."""
        try:
            argv, entry = build_argv(command, list(args or []), allowed, rt.settings.readable)
        except ValueError as exc:
            return error_result(str(exc))
        action = ProposedAction(
            kind="terminal", tool="terminal_run", details={"argv": argv, "risk": entry.risk}
        )

        async def run(approval: Approval) -> dict[str, Any]:
            try:
                with anyio.fail_after(timeout + 1):
                    output = await rt.gate.run(argv, approval, timeout=timeout)
            except TimeoutError:
                raise DeviceError(f"{' '.join(argv)} timed out after {timeout:g}s") from None
            if not_text(output):
                raise DeviceError(
                    f"{' '.join(argv)} printed output that is not text (a NUL or bytes that are not UTF-8): "
                    "terminal_run shows text only; nothing of it is returned"
                )
            truncated = len(output) > cap
            shown = output[:cap] + (f"\n… output truncated at {cap} characters" if truncated else "")
            # the output is the phone's: a file's text, names any app chose
            return {"message": shown or "(no output)", "argv": argv, "truncated": truncated,
                    UNTRUSTED_KEY: DEVICE_OUTPUT}

        return await finish(rt, await rt.actuator.guarded(ctx, action, [argv], run), with_screen=False)
