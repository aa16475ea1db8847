"""Other hosts' config files, pasted as they are, turned into Sentinel's shape before validation.

Accepted: Claude Desktop and Cursor (``mcpServers``: ``command``/``args``/``env`` or ``url``/``headers``),
Claude
Code (``"type": "stdio" | "http" | "sse"``), VS Code (``servers``, ``inputs``, ``envFile``, ``${input:…}``,
``${env:…}``, ``${workspaceFolder}``). A key Sentinel does not use in a server entry or at the top level is a
warning naming the key, not an error (approval lists such as ``autoApprove`` point to ``sentinel.policy``);
the ``sentinel`` section stays strict, since a mistyped policy key must never be dropped silently.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from collections.abc import Callable
from typing import Any
from sentinel_mcp.config_file_trust import check_trusted
from sentinel_mcp.config_env_file import EnvLineError, EnvValue, env_entries
from sentinel_mcp.config_expanded import Expanded
from sentinel_mcp.core.errors import ConfigError
from sentinel_mcp.core.outside_file import NotUtf8, TooLarge, read_regular_text
from sentinel_mcp.core.setting_keys import did_you_mean

Expand = Callable[[str, str], str]  # (value, where) -> the value with its variables expanded

TOP_KEYS = {"mcpServers", "servers", "inputs", "sentinel"}
APPROVAL_KEYS = {"autoApprove", "alwaysAllow", "autoapprove"}  # Cline, Roo Code and friends
TYPES = {
    "stdio": None,
    "http": "streamable-http",
    "streamable-http": "streamable-http",
    "streamableHttp": "streamable-http",
    "sse": "sse",
}
# how close an unknown key must be to one of Sentinel's to be taken for a misspelling of it (and refused)
# rather than another host's own setting (and ignored): "disable" for "disabled", "sentinal" for "sentinel",
# not "transportType" for "transport"
NEAR_MISS = 0.85
MAX_ENV_FILE_BYTES = 1024 * 1024  # a dotenv file of a few keys; far above any real one


class ShapeError(ConfigError, ValueError):  # turned into a ConfigError naming the file by parse_config
    """A pasted config that cannot be understood (the message names the key)."""


def normalize(
    data: dict[str, Any], base_dir: Path, server_keys: frozenset[str], expand: Expand | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Sentinel's shape of ``data`` and the warnings (one per ignored key). ``server_keys``: a server's
    settings, the fields of the config's server models (so a setting they take is never dropped as unknown).
    Variables are expanded afterwards, over the whole result (``config.parse_config``); ``expand`` is for the
    one path read here, ``envFile``."""
    warnings: list[str] = []
    out = {k: v for k, v in data.items() if k in ("mcpServers", "sentinel")}
    for key in data:
        if key not in TOP_KEYS:
            _not_misspelt(key, key, sorted(TOP_KEYS))
            warnings.append(f"{key}: not a Sentinel setting; ignored")
    servers: dict[str, Any] = {}
    for block in ("mcpServers", "servers"):  # servers: VS Code's name for the same block
        entries = data.get(block)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            raise ShapeError(f"{block}: must be an object of server name -> settings")
        for name, spec in entries.items():
            if name in servers:
                raise ShapeError(f"{block}.{name}: defined twice (in mcpServers and servers)")
            servers[name] = (
                _server(f"{block}.{name}", spec, base_dir, warnings, server_keys, expand)
                if isinstance(spec, dict)
                else spec
            )
    if servers or "mcpServers" in data or "servers" in data:
        out["mcpServers"] = servers
    return out, warnings


def _server(
    where: str,
    spec: dict[str, Any],
    base_dir: Path,
    warnings: list[str],
    server_keys: frozenset[str],
    expand: Expand | None,
) -> dict[str, Any]:
    spec = dict(spec)
    kind = spec.pop("type", None)
    if kind is not None:
        if kind not in TYPES:
            raise ShapeError(f"{where}.type: {kind!r} is not one of {', '.join(sorted(TYPES))}")
        if kind == "stdio" and "command" not in spec:
            raise ShapeError(f"{where}: type 'stdio' needs 'command'")
        if kind != "stdio":
            if "url" not in spec:
                raise ShapeError(f"{where}: type {kind!r} needs 'url'")
            spec.setdefault("transport", TYPES[kind])
    env_file = spec.pop("envFile", None)
    if env_file is not None:
        if not isinstance(env_file, str):
            raise ShapeError(f"{where}.envFile: must be a path")
        if expand is not None:
            env_file = expand(env_file, f"{where}.envFile")
        env = spec.get("env") or {}
        if not isinstance(env, dict):
            raise ShapeError(f"{where}.env: must be an object of name -> value")
        file, entries = read_env_file(where, env_file, base_dir, warnings)
        spec["env"] = {**{key: _env_value(where, file, key, entry, expand) for key, entry in entries.items()},
                       **env}
    for key in list(spec):
        if key in server_keys:
            continue
        del spec[key]
        if key in APPROVAL_KEYS:
            warnings.append(
                f"{where}.{key}: ignored; Sentinel's policy decides every call "
                "(list tools that need no confirmation in sentinel.policy.allow)"
            )
        else:
            _not_misspelt(f"{where}.{key}", key, sorted(server_keys))
            warnings.append(f"{where}.{key}: not a Sentinel setting; ignored")
    return spec


