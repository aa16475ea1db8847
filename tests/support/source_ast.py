"""Parsing Sentinel's own sources in tests that read the code (which modules open SQLite, probe a guard, ...).

The garbage collector is held off while a file is parsed: on CPython 3.11 a finalizer that runs while the
AST is being built (an earlier test's pending asyncio task, destroyed and logged) can move the thread's
recursion count, and the parse then fails with "SystemError: AST constructor recursion depth mismatch" (seen
once in a full run). Nothing else is collected meanwhile, so nothing is lost.
"""

from __future__ import annotations

import ast
import gc
from pathlib import Path


def parsed(source: str | Path, filename: str = "<unknown>") -> ast.Module:
    if isinstance(source, Path):
        source, filename = source.read_text(), str(source)
    was_on = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source, filename)
    finally:
        if was_on:
            gc.enable()
