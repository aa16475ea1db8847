"""Every id a retail write names, in other spellings: 'You can only help one user per conversation' and each
write's own rules hold for the ids the store gives, never for a spelling a store might read as the same
record or another (another case, surrounding blanks, a hidden character, fullwidth forms, the digits of
another script, a leading zero). Each spelling of each id of each write is refused by Sentinel before the user
is asked to confirm anything, and the store is as it was; the same call with the store's own ids reaches the
user's confirmation (so the refusal is the spelling's). Real gateway over the permissive retail server (its
writes check nothing), one for the module; each call is a conversation of its own; the user declines every
confirmation."""

from __future__ import annotations

from typing import Any, AsyncIterator

import pytest
import pytest_asyncio
from tests.retail.allowed_writes import ALLOWED_WRITES as BASE
from tests.retail.allowed_writes import CONFIRMATIONS, DELIVERED, PENDING
from tests.retail.retail_rig import OLIVIA, AnsweringUser, conversation, held_runtime, order, text_of

pytestmark = [pytest.mark.timeout(300), pytest.mark.asyncio(loop_scope="module")]

def _digits(text: str, zero: int) -> str:
    """``text`` with its ASCII digits written in the digits of another script (``zero``: its digit zero)."""
    return "".join(chr(zero + int(ch)) if ch.isascii() and ch.isdigit() else ch for ch in text)


def _leading_zero(text: str) -> str:
    i = next(n for n, ch in enumerate(text) if ch.isdigit())
    return text[:i] + "0" + text[i:]


SPELLINGS = {
    "case": lambda s: s.swapcase(),
    "blanks": lambda s: f" {s} ",
    "zero width space": lambda s: s + "\u200b",
    "fullwidth": lambda s: "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in s),
    "arabic-indic digits": lambda s: _digits(s, 0x0660),
    "leading zero": _leading_zero,
}


def _spelled(args: dict[str, Any], path: tuple[Any, ...], spell: Any) -> dict[str, Any]:
    out = {k: list(v) if isinstance(v, list) else v for k, v in args.items()}
    if len(path) == 1:
        out[path[0]] = spell(out[path[0]])
    else:
        out[path[0]][path[1]] = spell(out[path[0]][path[1]])
    return out


CASES: dict[str, tuple[str, dict[str, Any]]] = {}
for _tool, (_args, _paths) in BASE.items():
    for _path in _paths:
        _id = _args[_path[0]] if len(_path) == 1 else _args[_path[0]][_path[1]]
        for _name, _spell in SPELLINGS.items():
            _other = _spell(_id)
            if _other != _id:  # (digits have no case)
                CASES[f"{_tool.removeprefix('retail__')} {'/'.join(map(str, _path))} {_name}"] = (
                    _tool, _spelled(_args, _path, _spell))


def _user() -> AnsweringUser:
    return AnsweringUser([OLIVIA, ("Why do you want to cancel", "no longer needed"),
                          *[(q, False) for q in CONFIRMATIONS]])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def runtime(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Any]:
    async for rt in held_runtime(tmp_path_factory.mktemp("retail")):
        yield rt


async def _store(c: Any) -> dict[str, Any]:
    return {o: await order(c, o) for o in (PENDING, DELIVERED)}


@pytest.mark.parametrize("tool", sorted(BASE))
async def test_the_stores_own_ids_reach_the_users_confirmation(runtime: Any, tool: str) -> None:
    user = _user()
    async with conversation(runtime, user) as c:
        before = await _store(c)
        r = await c.call_tool(tool, BASE[tool][0])
        assert r.is_error and "you declined" in text_of(r), text_of(r)
        assert any(m.startswith(CONFIRMATIONS) for m in user.messages()), user.messages()
        assert await _store(c) == before


@pytest.mark.parametrize("case", sorted(CASES))
async def test_another_spelling_of_an_id_is_refused_before_any_confirmation(runtime: Any, case: str) -> None:
    tool, args = CASES[case]
    user = _user()
    async with conversation(runtime, user) as c:
        before = await _store(c)
        r = await c.call_tool(tool, args)
        assert r.is_error and "Sentinel refused this call" in text_of(r), text_of(r)
        assert "you declined" not in text_of(r), text_of(r)
        assert not any(m.startswith(CONFIRMATIONS) for m in user.messages()), user.messages()
        assert await _store(c) == before
