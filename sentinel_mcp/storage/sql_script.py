"""A schema script's statements, each whole (SQLite's own idea of where one ends)."""

from __future__ import annotations

import sqlite3


def split_statements(script: str) -> list[str]:
    """The statements of a schema script, each whole: a ``;`` inside a literal or a trigger's body does not
    end one (SQLite's own ``complete_statement`` says where one ends)."""
    out, pending = [], ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\r\n;"):
                out.append(pending.strip().removesuffix(";").strip())
            pending = ""
    if pending.strip(" \t\r\n;"):
        out.append(pending.strip().removesuffix(";").strip())
    return out
