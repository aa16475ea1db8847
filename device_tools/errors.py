"""Errors the device layer reports to the user; each says what happened and what to do."""

from __future__ import annotations
from sentinel_mcp.core.errors import SentinelError


class DeviceError(SentinelError):
    """Base class: a clear, user-facing problem with the device or an action."""
    area = "device"


class DeviceUnavailable(DeviceError):
    """No device, the wrong serial, or the device went away mid-call."""


class DumpFailed(DeviceError):
    """``uiautomator dump`` kept failing (null root node, idle state, empty output)."""


class CommandRefused(DeviceError):
    """A command was about to reach the device without the gate's approval; nothing was sent."""


class TextNotTypeable(DeviceError):
    """Text the backend cannot type faithfully (non-ASCII on adb, control characters)."""


class FocusMoved(DeviceError):
    """After the tap on a text field the focus was elsewhere: no key was sent (keys go to the focus)."""


class DeviceCommandFailed(DeviceError):
    """The device ran the command but reported a failure."""


class ScreenMoved(DeviceError):
    """The screen read around a capture no longer shows what the caller named (an element's region)."""


class CommandTooLong(DeviceError):
    """A command longer than an adb request can carry; nothing was sent."""