def _not_misspelt(where: str, key: str, known: list[str]) -> None:
    """A key ignored as another host's must not be a misspelling of Sentinel's own: ``"disable": true`` would
    leave the server running, ``"sentinal"`` drop the whole policy section."""
    meant = did_you_mean(key, known, NEAR_MISS)
    if meant is not None:
        raise ShapeError(f"{where}: not a Sentinel setting (did you mean {meant!r}?)")


def _env_value(where: str, file: Path, key: str, entry: EnvValue, expand: Expand | None) -> Expanded:
    """An env file's value as the upstream gets it: a single-quoted one as written, another with its variables
    expanded (as a shell and docker compose do), once: the config's own pass leaves it as it is."""
    if entry.literal or expand is None:
        return Expanded(entry.value)
    try:
        # (recorded at the key of the server's env as the config gives it: VS Code's ``servers`` is read so)
        at = "mcpServers." + where.split(".", 1)[1]
        return Expanded(expand(entry.value, f"{at}.env.{key}"))
    except ConfigError as e:
        raise ShapeError(f"{where}.envFile: {file}, line {entry.line}: {e}") from None


def read_env_file(where: str, path: str, base_dir: Path, warnings: list[str] | None = None
                  ) -> tuple[Path, dict[str, EnvValue]]:
    """A dotenv file (the path read, and each key's value): ``KEY=value`` lines, ``export`` and quotes
    allowed, ``#`` comments (config_env_file.py). Read bounded (the path may name /dev/zero or a FIFO); one
    other users can read is a warning (it holds secrets)."""
    raw = path.replace("${workspaceFolder}", str(workspace_folder(base_dir)))
    file = Path(os.path.expanduser(raw))
    if not file.is_absolute():
        file = base_dir / file
    check_trusted(f"{where}.envFile", file, warnings)  # it sets what an upstream runs with
    try:
        text = read_regular_text(file, MAX_ENV_FILE_BYTES)
    except TooLarge:
        raise ShapeError(f"{where}.envFile: {file} is too large (more than {MAX_ENV_FILE_BYTES} bytes)"
                         ) from None
    except NotUtf8 as e:
        raise ShapeError(f"{where}.envFile: {file}, {e}") from None
    except OSError as e:
        why = "not a regular file" if e.errno == errno.ENXIO else (e.strerror or str(e))
        raise ShapeError(f"{where}.envFile: cannot read {file}: {why}") from None
    mode = stat.S_IMODE(file.stat().st_mode)
    if warnings is not None and mode & (stat.S_IRGRP | stat.S_IROTH):
        warnings.append(f"{where}.envFile: {file} is readable by other users (mode {mode:04o}) and holds "
                        "secrets: chmod 600 it")
    try:
        return file, env_entries(text)
    except EnvLineError as e:
        raise ShapeError(f"{where}.envFile: {file}, line {e.line} {e.problem}") from None


def parse_inputs(raw: Any) -> dict[str, dict[str, Any]]:
    """VS Code's ``inputs`` by id (for ``${input:ID}``)."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise ShapeError("inputs: must be a list of {id, type, description}")
    inputs: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise ShapeError(f"inputs[{i}]: needs an 'id'")
        inputs[item["id"]] = item
    return inputs


def workspace_folder(base_dir: Path) -> Path:
    """VS Code's ``${workspaceFolder}``: the folder holding ``.vscode/mcp.json``, else the config's folder."""
    return base_dir.parent if base_dir.name == ".vscode" else base_dir


def input_env_name(input_id: str) -> str:
    return "SENTINEL_INPUT_" + re.sub(r"[^A-Za-z0-9]", "_", input_id).upper()
