"""The rulebase's one-time code rule (``device.pl``) and the SMS tool's own check (``one_time_codes.py``)
decide alike. The rule read the English words code/otp/verification only, while the tool read every
language of ``core/code_words.py`` and digits standing for letters: "Tu código es 730551", "Ваш код
730551", "c0de 730551" or "G-730551" passed the guard and became a question to the person, and only the
tool refused them; and the guard missed a code split by a no-break space ("730\\u00a0551", which the tool
read). Both now read one word list and fold (the rulebase's ``sentinel_rt:speaks_of_a_code/1`` is written
from the Python list), and the same digit runs; each spelling here is decided by the real guard and by the
real tool, and they agree.

A bare number ("730 551") is where they differ, on purpose: the guard cannot see the inbox, so it refuses
every SMS body that is only 4-8 digits; the tool, which can, refuses one it received lately in any spelling
and asks the person about any other (tests/device/test_sms_code_window.py)."""

from __future__ import annotations

import random
import subprocess

import pytest
from tests.device.test_rulebase import guarded_device

from device_tools.one_time_codes import speaks_of_code
from sentinel_mcp.core.decision import Deny
from sentinel_mcp.paths import PROJECT_ROOT, RULEBASES_DIR
from sentinel_mcp.policy.rulebase_includes import included_files

RT = PROJECT_ROOT / "sentinel_mcp" / "policy" / "prolog" / "sentinel_rt.pl"

pytestmark = pytest.mark.timeout(180)

CODES = [
    "Your code is 730551", "Tu código es 730551", "Ваш код: 730551", "Ο κωδικός σας είναι 730551",
    "您的验证码是730551", "認証コード 730551", "인증번호 730551", "رمز التحقق 730551", "קוד האימות 730551",
    "आपका ओटीपी 730551 है", "รหัส 730551", "Bestätigungscode 730551", "Din engångskod 730551",
    "Doğrulama kodunuz 730551", "your PIN 7305", "2FA: 730551", "c0de 730551", "v3rification 730551",
    "0TP 730551", "G-730551", "use FB-7305 to sign in", "Your code is 730\u00a0551",
    "Your code is 730\u202f551", "code 730.551", "code 730_551", "code 730/551", "code 73 - 05 - 51",
    "code 12 34 56 78 90", "Your code is ٧٣٠٥٥١", "ＣＯＤＥ: 730551", "𝐜𝐨𝐝𝐞: 730551",
    "verification\u200b code 730\u200b551", "Your code is ７３０５５１", "Your otp: 73 05 51",
]
NOT_CODES = [
    "See you at 7", "Room 48, 2 beds", "call me on +15550100", "Code review moved to Monday",
    "shopping list: 3 apples", "The invoice total is 1250 dollars", "My pin is in the drawer",
    "spinach 4 kg, tangerines 12", "code 123456789", "Meet at gate B12",
]
BARE = ["730551", "730 551", "73-05-51", "٧٣٠٥٥١", "730\u00a0551", "７３０ ５５１"]


def test_the_tools_reading_of_each_spelling() -> None:
    assert [t for t in CODES if not speaks_of_code(t)] == []
    assert [t for t in NOT_CODES if speaks_of_code(t)] == []
    assert [t for t in BARE if speaks_of_code(t)] == []  # (the inbox check, then the person)


def _code_denial(decision: object) -> bool:
    return isinstance(decision, Deny) and any("one-time code" in u for u in decision.unmet)


async def test_the_guard_and_the_sms_tool_decide_alike(tmp_path) -> None:
    async with guarded_device(tmp_path) as (client, port, guard):
        for body in CODES + NOT_CODES:
            rule = _code_denial(await guard.decide(port.call_of("device__sms_send",
                                                                {"to": "+15550100", "body": body})))
            tool = await client.call_tool("sms_send", {"to": "+15550100", "body": body})
            refused = tool.is_error and "one-time code" in tool.content[0].text
            assert rule == refused == (body in CODES), (body, rule, tool.content[0].text)
        for body in BARE:  # the rule alone: it cannot see which codes came in
            sent = await guard.decide(port.call_of("device__sms_send", {"to": "+15550100", "body": body}))
            assert _code_denial(sent), body


async def test_the_guard_reads_typed_text_as_the_tool_reads_it(tmp_path) -> None:
    async with guarded_device(tmp_path) as (_, port, guard):
        for text in CODES + NOT_CODES + BARE:
            call = port.call_of("device__type_text", {"snapshot_id": "s", "element_id": "e", "text": text})
            assert _code_denial(await guard.decide(call)) == speaks_of_code(text), text


PIECES = ["code", "código", "КОД", "c0de", "0TP", "v3rif", "pin", "spinach", "G-", "FB-", "xG-", "hello",
          "Meet", "٧٣", "７３", "730", "55", "1", "2024", "123456789", " ", "\u00a0", "\u202f", "\u200b", "-",
          " - ", ".", "_", "/", "\\", ":", ",", "\n", "𝐜𝐨𝐝𝐞", "認証", "رمز", "4B", "l0gin", "A", "_", "é"]


def _random_texts(n: int) -> list[str]:
    rng = random.Random(20261206)  # seeded: the same texts every run
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 9))) for _ in range(n)]


# the files device.pl includes (its text classifiers: device/texts.pl), loaded as plain Prolog; device.pl's
# own include_rules/1 declarations are Sentinel's loader's, no directive plain Prolog runs
DEVICE_FILES = "[" + ", ".join(f"'{f}'" for f in included_files([RULEBASES_DIR / "device.pl"])[1:]) + "]"


def test_the_rule_and_the_tool_read_a_thousand_mixed_texts_alike() -> None:
    """The rule's predicate itself (real SWI-Prolog, device.pl on sentinel_rt) against the tool's function,
    over texts made of the pieces both read: words, scripts, joiners, prefixes, invisible characters."""
    texts = _random_texts(1000)
    facts = "".join(f"t({i}, {[ord(c) for c in t]}).\n" for i, t in enumerate(texts))
    goal = ("forall(t(I, Cs), ( atom_codes(A, Cs), ( one_time_code_text(A) -> R = 1 ; R = 0 ), "
            "format('~d ~d~n', [I, R]) )), halt")
    command = ["swipl", "-q", "-g", "style_check(-singleton), style_check(-discontiguous)",
               "-g", f"use_module('{RT}')", "-g", f"load_files({DEVICE_FILES}, [])",
               "-g", "load_files(texts, [stream(user_input)])", "-g", goal, "-t", "halt(1)"]
    out = subprocess.run(command, input=facts, capture_output=True, text=True, timeout=100,
                         check=True).stdout.split("\n")
    got = {int(line.split()[0]): line.split()[1] == "1" for line in out if line}
    want = {i: speaks_of_code(t) for i, t in enumerate(texts)}
    assert got == want, [(texts[i], got.get(i), want[i]) for i in want if got.get(i) != want[i]][:20]
    assert 100 < sum(want.values()) < 900  # both kinds, many of each
