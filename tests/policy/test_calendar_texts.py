"""calendar_date/1 and calendar_time/1 (calendar_texts.pl) checked by arithmetic compiled in line must accept
exactly what the former code-by-code definition (kept below as the reference, loaded into the same engine)
accepted: every day of years around the leap rules, every hour, minute and second at the bounds, and
thousands of texts one edit away from a real time (other digits of other scripts, separators, NUL, lengths),
non-atoms and huge texts; and a time is checked in a few inferences (the airline guard checks two a
decision: 39 each before)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.prolog_text import quote_atom

pytestmark = pytest.mark.timeout(120)

RULES = "guard('t__noop', [], true).\n"

# the definition before the in-line arithmetic, word for word (module renamed)
REFERENCE = r"""
:- module(calendar_reference, [ref_date/1, ref_time/1]).
ref_date(X) :- atom(X), atom_codes(X, Cs), day_codes(Cs).
ref_time(X) :-
    atom(X), atom_codes(X, Cs), length(Day, 10), append(Day, [0'T, H1, H2, 0':, I1, I2, 0':, S1, S2], Cs),
    day_codes(Day), ascii_digits([H1, H2, I1, I2, S1, S2]),
    number_codes(Hour, [H1, H2]), number_codes(Min, [I1, I2]), number_codes(Sec, [S1, S2]),
    Hour =< 23, Min =< 59, Sec =< 59.
day_codes([Y1, Y2, Y3, Y4, 0'-, M1, M2, 0'-, D1, D2]) :-
    ascii_digits([Y1, Y2, Y3, Y4, M1, M2, D1, D2]),
    number_codes(Y, [Y1, Y2, Y3, Y4]), number_codes(M, [M1, M2]), number_codes(D, [D1, D2]),
    Y >= 1, between(1, 12, M), month_days(Y, M, Days), between(1, Days, D).
ascii_digits([]).
ascii_digits([C|Cs]) :- between(0'0, 0'9, C), ascii_digits(Cs).
month_days(Y, 2, D) :- !, ( leap_year(Y) -> D = 29 ; D = 28 ).
month_days(_, M, 30) :- memberchk(M, [4, 6, 9, 11]), !.
month_days(_, _, 31).
leap_year(Y) :- Y mod 4 =:= 0, ( Y mod 100 =\= 0 -> true ; Y mod 400 =:= 0 ).
"""

YEARS = ["0000", "0001", "0004", "0100", "1900", "1999", "2000", "2023", "2024", "2100", "2400", "9999"]
# replacements for one character: digits of other scripts, letters, separators, controls, wide characters
ODD = ["٣", "２", "𝟘", "⁰", "½", " ", "/", ":", "-", "T", "t", "Z", "a", ".", "+", "\x00", "\n", "\u200b",
       "é", "0", "9", "5", "\x7f", "𐀀"]
NOT_ATOMS = ['"2024-05-15T10:00:00"', '"2024-05-15"', "20240515", "2024.5", "f('2024-05-15T10:00:00')",
             "['2024-05-15']", "_", "[]"]


def _texts(seed: int, n: int) -> list[str]:
    rnd = random.Random(seed)
    days = [f"{y}-{m:02d}-{d:02d}" for y in YEARS for m in range(0, 14) for d in range(0, 33)]
    times = [f"2024-{m:02d}-{d:02d}T{h:02d}:{i:02d}:{s:02d}" for m in (1, 2, 12) for d in (1, 29, 30, 31)
             for h in (0, 9, 23, 24, 39) for i in (0, 59, 60) for s in (0, 59, 60, 99)]
    texts = days + times + [d + "T12:30:45" for d in days[::7]]
    base = ["2024-05-15T10:00:00", "2024-02-29T23:59:59", "2024-05-15", "1900-02-28"]
    for _ in range(n):  # one to three edits of a real date or time
        t = list(rnd.choice(base))
        for _ in range(rnd.randint(1, 3)):
            k = rnd.randrange(len(t) + 1)
            op = rnd.random()
            if op < 0.6 and k < len(t):
                t[k] = rnd.choice(ODD)
            elif op < 0.8:
                t.insert(k, rnd.choice(ODD))
            elif t:
                del t[min(k, len(t) - 1)]
        texts.append("".join(t))
    texts += ["", "T", "2024-05-15T10:00:00" * 2, "2024-05-15T10:00:00 ", " 2024-05-15", "x" * 100_000,
              "2024-05-15T10:00:0", "2024-05-15T10:00", "+2024-05-15", "2024-5-15"]
    return texts


@pytest.fixture
async def guard(tmp_path: Path) -> Any:
    rb = tmp_path / "calendar.pl"
    rb.write_text(RULES)
    (tmp_path / "calendar_reference.pl").write_text(REFERENCE)
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    assert g.problem is None, g.problem
    ref = quote_atom(str(tmp_path / "calendar_reference.pl"))
    # one SWI-Prolog a process: the reference module stays loaded for the next test
    load = f"( current_module(calendar_reference) -> true ; use_module({ref}) )"
    await g.engine.run(lambda p: list(p.query(load, maxresult=1)))
    yield g
    await g.close()


async def _query(guard: PolicyGuard, goal: str) -> list[dict[str, Any]]:
    return await guard.engine.run(lambda p: list(p.query(goal, maxresult=1)))


COMPARE = r"""
    findall(X-New-Old,
            ( member(X, Xs),
              member(p(Ours, Ref), [p(calendar_texts:calendar_date, calendar_reference:ref_date),
                                    p(calendar_texts:calendar_time, calendar_reference:ref_time)]),
              ( catch(call(Ours, X), E1, true) -> ( var(E1) -> New = yes ; New = error(E1) ) ; New = no ),
              ( catch(call(Ref, X), E2, true) -> ( var(E2) -> Old = yes ; Old = error(E2) ) ; Old = no ),
              New \== Old ),
            Diffs),
    length(Diffs, N), with_output_to(string(D), print(Diffs)),
    aggregate_all(count, ( member(X, Xs), calendar_texts:calendar_time(X) ), Times),
    aggregate_all(count, ( member(X, Xs), calendar_texts:calendar_date(X) ), Dates)
"""


async def test_the_in_line_checks_accept_what_the_code_by_code_walk_accepted(guard: PolicyGuard) -> None:
    texts = _texts(7, 6000)
    xs = ", ".join([quote_atom(t) for t in texts] + NOT_ATOMS)
    rows = await _query(guard, f"Xs = [{xs}], {COMPARE}")
    assert rows and rows[0]["N"] == 0, rows[0]["D"][:2000]
    # not two definitions broken alike: both accepted real days and times, and not everything
    assert 500 < rows[0]["Dates"] < 5000 and 100 < rows[0]["Times"] < 2000, rows[0]


@pytest.mark.parametrize(("text", "date", "time"), [
    ("2024-02-29", True, False), ("2023-02-29", False, False), ("1900-02-29", False, False),
    ("2000-02-29", True, False), ("0000-01-01", False, False), ("0001-01-01", True, False),
    ("2024-04-31", False, False), ("2024-12-31T23:59:59", False, True), ("2024-12-31T24:00:00", False, False),
    ("2024-05-15T10:60:00", False, False), ("2024-05-15T10:00:60", False, False),
    ("２０２４-05-15T14:00:00", False, False), ("2024-05-15T1٣:00:00", False, False),
    ("2024-05-15 14:00:00", False, False), ("2024-05-15T14:00:00Z", False, False),
])
async def test_known_days_and_times(guard: PolicyGuard, text: str, date: bool, time: bool) -> None:
    q = quote_atom(text)
    rows = await _query(guard, f"( calendar_texts:calendar_date({q}) -> D = yes ; D = no ), "
                               f"( calendar_texts:calendar_time({q}) -> T = yes ; T = no )")
    assert (rows[0]["D"] == "yes", rows[0]["T"] == "yes") == (date, time)


async def test_a_time_is_checked_in_a_few_inferences(guard: PolicyGuard) -> None:
    rows = await _query(guard, "X = '2024-05-15T10:00:00', calendar_texts:calendar_time(X), "
                               "statistics(inferences, I0), calendar_texts:calendar_time(X), "
                               "statistics(inferences, I1), I is I1 - I0")
    assert rows[0]["I"] <= 10, rows[0]["I"]  # 7; 63 a digit at a time
