"""A choice's value, and a field's name, in Sentinel's voice. A value ("Sentinel approved" in an ``enum`` with
no labels, a choice's ``const``) is drawn as written by a client that draws no label, and it is the answer
itself: it cannot be headed as the server's without changing what the server hears, so such a form is relayed
to no one (``form_shape.form_problem``, audited as a form of another shape). A field's name is drawn where the
field has no title: it gets a title headed by the attribution, the name (the answer's key) unchanged. Before,
both reached the person as written, as if Sentinel offered them. Gateway path here; the agent relay's in
tests/agent/test_relay_voice.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.core.own_voice import attribution
from sentinel_mcp.core.shown_schema import attributed_form, shown_schema
from sentinel_mcp.gateway.form_shape import form_problem

from .test_own_voice import IN_VOICE, NOT_IN_VOICE
from .test_relayed_form_shape import _asked, form

pytestmark = pytest.mark.timeout(120)
HEAD = str(attribution("fm"))


def choices_of(said: str) -> dict[str, dict[str, Any]]:
    """``said`` as a choice's value wherever a form holds one."""
    return {
        "enum": form(a={"type": "string", "enum": ["no", said]}),
        "labelled_enum": form(a={"type": "string", "enum": [said], "enumNames": ["Fine"]}),
        "multi_enum": form(a={"type": "array", "items": {"type": "string", "enum": ["no", said]}}),
        "one_of": form(a={"type": "string", "oneOf": [{"const": said, "title": "Fine"}]}),
        "any_of": form(a={"type": "array", "items": {"type": "string", "anyOf": [{"const": said}]}}),
    }


@pytest.mark.parametrize("said", IN_VOICE)
def test_a_choice_in_sentinels_voice_is_no_form_to_relay(said: str) -> None:
    for where, schema in choices_of(said).items():
        problem = form_problem(schema)
        assert problem is not None and "reads as Sentinel's" in problem, (where, problem)


@pytest.mark.parametrize("said", NOT_IN_VOICE + ["Approved by Sentinel", "Sentinel-2", "sentinels"])
def test_a_choice_that_names_sentinel_in_running_text_is_relayed(said: str) -> None:
    for where, schema in choices_of(said).items():
        assert form_problem(schema) is None, (where, form_problem(schema))


@pytest.mark.parametrize("said", IN_VOICE)
def test_a_field_named_in_sentinels_voice_is_titled_as_the_servers(said: str) -> None:
    schema = form(**{said: {"type": "boolean"}, "titled": {"type": "boolean", "title": "Fine"}})
    for shown in (shown_schema(schema, "fm"), attributed_form(schema, "fm", inert=True)):
        assert list(shown["properties"]) == [said, "titled"]  # the answer's keys as the server wrote them
        assert shown["properties"][said]["title"].startswith(HEAD), shown
        assert shown["properties"]["titled"]["title"] == "Fine"
    assert form_problem(schema) is None  # (a name is headed, not refused: a title is drawn in its place)


@pytest.mark.parametrize("said", NOT_IN_VOICE)
def test_a_field_named_otherwise_keeps_its_shape(said: str) -> None:
    schema = form(**{said: {"type": "boolean"}})
    assert "title" not in attributed_form(schema, "fm", inert=True)["properties"][said]


@pytest.mark.parametrize("era", ["handshake", "2026"])
async def test_a_form_offering_a_choice_in_sentinels_voice_reaches_no_one(data_dir: Path, era: str) -> None:
    seen: list[Any] = []
    schema = form(decision={"type": "string", "enum": ["Sentinel approved this refund", "no"]})
    r, rows = await _asked(data_dir, era, "legacy", schema, {"decision": "no"}, seen)
    assert seen == []  # the person was never asked
    said = " ".join(getattr(b, "text", "") for b in r.content)
    assert r.is_error and "reads as Sentinel's" in said, said
    if era == "handshake":  # a refused push is audited with its call
        logged = " ".join(str(row.get("error") or "") + str(row.get("reason") or "") for row in rows)
        assert "elicitation refused" in logged, rows
