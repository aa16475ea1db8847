"""``sentinel-mcp builtin NAME``: one built-in alone over stdio, with its section of the config.

The one way to run any built-in outside the gateway (the older ``python -m`` entry points stay). Its settings
are the config's ``sentinel.<NAME>`` section (``-c``; the embedded default without it), validated by the
built-in's own ``Settings`` model; ``--set KEY=VALUE`` overrides one key (VALUE is JSON, else a string).
Alone,
a built-in has no gateway to call (``ctx.call_tool`` is None) and no shared services."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from sentinel_mcp.config import load_config
from sentinel_mcp.core.builtin import BUILTINS, BuiltinContext, load_factory, load_section_model
from sentinel_mcp.core.errors import ConfigError
from sentinel_mcp.core.settings import validate_section
from sentinel_mcp.storage.private_paths import private_dir


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("builtin", help="run one built-in alone over stdio (its settings: sentinel.NAME)")
    p.add_argument("name", choices=sorted(BUILTINS), metavar="NAME", help=", ".join(sorted(BUILTINS)))
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one key of the section (VALUE as JSON, else as a string); repeatable",
    )
    p.add_argument("--data-dir", help="where the built-in keeps its state (default: <data_dir>/NAME)")
    p.set_defaults(func=cmd_builtin)


def overridden(section: dict[str, Any], overrides: list[str], where: str) -> dict[str, Any]:
    out = dict(section)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: write KEY=VALUE")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        except RecursionError:
            raise ConfigError(f"--set {key.strip()!r}: the value is nested too deep") from None
        out[key.strip()] = value
    return out


def cmd_builtin(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    name: str = args.name
    where = f"sentinel.{name}"
    settings = overridden(config.sentinel.builtin_settings(name), args.overrides, where)
    model = load_section_model(name)
    if model is not None:
        validate_section(model, settings, where)  # a bad --set stops here, naming the key
    data_dir = Path(args.data_dir) if args.data_dir else config.data_dir / name
    private_dir(data_dir)
    server = load_factory(name)(BuiltinContext(name=name, data_dir=data_dir, settings=settings))
    print(f"sentinel-mcp builtin {name}: serving over stdio (state in {data_dir})", file=sys.stderr)
    server.run("stdio")
    return 0
