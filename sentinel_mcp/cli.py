"""The ``sentinel-mcp`` command. Each area registers its own sub-commands (``register(subparsers)``)."""

from __future__ import annotations

import argparse
import os
import importlib
import logging
import sys
from typing import Callable, NoReturn

from sentinel_mcp import __version__
from sentinel_mcp.core.import_collector import imports_uncollected
from sentinel_mcp.core.errors import SentinelError, user_message
from sentinel_mcp.core.log_window import bound_log
from sentinel_mcp.core.single_values import check_single_values

# sub-command -> the module that registers it (``register(subparsers)``), in the order ``--help`` lists them.
# Only the chosen command's module is imported (issue 21: every area's imports cost ~30 ms of `serve`'s cold
# start); tests/core/test_cli_lazy.py keeps this table equal to what the modules register. A missing module is
# skipped, so a partial install still runs.
COMMANDS: dict[str, str] = {
    "serve": "sentinel_mcp.app.gateway_cli",
    "config": "sentinel_mcp.app.gateway_cli",
    "audit": "sentinel_mcp.app.gateway_cli",
    "call": "sentinel_mcp.app.gateway_cli",
    "consent": "sentinel_mcp.app.consent_cli",
    "pins": "sentinel_mcp.app.pins_cli",
    "builtin": "sentinel_mcp.app.builtin_cli",
    "check": "sentinel_mcp.app.policy_cli",
    "query": "sentinel_mcp.app.policy_cli",
    "facts": "sentinel_mcp.app.policy_cli",
    "kept": "sentinel_mcp.app.kept_cli",
    "passages": "sentinel_mcp.search.passages_cli",
    "tls": "sentinel_mcp.tls.cli",
    "draft": "sentinel_mcp.app.draft_cli",
    "swarm": "sentinel_mcp.swarm.cli",
    "sensors": "device_tools.sensors.cli",
    "a2a": "sentinel_mcp.a2a.cli",
    "replay": "sentinel_mcp.console.cli",
    "chat": "sentinel_mcp.app.chat_cli",
    "db": "sentinel_mcp.app.db_cli",
}
_COMMAND_MODULES = list(dict.fromkeys(COMMANDS.values()))
# commands whose stdout is an MCP stdio transport (its bytes are the protocol's; its logs bounded: bound_log)
_TRANSPORTS = frozenset({"serve", "builtin"})


class _Unsure(SentinelError):
    """The scout could not tell the command: the full parser decides (and reports) as it always did; never
    leaves ``chosen_command``."""


