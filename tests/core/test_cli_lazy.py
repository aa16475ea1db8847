"""The command line imports only the chosen command's module (issue 21, cold start): ``cli.COMMANDS`` names
it for each sub-command, a scout with the same global options reads which one ``argv`` names, and the full
parser (every area) is built for help, no command, an unknown one or anything the scout is unsure of. What a
user sees (help, usage errors, exit codes, the parsed arguments, -c/SENTINEL_CONFIG) is the full parser's."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp import cli

ROOT = Path(__file__).resolve().parents[2]


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_the_command_table_is_what_the_modules_register() -> None:
    """A command added to a module's register() and missing from the table (or the other way) fails here."""
    registered: dict[str, str] = {}
    for name in cli._COMMAND_MODULES:
        parser = argparse.ArgumentParser()
        importlib.import_module(name).register(parser.add_subparsers())
        for command in _subcommands(parser):
            registered[command] = name
    assert list(registered.items()) == list(cli.COMMANDS.items())


def test_every_module_that_registers_commands_is_in_the_table() -> None:
    """A new command module not named in the table fails here (its commands would never be reachable)."""
    found = set()
    for package in ("sentinel_mcp", "device_tools"):
        for path in (ROOT / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            if "def register(" in text and ".add_parser(" in text:
                found.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    assert found == set(cli._COMMAND_MODULES)


# argv that end in argparse (help, version, a usage error) or in a command that prints its own help
ENDING = [
    [], ["--help"], ["-h"], ["--version"], ["--vers"], ["--ver"], ["nope"], ["-v"], ["-c"], ["-c", "x.json"],
    ["--conf", "x.json", "--help"], ["serve", "--help"], ["serve", "--bogus"], ["-v", "audit", "--help"],
    ["config"], ["config", "--help"], ["consent", "--help"], ["consent"], ["pins", "-h"],
    ["builtin", "--help"], ["check", "--help"], ["query", "-h"], ["facts", "--help"], ["tls", "--help"],
    ["draft", "--help"], ["swarm", "--help"], ["swarm", "list", "--limit", "x"], ["sensors"],
    ["sensors", "--help"], ["a2a", "--help"], ["replay", "--help"], ["chat", "--help"],
    ["audit", "--tail", "-1"], ["-c", "a", "-c", "b", "serve", "-h"], ["--", "serve", "-h"],
    ["-vc", "x", "tls", "-h"], ["--config=x", "--verb", "consent", "list", "-h"], ["SERVE"], ["serv"], ["-x"],
    ["serve", "extra"], ["serve", "--http"], ["-c", "serve"], ["--version", "serve"], ["serve", "--version"],
    ["-h", "serve"], ["serve", "--", "-h"], ["call"], ["query", "--help", "x"],
]


def _ran(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, str, str]:
    try:
        code: Any = cli.main(argv)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("argv", ENDING, ids=" ".join)
def test_help_errors_and_exit_codes_are_the_full_parsers(argv, capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "100")
    lazy = _ran(argv, capsys)
    monkeypatch.setattr(cli, "chosen_command", lambda argv: None)  # as before: every area's parser
    assert _ran(argv, capsys) == lazy


def _parsed(parser: argparse.ArgumentParser, argv: list[str]) -> dict[str, Any]:
    found = vars(parser.parse_args(argv))
    func = found.pop("func", None)
    return {**found, "func": func and f"{func.__module__}.{func.__qualname__}"}


PARSED = [
    ["serve"], ["-v", "serve"], ["-c", "x.json", "serve", "--http", "8080", "--tls-local"],
    ["--conf=x.json", "-v", "audit", "--tail", "5", "--json"], ["audit", "verify"], ["config", "show"],
    ["consent", "list"], ["pins", "list", "--held"], ["check"], ["facts"], ["tls", "list"],
    ["swarm", "list", "--limit", "3"], ["sensors", "consent", "list"], ["a2a", "discover"], ["chat"],
    ["-vcx", "call", "airline__x", "{}", "--yes"], ["-c", "serve", "serve"], ["builtin", "llm"],
]


@pytest.mark.parametrize("config_env", [None, "", "from-env.json"])
@pytest.mark.parametrize("argv", PARSED, ids=" ".join)
def test_a_command_is_parsed_as_the_full_parser_parses_it(argv, config_env, monkeypatch) -> None:
    if config_env is None:
        monkeypatch.delenv("SENTINEL_CONFIG", raising=False)
    else:
        monkeypatch.setenv("SENTINEL_CONFIG", config_env)
    command = cli.chosen_command(argv)
    assert command is not None and command in argv
    assert _parsed(cli.command_parser(command), argv) == _parsed(cli.build_parser(), argv)


def _run(code: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out


@pytest.mark.parametrize("argv", [["serve"], ["-c", "x.json", "consent", "list"], ["tls", "list"],
                                  ["sensors", "consent", "list"]], ids=" ".join)
def test_only_the_chosen_commands_module_is_imported(argv) -> None:
    code = ("import sys\nfrom sentinel_mcp import cli\n"
            f"argv = {argv!r}\ncommand = cli.chosen_command(argv)\n"
            "cli.command_parser(command).parse_args(argv)\n"
            "print(','.join(m for m in cli._COMMAND_MODULES if m in sys.modules))")
    chosen = [m for m in _run(code).stdout.strip().split(",") if m]
    assert chosen == [cli.COMMANDS[next(a for a in argv if a in cli.COMMANDS)]]


# an area left out of the install: importing any of its modules fails as a missing package does
_WITHOUT_SWARM = (
    "import sys\n"
    "class Missing:\n"
    "    @staticmethod\n"
    "    def find_spec(name, path=None, target=None):\n"
    "        if name == 'sentinel_mcp.swarm' or name.startswith('sentinel_mcp.swarm.'):\n"
    "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
    "sys.meta_path.insert(0, Missing)\n"
    "from sentinel_mcp.cli import main\n"
    "def ran(argv):\n"
    "    try:\n"
    "        return main(argv)\n"
    "    except SystemExit as e:\n"
    "        return e.code\n"
)


def test_a_partial_install_still_runs() -> None:
    code = _WITHOUT_SWARM + ("print('swarm', ran(['swarm', 'list']))\n"
                             "print('tls', ran(['tls', '--help']))\n"
                             "print('help', ran(['--help']))\n")
    out = _run(code)
    assert "swarm 2" in out.stdout and "invalid choice: 'swarm'" in out.stderr
    assert "tls 0" in out.stdout and "usage: sentinel-mcp tls" in out.stdout
    listed = out.stdout.split("help 0")[0].split("usage: sentinel-mcp [-h]")[-1]
    assert "serve" in listed and "swarm" not in listed


def test_config_without_what_prints_its_own_help(capsys) -> None:
    """`sentinel-mcp config` printed the help of `call` (the last parser its module made), not its own."""
    assert cli.main(["config"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("usage: sentinel-mcp config") and "claude" in out and "--yes" not in out


@pytest.mark.parametrize("raised, code, said", [
    ("sentinel_mcp.storage.database:StorageError", 1, "sentinel-mcp: the store is read-only"),
    ("sentinel_mcp.core.errors:ConfigError", 2, "sentinel-mcp: the store is read-only"),
    ("sqlite3:DatabaseError", 1, "sentinel-mcp: a store cannot be read: the store is read-only"),
])
def test_a_commands_error_is_one_line_and_its_exit_code(raised, code, said, capsys, monkeypatch) -> None:
    """The handler names no storage class (the storage package is not imported to read the config): a store's
    error, a config error and a damaged SQLite file still end as they did."""
    module, name = raised.split(":")
    error = getattr(importlib.import_module(module), name)

    def boom(args: argparse.Namespace) -> int:
        raise error("the store is read-only")

    parser = cli.build_parser()
    parser.set_defaults(func=boom)
    monkeypatch.setattr(cli, "command_parser", lambda command: parser)
    assert cli.main([]) == code
    assert capsys.readouterr().err.strip() == said


def test_any_other_exception_is_raised(monkeypatch) -> None:
    def boom(args: argparse.Namespace) -> int:
        raise ValueError("a bug")

    parser = cli.build_parser()
    parser.set_defaults(func=boom)
    monkeypatch.setattr(cli, "command_parser", lambda command: parser)
    with pytest.raises(ValueError, match="a bug"):
        cli.main([])
