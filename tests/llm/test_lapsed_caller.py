"""A call of the local model whose caller's credentials lapsed while it waited or ran computes nothing more.

What broke (red team "rt-llm"): an ``llm`` call queued behind another party's turn of the model kept only the
gateway's one check, made before the built-in got the call; the holder of a leaked owner token queued calls,
the owner rotated the token (``config token --rotate``), and each queued call still ran on the model when its
turn came (only its answer was withheld later, by the stream's recheck), and a long generation ran to its end.
Now the caller's check (``core/caller_checks.check_of``) is asked when the call's turn of the model comes and
before each chunk of its generation (a prompt batch, every ``CHECK_EVERY_TOKENS`` tokens): a lapsed one ends
the call ``credentials_lapsed`` with one audit row, and the model never runs (or stops) for it.

Real parts: the gateway with the llm built-in on the tiny random GGUF, its real fair turns (another party's
turn held in them, not a generation: deterministic), the owner's token file really replaced, and the real
SQLite audit log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from tests.agent.audit_rows import audit_rows

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.port import Completed
from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.credential_stamp import CredentialCheck
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, AuthFailed, TokenResolver
from sentinel_mcp.llm.engine import GenerationRequest, LlamaEngine
from sentinel_mcp.llm.errors import CredentialsLapsed
from sentinel_mcp.llm.generation_clock import CHECK_EVERY_TOKENS

from .conftest import ENDLESS_GBNF
from tests.support.followed_token import followed_owner_token
from tests.support.eventually import until

pytestmark = pytest.mark.timeout(120)
USER = [{"role": "user", "content": "Tap the login button."}]


def _owner_check(keys: Path) -> tuple[CredentialCheck, str]:
    """The request's own check of the owner's token, followed from its file (as the HTTP host makes it)."""
    source, token = followed_owner_token(keys)
    tokens = TokenResolver()
    owner = Principal("owner", "token")
    tokens.follow(owner, source)
    return CredentialCheck(Authenticator([tokens]), Credentials(bearer=token), owner), token


def _config(data_dir: Path, model: Path) -> Any:
    llm = {"model": str(model), "n_ctx": 2048, "n_threads": 1, "seed": 11, "temperature": 0.8}
    return parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(data_dir), "builtins": ["llm"],
                                                        "llm": llm}}, source="<test>", base_dir=data_dir)


@pytest.mark.parametrize("rotate", [True, False])
async def test_a_queued_call_whose_token_was_rotated_never_reaches_the_model(
    tmp_path: Path, tiny_chat_model: Path, rotate: bool
) -> None:
    keys = tmp_path / "keys"
    check, _ = _owner_check(keys)
    async with running_gateway(_config(tmp_path / "data", tiny_chat_model)) as rt:
        cortex = rt.services.cortex
        assert cortex is not None
        await cortex.ready()
        engine = cortex.engine
        await engine.load()
        # the engine is shared by the worker's tests of one model: only this test's generations count
        earlier = list(engine.history)
        earlier_ids = {id(r) for r in earlier}
        # another party holds the model's turn: the owner's call waits in the queue behind it
        held = await engine._wait_turn("bob")
        outcome: list[Any] = []

        async def call() -> None:
            outcome.append(await rt.gateway.invoke(
                "llm__llm_generate", {"prompt": "Say hello.", "max_tokens": 8}, session_id="s-1", client="t",
                origin="client", principal="owner", recheck=check))

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await until(lambda: engine.turns.waiting().get("owner") == 1)
            if rotate:
                owner_token.replace(keys)
            engine.turns.done(held)
        assert isinstance(outcome[0], Completed)
        result = outcome[0].result
    ran = [r.party for r in engine.history if id(r) not in earlier_ids]  # ``earlier`` keeps their ids taken
    lapsed = audit_rows(tmp_path / "data", "tool, principal, outcome, reason",
                        "outcome = 'credentials_lapsed'")
    if not rotate:  # the same call, its token still good: it runs as before
        assert not result.is_error, result.content
        assert ran == ["owner"] and lapsed == []
        return
    assert result.is_error
    text = " ".join(getattr(b, "text", "") for b in result.content)
    assert "credentials_lapsed" in text and "no longer hold" in text, text
    assert ran == [], "the call of a rotated token was computed on the model"
    assert len(lapsed) == 1, lapsed
    assert lapsed[0][:3] == ("llm__llm_generate", "owner", "credentials_lapsed"), lapsed


class _LapsesAfter:
    """A caller's check that holds for its first ``n`` asks, then fails as a rotated token's does."""

    def __init__(self, n: int) -> None:
        self.n, self.asked = n, 0

    def __call__(self) -> str:
        self.asked += 1
        if self.asked > self.n:
            raise AuthFailed("invalid token or API key")
        return "owner"


@pytest.mark.parametrize("grammar", [ENDLESS_GBNF, None])
async def test_a_running_generation_stops_at_the_next_chunk_once_its_caller_lapsed(
    engine: LlamaEngine, grammar: str | None
) -> None:
    await engine.load()
    check = _LapsesAfter(3)
    request = GenerationRequest(USER, max_tokens=1500, grammar=grammar, party="owner", check=check)
    with pytest.raises(CredentialsLapsed, match="no longer hold"):
        await engine.generate(request)
    record = engine.history[-1]
    # asked as its turn came, before each prompt batch, then every CHECK_EVERY_TOKENS tokens: the fourth ask
    # failed, at most a few chunks in, and nothing was asked (or computed) after it
    assert check.asked == 4 and record.completion_tokens <= 3 * CHECK_EVERY_TOKENS, record
    assert record.cancelled  # stopped for its caller
    # the model is free again at once, for anyone
    g = await engine.generate(GenerationRequest(USER, max_tokens=4, party="bob"))
    assert g.completion_tokens > 0


async def test_a_check_that_fails_otherwise_fails_closed(engine: LlamaEngine) -> None:
    def broken() -> None:
        raise OSError("the token file cannot be read")

    with pytest.raises(CredentialsLapsed):
        await engine.generate(GenerationRequest(USER, max_tokens=4, party="owner", check=broken))
    assert list(engine.history) == []
