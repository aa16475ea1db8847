"""Schema compiles are shared fairly between parties, like turns of the model (red team 'cortex compile').

A caller's json_schema is compiled to a grammar on one worker before its call joins the model's fair queue.
That worker served pieces of work in arrival order, so a principal with many large schemas queued ahead of
another principal's single one made it wait for all of them. Now the pieces wait per party and are served
round-robin, a party's waiting pieces are bounded (refused at once past it), and a party's own compiled
schemas are remembered in its own bounded cache, which no other party's compiles can evict.
"""

from __future__ import annotations

import threading
from pathlib import Path

import anyio
import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from sentinel_mcp.llm import cortex as cortex_module
from sentinel_mcp.llm.admission import caller_work_waiting
from sentinel_mcp.llm.cortex import Cortex
from sentinel_mcp.llm.engine import LlamaEngine
from sentinel_mcp.llm.errors import ModelBusy
from sentinel_mcp.llm.fair_caller_work import FairCallerWork
from sentinel_mcp.llm.model_turns import _Job
from sentinel_mcp.llm.schema_cache import SchemaCache
from sentinel_mcp.llm.schema_grammar import compile_schema
from sentinel_mcp.llm.settings import LlmSettings

pytestmark = pytest.mark.timeout(120)


def big_schema(owner: str, n: int) -> dict:
    """A real schema of some size, tagged with who sent it (its title) and which one (n)."""
    props = {f"f{i}": {"type": "string", "maxLength": 8} for i in range(40)}
    return {"title": f"{owner}-{n}", "type": "object", "properties": props, "required": ["f0"]}


async def until(condition) -> None:  # noqa: ANN001
    with anyio.fail_after(60):  # a guard against a hang, not a measurement
        while not condition():
            await anyio.sleep(0.005)


class OrderSpy:
    """The real compiler, recording whose schema it compiled in which order; the first waits for a gate."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.gate = threading.Event()

    def __call__(self, schema):  # noqa: ANN001, ANN204
        self.order.append(schema["title"])
        if len(self.order) == 1:
            self.gate.wait(60)
        return compile_schema(schema)


async def test_one_partys_single_compile_is_served_before_anothers_queued_ones(
    tiny_chat_model: Path, monkeypatch: pytest.MonkeyPatch
):
    spy = OrderSpy()
    monkeypatch.setattr(cortex_module, "compile_schema", spy)
    settings = LlmSettings(
        model=str(tiny_chat_model), n_ctx=2048, n_threads=1, seed=7, max_queued_per_party=12
    )
    cortex = Cortex(settings, engine=LlamaEngine(settings))
    # the model held as a generation holds it: until its job is cancelled (a generation reads the flag per
    # token), so cancelling the group at the end frees it at once instead of after the engine's cancel grace
    holder = _Job()

    async def ask(party: str, n: int) -> None:
        try:
            await cortex.generate("Name it.", json_schema=big_schema(party, n), max_tokens=2, party=party)
        except Exception:  # noqa: BLE001, S110 - what the model answers is not what this is about
            pass

    try:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                # the model is busy, so compiled calls wait for their turn and nothing else needs the worker
                tg.start_soon(cortex.engine._in_turn, holder.cancel.wait, holder, "someone")
                await until(lambda: cortex.engine.turns.holder is not None)
                tg.start_soon(ask, "alice", 1)
                await until(lambda: len(spy.order) == 1)
                for n in range(2, 11):
                    tg.start_soon(ask, "alice", n)
                await until(lambda: caller_work_waiting() == 9)
                tg.start_soon(ask, "bob", 1)
                await until(lambda: caller_work_waiting() == 10)
                spy.gate.set()
                await until(lambda: len(spy.order) == 11)
                scope.cancel()
        # bob's one schema is compiled right after the one that was running, not after alice's nine
        assert spy.order[:3] == ["alice-1", "bob-1", "alice-2"], spy.order
    finally:
        spy.gate.set()
        holder.cancel.set()
        cortex.engine.close()


async def test_a_partys_waiting_compiles_are_bounded_and_refused_clearly():
    work = FairCallerWork(per_party=2, total=50)
    gate = threading.Event()
    ran: list[str] = []
    refused: list[str] = []

    def piece(name: str) -> str:
        if name == "first":
            gate.wait(60)
        ran.append(name)
        return compile_schema(big_schema(name, 0))

    async def run(party: str, name: str) -> None:
        try:
            await work.run(party, piece, name)
        except ModelBusy as exc:
            refused.append(str(exc))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, "alice", "first")
        await until(lambda: work.waiting_count == 0 and work.running)
        for n in range(4):
            tg.start_soon(run, "alice", f"a{n}")
        tg.start_soon(run, "bob", "b0")
        await until(lambda: len(refused) == 2 and work.waiting_count == 3)
        gate.set()
    assert all("alice" in r and "nothing was queued" in r for r in refused), refused
    assert sorted(ran) == ["a0", "a1", "b0", "first"] and ran[1] == "b0", ran


def test_one_partys_compiles_do_not_evict_anothers_cached_schemas(monkeypatch: pytest.MonkeyPatch):
    calls: list[str] = []

    def counted(schema):  # noqa: ANN001, ANN202
        calls.append(schema["title"])
        return compile_schema(schema)

    cache = SchemaCache(per_party=4, parties=8)
    bobs = big_schema("bob", 1)
    first = cache.compiled("bob", bobs, counted)
    for n in range(50):  # alice floods distinct schemas
        cache.compiled("alice", big_schema("alice", n), counted)
    assert cache.compiled("bob", bobs, counted) == first
    assert calls.count("bob-1") == 1, calls
    # nor does a party see (by a fast answer) that another party compiled a schema: caches are per party
    cache.compiled("alice", bobs, counted)
    assert calls.count("bob-1") == 2, calls


@pytest.mark.parametrize("depth", [5000, 100_000])
def test_a_schema_the_cache_cannot_key_is_refused_by_the_compiler_with_its_reason(depth: int):
    from sentinel_mcp.llm.errors import SchemaError

    schema: dict = {}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    with pytest.raises(SchemaError):
        SchemaCache().compiled("alice", schema, compile_schema)
