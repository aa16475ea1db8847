"""The one interface every model backend implements, and the errors it may raise."""

from __future__ import annotations

import json
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


# far past any answer a role asks for (a coder's file is at most ~24,000 characters, its JSON a little more):
# a reply longer than this is refused before it is scanned
MAX_REPLY_CHARS = 1_000_000
_SCAN = json.JSONDecoder()  # finds where the one object ends; the strict parser then reads it


class RefusedAnswer(SwarmError, ValueError):
    """A reply whose JSON is there but cannot be taken as the answer: more than one object (which is the
    answer and which a quote?), a key twice, NaN, too long. Not a crash of the model: a role that fails open
    on a crash (the critic) must not fail open on this, or a quoted verdict would decide after all."""


def extract_json(text: str) -> Any:
    """The one JSON value a reply is: the whole text, or exactly one ``{...}`` in it (bare or fenced, prose
    around it). ``RefusedAnswer`` (a ValueError) when the text holds a second object, or any ``{`` outside the
    one (a quoted file, screen or example: the model's text carries its prompt's, so which object is its
    answer would be a guess), or JSON ``core.model_json`` refuses (a key twice, NaN, Infinity); ValueError
    when it holds none."""
    if len(text) > MAX_REPLY_CHARS:
        raise RefusedAnswer(f"the reply's JSON is refused: the reply is longer than {MAX_REPLY_CHARS} "
                            "characters")
    try:
        return loads_model_json(text.strip())  # the whole reply is the answer: nothing else is in it
    except ModelJsonError as exc:
        raise RefusedAnswer(f"the reply's JSON is refused: {exc}") from None
    except (ValueError, RecursionError):
        pass
    start = text.find("{")
    if start < 0:
        raise ValueError("the reply contains no JSON object")
    try:
        _, end = _SCAN.raw_decode(text, start)  # C scanner, linear; the strict read follows
    except (ValueError, RecursionError):  # the first brace opens no JSON (prose, nested past the parser)
        end = start + 1
        if text.find("{", end) < 0:
            raise ValueError("the reply contains no JSON object") from None
    if text.find("{", end) >= 0:  # (after a brace that opened no JSON: a later one is not the answer either)
        raise RefusedAnswer("the reply's JSON is refused: the reply holds more than one JSON object (or a "
                            "brace outside its answer); answer with exactly one JSON object")
    try:
        return loads_model_json(text[start:end])
    except ModelJsonError as exc:
        raise RefusedAnswer(f"the reply's JSON is refused: {exc}") from None
    except (ValueError, RecursionError):  # read by the plain scanner, not by the strict one (its int bound)
        raise ValueError("the reply contains no JSON object") from None
