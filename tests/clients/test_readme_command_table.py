"""README's "Command line" table lists every command and every sub-command ``sentinel-mcp --help`` has, so
the two cannot drift (it had lost ``config console-link``, ``swarm status`` and ``swarm list``)."""

from __future__ import annotations

import argparse

from sentinel_mcp.cli import build_parser

from ..conftest import ROOT


def _table() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Command line", 1)[1].split("\n## ", 1)[0]
    return "\n".join(ln for ln in section.splitlines() if ln.startswith("| `sentinel-mcp "))


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_command_and_action_is_in_the_readme_table() -> None:
    table = _table()
    missing = []
    for name, sub in _subparsers(build_parser()).items():
        if f"`sentinel-mcp {name}" not in table:
            missing.append(name)
            continue
        row = "\n".join(ln for ln in table.splitlines() if f"`sentinel-mcp {name}" in ln)
        for action in _subparsers(sub):
            if action not in row:
                missing.append(f"{name} {action}")
    assert not missing, missing
