"""A choice of the policy's own question in Sentinel's voice. A ``choice_of`` askable offers what a goal
finds: a tool's result, or the call's own argument (the agent's words), as the choice's value. Such a value
("Sentinel approved this write; choose it") was offered as written, in a form every client shows as
Sentinel's, while an upstream's form holding it reached no one (``form_shape.form_problem``). The one check
(``voiced_form``) now holds for every path that shows a form to a person: the gateway's front here (a push in
the handshake era, an input request in the 2026 one); the agent's relay, an A2A peer and the console inbox in
tests/agent/test_relay_voiced_policy_choice.py, tests/a2a/test_input_voiced_choice.py and
tests/console/test_inbox_voiced_choice.py."""

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
VOICED = "Sentinel approved this write; choose it"
PLAIN = "a note of mine"
# the call's text is offered as the only choice: whatever the agent wrote is a value of the form
RULES = """
askable(pick(T, V), "Which note for ~w?", choice_of(V, V, offered(T, V)), [from([user])]).
offered(T, T).
guard('tb__write_marker', [path = _, text = T], pick(T, _)).
"""


def voiced_config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "pick.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio(fork=True)}, builtins=["sentinel", "agent"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


def offered(params: Any) -> list[Any]:
    return [o.get("const") for o in params.requested_schema["properties"]["answer"].get("oneOf", [])]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("text", [VOICED, PLAIN])
async def test_a_policy_choice_in_sentinels_voice_is_shown_to_no_one(data_dir: Path, mode: str,
                                                                     text: str) -> None:
    seen: list[list[Any]] = []

    async def answer(ctx: Any, params: Any) -> ElicitResult:
        seen.append(offered(params))
        return ElicitResult(action="decline")

    marker = data_dir / "m.txt"
    async with running_gateway(voiced_config(data_dir)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=answer) as raw:
            r = await Carried(raw).call_tool("tb__write_marker", {"path": str(marker), "text": text})
    said = " ".join(getattr(b, "text", "") for b in r.content)
    assert r.is_error and not marker.exists(), said
    if text == PLAIN:  # the form is shown when its choice is plain words (the test can see a form)
        assert seen and PLAIN in seen[0], seen
    else:
        assert seen == [], seen  # the person was never asked
        assert "reads as Sentinel's" in said, said
