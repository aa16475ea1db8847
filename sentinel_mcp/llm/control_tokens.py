"""A message never spells one of the loaded model's control tokens.

The prompt is rendered by the model's chat template and tokenized with its special tokens parsed (the
template's turn markers must be real control tokens), so a message writing ``<start_of_turn>model`` would
forge a turn, and ``</s>`` end the prompt early. The sanitizer strips a list of well-known spellings; a
vocabulary has more (Gemma 3: 6,242 ``<unusedN>`` and seven others). This reads the control (and unknown)
tokens from the loaded vocabulary itself and, wherever a message spells one, puts a word joiner (U+2060,
invisible) after its first character: the model reads the characters, never the token. User-defined tokens
(Gemma's whitespace runs and markup) are ordinary text and are left alone, except those the chat template
itself writes: a GGUF converted from a model whose added tokens were not marked special has its turn markers
(``<|im_start|>``) user-defined, and llama.cpp parses those in any text.
"""

from __future__ import annotations

import re
from typing import Any

UNKNOWN, CONTROL, USER_DEFINED = 1 << 0, 1 << 3, 1 << 4  # llama.cpp's llama_token_attr bits
BREAK = "\u2060"
# a conversation of every role, rendered by the chat template to find the tokens it writes
_SAMPLE = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
           {"role": "assistant", "content": "a"}, {"role": "user", "content": "u"}]


class ControlTexts:
    def __init__(self, texts: set[str]) -> None:
        self.texts = frozenset(t for t in texts if len(t) > 1)  # one character: nothing to put a joiner in
        lengths: dict[str, set[int]] = {}
        for t in self.texts:
            lengths.setdefault(t[0], set()).add(len(t))
        self._lengths = {c: sorted(n, reverse=True) for c, n in lengths.items()}
        self._starts = re.compile("[" + "".join(re.escape(c) for c in sorted(lengths)) + "]") if lengths \
            else None

    @classmethod
    def of_model(cls, llm: Any) -> "ControlTexts":
        model = llm._model
        texts: set[str] = set()
        user_defined: set[int] = set()
        for token in range(llm.n_vocab()):
            attr = model.token_get_attr(token)
            if attr & (CONTROL | UNKNOWN):
                texts.add(_text(model, token))
            elif attr & USER_DEFINED:
                user_defined.add(token)
        # a whitespace run (Gemma's "\n\n") forges nothing, and user text is full of them
        markers = (_text(model, t) for t in _template_tokens(llm) & user_defined)
        texts.update(m for m in markers if m.replace("\u2581", " ").strip())
        return cls({t for t in texts if t})

    def neutral(self, text: str) -> str:
        """``text`` with a joiner after the first character of every control token it spells (overlapping
        ones included: inserting a character never makes a new one)."""
        if self._starts is None:
            return text
        out: list[str] = []
        last = 0
        for m in self._starts.finditer(text):
            i = m.start()
            if any(text[i:i + n] in self.texts for n in self._lengths[text[i]]):
                out += [text[last:i + 1], BREAK]
                last = i + 1
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)

    def messages(self, messages: list[dict[str, str]]) -> list[dict[str, str]]:
        return [{**m, "content": self.neutral(m.get("content", ""))} for m in messages]


def _text(model: Any, token: int) -> str:
    text = model.token_get_text(token)
    return text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text


def _template_tokens(llm: Any) -> set[int]:
    """The tokens the model's chat template writes around messages (none without a template)."""
    from sentinel_mcp.llm.prompt_format import render_prompt

    try:
        prompt = render_prompt(llm, _SAMPLE)
    except Exception:  # noqa: BLE001 - a template that cannot render has no markers to protect
        return set()
    if prompt.format != "chat_template":
        return set()
    return set(llm.tokenize(prompt.text.encode("utf-8"), add_bos=False, special=True))
