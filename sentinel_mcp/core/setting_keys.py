"""The keys a settings model takes at a place in a config, so an unknown key can be named with the one it
most likely meant ("did you mean 'port'?") instead of pydantic's bare "Extra inputs are not permitted"."""

from __future__ import annotations

import difflib
import types
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel


def did_you_mean(word: str, known: list[str], cutoff: float = 0.6) -> str | None:
    """The known key closest to ``word`` (case aside), or None when none is close."""
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=cutoff)
    return by_lower[close[0]] if close else None


def meant_or_known(word: str, known: list[str]) -> str:
    """`` (did you mean 'x'?)`` for a close key, else `` (known: a, b, ...)``: said after an unknown name."""
    meant = did_you_mean(word, known)
    return f" (did you mean {meant!r}?)" if meant else f" (known: {', '.join(known)})"


def unknown_sentinel_key(key: str, sections: list[str], settings: list[str]) -> str:
    """Why ``sentinel.<key>`` is refused, with the section or the setting of ``sentinel`` it most likely meant
    (``rulebase`` is ``rulebases``, not a section: its nearest built-in section would mislead)."""
    meant = did_you_mean(key, sections + settings)
    if meant in sections:
        return f"unknown section (did you mean {meant!r}?)"
    if meant is not None:
        return f"unknown section or setting (did you mean {meant!r}?)"
    return f"unknown section or setting (settings: {', '.join(settings)}; sections: {', '.join(sections)})"


def _leaves(tp: Any) -> list[Any]:
    """The types a (possibly Optional, Annotated or union) annotation stands for."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _leaves(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        return [leaf for arg in get_args(tp) for leaf in _leaves(arg)]
    return [tp]


def _model_keys(model: type[BaseModel]) -> dict[str, Any]:
    keys: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        keys[name] = field.annotation
        if field.alias:
            keys[field.alias] = field.annotation
    return keys


def _step(tp: Any, part: Any) -> Any | None:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _model_keys(tp).get(str(part))
    origin, args = get_origin(tp), get_args(tp)
    if origin is list and isinstance(part, int) and args:
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None


def keys_at(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys the object at ``loc`` (a pydantic error's location, its last part the unknown key) may have.
    Parts that name no field (a union's branch tag, a validator's name) are passed over."""
    current = _leaves(model)
    for part in loc[:-1]:
        following = [leaf for tp in current if (nxt := _step(tp, part)) is not None for leaf in _leaves(nxt)]
        if following:
            current = following
    known: dict[str, None] = {}
    for tp in current:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            known.update(dict.fromkeys(_model_keys(tp)))
    return sorted(known)
