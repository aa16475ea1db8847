"""Every number a config can set is bounded above: a time past ~9.2e9 s makes Python's waits and sockets
raise OverflowError deep inside a call (an upstream's connect, a guard's wait), and a size or count past what
a machine holds is a typo, not a wish. Refused at load, naming the file and line."""

from __future__ import annotations

import typing

import pytest
from annotated_types import Le, Lt
from pydantic import BaseModel

from sentinel_mcp.config import Config, ConfigError, load_config
from sentinel_mcp.core.builtin import SECTION_MODELS, load_section_model


def _models_in(annotation: object):
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in typing.get_args(annotation):
        yield from _models_in(arg)


def _numeric(annotation: object) -> bool:
    return annotation in (int, float) or any(a in (int, float) for a in typing.get_args(annotation))


def _unbounded(model: type[BaseModel], path: str, seen: set[type]) -> list[str]:
    if model in seen:
        return []
    seen.add(model)
    found = []
    for name, field in model.model_fields.items():
        if _numeric(field.annotation) and not any(isinstance(m, (Le, Lt)) for m in field.metadata):
            found.append(f"{path}.{name}")
        for sub in _models_in(field.annotation):
            found += _unbounded(sub, f"{path}.{name}", seen)
    return found


def test_every_number_of_every_config_section_has_an_upper_bound():
    seen: set[type] = set()
    found = _unbounded(Config, "config", seen)
    for section in SECTION_MODELS:
        found += _unbounded(load_section_model(section), section, seen)
    assert len(seen) > 20, "the walk must reach the nested models (servers, principals, sections)"
    assert found == []


@pytest.mark.parametrize("value", ["1e10", "1e300", "9223372037"])
@pytest.mark.parametrize("key", ["timeout", "connect_timeout", "max_call_seconds"])
def test_a_server_time_past_what_a_wait_can_hold_is_refused_with_its_line(tmp_path, key, value):
    bad = tmp_path / "sentinel.json"
    bad.write_text('{"mcpServers": {"a": {"command": "x",\n  "' + key + '": ' + value + "}}}")
    with pytest.raises(ConfigError, match=rf"sentinel.json:\n  mcpServers.a.{key}: .*less than .*\(line 2\)"):
        load_config(bad)
    bad.write_text('{"mcpServers": {"a": {"command": "x",\n  "' + key + '": 3000}}}')
    assert load_config(bad).mcp_servers["a"] is not None  # a long but real time still loads


@pytest.mark.parametrize("section,value", [
    ('"policy": {"guard_timeout": V}', "1e12"), ('"policy": {"confirm_ttl": V}', "1e12"),
    ('"builtin_timeouts": {"llm": {"timeout": V}}', "1e12"), ('"max_argument_bytes": V', "10" + "0" * 30),
])
def test_a_sentinel_number_past_its_bound_is_refused(tmp_path, section, value):
    bad = tmp_path / "sentinel.json"
    bad.write_text('{"mcpServers": {},\n "sentinel": {\n  ' + section.replace("V", value) + "}}")
    with pytest.raises(ConfigError, match=r"sentinel.json:\n  .*less than or equal .*\(line 3\)"):
        load_config(bad)
