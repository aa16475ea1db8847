"""What one party's use of the model tells another: only "wait".

What leaked (red team "rt-llm"): ``llm_status`` (and the console's Model page, and the unnamed
``llm://status`` resource) said ``busy: true`` whenever anyone's generation ran, so bob, polling, read when
alice used the model and for how long; and a call refused at the queue's total bound said how many calls
were already under way or waiting ("the model is busy: 3 requests are already under way"), everyone's. Now a
party's view of the status is the same whether or not another party's work runs or waits (``busy`` is its
own), the unnamed reader sees no ``busy`` at all, the operator sees everyone's, and a refusal at the total
bound names no count of others' calls.

Real engine (the tiny model, loaded) and its real fair turns and admission; alice's turn is held on the real
path (``_in_turn``, its worker thread), not a stubbed flag.
"""

from __future__ import annotations

import threading

import anyio
import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.llm.admission import Admission
from sentinel_mcp.llm.engine import LlamaEngine
from sentinel_mcp.llm.errors import ModelBusy
from sentinel_mcp.llm.fair_turns import FairTurns
from sentinel_mcp.llm.model_turns import _Job
from sentinel_mcp.llm.status import model_status, operator_status
from tests.support.eventually import until

pytestmark = pytest.mark.timeout(90)


async def test_another_partys_work_changes_nothing_a_party_reads(engine: LlamaEngine) -> None:
    await engine.load()
    idle = {who: model_status(engine, who) for who in ("bob", None)}
    release = threading.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(engine._in_turn, release.wait, _Job(), "alice")  # alice's turn holds the model
        await until(lambda: engine.tokens_in_flight is not None)
        queued = [engine.turns.join("alice"), engine.turns.join("carol")]
        try:
            assert model_status(engine, "alice")["busy"] is True  # her own
            assert operator_status(engine)["busy"] is True and operator_status(engine)["waiting"] == 2
            for who, before in idle.items():
                assert model_status(engine, who) == before, who
            assert model_status(engine, None)["busy"] is None
            mine = engine.turns.join("bob")
            assert model_status(engine, "bob")["busy"] is True  # his own call waits
            engine.turns.leave(mine)
        finally:
            for turn in queued:
                engine.turns.leave(turn)
            release.set()


def _refused(bounds: Admission | FairTurns, others: dict[str, int]) -> str:
    join = bounds.admitted if isinstance(bounds, Admission) else bounds.join
    held = []
    for party, n in others.items():
        for _ in range(n):
            if isinstance(bounds, Admission):
                cm = join(party)
                cm.__enter__()  # type: ignore[union-attr]
                held.append(cm)
            else:
                held.append(join(party))
    with pytest.raises(ModelBusy) as refused:
        if isinstance(bounds, Admission):
            with bounds.admitted("bob"):
                pass
        else:
            bounds.join("bob")
    return str(refused.value)


@pytest.mark.parametrize("kind", [Admission, FairTurns])
def test_a_refusal_at_the_total_bound_names_no_count_of_others_calls(kind: type) -> None:
    few = _refused(kind(8, 3), {"alice": 3})
    many = _refused(kind(8, 7), {"alice": 4, "carol": 3})
    assert few == many, (few, many)
    assert "alice" not in few and "carol" not in few and not any(ch.isdigit() for ch in few), few


async def test_a_partys_generations_do_not_move_with_anothers(engine: LlamaEngine) -> None:
    """``generations`` and ``last_generation`` were filtered out of the engine's one shared history of the
    newest generations: another party generating pushed a party's own out, so its count fell as others
    worked. The shared history is made short here (2) so that a few of bob's push alice's out of it."""
    from collections import deque

    from sentinel_mcp.llm.generation_types import GenerationRequest

    engine.history = deque(maxlen=2)
    await engine.generate(GenerationRequest([{"role": "user", "content": "hello"}], max_tokens=2, seed=1,
                                               party="alice"))
    before = model_status(engine, "alice")
    assert before["generations"] == 1 and before["last_generation"] is not None
    for n in range(3):
        await engine.generate(GenerationRequest([{"role": "user", "content": f"more {n}"}], max_tokens=2,
                                                   seed=1, party="bob"))
    after = model_status(engine, "alice")
    # (kv_tokens: whether the context still holds her tokens, which any use of the one context changes)
    assert (after["generations"], after["last_generation"]) == (1, before["last_generation"])
    assert model_status(engine, "bob")["generations"] == 3
    assert operator_status(engine)["generations"] == 2  # the operator: everyone's, of those kept
