"""Prompt-injection detection: refuse text that tries to re-program the model.

Heuristic patterns over normalised text (NFKC, lower case, one space), grouped by technique. They
aim at the imperative shapes attacks use ("ignore previous instructions", "you are now DAN",
"system: ...") and leave ordinary requests alone ("ignore whitespace in git diff", "act as a
translator"). The labelled corpus in tests/llm/corpus measures both rates.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from dataclasses import dataclass

from sentinel_mcp.llm.errors import InjectionDetected
from sentinel_mcp.llm.sanitizer import Sanitized, normalise_for_matching, strip_control

_PRIOR = r"(?:all |any |the |your |my |these |those |every )?(?:previous|prior|above|earlier|preceding|former|original|initial|existing|current|system|developer|safety|old)"  # noqa: E501 (verbatim text)
_RULES = r"(?:instructions?|prompts?|rules?|directives?|guidelines?|guardrails?|constraints?|restrictions?|programming|policies|policy|system prompt)"  # noqa: E501 (verbatim text)
# nouns that are only suspicious after "ignore"-like verbs ("delete the previous message" is fine)
_RULES_SOFT = r"(?:context|messages?|text|commands?|orders)"
_IGNORE = r"(?:ignore|disregard|forget|override|overrule|bypass|skip|drop|abandon|discard|throw away|neglect|dismiss|erase|delete|clear)"  # noqa: E501 (verbatim text)
_IGNORE_SOFT = r"(?:ignore|disregard|forget|overrule|neglect|dismiss)"
# Discarding what came before, then taking orders from one place only: each half alone is ordinary ("delete
# the
# previous message", "follow the next step"); both together, close by, re-program the reader.
_DISCARD = (
    rf"\b(?:{_IGNORE}|wipe|purge|flush|remove|reset|scrap|void|cancel) (?:all |any |everything |the rest )?"
    rf"(?:of )?(?:the |your |my |this )?{_PRIOR}(?: \w+)? (?:context|conversation|history|memory|messages?"
    r"|text|input|lines?|content|commands?|orders|notes|chat)\b"
)
_EXCL = r"(?:only|just|exclusively|alone|instead)"
_OBEY = r"(?:follow|obey|heed|execute|carry out|comply with|act on|listen to|listen|answer to|do)"
_SAID = (
    r"(?:(?:the |my |this |these )?(?:(?:next|following|below|new|last|upcoming|one) "
    r")?(?:line|instruction|message"
    r"|sentence|prompt|command|order|directive|word)s?|me|mine"
    r"|(?:exactly )?what (?:follows|comes next|i (?:say|write|type)|the (?:next|following) \w+ says?))"
)
_ONLY_HERE = (
    rf"\b(?:{_EXCL} {_OBEY}|{_OBEY} {_EXCL}(?: to)?) {_SAID}\b"  # "only follow ...", "listen only to ..."
    rf"|\b{_OBEY} (?:exactly )?{_SAID}(?: below| after this| that follows| from here(?: on)?)? {_EXCL}\b"
    rf"|\b{_OBEY} (?:exactly )?what (?:follows|comes next|the (?:next|following) \w+ says?)"
)

PATTERNS: dict[str, list[str]] = {
    "instruction override": [
        rf"\b{_IGNORE} (?:all |any |everything |the rest )?(?:of )?{_PRIOR}(?: \w+){{0,2}} {_RULES}",
        rf"\b{_IGNORE_SOFT} (?:all |any |everything |the rest )?(?:of )?(?:all |the "
        rf")?(?:previous|prior|above|preceding|system) {_RULES_SOFT}",
        rf"\b(?:can|may|should|must|will) now {_IGNORE} (?:all |any |the |your )?(?:\w+ )?{_RULES}",
        rf"\b{_IGNORE} (?:all|everything) (?:you (?:were|have been) told|(?:said|written|stated) "
        r"(?:above|before|earlier))",
        rf"\b{_IGNORE} (?:all |any )?(?:of )?your (?:\w+ )?{_RULES}",
        r"\b(?:do not|don't|never) (?:follow|obey|listen to) (?:the |your |any "
        r")?(?:previous|prior|above|earlier|original|system) (?:\w+ )?(?:instructions?|rules?|prompt)",
        r"\b(?:new|updated|real|actual|revised|true) (?:system )?(?:instructions?|rules|directives?|system "
        r"prompt) ?(?::|(?:follow|are|is)\b)",
        r"\binstead,? (?:you (?:will|must|should) )?(?:now )?(?:follow|obey) (?:these|my|the following)",
        r"\bthe (?:above|previous|prior) (?:instructions?|text|prompt|rules) (?:(?:was|were|is|are) "
        r"(?:fake|a test|void|wrong|obsolete|cancelled|canceled)|no longer appl)",
        r"\b(?:from now on|henceforth|starting now|for the rest of this conversation),? (?:you "
        r"(?:are|will|must|shall|should|have no)|your (?:only )?(?:task|goal|job|role|purpose))",
        r"\byour (?:new|real|true|only) (?:task|goal|role|purpose|instructions?|objective|job) "
        r"?(?::|(?:is|are|will be)\b)",
        r"\b(?:reset|wipe|clear) (?:your )?(?:context|memory|instructions|rules)\b",
        rf"{_DISCARD}.{{0,40}}?(?:{_ONLY_HERE})",
    ],
    "role-play override": [
        r"\byou are (?:now |no longer )(?:an? "
        r")?(?:dan|stan|dude|aim|evil|unrestricted|unfiltered|uncensored|jailbroken|free|liberated|developer|admin|root|god)\b",
        r"\b(?:act|behave|respond|answer|roleplay|role-play|pretend) (?:as|like|to be|you are|that you are) "
        r"(?:an? |the )?(?:\w+ ){0,4}(?:with(?:out)? (?:no "
        r")?(?:restrictions|rules|limits|filters|guidelines|ethics|censorship)|unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|rogue|dan\b|do anything now)",  # noqa: E501 (verbatim text)
        # "developer mode on my Tesla" / "in Chrome" are real settings: only the bare announcement counts
        r"\b(?:developer|god|debug|jailbreak|dan|admin|sudo|unrestricted|maintenance) mode (?:is )?(?:now "
        r")?(?:enabled|activated|on|unlocked)(?:[.!:,;]|$)",
        r"\b(?:enable|activate|enter|switch to|turn on|unlock) (?:the "
        r")?(?:developer|god|debug|jailbreak|dan|admin|sudo|unrestricted|maintenance) mode\b(?! "
        r"(?:in|on|for|of|from|under|via|through) )",
        r"\bdo anything now\b",
        r"\b(?:you have no|you don't have any|there are no|without any) "
        r"(?:restrictions|rules|limits|filters|guidelines|content polic(?:y|ies))\b(?! (?:on|for) (?:the "
        r")?(?:file|upload|size|length))",
        r"\b(?:stay|remain) in character no matter what\b",
        r"\bno longer (?:bound|restricted|constrained) by\b",
    ],
    "system impersonation": [
        r"(?:^|[.!?:;>)\]] )\s*(?:#+ "
        r"?)?\[?(?:system|sys|admin|administrator|root|developer|assistant)\]?\s*(?:message|prompt|override|instruction|note)?\s*:\s*(?:you|ignore|new|the user|from now|override|disregard|forget|always|never|respond|output|reveal|approve|classify|mark|treat|i will|i'll|sure)\b",  # noqa: E501 (verbatim text)
        r"\b(?:system|admin|security|emergency|developer|root) override\b",
        r"\b(?:begin|start|end) (?:of )?(?:system|hidden|secret|new) (?:prompt|instructions?|message)\b",
        r"\bthis (?:message|instruction) (?:comes|is) from (?:the |your "
        r")?(?:system|developers?|administrator|openai|anthropic|google|admin)\b",
        r"\b(?:priority|authori[sz]ation) (?:override|level \w+)\b",
    ],
    "prompt extraction": [
        r"\b(?:reveal|show|print|repeat|output|display|leak|tell me|give me|write out|dump|recite|what "
        r"(?:is|are|was|were)) (?:me )?(?:your|the) (?:full |entire |exact |original |hidden |secret "
        r"|initial |complete )*(?:system prompt|system message|initial instructions|hidden "
        r"instructions|instructions above|prompt above|secret instructions|pre-?prompt|developer message)",
        r"\brepeat (?:everything|all|the text|the words) (?:above|before|from the beginning)",
    ],
    "output manipulation": [
        r"\b(?:classify|rate|mark|label|treat|score|assess|report|consider|flag) (?:this|it|the action|this "
        r"action|the request|everything|all actions|me) as (?:safe|harmless|benign|low[- ]?risk|not "
        r"(?:dangerous|risky|harmful)|trusted|approved)\b",
        r"\b(?:always|must|should|only) (?:respond|answer|reply|output|return|say)(?: with)? "
        r"(?:\"|')?(?:low|safe|accept|approved|yes)\b(?:\"|')?(?: risk)?(?: no matter| regardless| for "
        r"every| to every|$|\.)",
        r"\b(?:approve|accept|allow) (?:this|all|every) (?:action|request|transaction|transfer|payment)s? "
        r"(?:without|with no) (?:confirmation|asking|checks?|verification)",
        r"\b(?:skip|disable|bypass|turn off|ignore) (?:the |all |any )?(?:confirmation|safety "
        r"check|verification|firewall|guard|filter|risk check)s?\b",
    ],
    "token smuggling": [
        r"\b(?:decode|base64[- ]decode|translate|rot13|reverse) (?:this|the following)(?: \w+){0,3} "
        r"(?:and|then) (?:follow|execute|obey|run|do what it says|carry out)",
        r"\b(?:follow|execute|obey) (?:the )?(?:hidden|encoded|decoded|base64|invisible) "
        r"(?:instructions?|text|message|payload)",
    ],
}


@functools.cache
def _compiled() -> list[tuple[str, re.Pattern[str]]]:
    # compiled by the first check, not at import: about 0.1 s of CPU that every start paid (issue 21)
    return [(label, re.compile(p)) for label, ps in PATTERNS.items() for p in ps]


_B64_RE = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_INVISIBLE_LIMIT = 3  # a few zero-width joiners occur in emoji and some scripts; more is smuggling


@dataclass(frozen=True)
class Finding:
    technique: str
    evidence: str


def find_injection(text: str, sanitized: Sanitized | None = None) -> Finding | None:
    """The first injection technique found in ``text`` (raw, before stripping), else None."""
    s = sanitized or strip_control(text)
    # a bare <s> or </s> is also HTML strikethrough: stripped, but not evidence on its own
    strong = [t for t in s.removed_tokens if t.lower() not in ("<s>", "</s>")]
    if strong:
        return Finding("token smuggling", f"chat control token {strong[0]!r}")
    if s.removed_invisible > _INVISIBLE_LIMIT:
        return Finding("token smuggling", f"{s.removed_invisible} invisible characters")
    for candidate in _texts_to_scan(s.text):
        for label, rx in _compiled():
            m = rx.search(candidate)
            if m:
                return Finding(label, m.group(0).strip()[:80])
    return None


def _texts_to_scan(text: str) -> list[str]:
    """The normalised text, plus any base64 runs that decode to readable text (encoded payloads)."""
    out = [normalise_for_matching(text)]
    for run in _B64_RE.findall(text)[:8]:
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if decoded.isprintable():
            out.append(normalise_for_matching(decoded))
    return out


def refuse_injection(text: str, what: str, sanitized: Sanitized | None = None) -> None:
    finding = find_injection(text, sanitized)
    if finding is not None:
        raise InjectionDetected(
            f"{what} refused: it looks like a prompt-injection attempt ({finding.technique}: "
            f"{finding.evidence!r}). Nothing was sent to the model; rephrase the request "
            "without instructions aimed at the model's rules or role"
        )