class _Scout(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Unsure(message)


def _global_options(parser: argparse.ArgumentParser, scout: bool = False) -> None:
    """The options before the command; the scout has the same option strings (so the same abbreviations and
    clusters) with -h and --version as mere flags: it never prints or exits."""
    if scout:
        parser.add_argument("-h", "--help", action="store_true")
        parser.add_argument("--version", action="store_true")
    else:
        parser.add_argument("--version", action="version", version=f"sentinel-mcp {__version__}")
    # SENTINEL_CONFIG: for hosts that pass settings as environment (a container, a desktop bundle); empty =
    # unset
    parser.add_argument(
        "-c",
        "--config",
        default=os.environ.get("SENTINEL_CONFIG") or None,
        help="config file (JSON; default: $SENTINEL_CONFIG, else the embedded airline demo)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")


def _top_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = argparse.ArgumentParser(prog="sentinel-mcp", description="Sentinel: a governed MCP gateway.")
    _global_options(parser)
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


def _registered(sub: argparse._SubParsersAction, name: str) -> bool:
    """``name``'s sub-commands added to ``sub``; False if its area is not installed."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name and name.startswith(e.name):
            return False  # area not present
        raise
    register: Callable[[argparse._SubParsersAction], None] = getattr(module, "register")
    register(sub)
    return True


def build_parser() -> argparse.ArgumentParser:
    """Every installed area's sub-commands: for ``--help``, no command, an unknown one."""
    parser, sub = _top_parser()
    for name in _COMMAND_MODULES:
        _registered(sub, name)
    return parser


def chosen_command(argv: list[str]) -> str | None:
    """The sub-command ``argv`` names, read as the full parser reads it (the same global options, every
    command's arguments left to it); None for help, version, no command or anything the scout is unsure of."""
    scout = _Scout(prog="sentinel-mcp", add_help=False)
    _global_options(scout, scout=True)
    sub = scout.add_subparsers(dest="command")
    for command in COMMANDS:
        sub.add_parser(command, add_help=False).add_argument("rest", nargs=argparse.REMAINDER)
    try:
        args, _ = scout.parse_known_args(argv)
    except _Unsure:
        return None
    if args.help or args.version:
        return None
    return args.command if args.command in COMMANDS else None


def command_parser(command: str | None) -> argparse.ArgumentParser:
    """The parser for ``command``: only its module, else (no command, or its area missing) all of them."""
    if command is not None:
        parser, sub = _top_parser()
        if _registered(sub, COMMANDS[command]):
            return parser
    return build_parser()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    command = chosen_command(argv)
    try:
        try:
            if command in _TRANSPORTS:
                return _main(argv, command)
            from sentinel_mcp.core.terminal_output import inert_streams

            with inert_streams():  # whatever a command prints, a terminal cannot act on it
                return _main(argv, command)
        finally:
            sys.stdout.flush()  # here, so a reader gone is met here, not at the interpreter's exit
    except BaseException as e:
        # the reader stopped reading (``| head``, a stdio client gone: its writer task's error in a group): no
        # traceback; exit as a process killed by SIGPIPE would
        from sentinel_mcp.core.terminal_output import only_broken_pipes, reader_gone

        if not only_broken_pipes(e):
            raise
        reader_gone()
        return 128 + 13


def _main(argv: list[str], command: str | None) -> int:
    # the command's module (with the config's): imported uncollected
    with imports_uncollected(COMMANDS[command] if command else _COMMAND_MODULES[0]):
        parser = command_parser(command)
    args = parser.parse_args(argv)
    check_single_values(parser, args)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    bound_log()  # what outsiders make Sentinel or the SDK log (an upstream's garbage lines) is bounded
    func = getattr(args, "func", None)
    if func is None:  # the help of every command, as without a command
        (build_parser() if command else parser).print_help()
        return 2
    try:
        # the shared store's key, as a replica's; the command as parsed (unnamed: checked)
        if needs_key_check(getattr(args, "command", None), getattr(args, "what", None)):
            from sentinel_mcp.app.command_key_check import check_command_key

            check_command_key(args.config)
        return int(func(args) or 0)
    except SentinelError as e:
        # any deliberate error: its area and its text, no traceback; exit 2 for a config error (the user's to
        # fix), 1 for a store that cannot be read or written (held, read-only, full, ...) and the rest.
        # ``exit_code`` says which, so the storage package need not be imported here (issue 21, cold start)
        print(f"sentinel-mcp: {_shown(user_message(e))}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as e:
        # a damaged store met past the readers' own checks: no traceback. Only once sqlite3 is imported can
        # one be raised, so it is looked up, not imported for this
        sqlite3 = sys.modules.get("sqlite3")
        if sqlite3 is not None and isinstance(e, sqlite3.DatabaseError):
            print(f"sentinel-mcp: a store cannot be read: {_shown(str(e))}", file=sys.stderr)
            return 1
        raise


def needs_key_check(command: str | None, what: object) -> bool:
    """``app/command_key_check.py``, imported only when the command may open a store (not ``serve``)."""
    if command in ("serve", "tls"):
        return False
    from sentinel_mcp.app.command_key_check import needs_check

    return needs_check(command, what)


def _shown(message: str) -> str:
    """An error's text may echo a config key, a path or a stored value: shown cleaned, never raw."""
    from sentinel_mcp.core.display_text import safe_text

    return safe_text(message, 20_000, keep_newlines=True)
