"""The built-in ``device`` MCP server: screen observer, guarded actuator, and the phone's tool modules."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer

from sentinel_mcp.core.builtin import BuiltinContext, BuiltinTraits, declare

from . import ui_tools
from .actuator import Actuator
from .backend import DeviceBackend
from .gate import CommandGate, shared_adb_gate
from .results import DECISION_META
from .modules import calendar, clock, contacts, messaging, notes, screen_ocr, terminal
from .risk_classifier import ActionRiskClassifier
from .runtime import DeviceRuntime
from .screen_privacy import PERSONAL_SHOWN
from .settings import DeviceSettings, load_settings
from .strict_arguments import strict_arguments

Settings = DeviceSettings  # the built-in contract: its typed settings beside create_server

INSTRUCTIONS = (
    "Controls an Android phone. Call screen_read first: it lists elements with grounded ids and a "
    "snapshot_id. Actions name (element_id, snapshot_id); if the screen changed, the action is refused "
    "as stale and the fresh screen is returned. Risky actions (sending, paying, deleting, passwords, "
    "settings) ask the user first; a refusal means nothing was sent to the phone."
)


def make_backend(settings: DeviceSettings) -> DeviceBackend:
    if settings.backend == "adb":
        from .adb_backend import AdbBackend

        return AdbBackend(serial=settings.serial, host=settings.adb_host, port=settings.adb_port)
    if settings.backend == "termux":
        from .termux_backend import TermuxBackend

        return TermuxBackend()
    from .simulated import SimulatedDevice

    return SimulatedDevice()


def build_runtime(ctx: BuiltinContext, backend: DeviceBackend | None = None) -> DeviceRuntime:
    settings = load_settings(ctx.settings, ctx.name)
    if backend is None and settings.backend == "adb":  # one gate per phone, shared with the sensors built-in
        gate = shared_adb_gate(ctx.services.devices, settings.adb_host, settings.adb_port, settings.serial,
                               lambda: make_backend(settings))
        backend = gate.backend
    else:
        backend = backend or make_backend(settings)
        gate = CommandGate(backend)
    use_model = settings.risk_classifier in (True, "rules+model")
    classifier = ActionRiskClassifier(
        ctx.call_tool if use_model else None,
        timeout=settings.classifier_timeout,
        model_role=settings.risk_model_role if use_model else "off",
    )
    actuator = Actuator(
        gate,
        classifier,
        physical_confirmation=settings.physical_confirmation,
        confirm_timeout=settings.confirm_timeout,
        dump_attempts=settings.dump_attempts,
        dump_backoff=settings.dump_backoff,
    )
    rt = DeviceRuntime(
        backend=backend, gate=gate, actuator=actuator, settings=settings, data_dir=Path(ctx.data_dir)
    )
    actuator.on_decision = rt.record_decision
    return rt


def create_server(ctx: BuiltinContext, backend: DeviceBackend | None = None) -> MCPServer:
    """The gateway's entry point. ``backend`` lets tests and embedders pass a device object directly."""
    rt = build_runtime(ctx, backend)
    mcp = MCPServer(ctx.name or "device", version="0.1.0", instructions=INSTRUCTIONS)
    ui_tools.register(mcp, rt)
    for module in (calendar, clock, contacts, messaging, notes, screen_ocr, terminal):
        module.register(mcp, rt)
    strict_arguments(mcp)
    mcp.runtime = rt  # type: ignore[attr-defined]  # for tests and the benchmark
    # its results' decision key is its own: the gateway drops it from any other upstream's results
    return declare(mcp, BuiltinTraits(result_meta=frozenset({DECISION_META, PERSONAL_SHOWN})))
