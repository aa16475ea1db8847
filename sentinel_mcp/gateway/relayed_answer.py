"""An answer to an upstream's elicitation as the upstream gets it: only what its question takes.

A form is answered with content only when it is accepted (MCP: content only with ``accept``); a URL-mode
question never is (the user opens a link and gives what they give to the server there, not to the client).
Content a client sent beside a decline, a cancel or a link's answer is nobody's answer: the upstream gets the
action alone, so an upstream that reads ``content`` without its action does not take the client's words for
the user's.

An accepted form's numbers reach the upstream in one spelling, as a call's arguments do (``json_numbers``):
one with no fractional part is the integer it equals (``3.0`` answered "an integer" is ``3``, which an SDK
that reads the field as an integer no longer has to coerce). A number too long for that is left as it is:
the answer's check refuses it (``answer_validation.relayed_problem``).
"""

from __future__ import annotations

from typing import Any

from mcp.types import ElicitResult

from sentinel_mcp.core.json_numbers import NumberTooLarge, integral_as_int


def relayed_answer(answer: Any, *, link: bool) -> Any:
    """``answer`` (to an upstream's form, or to its URL-mode question when ``link``) without content it
    cannot carry; anything that is not an elicitation result is returned as it is (the caller judges it)."""
    if not isinstance(answer, ElicitResult) or answer.content is None:
        return answer
    if answer.action == "accept" and not link:
        try:
            content = integral_as_int(answer.content)
        except NumberTooLarge:
            return answer
        return answer if content is answer.content else answer.model_copy(update={"content": content})
    return answer.model_copy(update={"content": None})
