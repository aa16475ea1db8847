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
from ..device_paths import LISTING_LETTERS, listing_arg, normal_path, path_operands, private_path
from ..errors import DeviceError
from ..gate import Approval
from ..results import DEVICE_OUTPUT, error_result
from ..runtime import DeviceRuntime
from ..ui_tools import SELF_CONFIRMS, Result, finish

RUN = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=True)


@dataclass(frozen=True)
class Allowed:
    words: tuple[str, ...]
    max_args: int
    risk: Risk = "low"
    exact_args: bool = False


DEFAULT_ALLOW: dict[str, Allowed] = {
    " ".join(a.words): a
    for a in [
        Allowed(("getprop",), 1),
        Allowed(("date",), 0),
        Allowed(("uptime",), 0),
        Allowed(("whoami",), 0),
        Allowed(("id",), 0),
        Allowed(("ls",), 4),
        Allowed(("df",), 2),
        Allowed(("ps",), 3),
        Allowed(("pm", "list", "packages"), 2),
        # not "dumpsys battery": the battery is a sensor (health, temperature, voltage), read through the
        # sensors' consent, scope and redaction, never around them
        Allowed(("wm", "size"), 0),
        Allowed(("wm", "density"), 0),
        Allowed(("settings", "get"), 2, exact_args=True),
        Allowed(("echo",), 20),
        Allowed(("cat",), 1, risk="medium"),
    ]
}
MAX_ARG = 256


def allow_list(custom: list[str] | None) -> dict[str, Allowed]:
    if custom is None:
        return DEFAULT_ALLOW
    # A configured entry "prog sub" allows up to 4 arguments at medium risk, unless it is a default one.
    return {c: DEFAULT_ALLOW.get(c, Allowed(tuple(c.split()), 4, risk="medium")) for c in custom}


def build_argv(command: str, args: list[str], allowed: dict[str, Allowed]) -> tuple[list[str], Allowed]:
    key = " ".join(command.split())
    entry = allowed.get(key)
    if entry is None:
        raise ValueError(f"{command!r} is not on the terminal allow list: {', '.join(sorted(allowed))}")
    if len(args) > entry.max_args or (entry.exact_args and len(args) != entry.max_args):
        raise ValueError(
            f"{key} takes {'exactly' if entry.exact_args else 'at most'} {entry.max_args} argument(s)"
        )
    for a in args:
        if not isinstance(a, str) or "\x00" in a or len(a) > MAX_ARG:
            raise ValueError(f"bad argument {a!r}: text up to {MAX_ARG} characters, no NUL")
    refused = [a for a in args if not listing_arg(a)] if entry.words == ("ls",) else []
    if refused:
        raise ValueError(
            f"ls takes bundles of -{''.join(sorted(LISTING_LETTERS))} and paths only, not {refused[0]!r}: a "
            "recursive listing walks into private app data from any directory above it (list one at a time)")
    # however the path is spelled (//data, /./data, /sdcard/../data, data/data, /DATA, /proc/self/root/data)
    private = [a for a in path_operands(args) if private_path(a)]
    if private:
        raise ValueError(
            f"{private[0]!r} is private app data (read as {normal_path(private[0])}); off limits"
        )
    return [*entry.words, *args], entry


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    allowed = allow_list(rt.settings.terminal_allow)
    cap = rt.settings.terminal_output_cap
    timeout = rt.settings.terminal_timeout

    @mcp.tool(annotations=RUN, meta=SELF_CONFIRMS)
    async def terminal_run(command: str, ctx: Context, args: list[str] | None = None) -> Result:
        """Run an allow-listed device shell command (e.g. command="getprop", args=["ro.product.model"]).
        Arguments are passed literally, never interpreted by the shell."""
        try:
            argv, entry = build_argv(command, list(args or []), allowed)
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
            truncated = len(output) > cap
            shown = output[:cap] + (f"\n… output truncated at {cap} characters" if truncated else "")
            # the output is the phone's: a file's text, names any app chose
            return {"message": shown or "(no output)", "argv": argv, "truncated": truncated,
                    UNTRUSTED_KEY: DEVICE_OUTPUT}

        return await finish(rt, await rt.actuator.guarded(ctx, action, [argv], run), with_screen=False)
