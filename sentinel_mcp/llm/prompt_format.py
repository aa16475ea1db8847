"""Turn chat messages into the prompt text: the GGUF's own chat template, else a plain format."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Literal, cast

from sentinel_mcp.llm.template_budget import TemplateTooCostly, within_budget

PLAIN_ROLES = {"system": "System", "user": "User", "assistant": "Assistant"}
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
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    eos_id, bos_id = llm.token_eos(), llm.token_bos()
    eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
    bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
    formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
    # Some templates (Gemma, Mistral) refuse a system role: fold it into the first user turn.
    for attempt in (messages, _fold_system(messages)):
        try:
            # our plain role/content dicts are what llama.cpp's message TypedDicts describe; the file's Jinja
            # is counted in steps (template_budget.py)
            result = within_budget(lambda: formatter(messages=cast("list[Any]", attempt)))  # noqa: B023
        except TemplateTooCostly:
            raise  # no other shape is tried: the template, not the shape, is the trouble
        except Exception:  # noqa: BLE001, S112 - jinja raise_exception / template errors: try the next shape
            continue
        stop = [s for s in ([result.stop] if isinstance(result.stop, str) else (result.stop or [])) if s]
        return RenderedPrompt(result.prompt, "chat_template", bool(result.added_special), stop)
    return None


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
