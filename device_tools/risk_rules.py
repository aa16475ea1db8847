"""RiskRules: what an action on the phone risks, from what it says and where it happens.

The firewall's keyword pass (``ActionFirewall``) reads words; these rules read how they are used, because the
same word can be a view or a deed: "Payment methods" is a page, "Pay now" moves money; "Cancel" in a delete
dialog is the safe choice; a tap on "Navigate up" inside a banking app is navigation, "Continue" there may
commit a transfer. The hard checks stay the firewall's, unchanged and unlowerable: passwords, card numbers,
IBANs and one-time codes in typed text, SMS, permission grants, terminal commands.

Decided here, in this order:
1. moving about (back, home, scroll, opening an app) is low;
2. a safe choice (cancel, not now, don't allow, close, ...) is low;
3. upgrades: money moved by a commit (confirm/pay/send/approve + a money word, or a money verb in a payment
   app) is critical; turning a security feature off is critical; emptying, clearing data, trashing, removing
   an account, publishing are high; a security toggle is high; other state changes (save, archive, connect,
   install, ...) are medium;
4. downgrades where the words only name a view: a noun-capable keyword next to a view noun ("Order
   history", "Payment methods", "Call history") and, in a payment app, navigation and view labels are low;
   other taps in a payment app are medium, commits high; an ordinary settings toggle is medium.
Measured on ``benchmarks/data/risk_actions.json`` by ``benchmarks/risk_classifier.py``.
"""

from __future__ import annotations

import re

from sentinel_mcp.core.display_text import is_hidden

from .actions import ProposedAction, Risk, Target
from .label_fold import mixes_scripts
from .label_window import flag_unread, readable, unread, window
from .firewall import (
    KEYWORDS,
    PERMISSION_PACKAGES,
    PHRASES,
    SETTINGS_PACKAGES,
    ActionFirewall,
    Assessment,
    _visible,
    is_payment_app,
)

# phrases in a label that act on the account or the phone whatever the words around them (checked in this
# order), rated as the firewall rates them
ACCOUNT_PHRASES: dict[str, tuple[Risk, str]] = {
    phrase: PHRASES[phrase]
    for phrase in ("sign in", "log in", "sign out", "log out", "factory reset", "erase all", "reset options")
}
MOVING = {"back", "home", "recents", "scroll", "swipe", "wait_for", "open_app"}
SAFE_CHOICES = {
    "cancel",
    "not now",
    "no thanks",
    "no, thanks",
    "maybe later",
    "later",
    "skip",
    "dismiss",
    "close",
    "don't allow",
    "dont allow",
    "do not allow",
    "deny",
    "no",
    "navigate up",
    "back",
    "go back",
    "more options",
    "menu",
    "open navigation drawer",
    "search",
    "show more",
    "see all",
    "expand",
    "collapse",
    "got it",
}
VIEW_NOUNS = {
    "history",
    "methods",
    "method",
    "settings",
    "details",
    "list",
    "status",
    "options",
    "log",
    "logs",
    "recents",
    "activity",
    "statements",
    "statement",
    "accounts",
    "account",
    "cards",
    "overview",
    "profile",
    "help",
    "notifications",
    "inbox",
    "orders",
    "your",
    "info",
    "summary",
    "balance",
}
# keywords that are also nouns: next to a view noun they name a page, not a deed
NOUN_KEYWORDS = {
    "order",
    "payment",
    "call",
    "transfer",
    "purchase",
    "share",
    "post",
    "permission",
    "permissions",
    "subscribe",
    "install",
    "password",
    "pin",
}
MONEY = {
    "sell",
    "swap",
    "trade",
    "invest",
    "stake",
    "redeem",
    "deposit",
    "bid",
    "pay",
    "payment",
    "transfer",
    "money",
    "purchase",
    "buy",
    "checkout",
    "withdraw",
    "donate",
    "order",
    "tip",
    "cash",
}
MONEY_VERBS = {"pay", "buy", "withdraw", "donate", "checkout", "transfer", "purchase", "sell", "swap",
               "trade", "invest", "stake", "redeem", "deposit", "bid", "cashout"}
