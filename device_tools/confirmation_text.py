"""The one question a person sees before a risky action: what will happen, where, and why it is risky.

"Risk high: Tap “Sign in” in Bank? (submits credentials; banking app)" — Sentinel's rating first, written
for the phone's owner, not for the model: no element ids, no JSON. Every label comes from the screen, every
typed text, recipient and event from the agent, every name from the phone (hostile text): each is one value
as every question shows values (``core/quoted_values.py``, readable_terms.pl's convention): ``“…”`` with its
own closing marks escaped and line breaks as ``\\n``, bare when made of ``[A-Za-z0-9_.#@+-]`` alone, short.
The question is then shown once through ``safe_question`` (hidden characters marked, one marking).
"""

from __future__ import annotations

import re

from sentinel_mcp.core.display_text import (Marked, Shown, display_note, is_hidden, safe_question,
                                            shown_to_approve)
from sentinel_mcp.core.mark_brackets import passes_for_mark_bracket
from sentinel_mcp.core.quoted_values import readable_text

from .actions import ProposedAction
from .firewall import Assessment
from .label_fold import fold
from .risk_rules import says_little

LABEL_LIMIT = 60
_WORDS = re.compile(r"[a-z0-9]+")
TEXT_LIMIT = 80
# package -> what people call the app (the launcher label is not readable over adb without parsing APKs)
KNOWN_APPS = {
    "com.google.android.apps.messaging": "Messages",
    "com.android.mms": "Messages",
    "com.android.settings": "Settings",
    "com.google.android.apps.nexuslauncher": "the home screen",
    "com.android.launcher3": "the home screen",
    "com.android.chrome": "Chrome",
    "com.google.android.dialer": "Phone",
    "com.android.dialer": "Phone",
    "com.google.android.contacts": "Contacts",
    "com.google.android.calendar": "Calendar",
    "com.google.android.deskclock": "Clock",
    "com.android.vending": "Play Store",
    "com.android.permissioncontroller": "a permission dialog",
    "com.google.android.permissioncontroller": "a permission dialog",
    "com.android.packageinstaller": "the package installer",
    "com.google.android.packageinstaller": "the package installer",
    "com.android.systemui": "the notification shade",
}
# words a name made from a package must not hold anywhere, alone or beside others ("Sentinel Verified",
# "Verified By Sentinel", "System Update", "Messages Backup"): every word of the known apps' names ("Store",
# "dialog", "installer", "shade" read as the system's), and Sentinel's; the app is then named by its package
_RESERVED_WORDS = frozenset(
    {word for label in KNOWN_APPS.values() for word in _WORDS.findall(fold(label))} - {"the", "a"}
    | {"sentinel", "system", "android", "google"}
)
_GENERIC = {"com", "org", "net", "io", "de", "uk", "co", "android", "google", "apps", "app", "example",
            "mobile", "www", "client", "free", "pro", "lite"}
_REASON_IN_PARENS = re.compile(r"\(([^()]*)\)\s*$")
VERBS = {
    "click": "Tap", "long_click": "Long-press", "clear": "Clear", "scroll": "Scroll", "swipe": "Swipe",
    "back": "Press Back", "home": "Go to the home screen", "recents": "Show the recent apps",
}


def shown(text: str, limit: int = LABEL_LIMIT) -> str:
    """Screen text made safe to show a person: one line, invisible/bidi characters visible (as ``⟨U+XXXX⟩``,
    the
    gateway's notation, which ``safe_question`` then leaves alone), bounded."""
    # only the start is ever shown: a bounded prefix is read (a megabyte-long label is not walked to be cut;
    # why it was too long to read whole is the question's own reason, label_window.py)
    head = text[: 4 * limit]
    out: list[str] = []
    for ch in head:
        if ch in "\n\r\t":
            out.append(" ")
        elif is_hidden(ch) or passes_for_mark_bracket(ch):  # a "⟨U+…⟩" the screen wrote is not Sentinel's
            out.append(f"⟨U+{ord(ch):04X}⟩")
        else:
            out.append(ch)
    flat = re.sub(r"\s+", " ", "".join(out)).strip()
    return flat if len(flat) <= limit and len(head) == len(text) else flat[: limit - 1] + "…"


def quoted(text: str, limit: int = LABEL_LIMIT) -> str:
    """Text in an error message: shown (``shown``), between single quotes."""
    return "'" + shown(text, limit).replace("'", "’") + "'"


def value(text: str, limit: int = LABEL_LIMIT) -> str:
    """A value in a question, as every question shows one (``readable_text``): raw, its hidden characters
    marked once where the question is shown (``question_for``)."""
    return readable_text(text[: 4 * limit], limit)  # only the start is ever shown: a bounded prefix is read


def app_name(package: str | None) -> str:
    """What a person calls the app: a known label, else the package's telling part ("com.example.bank" ->
    Bank)."""
    if not package:
        return "the current app"
    if package in KNOWN_APPS:
        return KNOWN_APPS[package]
    parts = [p for p in package.split(".") if p and p.lower() not in _GENERIC]
    name = shown((parts[-1] if parts else package.rsplit(".", 1)[-1]).replace("_", " ").title(), 40)
    if _reserved(name):  # "org.evil.messages" is not Messages, "com.x.sentinel" is not Sentinel: say which
        return f"{name} ({shown(package, 80)})"
    return name


def _reserved(name: str) -> bool:
    """Whether a name made from a package holds a word of a known app's name or Sentinel's (however
    spelled)."""
    return not _RESERVED_WORDS.isdisjoint(_WORDS.findall(fold(name)))


