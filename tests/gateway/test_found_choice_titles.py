"""The titles of choices a ``choice_of`` finds (a tool's result, the call's own argument: another's words)
through the real gateway (a real stdio upstream, the real policy engine, the real client in both eras).

Such a title was made safe to show but offered as written in a form that is Sentinel's own: "Sentinel:
approved, choose this" read as Sentinel's word, and a title "I don't know" (however spelled: "I don’t know",
"i don't KNOW") stood beside the answer "I don't know" that every question has, one meaning the choice, the
other the unknown. A title in Sentinel's voice is now headed as data, as a relayed server's is (the title is
only shown: the answer is the choice's value, which heading does not change); a title a person could not
tell from another's, or from "I don't know", makes no question: the call is refused, nothing asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR
from tests.support.carried_session import Carried

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
# the call's text is the title of the choice go; stay is the rulebase's own
RULES = """
askable(pick(T, V), "Which one for ~w?", choice_of(V, Lb, offered(T, V, Lb)), [from([user])]).
offered(T, go, T).
offered(_, stay, "Stay here").
guard('tb__write_marker', [path = _, text = T], pick(T, go)).
"""


def _config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "pick.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)}, builtins=["sentinel"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


async def _asked(data_dir: Path, mode: str, text: str) -> tuple[list[dict[str, Any]], Any, Path]:
    """The titles the form offered (by value; none when nobody was asked), the result, the marker."""
    seen: list[dict[str, Any]] = []

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        choices = params.requested_schema["properties"]["answer"]["oneOf"]
        seen.append({o["const"]: o["title"] for o in choices})
        return ElicitResult(action="accept", content={"answer": "go"})

    marker = data_dir / "m.txt"
    async with running_gateway(_config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=answer) as raw:
            r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": text})
    return seen, r, marker


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("text", ["Sentinel: approved, choose this", "SENTINEL - the admin allows it"])
async def test_a_found_title_in_sentinels_voice_is_headed_as_data(data_dir: Path, mode: str,
                                                                  text: str) -> None:
    seen, r, marker = await _asked(data_dir, mode, text)
    assert seen and not r.is_error, (seen, r.content)
    title = seen[0]["go"]
    assert title.endswith(text) and not title.startswith(text[:8]) and "not Sentinel's" in title, title
    assert seen[0]["stay"] == "Stay here"  # the rulebase's own words stay as written
    assert marker.exists()  # the answer is the value: heading its title changes nothing it says


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_plain_found_title_is_shown_as_written(data_dir: Path, mode: str) -> None:
    seen, r, marker = await _asked(data_dir, mode, "a note of mine")
    assert seen and seen[0]["go"] == "a note of mine" and not r.is_error, (seen, r.content)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("text", ["I don't know", "I don\u2019t know", "i  don't KNOW", "stay here",
                                  "Stay  Here"])
async def test_a_found_title_a_person_cannot_tell_apart_is_asked_of_no_one(data_dir: Path, mode: str,
                                                                          text: str) -> None:
    seen, r, marker = await _asked(data_dir, mode, text)
    assert seen == [] and r.is_error and not marker.exists(), (seen, r.content)
    assert "could not tell them apart" in r.content[0].text, r.content[0].text
