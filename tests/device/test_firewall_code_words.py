"""The firewall's typed-code check read English code words only ("code", "otp", "verification", ...): a
one-time code typed into a field labelled "Kod", "Bestätigungscode", "验证码" or "Код подтверждения", or typed
with its own words ("Twój kod 482913"), passed as an ordinary text. It now reads the one list the redactor
and the SMS masking read (``core/code_words.py``), in every language and script they know."""

from __future__ import annotations

import pytest

from device_tools.actions import ProposedAction, Target
from device_tools.firewall import ActionFirewall


def typed(text: str, *, desc: str = "", rid: str = "x:id/field", hint: str = "") -> ProposedAction:
    target = Target(id="e", desc=desc, resource_id=rid, hint=hint, editable=True)
    return ProposedAction(kind="type", tool="type_text", text=text, target=target)


@pytest.mark.parametrize("action", [
    typed("482913", desc="Kod"),
    typed("482913", desc="Bestätigungscode"),
    typed("482913", desc="验证码"),
    typed("482913", desc="Код подтверждения"),
    typed("482913", desc="Código de verificación"),
    typed("482913", desc="ＣＯＤＥ"),
    typed("482913", desc="ワンタイムパスワード"),
    typed("482913", rid="x:id/kod_sms"),
    typed("Twój kod 482913"),
    typed("رمز التحقق 482913"),
    typed("482913", desc="verification code"),  # (as before)
])
def test_a_code_typed_under_a_code_word_of_any_language_is_flagged(action: ProposedAction) -> None:
    a = ActionFirewall().assess(action)
    assert a.risk in ("high", "critical") and a.floor in ("high", "critical"), a.reasons
    assert any("one-time code" in r for r in a.reasons), a.reasons


@pytest.mark.parametrize("action", [
    typed("See you at 7", desc="Nachricht"),
    typed("2024", desc="Jahr"),
    typed("482913", desc="Menge"),  # (a number typed into a field that speaks of no code)
    typed("Kod", desc="Nachricht"),  # (the word without a code)
])
def test_a_number_under_other_words_is_not_a_code(action: ProposedAction) -> None:
    assert not any("one-time code" in r for r in ActionFirewall().assess(action).reasons)