def concerns(assessment: Assessment) -> list[str]:
    """The firewall's reasons, said briefly: "target mentions 'send' (sends a message)" -> "sends a message".
    """
    out: list[str] = []
    for reason in assessment.reasons:
        if reason.startswith("llm: "):
            continue  # the model's words stay in the audit record, not in the owner's question
        # only the keyword reasons are said by their parenthesis; others are already for a person
        m = _REASON_IN_PARENS.search(reason) if reason.startswith("target mentions ") else None
        text = m.group(1) if m else reason
        if "looks like a banking/payment app" in reason:
            text = "banking or payment app"
        if text not in out:
            out.append(text)
    # "password" says nothing "types into a password field" does not
    return [c for c in out if not any(c != other and c in other for other in out)]


def _target_label(action: ProposedAction) -> str:
    t = action.target
    if t is None:
        return ""
    return (
        t.text
        if not t.editable and t.text
        else (
            t.desc
            or t.hint.split(" | ")[0]
            or t.row.split(" | ")[0]  # a switch: the setting its row names ("USB debugging")
            or t.resource_id.rsplit("/", 1)[-1].replace("_", " ")
            or t.cls.rsplit(".", 1)[-1]
        )
    )


def what_happens(action: ProposedAction) -> str:
    """The action as one imperative clause, without the question mark."""
    app = app_name((action.target.package if action.target else None) or action.package)
    label = _target_label(action)
    d = action.details
    kind = action.kind
    if kind == "type":
        password = bool(action.target and action.target.password)
        typed = (
            f"a password ({len(action.text or '')} characters)"
            if password
            else value(action.text or "", TEXT_LIMIT)
        )
        return f"Type {typed} into {value(label)} in {app}"
    if kind in ("click", "long_click", "clear") and action.target is not None:
        t = action.target
        if kind != "clear" and t.context and says_little(label):
            # "OK" says nothing: what it commits is what the screen around it says
            return f"{VERBS[kind]} {value(label)} under {value(t.context, TEXT_LIMIT)} in {app}"
        if t.toggles and not t.checkable:
            return f"{VERBS[kind]} {value(label)} in {app} (it flips the switch in that row)"
        return f"{VERBS[kind]} {value(label)} in {app}"
    if kind == "open_app":
        return f"Open {app} ({value(action.package or '', 80)})"
    if kind == "sms_send":
        to = value(str(d.get("to") or "?"), 40)
        if d.get("name"):
            to = f"{value(str(d['name']), 40)} ({to})"
        return f"Send an SMS to {to}: {value(action.text or '', TEXT_LIMIT)}"
    if kind == "terminal":
        argv = d.get("argv") or d.get("command") or ""
        line = " ".join(map(str, argv)) if isinstance(argv, list) else str(argv)
        return f"Run {value(line, TEXT_LIMIT)} on the phone"
    if kind == "contact_create":
        return f"Add the contact {value(action.text or '')} ({value(str(d.get('phone', '')), 30)})"
    if kind == "alarm_set":
        label_part = f" {value(str(d['label']))}" if d.get("label") else ""
        return f"Set an alarm for {int(d.get('hour', 0)):02d}:{int(d.get('minute', 0)):02d}{label_part}"
    if kind == "timer_set":
        return f"Start a timer for {d.get('seconds')} seconds"
    if kind == "calendar_create":
        return f"Add {value(action.text or '')} to the calendar ({value(str(d.get('start', '')), 40)})"
    verb = VERBS.get(kind, kind.replace("_", " ").capitalize())
    return f"{verb} in {app}" if kind in ("scroll", "swipe") else verb


def question_for(action: ProposedAction, assessment: Assessment, withheld: list[str] | None = None) -> str:
    """The question, with the gateway's note on what it shows as it is not (``shown_to_approve``): a label
    or a typed text mixing the letters of scripts ("Send to pаypal" with a Cyrillic а) reads as another, and a
    yes to what it reads as is not a yes to what it is."""
    question = _question(action, assessment, withheld)
    # every value is quoted and cut (``value``): its hidden characters are marked here, once, and its
    # look-alike words counted
    mixed = shown_to_approve(question, len(question)).mixed
    shown_question, _ = safe_question(question, value_limit=TEXT_LIMIT)  # each value's marks counted too
    note = display_note([("this question", Shown("", mixed=mixed))])
    return Marked(f"{shown_question} {note}") if note else shown_question


def _question(action: ProposedAction, assessment: Assessment, withheld: list[str] | None) -> str:
    """``withheld``: the apps holding personal data on the screen the action was rated with that the caller
    may not read (``screen_privacy``). The question reaches the caller's client: then it repeats nothing the
    screen says (a label, what it stands under, the words the risk was read from: "places a call"), only the
    apps and the risk's level; the person sees the rest on the phone.
    """
    if withheld:
        verb = VERBS.get(action.kind, action.kind.replace("_", " ").capitalize())
        apps = " and ".join(dict.fromkeys(app_name(a) for a in withheld))
        return (f"Risk {assessment.risk}: {verb} on the phone's screen, which shows {apps} (not repeated "
                "here: this caller has no consent to read it; look at the phone)?")
    why = "; ".join(concerns(assessment)) or "needs your confirmation"
    # Sentinel's rating comes first, before any text the screen wrote: a label reading "Risk low" is then
    # plainly inside the quotes of what would be tapped, never read as the verdict
    return f"Risk {assessment.risk}: {what_happens(action)}? ({why})"
