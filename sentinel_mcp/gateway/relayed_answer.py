"""An answer to an upstream's elicitation as the upstream gets it: only what its question takes.

A form is answered with content only when it is accepted (MCP: content only with ``accept``); a URL-mode
question never is (the user opens a link and gives what they give to the server there, not to the client).
Content a client sent beside a decline, a cancel or a link's answer is nobody's answer: the upstream gets the
action alone, so an upstream that reads ``content`` without its action does not take the client's words for
the user's.
"""

from __future__ import annotations

from typing import Any

from mcp.types import ElicitResult


def relayed_answer(answer: Any, *, link: bool) -> Any:
    """``answer`` (to an upstream's form, or to its URL-mode question when ``link``) without content it
    cannot carry; anything that is not an elicitation result is returned as it is (the caller judges it)."""
    if not isinstance(answer, ElicitResult) or answer.content is None:
        return answer
    if answer.action == "accept" and not link:
        return answer
    return answer.model_copy(update={"content": None})
