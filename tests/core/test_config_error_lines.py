"""A config file's error names the file, the line and the problem, and a value that would only fail later
is refused at load.

A value of the wrong type or out of range was named by its key only (``sentinel.policy.query_seconds``),
never its line. ``${A:-${B}}`` (a shell's nested default) gave the literal text ``${B}`` as the value,
silently (a token of "${B}"). And ``query_inferences`` past 2^63-1 loaded, then every client goal failed
("a value cannot be represented", or an answer with no status at all)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sentinel_mcp.config import ConfigError, load_config


def _refused(tmp_path: Path, text: str, *words: str) -> str:
    p = tmp_path / "cfg.json"
    p.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(p)
    said = str(err.value)
    assert str(p) in said, said
    for w in words:
        assert w in said, said
    return said


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ('{\n "mcpServers": {},\n "sentinel": {\n  "policy": {\n   "query_seconds": "x"\n  }\n }\n}', 5,
         "sentinel.policy.query_seconds"),
        ('{\n "mcpServers": {\n  "a": {\n   "command": 1\n  }\n },\n "sentinel": {}\n}', 4,
         "mcpServers.a.command"),
        ('{"mcpServers": {},\n"sentinel": {"http": {"port": 8080},\n "max_argument_bytes": -5}}', 3,
         "sentinel.max_argument_bytes"),
        # the same key name in another object before it: the line of the one meant
        ('{\n "mcpServers": {"a": {"command": "x", "timeout": 5}},\n "sentinel": {\n  "builtin_timeouts": {\n'
         '   "sentinel": {"timeout": "y"}}}}', 5, "sentinel.builtin_timeouts.sentinel.timeout"),
        ('{\n "mcpServers": {},\n "sentinel": {\n  "principals": [\n   {"name": "a", "token": "'
         + "t" * 24 + '"},\n   {"name": "b", "token": "' + "u" * 24 + '", "burst": true}\n  ]\n }\n}', 6,
         "sentinel.principals.1.burst"),
        ('{\n "mcpServers": {},\n "sentinel": {\n  "http": {"prot": 1}\n }\n}', 4, "sentinel.http.prot"),
        ('{\n "mcpServers": {},\n "sentinel": {\n  "builtins": [\n   "sentinel",\n   "nope"\n  ]\n }\n}', 6,
         "sentinel.builtins[1]"),
    ],
)
def test_a_bad_value_is_named_with_its_line(tmp_path: Path, text: str, line: int, key: str) -> None:
    _refused(tmp_path, text, key, f"line {line}")


def test_a_nested_default_is_refused_naming_its_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RT_UNSET_A", raising=False)
    monkeypatch.setenv("RT_SECRET_B", "s3cr3t-value-of-b")
    text = '{\n "mcpServers": {},\n "sentinel": {\n  "data_dir": "${RT_UNSET_A:-${RT_SECRET_B}}"\n }\n}'
    said = _refused(tmp_path, text, "sentinel.data_dir", "RT_UNSET_A")
    assert "s3cr3t" not in said
    assert os.environ["RT_SECRET_B"] not in said


@pytest.mark.parametrize("n", [2**63, 10**400])
def test_an_inference_budget_past_what_a_limit_holds_is_refused(tmp_path: Path, n: int) -> None:
    _refused(tmp_path, '{"mcpServers": {},\n "sentinel": {"policy": {\n "query_inferences": %d}}}' % n,
             "sentinel.policy.query_inferences")


def test_the_largest_inference_budget_loads(tmp_path: Path) -> None:
    p = tmp_path / "cfg.json"
    p.write_text('{"mcpServers": {}, "sentinel": {"policy": {"query_inferences": %d}}}' % (2**63 - 1))
    assert load_config(p).sentinel.policy.query_inferences == 2**63 - 1


def test_a_bad_value_in_a_builtin_section_is_named_with_its_line(tmp_path: Path) -> None:
    _refused(tmp_path, '{\n "mcpServers": {},\n "sentinel": {\n  "builtins": ["device"],\n  "device": {\n'
             '   "adb_port": "5037"\n  }\n }\n}', "sentinel.device.adb_port", "(line 6)")
