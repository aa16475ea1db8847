"""A drafted askable's choices are the terms the guard reads a call's arguments as, for an enum of every JSON
type, end to end: the draft of a real upstream's tool is loaded into the real gateway, and each value is
called with, chosen by the user and confirmed.

Before, each choice was Python's text of the value: ``True`` the atom 'True' and ``None`` 'None', which no
argument is (every call with them was denied), and the text "true" the atom true, the boolean's term. An
object or a list can be no choice (a choice is atomic), nor a text spelling a literal, nor a second value
that reads as the same text (1 and "1": a person could not tell them apart): a call with one is denied until
a person writes its rule. Each choice is offered as its own JSON value (questions.py), and answered so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.json_numbers import integral_as_int
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.draft import draft_rulebase
from sentinel_mcp.policy.draft_names import offered
from tests.gateway.helpers import make_config
from tests.support.carried_session import Carried
from tests.support.forked_upstreams import forked_spec

from .enum_upstream import TOOLS

pytestmark = pytest.mark.timeout(240)


def _config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "policy.md").write_text("# Modes\n\nThe mode is the one the user chose.\n")
    draft = draft_rulebase("up", TOOLS, "up", "policy.md", [])
    (data_dir / "draft.pl").write_text(draft.text)
    upstream = forked_spec("-m", "tests.policy.enum_upstream")
    return make_config(data_dir, servers={"up": upstream},
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(data_dir / "draft.pl")])


def _choosing(chosen: Any) -> Any:
    """The user chooses the option of ``chosen`` (offered as its own JSON value, of its type) and confirms;
    "I don't know" when no option is that value."""
    want = integral_as_int(chosen) if isinstance(chosen, float) else chosen

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        prop = params.requested_schema["properties"]["answer"]
        if "oneOf" not in prop:  # the confirmation
            return ElicitResult(action="accept", content={"answer": True})
        consts = [o["const"] for o in prop["oneOf"]]
        texts = [offered(c) for c in consts]
        assert len(texts) == len(set(texts)), texts  # no two options alike
        match = [c for c in consts if type(c) is type(want) and c == want]
        return ElicitResult(action="accept", content={"answer": match[0]} if match else {"dont_know": True})

    return answer


async def _call(rt: Any, mode: Any, chosen: Any) -> tuple[bool, str]:
    async with Client(rt.front.server, mode="legacy", elicitation_callback=_choosing(chosen)) as raw:
        r = await Carried(raw).call_tool("up__set_mode", {"mode": mode})
        return r.is_error, r.content[0].text if r.content else ""


async def test_every_value_passes_when_chosen_and_no_other(data_dir: Path) -> None:
    async with running_gateway(_config(data_dir)) as rt:
        for mode in [1, 2.5, 3.0, True, False, None, "it's"]:
            denied, text = await _call(rt, mode, mode)
            sent = integral_as_int(mode)  # 3.0 is sent on as 3, as any call's argument (json_numbers.py)
            assert not denied and text == "got " + json.dumps({"mode": sent}), (mode, text)
        # the user chose another value, of the same text but another type: the call is not that one; a text
        # spelling a literal, or another choice's text, cannot be chosen (a person writes its rule)
        for mode, chosen in [("true", True), ("null", None), ("1", 1), (3.0, 2.5), (False, None)]:
            denied, text = await _call(rt, mode, chosen)
            assert denied and not text.startswith("got"), (mode, chosen, text)


@pytest.mark.parametrize("mode", [{"a": 1}, [1]])
async def test_an_object_or_list_value_is_denied_until_ruled_on(data_dir: Path, mode: Any) -> None:
    async with running_gateway(_config(data_dir)) as rt:
        denied, text = await _call(rt, mode, mode)
        assert denied and not text.startswith("got"), text
    assert "can be no choice" in (data_dir / "draft.pl").read_text()


@pytest.mark.parametrize("values", [[{"a": 1}, [1]], ["true", "null"], ["i_dont_know"], [1, 1.0, "1"],
                                    ["open", "Open"], ["in_progress", "in  progress"], ["I don't know", "x"],
                                    [True, "True"], [None, "None"]])
def test_an_enum_of_values_no_question_offers_apart_checks_clean(tmp_path: Path, values: list[Any]) -> None:
    """"i_dont_know" as a choice, or a choice([]) left of an enum of objects, failed the draft's check; so do
    two values shown alike (the loader's titles: case and spacing aside), or one shown as "I don't know"."""
    from sentinel_mcp.cli import main

    tool = {**TOOLS[0], "inputSchema": {"type": "object", "properties": {"mode": {"enum": values}}}}
    draft = draft_rulebase("up", [tool], "up", "policy.md", [])
    (tmp_path / "policy.md").write_text("# Modes\n\nThe mode is the one the user chose.\n")
    (tmp_path / "draft.pl").write_text(draft.text)
    assert main(["check", str(tmp_path / "draft.pl")]) == 0, draft.text
    assert "guard('up__set_mode'" in draft.text
