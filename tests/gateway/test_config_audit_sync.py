"""``sentinel.audit.sync`` is type-strict: anything but "full" or "process" refuses the config, naming the
file, the line and the allowed values; "process" is refused with a PostgreSQL store (its equivalent there,
``synchronous_commit=off``, would confirm commits the server has not flushed); "full" is the default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.config import ConfigError, load_config


def _config(tmp: Path, audit: Any, store: str | None = None) -> Path:
    path = tmp / "config.json"
    extra = f'  "store": {json.dumps(store)},\n' if store else ""
    # the section on a line of its own, so its line is known: 4 (without a store)
    path.write_text('{"mcpServers": {},\n "sentinel": {"builtins": [],\n' + extra +
                    '  "audit":\n   %s\n}}\n' % json.dumps(audit))
    return path


@pytest.mark.parametrize("sync", ["fast", "FULL", "Process", "", "normal", "off", 1, 0, True, None, ["full"],
                                  {"full": True}])
def test_a_sync_other_than_full_or_process_refuses_the_config(tmp_path: Path, sync: Any) -> None:
    path = _config(tmp_path, {"sync": sync})
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    said = str(refused.value)
    assert str(path) in said and "sentinel.audit.sync" in said and "(line 4)" in said, said
    assert "'full'" in said and "'process'" in said, said


@pytest.mark.parametrize("audit", ["process", ["process"], 1, {"sync": "process", "fsync": False}])
def test_an_audit_section_of_another_shape_refuses_the_config(tmp_path: Path, audit: Any) -> None:
    path = _config(tmp_path, audit)
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    said = str(refused.value)
    assert str(path) in said and "sentinel.audit" in said, said


def test_process_is_refused_with_a_postgresql_store(tmp_path: Path) -> None:
    path = _config(tmp_path, {"sync": "process"}, store="postgresql://sentinel@127.0.0.1:9/sentinel")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    said = str(refused.value)
    assert str(path) in said and "synchronous_commit=off" in said and 'use "full"' in said, said


@pytest.mark.parametrize("audit, want", [(None, "full"), ({}, "full"), ({"sync": "full"}, "full"),
                                         ({"sync": "process"}, "process")])
def test_the_modes_load_and_full_is_the_default(tmp_path: Path, audit: Any, want: str) -> None:
    path = tmp_path / "config.json"
    sentinel: dict[str, Any] = {"builtins": []}
    if audit is not None:
        sentinel["audit"] = audit
    path.write_text(json.dumps({"mcpServers": {}, "sentinel": sentinel}))
    assert load_config(path).sentinel.audit.sync == want
