"""One way to read a settings section: validate it against its typed model, or say which key is wrong and why.

Every ``sentinel.<name>`` section goes through ``validate_section``: once when the config is loaded (so a bad
key stops Sentinel with the file, the key and the problem) and again where the built-in reads it."""

from __future__ import annotations

import math
from typing import Any, Callable, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from sentinel_mcp.core.display_text import Marked, compose, said
from sentinel_mcp.core.errors import ConfigError
from sentinel_mcp.core.setting_keys import did_you_mean, keys_at

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


def section_problems(err: ValidationError, where: str, model: type[BaseModel] | None = None,
                     line: Callable[[tuple[Any, ...]], int | None] | None = None) -> list[str]:
    """``where.key: problem`` for each bad key, in order; a union's branches are one key's "or". ``line``:
    where a key's location is in the file (``(line N)`` is said after its problem), when it is known."""
    by_key: dict[str, list[str]] = {}
    at: dict[str, int | None] = {}
    for e in err.errors():
        raised = (e.get("ctx") or {}).get("error")
        # a validator's message raised Marked (it quotes a value it marked) keeps its marks
        msg = said(raised) if isinstance(raised, BaseException) else e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key" + (unknown_key_hint(model, e["loc"]) if model is not None else "")
        by_key.setdefault(_key(e["loc"]), []).append(msg)
        at.setdefault(_key(e["loc"]), line(tuple(e["loc"])) if line is not None else None)
    # each problem one marked text: a raw message or key is marked here, a marked one kept
    return [compose(f"{where}.{key}: " if key else f"{where}: ",
                    *(p for i, m in enumerate(dict.fromkeys(msgs)) for p in ((" or ", m) if i else (m,))),
                    *((f" (line {at[key]})",) if at[key] is not None else ()))
            for key, msgs in by_key.items()]


def validate_section(model: type[M], section: Any, where: str,
                     line: Callable[[tuple[Any, ...]], int | None] | None = None) -> M:
    """The typed settings of one section (absent: the defaults); a ConfigError naming every bad key."""
    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: must be an object of settings, not {type(section).__name__}")
    try:
        # strict: a JSON value of the wrong type is an error, never coerced ("no" is not false, true not 1)
        settings = model.model_validate(section, strict=True)
    except ValidationError as err:
        raise ConfigError(Marked("; ".join(section_problems(err, where, model, line)))) from None
    bad = non_finite(settings)
    if bad is not None:
        raise ConfigError(f"{where}.{bad}: not a finite number (a time, a size or a count must be one)")
    return settings


def non_finite(value: Any, where: str = "") -> str | None:
    """The key of the first infinite or NaN number in validated settings, or None. A float field takes the
    text "Infinity", "inf" or "1e999" as well as the number (pydantic's lax mode): a timeout that never ends,
    a time to live that never passes. Checked on the values the models made, so every field of every model
    is covered, whatever spelling reached it."""
    if isinstance(value, float):
        return where or "(value)" if not math.isfinite(value) else None
    if isinstance(value, BaseModel):
        items: Any = [(k, getattr(value, k)) for k in type(value).model_fields]
        items += list((value.model_extra or {}).items())
    elif isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, (list, tuple)):
        items = [(f"[{i}]", v) for i, v in enumerate(value)]
    else:
        return None
    for key, item in items:
        at = f"{where}{key}" if str(key).startswith("[") else (f"{where}.{key}" if where else str(key))
        found = non_finite(item, at)
        if found is not None:
            return found
    return None


def unknown_key_hint(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """`` (did you mean 'port'?)`` for an unknown key at ``loc``, or `` (known: ...)``, or nothing."""
    known = keys_at(model, loc)
    if not known or not loc:
        return ""
    meant = did_you_mean(str(loc[-1]), known)
    return f" (did you mean {meant!r}?)" if meant else f" (known: {', '.join(known)})"
