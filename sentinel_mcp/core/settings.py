"""One way to read a settings section: validate it against its typed model, or say which key is wrong and why.

Every ``sentinel.<name>`` section goes through ``validate_section``: once when the config is loaded (so a bad
key stops Sentinel with the file, the key and the problem) and again where the built-in reads it."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from sentinel_mcp.core.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


class NoSettings(BaseModel):
    """The settings of a built-in that takes none: any key in its section is a mistake."""

    model_config = ConfigDict(extra="forbid")


# the branch names pydantic puts in an error's location when a value fits none of a union's types
_BRANCH_TYPES = {"bool", "int", "float", "str", "bytes", "none", "list", "dict", "tuple", "set"}


def _key(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for p in loc:
        text = str(p)
        if text.startswith(("function-", "tagged-union")) or "[" in text or text in _BRANCH_TYPES:
            break  # a union branch: the key is what came before it
        parts.append(text)
    return ".".join(parts)


def section_problems(err: ValidationError, where: str) -> list[str]:
    """``where.key: problem`` for each bad key, in order; a union's branches are one key's "or"."""
    by_key: dict[str, list[str]] = {}
    for e in err.errors():
        msg = "unknown key" if e["type"] == "extra_forbidden" else e["msg"].removeprefix("Value error, ")
        by_key.setdefault(_key(e["loc"]), []).append(msg)
    return [f"{where}.{key}: {' or '.join(dict.fromkeys(msgs))}" if key else f"{where}: {' or '.join(msgs)}"
            for key, msgs in by_key.items()]


def validate_section(model: type[M], section: Any, where: str) -> M:
    """The typed settings of one section (absent: the defaults); a ConfigError naming every bad key."""
    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: must be an object of settings, not {type(section).__name__}")
    try:
        return model.model_validate(section)
    except ValidationError as err:
        raise ConfigError("; ".join(section_problems(err, where))) from None
