"""``sentinel_rt:speaks_of_a_code/1`` reads the words of a one-time code as ``core/code_words.py`` does: the
table file is the one ``code_word_table.py`` writes from the Python list and fold (not a second list kept by
hand, as device.pl's English-only "code/otp/verification" was), and a real SWI-Prolog decides each text
here as Python does: every word of the list as written, in capitals, inside a longer word, and texts that
hold none (a short word inside a longer one: "shopping", "spinach")."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from sentinel_mcp.core import code_words
from sentinel_mcp.paths import PROJECT_ROOT
from sentinel_mcp.policy.code_word_table import TABLE, table_text

RT = PROJECT_ROOT / "sentinel_mcp" / "policy" / "prolog" / "sentinel_rt.pl"
pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(shutil.which("swipl") is None, reason="SWI-Prolog is not installed")]

OTHERS = ["shopping", "spinach", "tangerine", "Meet at 10", "hello world", "", "Code review", "ＣＯＤＥ",
          "𝐜𝐨𝐝𝐞", "Bestätigungscode", "KÓD", "ПАРОЛЬ", "verif\u200bication", "c\u200bode", "PIN:", "x2fa",
          "2FA", "mTAN", "otpx", "ПОДТВЕРЖДЕНИЕ", "ΚΩΔΙΚΌΣ", "Código", "ｐｉｎ",
          # folds the table leaves out (to letters no word holds) beside ones it keeps
          "ÆØÅ kode", "ΆΈΉ κωδικός", "ﬁnd your ＰＩＮ", "Ǳ pin", "ŁÓDŹ kod", "Ĳssel otp", "ß tan", "ЁЖ код",
          "ｺｰﾄﾞ", "ﾊﾟｽﾜｰﾄﾞ", "\u00a0pin\u00a0", "x\u200dotp"]


def _texts() -> list[str]:
    out = list(OTHERS)
    for w in code_words.CODE_WORDS + code_words.SHORT_WORDS:
        out += [w, w.upper(), f"Ihr {w.title()}!", f"x{w}y"]
    return out


def test_the_table_file_is_the_one_the_generator_writes() -> None:
    assert TABLE.read_text(encoding="utf-8") == table_text()


def test_the_table_folds_only_to_what_a_word_can_read() -> None:
    """The fold is written only where its letter is one a word holds, or one the short words' test reads
    beside them (a-z): a character folded to any other matches no word's character folded or not, since
    each of those folds to itself. A third of the clauses Prolog compiles at every engine start and in
    every rulebase rehearsal (5,812 before, ~60 ms of SWI-Prolog's start), the same verdicts."""
    readable = set("abcdefghijklmnopqrstuvwxyz")
    for w in code_words.folded_words() + code_words.SHORT_WORDS:
        readable |= set(w)
    assert all(code_words.fold_letters(c) == c for c in readable)
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    folds = [line for line in lines if line.startswith("letter_fold(")]
    targets = {chr(int(line.split(",")[1].rstrip(")."))) for line in folds}
    assert targets <= readable and {"a", "z", "k", "д", "コ", " ", "2"} <= targets
    assert len(folds) < 2500


def test_prolog_reads_every_text_as_python_does() -> None:
    texts = _texts()
    # each text as its character codes: no quoting of the text itself reaches Prolog's reader
    facts = "".join(f"t({i}, {[ord(c) for c in t]}).\n" for i, t in enumerate(texts))
    goal = ("forall(t(I, Cs), ( atom_codes(A, Cs), ( speaks_of_a_code(A) -> R = 1 ; R = 0 ), "
            "format('~d ~d~n', [I, R]) )), halt")
    command = ["swipl", "-q", "-g", f"use_module('{RT}')", "-g", "load_files(texts, [stream(user_input)])",
               "-g", goal, "-t", "halt(1)"]
    out = subprocess.run(command, input=facts, capture_output=True, text=True, timeout=100,
                         check=True).stdout.split("\n")
    got = {int(line.split()[0]): line.split()[1] == "1" for line in out if line}
    want = {i: code_words.speaks_of_a_code(t) for i, t in enumerate(texts)}
    assert got == want, [(texts[i], got.get(i), want[i]) for i in want if got.get(i) != want[i]]
    assert sum(want.values()) > len(texts) // 2 and not all(want.values())
