"""Variables in a config file's strings: ``${VAR}``, ``${VAR:-default}``, and the spellings VS Code and Cursor
use (``${env:VAR}``, ``${input:ID}``, ``${workspaceFolder}``, ``${userHome}``), expanded once over the file.
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sentinel_mcp.config_expanded import Expanded
from sentinel_mcp.config_shapes import input_env_name, workspace_folder
from sentinel_mcp.core.display_text import Marked, safe_text
from sentinel_mcp.core.errors import ConfigError

# ${VAR}, ${VAR:-default}; VS Code and Cursor spell them ${env:VAR}, ${input:ID}, ${workspaceFolder},
# ${userHome}
# what every variable of one config expands to, in characters, in all: a 4 MiB file of ``${BIG}`` with a 1 MiB
# variable would be 700 GB; a real config's tokens, URLs and keys are a few KB
MAX_EXPANDED = 16 * 1024 * 1024

_URL_SETTINGS = ("sentinel.store",)
_VAR = re.compile(r"\$\{(?:(env|input):)?([A-Za-z_][A-Za-z0-9_.\-]*)(?::-([^}]*))?\}")


class ExpansionBudget:
    """What the variables of one config may still expand to, in characters (``MAX_EXPANDED`` in all)."""

    def __init__(self, left: int = MAX_EXPANDED) -> None:
        self.left = left

    def take(self, size: int, where: str) -> None:
        self.left -= size
        if self.left < 0:
            raise ConfigError(f"{where}: the config's variables expand to more than {MAX_EXPANDED} "
                              "characters in all (a large variable used many times?)")


def expand_vars(
    value: str, where: str, inputs: dict[str, dict[str, Any]] | None = None, base_dir: Path | None = None,
    given: dict[str, str] | None = None, budget: ExpansionBudget | None = None,
) -> str:
    """Expand variables; one that has no value and no default is an error naming the key. ``given`` collects
    each value taken from the environment or an input -> the variable as written, so an error that quotes it
    can name the variable instead (``unexpanded``). ``budget``: counted down by each value put in, checked
    before the text is built (one string of many variables is refused as it is expanded)."""

    # the store URL's user name and password take a variable's value percent-encoded (location.py's
    # userinfo_span: as it is, a password's '/' or '@' moved part of it into the host)
    span = None
    if where in _URL_SETTINGS and "$" in value:  # (the storage package is imported only for a store URL's)
        from sentinel_mcp.storage.location import is_server_url, userinfo_span

        span = userinfo_span(value) if is_server_url(value) else None

    def sub(m: re.Match[str]) -> str:
        found = _value(m)
        if budget is not None:
            budget.take(len(found), where)
        if given is not None and m.group(2) not in ("workspaceFolder", "userHome"):
            given[found] = m.group(0)
        if span is not None and span[0] <= m.start() < span[1]:
            found = quote(found, safe="")
            if given is not None:
                given[found] = m.group(0)
        return found

    def _value(m: re.Match[str]) -> str:
        kind, name, default = m.group(1), m.group(2), m.group(3)
        if default is not None and "${" in default:
            # ${A:-${B}} read as the default "${B" and a "}" after it: the text "${B}" was the value, silently
            raise ConfigError(f"{where}: the default of ${{{name}}} holds another variable; a default is "
                              "plain text (nested variables are not expanded)")
        if kind == "input":
            return _input_value(name, where, inputs or {})
        if kind is None and name == "workspaceFolder" and base_dir is not None:
            return str(workspace_folder(base_dir))
        if kind is None and name == "userHome":
            return str(Path.home())
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{where}: environment variable ${{{name}}} is not set")

    return _VAR.sub(sub, value)


# a value this short is not searched for in an error's text (it would match inside unrelated words and
# numbers); a secret is longer
_MIN_HIDDEN = 4


def unexpanded(text: str, given: dict[str, str]) -> str:
    """``text`` with every value a variable gave (longest first) shown as that variable: an error about a
    value never quotes a secret that came from the environment."""
    marked = isinstance(text, Marked)  # a marked text quotes a value as shown: its shown form is replaced
    for value in sorted((v for v in given if len(v) >= _MIN_HIDDEN), key=len, reverse=True):
        text = (text.replace(safe_text(value, len(value)), safe_text(given[value], len(given[value])))
                if marked else text.replace(value, given[value]))
    return Marked(text) if marked else text


def _input_value(input_id: str, where: str, inputs: dict[str, dict[str, Any]]) -> str:
    """A VS Code input: Sentinel cannot prompt at start-up, so it comes from SENTINEL_INPUT_<ID> or its
    default."""
    env = input_env_name(input_id)
    if env in os.environ:
        return os.environ[env]
    spec = inputs.get(input_id)
    if spec is None:
        raise ConfigError(f"{where}: ${{input:{input_id}}} is not declared in inputs")
    if isinstance(spec.get("default"), str):
        return spec["default"]
    what = f" ({spec['description']})" if spec.get("description") else ""
    raise ConfigError(
        f"{where}: ${{input:{input_id}}}{what} has no value; set the environment variable {env}"
    )


def expand_tree(value: Any, expand: Callable[[str, str], str], where: str = "") -> Any:
    """Variables expanded in every string of a JSON value (keys stay as written): one pass over the whole file
    once other hosts' shapes are normalised, so tokens, URLs, headers and the sentinel section alike."""
    if isinstance(value, Expanded):
        return str(value)
    if isinstance(value, str):
        return expand(value, where or "(top level)")
    if isinstance(value, list):
        return [expand_tree(v, expand, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: expand_tree(v, expand, f"{where}.{k}" if where else str(k)) for k, v in value.items()}
    return value
