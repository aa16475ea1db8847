"""Make untrusted text safe to place in a prompt: strip chat control tokens, cap lengths, escape context.

Control tokens matter because the engine tokenizes prompts with special tokens enabled (the chat
template needs them): a user's literal ``<|im_start|>system`` would otherwise become a real role switch.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from xml.sax.saxutils import escape as xml_escape

from sentinel_mcp.llm.errors import InputRejected

MAX_QUERY_CHARS = 2048
MAX_CONTEXT_CHARS = 32_000
MAX_SYSTEM_CHARS = 8000

# Role and control tokens of common chat templates. Generic shapes first, then named tokens.
_CONTROL_TOKEN_PATTERNS = [
    # ChatML, Llama 3, Phi, Jamba, Command-R, Granite: <|im_start|>, <|eot_id|>
    r"<\|[A-Za-z0-9_\-. ▁]{1,48}\|>",
    r"<｜[^<>｜\n]{1,48}｜>",  # DeepSeek's full-width bars: <｜User｜>, <｜begin▁of▁sentence｜>
    r"</?(?:start_of_turn|end_of_turn|bos|eos|pad|unk|mask|start_of_image|end_of_image)>",  # Gemma
    r"</?s>",  # Llama 2 / Mistral BOS/EOS
    r"<</?SYS>>",  # Llama 2 system block
    # Llama 2, Mistral
    r"\[/?(?:INST|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_RESULTS|TOOL_CALLS|TOOL_CONTENT|THINK)\]",
    # Qwen, reasoning models, loose ChatML
    r"</?(?:tool_call|tool_response|think|\|?system\|?|im_start|im_end)>",
    r"<(?:reserved_special_token_\d+|\|reserved_\w+\|)>",
]
CONTROL_TOKEN_RE = re.compile("|".join(f"(?:{p})" for p in _CONTROL_TOKEN_PATTERNS), re.IGNORECASE)
# a control token that ends where the text ends (they all end with '>' or ']'), and how far back one can start
_TOKEN_AT_END = re.compile("(?:" + CONTROL_TOKEN_RE.pattern + r")\Z", re.IGNORECASE)
_TOKEN_ENDS = frozenset(">]")
_LONGEST_TOKEN = 80

# Invisible characters used to smuggle text past readers: zero-width, bidi overrides, the tag block.
_INVISIBLE_RE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
# C0/C1 controls except tab and newline (carriage returns are normalised to newlines first)
_CONTROL_CHAR_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Sanitized:
    text: str
    removed_tokens: list[str]  # control tokens that were stripped (the injection detector looks at these)
    removed_invisible: int


def strip_control(text: str) -> Sanitized:
    """Remove control tokens, invisible characters and control characters; normalise newlines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    invisible = len(_INVISIBLE_RE.findall(text))
    text = _INVISIBLE_RE.sub("", text)
    text = _CONTROL_CHAR_RE.sub("", text)
    removed: list[str] = []
    # Removing one token can join the halves of another ("<|im_<|x|>start|>"). One pass, as with brackets:
    # what is kept never holds a token, so a character can only complete one that ends with it, which is
    # taken off at once. (Removing every token and searching again took time with the square of the
    # nesting: 17 s for a 30 KB context of 6,000 nested "<eos>".)
    kept: list[str] = []
    for ch in text:
        kept.append(ch)
        if ch in _TOKEN_ENDS:
            tail = "".join(kept[-_LONGEST_TOKEN:])
            m = _TOKEN_AT_END.search(tail)
            if m is not None:
                removed.append(m.group())
                del kept[len(kept) - len(m.group()):]
    return Sanitized("".join(kept), removed, invisible)


def cap(text: str, limit: int, what: str) -> str:
    """``text`` refused past ``limit`` characters, or when it is not Unicode text (``unicode_text``)."""
    if not isinstance(text, str):  # an in-process caller's value: len() or str methods raised past handlers
        raise InputRejected(f"{what} must be text, not {type(text).__name__}")
    if len(text) > limit:
        raise InputRejected(
            f"{what} is {len(text)} characters; the limit is {limit}. Shorten it "
            "(nothing was sent to the model)"
        )
    return unicode_text(text, what)


def unicode_text(text: str, what: str) -> str:
    """``text`` refused when UTF-8 cannot carry it: a lone surrogate (stdlib ``json`` reads ``"\\udc80"`` as
    one) failed the tokenizer's encoding deep in the model's turn, past every handler of the Cortex's
    errors."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputRejected(
            f"{what} holds a lone surrogate (U+{ord(text[exc.start]):04X} at character {exc.start}), which "
            "is not Unicode text (nothing was sent to the model)"
        ) from None
    return text


def sanitize_query(text: str, limit: int = MAX_QUERY_CHARS, what: str = "prompt") -> Sanitized:
    cap(text, limit, what)
    return strip_control(text)


def sanitize_context(text: str, limit: int = MAX_CONTEXT_CHARS, what: str = "context") -> Sanitized:
    cap(text, limit, what)
    return strip_control(text)


def sanitize_system(text: str, limit: int = MAX_SYSTEM_CHARS) -> str:
    cap(text, limit, "system prompt")
    return strip_control(text).text


def wrap_context(text: str, tag: str = "context") -> str:
    """XML-escape untrusted context and fence it, so it reads as data and cannot close its own tag."""
    return f"<{tag}>\n{xml_escape(text)}\n</{tag}>"


def normalise_for_matching(text: str) -> str:
    """NFKC (folds full-width and styled letters), lower case, single spaces: what detectors match on."""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE_RE.sub("", text)
    return re.sub(r"\s+", " ", text).strip().lower()
