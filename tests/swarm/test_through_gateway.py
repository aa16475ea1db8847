"""A build through Sentinel itself: the gateway, rulebases/swarm.pl under the real policy guard, the user's
confirmation by elicitation, and progress notifications relayed to the client."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.types import ElicitResult
from tests.swarm.support.scripted_model import PLAN_PATHS, SPEC
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, NO_TOOLS

from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = [pytest.mark.timeout(120), pytest.mark.parametrize("mode", ["legacy", "auto"])]


def _site_config(tmp_path: Path, site: Path):  # noqa: ANN202
    """The swarm built-in on the openai backend (the test's model server), the shipped policy and a site's."""
    return parse_config(
        {
            "mcpServers": {},
            "sentinel": {
                "data_dir": str(tmp_path),
                "builtins": ["swarm"],
                "rulebases": [str(RULEBASES_DIR / "swarm.pl"), str(site)],
                "swarm": {"backend": "openai", "openai": FAST_OPENAI, "verify": NO_TOOLS},
            },
        },
        source="<test>",
        base_dir=tmp_path,
    )


async def test_build_needs_confirmation_respects_caps_and_reports_progress(
    tmp_path, model_server, monkeypatch, mode
) -> None:
    from sentinel_mcp.app.runtime import running_gateway

    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", model_server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")
    site = tmp_path / "site.pl"  # a stricter site policy composes with the shipped one: the lowest cap wins
    site.write_text(":- multifile swarm_cap/2.\nswarm_cap(max_steps, 20).\n")
    config = _site_config(tmp_path, site)
    questions: list[str] = []
    answer = {"yes": False}

    async def user(context, params):
        questions.append(params.message)
        return ElicitResult(action="accept", content={"answer": answer["yes"]})

    progress: list[str] = []

    async def on_progress(p, total, message):
        progress.append(message or "")

    async with running_gateway(config) as rt:
        assert not rt.problems
        async with Client(rt.front.server, mode=mode, elicitation_callback=user) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {
                "swarm__swarm_build",
                "swarm__swarm_status",
                "swarm__swarm_list",
                "swarm__swarm_cancel",
            } <= names

            r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "max_steps": 22})
            assert r.is_error and "max_steps must be at most 20 (policy cap)" in r.content[0].text
            r = await c.call_tool(
                "swarm__swarm_build", {"spec": SPEC, "max_model_calls": 81}
            )  # schema: le=80
            assert r.is_error and "max_model_calls" in r.content[0].text
            assert questions == [] and model_server.requests == []

            # validate before asking: the solver asks swarm_validate (read-only) first; an invalid spec is
            # refused
            # with its problems, and the user is never asked to confirm it (many spellings of wrong)
            for bad, why in (
                (dict(SPEC, package_name="com.example..notes"), "package_name: must be a lowercase"),
                (dict(SPEC, package_name="com.example.class"), "Kotlin keyword(s) class"),
                (dict(SPEC, features=["add a note", "Add a note"]), "features must be unique"),
                (dict(SPEC, min_sdk=30, target_sdk=25), "target_sdk (25) must be >= min_sdk (30)"),
                (dict(SPEC, colour="red"), "colour: unknown field"),
                (dict(SPEC, app_name="true"), None),
            ):
                r = await c.call_tool("swarm__swarm_build", {"spec": bad, "max_steps": 20})
                if (
                    why is None
                ):  # a valid spec whose name reads like a JSON literal: asked (and declined) as usual
                    assert len(questions) == 1 and questions[0].startswith("Build the Android app"), (
                        r.content[0].text
                    )
                    questions.clear()
                    continue
                assert r.is_error and why in r.content[0].text, r.content[0].text
                assert questions == [], questions
            assert model_server.requests == []

            r = await c.call_tool(  # the user says no
                "swarm__swarm_build", {"spec": SPEC, "wait": True, "max_steps": 20}
            )
            assert r.is_error
            assert questions == [
                (
                    "Build the Android app Notes (com.example.notes)? It may take up to 20 steps, 80 model "
                    "calls, 200,000 tokens and 90 minutes."
                )
            ]
            assert model_server.requests == []

            answer["yes"] = True
            r = await c.call_tool(
                "swarm__swarm_build",
                {"spec": SPEC, "wait": True, "max_steps": 20},
                progress_callback=on_progress,
            )
            assert not r.is_error, r.content
            assert r.structured_content["state"] == "COMPLETED"
            assert sorted(r.structured_content["files"]) == sorted(PLAN_PATHS)
            assert progress[0] == "[PLANNING] planning" and progress[-1].startswith("[COMPLETED]")
            task_id = r.structured_content["task_id"]

            r = await c.call_tool("swarm__swarm_status", {"task_id": task_id})  # read-only: no question
            assert not r.is_error and r.structured_content["state"] == "COMPLETED" and len(questions) == 2


async def test_local_build_calls_the_llm_builtin_through_the_gateway(tmp_path, mode) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    from tests.support.tiny_gguf import write_tiny_gguf

    from sentinel_mcp.app.runtime import running_gateway

    model = write_tiny_gguf(tmp_path / "tiny.gguf", n_ctx=8192)
    config = parse_config(
        {
            "mcpServers": {},
            "sentinel": {
                "data_dir": str(tmp_path),
                "builtins": ["llm", "swarm"],
                "rulebases": [str(RULEBASES_DIR / "swarm.pl")],
                "llm": {"model": str(model), "n_ctx": 8192, "max_tokens": 2048, "n_threads": 1, "seed": 7},
                "swarm": {
                    "backend": "local",
                    "local": {"max_tokens": 2048},
                    "limits": {"max_model_calls": 4},
                },
            },
        },
        source="<test>",
        base_dir=tmp_path,
    )

    async def user(context, params):
        return ElicitResult(action="accept", content={"answer": True})

    async with running_gateway(config) as rt:
        assert not rt.problems
        async with Client(rt.front.server, mode=mode, elicitation_callback=user) as c:
            r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
            assert not r.is_error, r.content
            task_id = r.structured_content["task_id"]
            status = (await c.call_tool("swarm__swarm_status", {"task_id": task_id})).structured_content
    # the planner's call went through the guarded gateway to the llm built-in and its plan grammar
    assert status["backend"] == "local" and 1 <= status["model_calls"] <= 4
    assert status["plan"] and status["plan"]["steps"], status["error"]
    assert "returned an error" not in (status["error"] or "")


async def test_a_site_cap_holds_for_a_call_that_leaves_its_cap_out(tmp_path, model_server, monkeypatch, mode):
    """A site rulebase's lower cap (swarm_cap(max_steps, 10), ...) was checked only when the call named the
    cap: a call that left it out (or sent null) passed the guard and the build ran under the built-in's own
    caps (25 steps, 80 calls, 200,000 tokens, 90 minutes). Now a cap left out counts as the built-in's own,
    so under a lower site cap the call must name it, within the cap."""
    from sentinel_mcp.app.runtime import running_gateway

    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", model_server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")
    site = tmp_path / "site.pl"
    site.write_text(
        ":- multifile swarm_cap/2.\nswarm_cap(max_steps, 20).\nswarm_cap(max_model_calls, 40).\n"
        "swarm_cap(max_tokens, 100000).\nswarm_cap(max_minutes, 30).\n"
    )
    config = _site_config(tmp_path, site)
    questions: list[str] = []

    async def user(context, params):
        questions.append(params.message)
        return ElicitResult(action="accept", content={"answer": True})

    within = {"max_steps": 20, "max_model_calls": 40, "max_tokens": 100000, "max_minutes": 30}
    async with running_gateway(config) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=user) as c:
            for name in within:
                for left_out in ({k: v for k, v in within.items() if k != name}, within | {name: None}):
                    r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True, **left_out})
                    assert r.is_error and f"{name} must be at most {within[name]} (policy cap)" in (
                        r.content[0].text
                    ), (name, r.content[0].text)
            assert questions == [] and model_server.requests == []
            r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True, **within})
            assert not r.is_error and r.structured_content["state"] == "COMPLETED", r.content[0].text
            # the person is told the caps this build runs under, not the built-in's
            assert questions == ["Build the Android app Notes (com.example.notes)? It may take up to 20 "
                                 "steps, 40 model calls, 100,000 tokens and 30 minutes."], questions
