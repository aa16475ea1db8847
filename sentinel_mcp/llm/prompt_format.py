"""Turn chat messages into the prompt text: the GGUF's own chat template, else a plain format."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Literal, cast

from sentinel_mcp.llm.template_process import TemplateFailed, process_for

PLAIN_ROLES = {"system": "System", "user": "User", "assistant": "Assistant"}
# a prompt longer than this many characters a context token cannot fit (and tokenizing it would be the cost)
CHARS_PER_CONTEXT_TOKEN = 64
MAX_PROMPT_CHARS = 16 << 20
_MARK = "\ue000sentinel-preamble-end\ue000"  # stands in for the last user content when splitting


@dataclass(frozen=True)
class RenderedPrompt:
    text: str
    format: Literal["chat_template", "plain"]
    added_special: bool  # the template already emitted BOS and friends: do not add another
    stop: list[str]


def render_prompt(llm: Any, messages: list[dict[str, str]]) -> RenderedPrompt:
    template = (getattr(llm, "metadata", None) or {}).get("tokenizer.chat_template")
    if template:
        rendered = _render_template(llm, template, messages)
        if rendered is not None:
            return rendered
    return _render_plain(messages)


def render_preamble(llm: Any, messages: list[dict[str, str]], rendered: RenderedPrompt) -> str | None:
    """The text before the last user turn's content: the part that calls of one kind share.

    None when there is no such part (the last message is not the user's, or the template changes
    the content so that the split cannot be found).
    """
    if not messages or messages[-1].get("role") != "user":
        return None
    marked = [*messages[:-1], {**messages[-1], "content": _MARK}]
    text = render_prompt(llm, marked).text
    cut = text.find(_MARK)
    if cut <= 0 or not rendered.text.startswith(text[:cut]):
        return None
    return text[:cut]


def _render_template(llm: Any, template: str, messages: list[dict[str, str]]) -> RenderedPrompt | None:
    eos_id, bos_id = llm.token_eos(), llm.token_bos()
    eos = _text(llm._model.token_get_text(eos_id)) if eos_id != -1 else ""
    bos = _text(llm._model.token_get_text(bos_id)) if bos_id != -1 else ""
    # the file's Jinja runs in a bounded child, never here (template_process.py)
    process = process_for(template, eos, bos)
    max_chars = min(MAX_PROMPT_CHARS, max(1 << 20, CHARS_PER_CONTEXT_TOKEN * llm.n_ctx()))
    # Some templates (Gemma, Mistral) refuse a system role: fold it into the first user turn.
    for attempt in (messages, _fold_system(messages)):
        try:
            text, stops, added_special = process.render(cast("list[Any]", attempt), max_chars)
        except TemplateFailed:  # jinja raise_exception / template errors: try the next shape
            continue  # TemplateTooCostly is not caught: the template, not the shape, is the trouble
        return RenderedPrompt(text, "chat_template", added_special, [s for s in stops if s])
    return None


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else value


def _fold_system(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    rest = [dict(m) for m in messages if m["role"] != "system"]
    if system and rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
    elif system:
        rest.insert(0, {"role": "user", "content": system})
    return rest


def _unheaded(content: str) -> str:
    """In the plain format a line reading as a header ("### System") would forge a turn: every line of a
    message that starts with '#' as the model reads it (after blanks and invisible format characters,
    NFKC-folded: full-width number signs, any role word or none) is indented. Lines are what a newline ends,
    as for the model (a pattern's ``\\s*`` once ate the newline of a blank line before the header and left it
    at the line's start)."""
    lines = content.split("\n")
    for i, line in enumerate(lines):
        seen = "".join(c for c in unicodedata.normalize("NFKC", line) if unicodedata.category(c) != "Cf")
        if seen.lstrip().startswith("#"):
            lines[i] = " " + line
    return "\n".join(lines)


def _render_plain(messages: list[dict[str, str]]) -> RenderedPrompt:
    parts = []
    for m in messages:
        content = _unheaded(m["content"])
        parts.append(f"### {PLAIN_ROLES.get(m['role'], m['role'].title())}\n{content}\n")
    parts.append("### Assistant\n")
    return RenderedPrompt("\n".join(parts), "plain", False, ["\n### User", "\n### System"])
