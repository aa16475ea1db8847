"""A chat template's rendering is bounded in steps, not trusted to end.

The template is Jinja from the model file, rendered on every prompt with the caller's text in it. The sandbox
bounds one ``range`` to 100,000 items but not three nested ones, nor a loop that only runs when the text holds
a word of the file author's choosing: such a template held the model's turn for ever (every later call waited
behind it), and the probe's sample turn (``model_probe``) need not meet it. Rendering runs under a trace
function that counts the Python lines it executes (Jinja compiles a template to Python) and stops it past
``MAX_TEMPLATE_STEPS``: a count, the same on every machine, never a clock. A real template renders a
conversation in a few hundred (ChatML 233, Llama 3 301).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

from sentinel_mcp.llm.errors import LlmError

MAX_TEMPLATE_STEPS = 500_000
T = TypeVar("T")


class TemplateTooCostly(LlmError):
    """The model's chat template did not finish rendering within its step budget."""


def within_budget(render: Callable[[], T], steps: int = MAX_TEMPLATE_STEPS) -> T:
    """``render()`` stopped with TemplateTooCostly once it has run ``steps`` Python lines (this thread)."""
    count = 0

    def trace(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        if count > steps:
            raise TemplateTooCostly(
                f"the model's chat template did not finish within {steps} steps (it loops without end, or on "
                "this text); nothing was sent to the model"
            )
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        return render()
    finally:
        sys.settrace(previous)