ERASING = {"delete", "erase", "wipe", "reset", "format", "uninstall", "remove", "discard", "clear"}
COMMIT = {
    "confirm",
    "approve",
    "authorize",
    "authorise",
    "send",
    "place",
    "complete",
    "pay",
    "submit",
    "continue",
    "proceed",
    "next",
    "ok",
    "yes",
    "agree",
    "accept",
    "finish",
    "done",
    "go",
}
DESTRUCTIVE_PHRASES = (
    "empty trash",
    "empty bin",
    "move to trash",
    "move to bin",
    "clear storage",
    "clear data",
    "clear cache",
    "clear history",
    "clear all",
    "remove account",
    "close account",
    "delete account",
    "deactivate",
)
PUBLISH = {"post", "publish", "tweet", "upload", "broadcast"}
STATE_VERBS = {
    "save",
    "archive",
    "add",
    "connect",
    "disconnect",
    "block",
    "unblock",
    "update",
    "upgrade",
    "unsubscribe",
    "mute",
    "rename",
    "move",
    "restore",
    "enable",
    "disable",
    "apply",
    "turn",
}
SECURITY_WORDS = (
    "screen lock",
    "lock screen",
    "encryption",
    "find my device",
    "play protect",
    "device admin",
    "usb debugging",
    "developer options",
    "unknown apps",
    "unknown sources",
    "this source",
    "smart lock",
    "biometric",
    "fingerprint",
)
DISABLING = {"none", "off", "turn off", "disable", "remove", "swipe", "no lock"}
_WORD = re.compile(r"[a-z0-9']+")
KINDS_THAT_ADD_DATA = {"calendar_create": "adds a calendar event"}


def _norm(text: str) -> str:
    # invisible characters dropped first (as the firewall does): "Pa\u200by" is still "pay", not "pa y"
    return " ".join(_WORD.findall(_visible(text).lower().replace("’", "'").replace("_", " ")))


def says_little(label: str) -> bool:
    """A label that says nothing of what the tap commits: none ("✓", an icon) or only commit words ("OK",
    "Continue", "Yes, I'm sure"): what it commits is what the screen around it says."""
    words = set(_norm(window(label)).split()) - {"i'm", "im", "sure", "i", "am", "it", "do"}
    return not words or words <= COMMIT


def _own(t: Target) -> list[str]:
    """What a target says of itself: its label, else the first label inside it, its row's, its id."""
    if t.text or t.desc:
        return [t.text, t.desc]
    return [t.hint.split(" | ")[0], t.row.split(" | ")[0], t.resource_id.rsplit("/", 1)[-1]]


