"""The one interface every model backend implements, and the errors it may raise."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal, Protocol
from xml.sax.saxutils import escape as xml_escape

from pydantic import BaseModel, Field
from sentinel_mcp.core.errors import SwarmError
from sentinel_mcp.core.model_json import ModelJsonError, loads_model_json

Role = Literal["planner", "coder", "critic", "verifier", "agent"]
Grammar = Literal["plan", "critic", "verifier", "action", "tool_call"]

# called once per failed attempt (before any retry), so breakers see every model error
ErrorSink = Callable[[str], None]


MAX_INSTRUCTION_CHARS = 1800  # the llm built-in takes at most 2,048 characters of prompt


def fenced(text: str, tag: str = "context") -> str:
    """Untrusted text as one ``<tag>`` block it cannot close (``&``, ``<``, ``>`` escaped)."""
    return f"<{tag}>\n{xml_escape(text)}\n</{tag}>"


class ModelRequest(BaseModel):
    role: Role
    system: str
    prompt: str = Field(max_length=MAX_INSTRUCTION_CHARS)  # the instruction: short, written by the swarm
    context: str = ""  # the material (spec, files, feedback): long, partly model-written
    grammar: Grammar | None = None  # JSON-shaped output wanted (constrained where the backend can)
    # the JSON Schema the answer must fit: decoded under it where the backend can (the local model),
    # shown in the prompt where it cannot (openai, sampling); the agent validates the answer either way
    json_schema: dict[str, Any] | None = None
    max_tokens: int = Field(2048, ge=1)

    @property
    def full_prompt(self) -> str:
        """One user message for backends without a separate context channel: the context fenced as data
        (``<context>``, XML-escaped, as the llm built-in fences it), so text in it (a screen label, a file)
        cannot close the fence and write lines that read as the instruction after it."""
        return f"{fenced(self.context)}\n\n{self.prompt}" if self.context else self.prompt

    @property
    def wants_json(self) -> bool:
        return self.grammar is not None or self.json_schema is not None

    def unconstrained_prompt(self) -> str:
        """The user message for a backend that cannot constrain decoding: the schema is spelled out."""
        text = self.full_prompt
        if self.json_schema is not None:
            text += ("\n\nAnswer with one JSON object that matches this JSON Schema exactly:\n"
                     + json.dumps(self.json_schema, separators=(",", ":")))
        elif self.grammar is not None:
            text += "\n\nAnswer with one JSON object only."
        return text


class ModelReply(BaseModel):
    text: str
    json_data: Any = None  # parsed JSON when the backend returned it structured
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    attempts: int = 1


class ModelError(SwarmError):
    """A model call that failed for good (after the backend's own retries)."""

    def __init__(self, message: str, *, transient: bool = False, status: int | None = None,
                 input_refused: bool = False) -> None:
        super().__init__(message)
        self.transient = transient
        self.status = status
        # the backend refused the input itself (e.g. the llm built-in's prompt-injection check): the
        # content is the problem, not the model, so the critic must not fail open on it
        self.input_refused = input_refused


class ModelBackend(Protocol):
    name: str

    async def complete(self, request: ModelRequest, on_error: ErrorSink) -> ModelReply: ...

    async def aclose(self) -> None: ...


def estimate_tokens(text: str) -> int:
    """~4 characters per token: used only when a backend reports no usage."""
    return max(1, len(text) // 4) if text else 0


def claimed_tokens(value: Any) -> int:
    """A token count a backend claims, or 0: only a positive JSON integer counts (a float, inf or NaN among
    them, a string or a bool is not one; the text's estimate stands instead, as the least a call counts)."""
    return value if type(value) is int and value > 0 else 0


_FENCE = re.compile(r"```[A-Za-z0-9_+-]*\n(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """Strict JSON from a reply: the whole text, a fenced block, or the outermost {...}; ValueError if none
    (``core.model_json``: a key twice, NaN or Infinity is not JSON here)."""
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start:end + 1])
    refused: ModelJsonError | None = None
    for c in candidates:
        try:
            # strict JSON (no NaN, no key twice): a backend's promise is re-checked here
            return loads_model_json(c)
        except ModelJsonError as exc:  # JSON, but not what a model may answer: say why, not "no JSON"
            refused = refused or exc
        except (ValueError, RecursionError):  # not JSON, or nested past the parser: not this candidate
            continue
    if refused is not None:
        raise ValueError(f"the reply's JSON is refused: {refused}")
    raise ValueError("the reply contains no JSON object")
