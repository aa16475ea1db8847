"""A guard showing the whole argument list of a tool whose schema holds an argument named secret is refused at
listing (policy/schema_secret_flows.py).

At load such a guard names no secret argument, so its list is no secret
(tests/policy/test_secret_list_shown.py says why). The listing walk ran only for the arguments a schema
declares secret by ``writeOnly``, ``format: password`` or its sensitive list, taking those named secret
(``password``, ``api_key``) as walked at load: but the load walked them only where the rulebase names them,
so a guard putting ``args(A)`` whole into a question showed the password to the person (masked at run time,
but a guard showing every argument is a leak the walk can name). Now every secret argument the tool has is
walked at listing. Real SWI-Prolog, a real guard."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.core.decision import Ask, Deny, ToolCall
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.schema_secret_flows import LEAKING_GUARD

pytestmark = pytest.mark.timeout(120)

SHOWN = {
    "a question": "confirmed('Call with ~w?', [A])",
    "a denial's reason": "require(fail, A)",
    "an alias of it": "B = A, confirmed('~w?', [B])",
}
RULES = "".join(f"guard('z__t{n}', [args(A)],\n      ( {body} )).\n" for n, body in enumerate(SHOWN.values()))
SAFE = "guard('z__safe', [args(A)], ( option_value(A, user, '', U), confirmed('Sign ~w in?', [U]) )).\n"


def _call(tool: str, secret: frozenset[str]) -> ToolCall:
    return ToolCall(name=f"exposed_{tool}", server="z", tool=tool, session_id=f"s-{tool}-{len(secret)}",
                    arguments={"user": "ann", "password": "Hunter2-canary-7731", "apiKey": "k-canary-1"},
                    secret_arguments=secret)


@pytest.fixture
async def guard(tmp_path: Path):  # noqa: ANN201
    rb = tmp_path / "schema.pl"
    rb.write_text(RULES + SAFE)
    g = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await g.start(watch=False)
    try:
        yield g
    finally:
        await g.close()


@pytest.mark.parametrize(("n", "name"), list(enumerate(SHOWN)))
@pytest.mark.parametrize("secret", [{"password"}, {"apiKey"}, {"password", "apiKey"}])
async def test_the_whole_list_of_a_tool_with_an_argument_named_secret_shown_denies_it(
        guard: PolicyGuard, n: int, name: str, secret: set[str]) -> None:
    decision = await guard.decide(_call(f"t{n}", frozenset(secret)))
    assert isinstance(decision, Deny) and decision.unmet == [LEAKING_GUARD], (name, decision)
    assert f"schema.pl:{2 * n + 1}:" in decision.reason, decision.reason
    assert "canary" not in decision.model_dump_json(), decision


async def test_another_argument_read_from_the_list_is_decided_as_before(guard: PolicyGuard) -> None:
    decision = await guard.decide(_call("safe", frozenset({"password"})))
    assert isinstance(decision, Ask) and "Sign ann in?" in decision.reason, decision


async def test_a_tool_without_a_secret_argument_may_show_its_list(guard: PolicyGuard) -> None:
    decision = await guard.decide(_call("t0", frozenset()))
    assert not (isinstance(decision, Deny) and decision.unmet == [LEAKING_GUARD]), decision
