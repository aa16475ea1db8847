"""The built-in contract's traits: what a built-in's server declares (timeout, era, own result keys, tools
called in-task) is a typed, validated value; a server that declares nothing breaks the contract."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from mcp.server import Server
from mcp.server.mcpserver import MCPServer

import sentinel_mcp
from sentinel_mcp.core.builtin import (
    BUILTINS,
    DEFAULT_TIMEOUT,
    BuiltinContractError,
    BuiltinTraits,
    declare,
    traits_of,
)
from sentinel_mcp.core.errors import SentinelError
from tests.support.source_ast import parsed

ROOT = Path(sentinel_mcp.__file__).parent.parent


def test_the_defaults_are_the_gateways_defaults():
    traits = BuiltinTraits()
    assert (traits.timeout, traits.protocol) == (DEFAULT_TIMEOUT, "auto")
    assert traits.result_meta == frozenset() and traits.direct_tools == frozenset()


def test_names_given_as_a_tuple_or_list_are_kept_as_a_frozenset():
    traits = BuiltinTraits(timeout=30, result_meta=("sentinel/x",), direct_tools=["a", "b", "a"])
    assert traits.result_meta == frozenset({"sentinel/x"}) and traits.direct_tools == frozenset({"a", "b"})
    assert isinstance(traits.timeout, float) and traits.timeout == 30.0


@pytest.mark.parametrize("timeout", [0, -1, "300", None, True, float("nan"), float("inf"), [300]])
def test_a_timeout_that_is_not_positive_seconds_is_refused(timeout):
    with pytest.raises(BuiltinContractError):
        BuiltinTraits(timeout=timeout)


@pytest.mark.parametrize("protocol", ["LEGACY", "modern", "", None, "legacy ", 1])
def test_an_unknown_era_is_refused(protocol):
    with pytest.raises(BuiltinContractError):
        BuiltinTraits(protocol=protocol)


@pytest.mark.parametrize("names", ["sentinel/x", None, 3, [1], ("a", None), {"a": 1}, [b"a"]])
@pytest.mark.parametrize("field", ["result_meta", "direct_tools"])
def test_names_that_are_not_a_set_of_strings_are_refused(field, names):
    """A bare string is not a set of its letters; a mapping, bytes or a number is no name."""
    with pytest.raises(BuiltinContractError):
        BuiltinTraits(**{field: names})


@pytest.mark.parametrize("make", [lambda: MCPServer("x"), lambda: Server("x")])
def test_a_server_declares_its_traits_once_and_another_declares_nothing(make):
    server, other = make(), make()
    traits = BuiltinTraits(protocol="legacy")
    assert declare(server, traits) is server and traits_of(server) is traits
    with pytest.raises(BuiltinContractError, match="declares no traits") as raised:
        traits_of(other)  # the same class, not declared: nothing is inherited or guessed
    assert isinstance(raised.value, SentinelError)
    for thing in (None, "x", 3, {"a": 1}):
        with pytest.raises(BuiltinContractError):
            traits_of(thing)


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_each_built_in_declares_its_traits_explicitly(name):
    """Every create_server (or the server builder it returns from) calls ``declare``: the defaults too."""
    module = BUILTINS[name].partition(":")[0]
    path = ROOT / Path(*module.split(".")).with_suffix(".py")
    calls = [n for n in ast.walk(parsed(path)) if isinstance(n, ast.Call)
             and getattr(n.func, "id", None) == "declare"]
    assert len(calls) == 1, f"{path}: {len(calls)} declare() calls"


OLD_ATTRIBUTES = ("sentinel_timeout", "sentinel_protocol", "sentinel_result_meta", "sentinel_direct_tools")


def test_no_module_reads_the_old_server_attributes():
    """The traits were attributes read with getattr (``sentinel_timeout``, ...): none is read or set now."""
    offenders = []
    for base in ("sentinel_mcp", "device_tools", "benchmarks"):
        for path in (ROOT / base).rglob("*.py"):
            text = path.read_text()
            for word in OLD_ATTRIBUTES:
                if word in text:
                    offenders.append(f"{path.relative_to(ROOT)}: {word}")
    assert offenders == []
