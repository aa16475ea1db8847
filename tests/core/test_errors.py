"""One exception tree: every exception class Sentinel defines is a SentinelError, under its area's root."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import device_tools
import sentinel_mcp
from sentinel_mcp.core import errors
from sentinel_mcp.core.errors import ConfigError, SentinelError, user_message

# modules that start a server or need an optional extra when imported are still imported: they define classes
_SKIP = {"sentinel_mcp.__main__", "device_tools.__main__", "device_tools.sensors.__main__",
         "sentinel_mcp.llm.__main__", "sentinel_mcp.swarm.__main__"}


def _all_modules():
    for package in (sentinel_mcp, device_tools):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name not in _SKIP:
                yield importlib.import_module(info.name)


def _defined_exceptions():
    for module in _all_modules():
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, BaseException):
                yield cls


def test_every_exception_class_is_a_sentinel_error():
    found = list(_defined_exceptions())
    assert len(found) > 40  # the walk really reached the areas
    outside = sorted(f"{c.__module__}.{c.__qualname__}" for c in found if not issubclass(c, SentinelError))
    assert outside == []


def test_every_sentinel_error_names_a_known_area():
    known = {"sentinel", "llm", "device", "sensors", "storage"} | {r.area for r in errors.AREA_ROOTS}
    for cls in _defined_exceptions():
        assert cls.area in known, cls


@pytest.mark.parametrize(
    "module,name",
    [
        ("sentinel_mcp.config", "ConfigError"),
        ("sentinel_mcp.storage", "StorageError"),
        ("sentinel_mcp.llm.errors", "LlmError"),
        ("device_tools.errors", "DeviceError"),
        ("device_tools.sensors.errors", "SensorError"),
        ("sentinel_mcp.policy.rulebase", "RulebaseError"),
        ("sentinel_mcp.gateway.upstream_client", "UpstreamUnavailable"),
        ("sentinel_mcp.a2a.security", "AuthError"),
        ("sentinel_mcp.swarm.spec", "SpecError"),
        ("sentinel_mcp.tls.authority", "AuthorityError"),
    ],
)
def test_area_errors_are_caught_by_the_root(module, name):
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, SentinelError) and cls.area != "sentinel"


def test_rebased_errors_keep_their_older_bases():
    # callers that caught ValueError / KeyError / ssl errors before still do
    from sentinel_mcp.swarm.build_service import UnknownTaskError
    from sentinel_mcp.swarm.spec import SpecError
    from sentinel_mcp.tls.client_context import PinMismatch

    assert issubclass(SpecError, ValueError) and issubclass(UnknownTaskError, KeyError)
    import ssl

    assert issubclass(PinMismatch, ssl.SSLCertVerificationError)


def test_config_error_is_one_class_wherever_it_is_imported():
    from sentinel_mcp import config

    assert config.ConfigError is ConfigError


@pytest.mark.parametrize(
    "error,expected",
    [
        (
            ConfigError("/etc/s.json: sentinel.device.backend: bad"),
            "/etc/s.json: sentinel.device.backend: bad",
        ),
        (errors.PolicyError("the rulebase does not load"), "policy: the rulebase does not load"),
        (errors.PolicyError("policy: already says it"), "policy: already says it"),
        (errors.GatewayError(""), "gateway: GatewayError"),
        (SentinelError("plain"), "plain"),
        (ValueError("not ours"), "not ours"),
    ],
)
def test_user_message(error, expected):
    assert user_message(error) == expected


def test_cli_reports_any_sentinel_error_without_a_traceback(capsys, monkeypatch):
    from sentinel_mcp import cli

    def boom(args):
        raise errors.PolicyError("the rulebase does not load")

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    parser.set_defaults(func=boom)
    assert cli.main([]) == 1
    assert capsys.readouterr().err.strip() == "sentinel-mcp: policy: the rulebase does not load"