class RiskRules:
    def __init__(self, firewall: ActionFirewall | None = None) -> None:
        self.firewall = firewall or ActionFirewall()

    def assess(self, action: ProposedAction) -> Assessment:
        if action.kind in MOVING:
            return Assessment(reasons=[] if action.kind != "open_app" else ["opening an app changes nothing"])
        # a field too long to read whole is read as its window, and asked whatever the window says: no rule
        # below lowers that (label_window.py); the text around the target counts where it is read
        t = action.target
        around = t is not None and action.kind in ("click", "long_click") and says_little(" ".join(_own(t)))
        long = unread(action, around=around)
        a = self._assess(readable(action) if long else action)
        flag_unread(a, long)
        return a

    def _named_otherwise(self, action: ProposedAction, label: str, rid: str) -> Assessment | None:
        """A safe choice's label on a control whose id names something else ("Cancel" whose id is
        confirm_transfer_button): the label is the app's word to the person, the id the control's own name,
        so the control is rated by its id too, as an "OK" is, and asked when that says more. An id sharing a
        word with the label agrees with it ("cancel_payment"), one that names nothing ("button2") adds
        nothing: None, the safe choice stands."""
        said = set(_norm(rid).split())
        if not said or said & set(label.split()) or action.target is None:
            return None
        # the id as the control's only label, read in no app: its own words must name the deed (any control in
        # a bank is asked, and a bank's "Cancel" is still the way out); no id left: the rating ends there
        as_named = action.target.model_copy(update={"text": _norm(rid), "desc": "", "resource_id": "",
                                                    "package": ""})
        a = self._assess(action.model_copy(update={"target": as_named, "package": ""}))
        if not a.requires_confirmation:
            return None
        a.flag(a.risk, "a safe-choice label on a control whose id names another deed", floor="medium")
        return a

    def _assess(self, action: ProposedAction) -> Assessment:
        base = self.firewall.assess(action)
        t = action.target
        if t is not None and (
            any(is_hidden(ch) for x in (t.text, t.desc, t.hint, t.inside, t.resource_id, action.text or "")
                for ch in x)
            or any(mixes_scripts(x) for x in (t.text, t.desc, t.hint, t.inside, t.resource_id))
        ):
            # what the person would read is not what is there: no rule lowers the firewall's floor for it
            return base
        if t is None or action.kind in ("type", "clear") or action.kind not in ("click", "long_click"):
            return self._kinds(
                action, base
            )  # typed text, SMS, terminal, modules: the firewall's checks decide
        a = self._tap(action)
        if t.inside:
            self._inside(action, a)
        return a

    def _inside(self, action: ProposedAction, a: Assessment) -> None:
        """A tap activates the element and everything inside it: a row whose first label says "Details" and a
        later one "Pay now" commits the payment. Its inner labels are rated as its own label would be, spaced
        and glued (a word split across two nodes, "De" | "lete account", reads whole to a person), upward
        only: what the element says of itself is rated too (``_tap``)."""
        t = action.target
        assert t is not None
        inner = window(t.inside)
        said = t.model_copy(update={"text": f"{inner} {inner.replace(' | ', '')}", "desc": "", "hint": "",
                                    "inside": "", "row": "", "resource_id": ""})
        b = self._tap(action.model_copy(update={"target": said}))
        if not b.requires_confirmation:
            return
        for reason in b.reasons:
            a.flag(b.risk, reason, floor=b.floor)
        a.flag(b.risk, "a label inside what the tap reaches says so", floor=b.floor)

    def _tap(self, action: ProposedAction) -> Assessment:
        """A click or long press rated by what the target says of itself and where it is."""
        t = action.target
        assert t is not None
        rid = t.resource_id.rsplit("/", 1)[-1]
        own = _own(t)
        generic = says_little(" ".join(x for x in own if x))
        if generic and (t.text or t.desc):
            own.append(rid)  # "OK" whose id is delete_account_button: the id says what the label does not
        label = _norm(" ".join(x for x in own if x))
        context = _norm(" ".join([t.text, t.desc, t.hint, t.row, rid]))
        words = set(label.split())
        package = t.package or action.package or ""
        payment = is_payment_app(package)

        if label in SAFE_CHOICES or _norm(t.desc) in SAFE_CHOICES and not t.text:
            named = self._named_otherwise(action, label if label in SAFE_CHOICES else _norm(t.desc), rid)
            return named or Assessment(reasons=["the safe choice (cancel, dismiss, deny, navigate)"])
        if package in PERMISSION_PACKAGES:
            return self.firewall.assess(action)  # a grant: the firewall's high floor stands
        # a long press opens a menu only where the element handles one; elsewhere the lift is a click ("OK")
        if action.kind == "long_click" and t.long_clickable and not (words & KEYWORDS.keys()):
            return Assessment(reasons=["a long press opens a menu"])

        a = Assessment()
        money, commit = words & MONEY, words & COMMIT
        view = bool(words & VIEW_NOUNS)
        if (money and commit) or (payment and words & MONEY_VERBS) or ("send" in words and "money" in words):
            a.flag("critical", "moves money", floor="high")
        elif words & MONEY_VERBS - (NOUN_KEYWORDS if view else set()):
            a.flag("high", "moves money", floor="medium")  # "Sell all", "Withdraw", "Swap": in any app
        switch = t.checkable or t.toggles  # a switch, or a row a tap on which flips the one it holds
        if any(s in context for s in SECURITY_WORDS):
            if words & DISABLING or label in DISABLING or (t.checkable and t.checked):
                a.flag("critical", "turns a security feature off", floor="high")
            elif switch:
                a.flag("high", "changes a security setting", floor="medium")
        if generic and t.context:
            self._commits(_norm(t.context), a)
        if generic and t.screen:
            self._commits(_norm(t.screen), a, strong_only=True)
        if any(p in label for p in DESTRUCTIVE_PHRASES):
            a.flag("high", "deletes data", floor="medium")
        if words & PUBLISH:
            a.flag("high", "publishes", floor="medium")
        for word in sorted(words & KEYWORDS.keys()):
            if view and word in NOUN_KEYWORDS:
                continue  # "Order history", "Payment methods": a page, not a deed
            risk, why = KEYWORDS[word]
            a.flag(risk, why)  # a bare keyword may be a false positive the model can clear: no floor
        for phrase, (risk, why) in ACCOUNT_PHRASES.items():
            if phrase in label:
                a.flag(risk, why, floor="medium")
        if words & STATE_VERBS and a.risk == "low":
            a.flag("medium", "changes something that can be undone")
        if package in SETTINGS_PACKAGES and switch and a.risk == "low":
            a.flag("medium", "toggles a system setting", floor="medium")
        if payment:
            if commit or a.requires_confirmation:
                a.flag("high", "banking or payment app", floor="medium")
            elif not (view or label in SAFE_CHOICES):
                a.flag("medium", "an unknown control in a banking or payment app", floor="medium")
        return a

    @staticmethod
    def _commits(said: str, a: Assessment, strong_only: bool = False) -> None:
        """A tap whose label says little ("OK", "Continue", "✓") commits what the screen around it says
        ("Delete 14 conversations?", "Erase all data?", "Send $900?"): rated by those words, upward only.
        ``strong_only``: words from anywhere on the screen: money, erasing, the account's and the phone's
        security (not every keyword: a "Next" on a page that mentions sharing stays quiet)."""
        words = set(said.split())
        why = "commits what the screen around it says"
        if words & MONEY or words & MONEY_VERBS or ("send" in words and "money" in words):
            a.flag("critical", f"{why} (moves money)", floor="high")
        if any(p in said for p in DESTRUCTIVE_PHRASES) or words & ERASING:
            a.flag("high", f"{why} (deletes data)", floor="medium")
        for phrase, (risk, reason) in ACCOUNT_PHRASES.items():
            if phrase in said:
                a.flag(risk, f"{why} ({reason})", floor="medium")
        if any(s in said for s in SECURITY_WORDS):
            a.flag("high", f"{why} (a security setting)", floor="medium")
        if strong_only:
            return
        for word in sorted(words & KEYWORDS.keys()):
            risk, reason = KEYWORDS[word]
            a.flag(risk, f"{why} ({reason})", floor="medium" if risk in ("high", "critical") else "low")

    def _kinds(self, action: ProposedAction, base: Assessment) -> Assessment:
        why = KINDS_THAT_ADD_DATA.get(action.kind)
        if why:
            base.flag("medium", why)
        if action.kind in ("alarm_set", "timer_set"):
            return (
                Assessment(reasons=["sets a clock that can be changed back"]) if base.risk == "low" else base
            )
        if (
            action.kind == "type"
            and action.target is not None
            and not action.target.password
            and base.risk == "low"
        ):
            return Assessment(reasons=["typing is not sending"])
        return base
