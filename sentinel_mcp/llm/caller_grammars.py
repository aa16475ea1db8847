"""A caller's json_schema is decoded only under llguidance's token masks, never llama.cpp's grammar sampler.

llguidance bounds what a grammar may cost it (its lexer's and parser's limits) and says when one is past them;
llama.cpp's sampler has no such bound, and its one step over the vocabulary is a single C call that neither
the generation's time limit nor a cancellation interrupts. A caller's 1.5 KB schema (a pattern of ``(a?)``
300 times then ``a`` 300 times) made llguidance give up after a token, and the engine then generated again
on llama.cpp's sampler: on a 262,144-token vocabulary one token had not been sampled after 400 s, the model's
turn and a core held all that time. A schema llguidance would not take as JSON Schema (a ``format`` it does
not know, ``uniqueItems``) went there from the start.

So for a caller's schema: what llguidance cannot take as JSON Schema is tried as the GBNF Sentinel compiled
from it (``schema_grammar``: the keywords it lacks only bound values, checked after generation), and a
schema it cannot take either way, or gives up on mid-way, is refused. The operator's named grammars keep the
fallback (the operator wrote them); an operator who sets ``grammar_sampler: llama_cpp`` chooses that sampler
for every grammar, callers' too. That sampler now runs in a child process whose every step is bounded
(``grammar_process``: ``grammar_step_seconds``, the generation's limit, its cancellation), so what reaches it
costs at most that bound a token; a caller's schema is still kept off it: llguidance's bounds are tighter.
"""

from __future__ import annotations

from typing import Any

from sentinel_mcp.llm.errors import GrammarError, SchemaError
from sentinel_mcp.llm.masked_decoding import DeadEnd, MaskError
from sentinel_mcp.llm.token_masks import UnsupportedGrammar

_NOT_LLAMA = "a caller's schema is not run on llama.cpp's grammar sampler, whose steps no time limit bounds"


def schema_matcher(cache: Any, llm: Any, party: str, gbnf: str, why: UnsupportedGrammar) -> Any:
    """An llguidance matcher for the GBNF compiled from a caller's schema that llguidance did not take as JSON
    Schema (``why``); SchemaError when it does not take that either."""
    try:
        return cache.matcher(llm, party, gbnf, None)
    except UnsupportedGrammar as exc:
        raise SchemaError(
            f"json_schema cannot be decoded with bounded cost: llguidance does not take it ({why}; as the "
            f"grammar compiled from it: {exc}), and {_NOT_LLAMA}; simplify the schema"
        ) from None


def refused_mid_way(exc: MaskError, tokens: int, label: str) -> GrammarError:
    """The error for a caller's schema llguidance stopped on after ``tokens`` tokens."""
    if isinstance(exc, DeadEnd):  # as llama.cpp's sampler would have found it: no token writes what it asks
        return GrammarError(
            f"{label}: the model cannot write what the grammar asks for after {tokens} tokens ({exc}; no "
            "token of its vocabulary writes it, a NUL character for one); nothing was returned"
        )
    return GrammarError(
        f"{label}: llguidance gave up on it after {tokens} tokens ({exc}: past what it lets a grammar cost), "
        f"and {_NOT_LLAMA}; simplify the schema; nothing was returned"
    )
