"""Options of one value hold one value, checked by their type, after ``argparse`` has parsed a command line.

Python's argparse (3.11, 3.12) reads ``--tail=--`` as the option given the end-of-options marker, drops the
``--`` and stores an empty list, without the option's type check: ``audit --tail=--`` reached the store's code
as ``[]`` (a TypeError traceback), and a string option became a list. Every option and argument of one value
on the command's path of parsers is checked here, whatever its type.
"""

from __future__ import annotations

import argparse
from typing import Any, Iterator

_ONE_VALUE = (argparse._StoreAction, argparse._AppendAction)  # (an append: each value given is one)


def _taken(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Iterator[argparse.ArgumentParser]:
    """``parser`` and the sub-command parsers ``args`` chose under it."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and action.dest != argparse.SUPPRESS:
            chosen = getattr(args, action.dest, None)
            if isinstance(chosen, str) and chosen in action.choices:
                yield from _taken(action.choices[chosen], args)


def check_single_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A usage error (exit 2, naming the option) for an option of one value that holds a list."""
    for p in _taken(parser, args):
        for action in p._actions:
            if action.nargs is not None or not isinstance(action, _ONE_VALUE):
                continue
            value: Any = getattr(args, action.dest, None)
            appended = isinstance(action, argparse._AppendAction) and isinstance(value, list)
            values = value if appended else [value]
            if any(isinstance(v, list) for v in values):
                name = "/".join(action.option_strings) or action.dest
                p.error(f"argument {name}: expected one value (a lone -- ends the options, it is no value)")
