"""Which values of a config are secrets: those under a key that names one (a token, a password, a key) and an
upstream's env and header values, whatever their names (how a server is given its credentials:
OPENAI_API_KEY, X-Api-Key). ``config show`` masks them; a config file other users can read that holds one
written in it (not as ``${VAR}``) is warned about at load."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

SECRET_KEYS = ("token", "api_keys", "peer_tokens", "authorization", "password", "secret", "seal_key")
SECRET_BLOCKS = ("env", "headers")
# a command-line flag's name that says its value is a secret (``--token x``, ``--api-key=x``,
# ``API_TOKEN=x``): the keys' words and the shorter ones flags use (a flag named so by chance: its value
# masked, no harm)
SECRET_FLAG_WORDS = (*SECRET_KEYS, "key", "passwd", "auth", "credential")
ARGUMENTS = "args"
MASK = "***"
_MAX_NAMED = 3  # places named in the warning (the rest counted)


def secret_key(key: str) -> bool:
    return key in SECRET_BLOCKS or any(s in key.lower() for s in SECRET_KEYS)


def _secret_flag(name: str) -> bool:
    name = name.lstrip("-").lower()
    return bool(name) and any(w in name for w in SECRET_FLAG_WORDS)


def masked_arguments(args: list[Any]) -> list[Any]:
    """An upstream's command-line arguments with the value of each secret-named flag masked: the next
    argument (whatever it looks like: a secret may start with a dash) or what follows its ``=``. A value
    written as ``${VAR}`` is kept as written (it names the variable, not the secret)."""
    out: list[Any] = []
    after_flag = False
    for arg in args:
        if not isinstance(arg, str):
            out.append(arg)
            after_flag = False
            continue
        if after_flag:
            after_flag = False
            out.append(arg if _only_variables(arg) or not arg else MASK)
            continue
        name, joined, value = arg.partition("=")
        if joined and _secret_flag(name):
            out.append(arg if _only_variables(value) or not value else f"{name}={MASK}")
        else:
            out.append(arg)
            after_flag = arg.startswith("-") and _secret_flag(arg)
    return out


def written_secrets(value: Any, where: str = "", secret: bool = False) -> list[str]:
    """The places of secrets written as literal text in a config as read (before ``${VAR}`` expansion): a
    value that is one whole ``${...}`` comes from the environment and is not counted."""
    if where.endswith(f".{ARGUMENTS}") and isinstance(value, list) and masked_arguments(value) != value:
        return [where]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in
                written_secrets(v, f"{where}.{k}" if where else str(k), secret or secret_key(str(k)))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in written_secrets(v, f"{where}[{i}]", secret)]
    if secret and isinstance(value, str) and value.strip() and not _only_variables(value):
        return [where]
    return []


def _only_variables(text: str) -> bool:
    """``${TOKEN}`` or ``Bearer ${TOKEN}``: the secret part comes from the environment."""
    return "${" in text


def exposure_warning(path: Path, data: Any) -> str | None:
    """A warning when the config file at ``path`` is readable by other users and holds secrets written in it
    (a warning, not a refusal: a container's mounted config is often root's and mode 0644)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if not mode & (stat.S_IRGRP | stat.S_IROTH):
        return None
    places = written_secrets(data)
    if not places:
        return None
    named = ", ".join(places[:_MAX_NAMED]) + (f" and {len(places) - _MAX_NAMED} more" if len(places) >
                                              _MAX_NAMED else "")
    return (f"{path} is readable by other users (mode {stat.S_IMODE(mode):04o}) and holds secrets written in "
            f"it ({named}): chmod 600 it, or give them as ${{VAR}} from the environment")
