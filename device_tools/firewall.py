"""ActionFirewall: heuristic danger detection over an action's target, app and text.

Each rule gives a risk and a *floor*. The floor is how low the LLM risk classifier may take the
risk: a bare keyword ("send", "delete") can be a false positive the classifier clears, but a
password field, a card number or a factory reset cannot be talked down.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sentinel_mcp.core.card_numbers import holds_card_number
from sentinel_mcp.core.code_words import speaks_of_a_code
from sentinel_mcp.core.iban_numbers import iban_spans
from sentinel_mcp.core.display_text import is_hidden

from .actions import RISK_ORDER, ProposedAction, Risk, max_risk
from .label_fold import fold, mixes_scripts
from .label_window import flag_unread, readable, unread

KEYWORDS: dict[str, tuple[Risk, str]] = {
    # word: (risk, category)
    "send": ("high", "sends a message"),
    "reply": ("medium", "sends a message"),
    "post": ("medium", "publishes"),
    "pay": ("high", "payment"),
    "payment": ("high", "payment"),
    "transfer": ("high", "money transfer"),
    "buy": ("high", "purchase"),
    "purchase": ("high", "purchase"),
    "checkout": ("high", "purchase"),
    "order": ("medium", "purchase"),
    "subscribe": ("high", "purchase"),
    "donate": ("high", "payment"),
    "delete": ("high", "deletes data"),
    "remove": ("medium", "deletes data"),
    "erase": ("critical", "erases data"),
    "wipe": ("critical", "erases data"),
    "uninstall": ("high", "uninstalls an app"),
    "reset": ("high", "reset"),
    "factory": ("critical", "factory reset"),
    "format": ("high", "erases data"),
    "allow": ("high", "grants a permission"),
    "grant": ("high", "grants a permission"),
    "permission": ("medium", "permissions"),
    "permissions": ("medium", "permissions"),
    "install": ("medium", "installs software"),
    "call": ("medium", "places a call"),
    "confirm": ("medium", "confirms something"),
    "submit": ("medium", "submits a form"),
    "share": ("medium", "shares data"),
    "forward": ("medium", "forwards a message"),
    "password": ("high", "password"),
    "passcode": ("high", "password"),
    "pin": ("high", "password"),
    "otp": ("high", "one-time code"),
    "cvv": ("critical", "card data"),
    "cvc": ("critical", "card data"),
    "iban": ("high", "bank account"),
}
PHRASES: dict[str, tuple[Risk, str]] = {
    "erase all": ("critical", "erases data"),
    "factory reset": ("critical", "factory reset"),
    "reset options": ("high", "reset"),
    "sign out": ("medium", "signs out"),
    "log out": ("medium", "signs out"),
    "one-time code": ("high", "one-time code"),
    "verification code": ("high", "one-time code"),
    "security code": ("high", "one-time code"),
    "card number": ("critical", "card data"),
    "sign in": ("medium", "submits credentials"),
    "log in": ("medium", "submits credentials"),
}
PAYMENT_APP_HINTS = (
    "bank",
    "banking",
    "wallet",
    "paypal",
    "venmo",
    "cash",
    "revolut",
    "monzo",
    "pay",
    "finance",
    "crypto",
    "coinbase",
    "binance",
    "trading",
    "stripe",
    "zelle",
)
PERMISSION_PACKAGES = (
    "com.android.permissioncontroller",
    "com.google.android.permissioncontroller",
    "com.android.packageinstaller",
    "com.google.android.packageinstaller",
)
SETTINGS_PACKAGES = ("com.android.settings",)
SAFE_KINDS = {"back", "home", "recents", "scroll", "swipe", "wait_for"}
_WORD = re.compile(r"[a-z0-9]+")
_OTP = re.compile(r"(?<!\d)\d{4,8}(?!\d)")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b")


def luhn_ok(number: str) -> bool:
    digits = [int(c) for c in number if "0" <= c <= "9"]  # ASCII digits: isdigit took "²", which int refuses
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2 == 1:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return total % 10 == 0


@dataclass
class Assessment:
    risk: Risk = "low"
    floor: Risk = "low"
    reasons: list[str] = field(default_factory=list)
    source: str = "heuristic"  # "heuristic", "llm", "llm+heuristic floor"

    @property
    def requires_confirmation(self) -> bool:
        return RISK_ORDER[self.risk] >= RISK_ORDER["medium"]

    def flag(self, risk: Risk, reason: str, *, floor: Risk = "low") -> None:
        self.risk = max_risk(self.risk, risk)
        self.floor = max_risk(self.floor, floor)
        if reason not in self.reasons:
            self.reasons.append(reason)

    def public(self) -> dict[str, object]:
        return {
            "risk": self.risk,
            "floor": self.floor,
            "reasons": self.reasons,
            "source": self.source,
            "requires_confirmation": self.requires_confirmation,
        }


def _visible(text: str) -> str:
    """The text as a person reads it, in plain Latin letters: "se\u200bnd", "Ｓｅｎｄ", "Sеnd" (a Cyrillic е)
    and "Sénd" are all the word "send" (``label_fold.py``)."""
    return fold(text)


def _words(*texts: str) -> set[str]:
    out: set[str] = set()
    for t in texts:
        # resource ids: "com.x:id/send_message_button" -> send, message, button
        out.update(_WORD.findall(_visible(t).lower().replace("_", " ")))
    return out


def is_payment_app(package: str) -> bool:
    parts = _words(package.replace(".", " "))
    return any(h in parts or any(p.startswith(h) or p.endswith(h) for p in parts) for h in PAYMENT_APP_HINTS)


class ActionFirewall:
    def assess(self, action: ProposedAction) -> Assessment:
        if action.kind in SAFE_KINDS:
            return Assessment()
        # a label too long to read whole: its window is read, and the action is asked (label_window.py)
        long = unread(action)
        a = self._assess(readable(action) if long else action)
        flag_unread(a, long)
        return a

    def _assess(self, action: ProposedAction) -> Assessment:
        a = Assessment()
        t = action.target
        label_texts = [t.text, t.desc, t.hint, t.resource_id.rsplit("/", 1)[-1], t.inside] if t else []
        if t is not None and t.editable:
            # a field's own text is user input
            label_texts = [t.desc, t.resource_id.rsplit("/", 1)[-1], t.inside]
        words = _words(*label_texts)
        # Phrases only on the target's own labels: a row that merely *shows* "one-time code" in a
        # message preview is not a code entry; its words still count as keywords.
        joined = " ".join(_visible(x).lower() for x in label_texts if not (t and x in (t.hint, t.inside)))
        if any(is_hidden(ch) for x in [*label_texts, action.text or ""] for ch in x):
            # what the person would read is not what is there: never act on it without asking
            a.flag(
                "medium",
                "the target or text holds invisible or direction-changing characters (shown as ⟨U+…⟩)",
                floor="medium",
            )
        if any(mixes_scripts(x) for x in label_texts):
            # a word spelled with letters of two alphabets that look alike: made to pass for another word
            a.flag("medium", "the target's label mixes look-alike letters of two alphabets", floor="medium")
        for word in sorted(words & KEYWORDS.keys()):
            risk, why = KEYWORDS[word]
            a.flag(risk, f"target mentions {word!r} ({why})")
        for phrase, (risk, why) in PHRASES.items():
            if phrase in joined:
                a.flag(risk, f"target mentions {phrase!r} ({why})", floor="medium")
        package = (t.package if t else "") or action.package or ""
        if package and is_payment_app(package):
            a.flag(
                "high" if action.kind != "open_app" else "medium",
                f"{package} looks like a banking/payment app",
                floor="medium",
            )
        if package in PERMISSION_PACKAGES:
            a.flag("high", "a permission or install dialog", floor="high")
        if t is not None and package in SETTINGS_PACKAGES and t.checkable:
            a.flag("high", "toggles a system setting", floor="medium")
        if (
            t is not None
            and (t.password or words & {"password", "passcode", "pin"})
            and action.kind in ("type", "clear")
        ):
            a.flag("critical", "types into a password field", floor="high")
        if action.text:
            self._text(action.text, a, label_words=words, labels=" ".join(label_texts))
        if action.kind == "sms_send":
            a.flag("high", "sends an SMS", floor="high")
        if action.kind == "contact_create":
            a.flag("medium", "adds a contact", floor="low")
        if action.kind == "terminal":
            risk = action.details.get("risk", "medium")
            a.flag(risk, f"runs a device shell command ({risk} per the allow list)", floor=risk)
        return a

    def _text(self, text: str, a: Assessment, *, label_words: set[str], labels: str) -> None:
        if holds_card_number(text):  # however it is spaced ("4111.1111…", "4111/1111…")
            a.flag("critical", "text contains a payment card number", floor="critical")
        # (the shape alone in capitals, unchecked, as before; any spelling passing mod-97: iban_numbers.py)
        if _IBAN.search(text.replace(" ", "")) or iban_spans(text):
            a.flag("high", "text contains a bank account number (IBAN)", floor="medium")
        # the code words of every language the redactor and the SMS masking read (``core/code_words.py``),
        # on the target's labels or in the text itself ("Kod", "Bestätigungscode", "验证码"), and a token
        if _OTP.search(text) and (
            label_words & {"token"} or speaks_of_a_code(labels) or speaks_of_a_code(text)
        ):
            a.flag("high", "text looks like a one-time code", floor="high")
