"""A built-in served alone over stdio (``python -m sentinel_mcp.llm``, ``sentinel_mcp.swarm``,
``device_tools``, ``device_tools.sensors``) meets the terminal at the command line's edge, as ``sentinel-mcp``
does (``cli.main``).

Each entry point printed its errors raw: a config path, a settings key, an option it did not know (argparse
echoes it) holding an escape cleared the screen or wrote the clipboard of whoever ran it; ``-c=--`` (argparse
stores a list for it) ended in a traceback, a settings error of the device built-in too; and a client gone
before its answer (stdout a closed pipe) ended it with an exception group's traceback and exit 1. Here stderr
is written through ``inert``; stdout is the MCP stream the SDK writes (JSON, left as it is); an option of
one value checked as the CLI's are; a Sentinel error said in one line (exit 2 for a config error, as the
CLI); a broken pipe, alone or among a task group's errors, exit 141 as SIGPIPE would, quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Callable, Iterator

from sentinel_mcp.core.errors import SentinelError, user_message
from sentinel_mcp.core.single_values import check_single_values
from sentinel_mcp.core.terminal_output import InertStream, only_broken_pipes, reader_gone

BROKEN_PIPE_EXIT = 128 + 13  # as a process killed by SIGPIPE


def parsed(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``argv`` parsed as the CLI parses its own: an option of one value holds one (``--model=--``)."""
    args = parser.parse_args(argv)
    check_single_values(parser, args)
    return args


def serve_alone(prog: str, run: Callable[[], int | None]) -> int:
    """``run()`` (parse, build, serve) through the edge; its exit status."""
    try:
        try:
            with _inert_stderr():
                try:
                    return int(run() or 0)
                except SentinelError as e:
                    print(f"{prog}: {user_message(e)}", file=sys.stderr)
                    return e.exit_code
                except KeyboardInterrupt:
                    return 130
        finally:
            sys.stdout.flush()  # here, so a reader gone is met here, not at the interpreter's exit
    except BaseException as e:
        if not only_broken_pipes(e):
            raise
        reader_gone()
        return BROKEN_PIPE_EXIT


@contextlib.contextmanager
def _inert_stderr() -> Iterator[None]:
    err = sys.stderr
    sys.stderr = InertStream(err)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stderr = err
