"""The console's answer form for a policy question whose choices are typed (the number 1, the text "2", the
boolean true: questions.py offers each as its own JSON value). A browser sends every option as text: the
person's pick of 1 came back as the text "1", which the question (offering the number) refused, and a text
choice and a number of one spelling would have been one option. Each option that is no text is now sent by its
position and read back as the choice itself, of its type; shown as JSON writes it."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.datastructures import FormData

from sentinel_mcp.console.answer_form import fields_of, read_answer
from sentinel_mcp.policy.questions import question_of

TYPE = {"choice": [1, "2", True, 2.5], "labels": [None, None, None, None],
        "terms": ["1", '"2"', "true", "2.5"]}


def _question() -> Any:
    need = {"kind": "ask", "predicate": "level", "inputs": ["p"], "type": TYPE, "from": ["user"],
            "question": "Which level?", "fact": "level(p, _)"}
    return question_of(need, None, "v1")


@pytest.mark.parametrize("chosen", [1, "2", True, 2.5])
def test_a_typed_choice_picked_in_the_console_is_that_value(chosen: Any) -> None:
    q = _question()
    [field] = [f for f in fields_of(0, q.requested_schema) if f.prop == "answer"]
    sent = next(value for (value, _), c in zip(field.options, field.choices)
                if type(c) is type(chosen) and c == chosen)
    answer, problem = read_answer(0, q, FormData([(field.name, sent)]), approve=True)
    assert problem is None and answer is not None, problem
    got = answer.content["answer"]
    assert type(got) is type(chosen) and got == chosen, answer.content


def test_each_typed_choice_sends_its_own_option_and_reads_as_json_writes_it() -> None:
    [field] = [f for f in fields_of(0, _question().requested_schema) if f.prop == "answer"]
    assert [text for _, text in field.options] == ["1", "2", "true", "2.5"]
    assert len({value for value, _ in field.options}) == len(field.options)  # each option sends its own
