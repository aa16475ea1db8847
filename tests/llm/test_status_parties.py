"""The model's status counts the viewer's own waiting calls only.

``waiting`` counted every party's calls waiting for the model: bob's ``llm_status`` (or his console's Model
page) told him how many calls alice had queued, and when (asking again). A caller now reads its own party's
count; the operator (``/healthz``, ``operator_status``) every party's together; a reader the server cannot
name (the ``llm://status`` resource) none. Real engine (the tiny model's settings, not loaded) and its real
fair turns, queued as the engine queues them."""

from __future__ import annotations

from sentinel_mcp.llm.status import model_status, operator_status


def test_waiting_is_the_viewers_own(engine):
    turns = engine.turns
    running = turns.join("alice")
    assert turns.take(running)  # alice's first call holds the model
    queued = [turns.join("alice") for _ in range(2)] + [turns.join("builtin:agent")]
    try:
        assert operator_status(engine)["waiting"] == 3
        assert model_status(engine, "alice")["waiting"] == 2
        assert model_status(engine, "builtin:agent")["waiting"] == 1
        assert model_status(engine, None)["waiting"] is None
        for name in ("bob", "Alice", "alice ", "\u0430lice", "", "builtin", "alice\x00", "*"):
            assert model_status(engine, name)["waiting"] == 0, name
        mine = turns.join("bob")
        assert model_status(engine, "bob")["waiting"] == 1 and operator_status(engine)["waiting"] == 4
        turns.leave(mine)
    finally:
        for turn in queued:
            turns.leave(turn)
        turns.done(running)
    assert operator_status(engine)["waiting"] == 0
