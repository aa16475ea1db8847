"""One exception tree: every error Sentinel raises on purpose is a ``SentinelError``, under one root per area.

A root names its area (``area``) and whether the problem is the user's to fix (``exit_code`` 2: settings, a
request) or the machine's (1). ``user_message`` builds what a person reads from any of them, in one place: the
CLI, the start-up report and built-ins use it, so the same problem reads the same everywhere."""

from __future__ import annotations

from sentinel_mcp.core.display_text import Marked, compose, said


class SentinelError(Exception):
    """The root: ``except SentinelError`` catches every deliberate error of every area."""

    area = "sentinel"
    exit_code = 1
    prefixed = True  # user_message puts the area before the text; off where the text names its place itself


class ConfigError(SentinelError):
    """A config file or section that cannot be used; the message names the file, the key and the problem."""

    area = "config"
    exit_code = 2
    prefixed = False


class GatewayError(SentinelError):
    area = "gateway"


class PolicyError(SentinelError):
    area = "policy"


class IdentityError(SentinelError):
    area = "identity"


class TLSError(SentinelError):
    area = "tls"


class A2AError(SentinelError):
    area = "a2a"


class AgentError(SentinelError):
    area = "agent"


class SwarmError(SentinelError):
    area = "swarm"


class SearchError(SentinelError):
    area = "search"


class ConsoleError(SentinelError):
    area = "console"


class AddressError(SentinelError):
    """A host someone else chose that names nothing Sentinel can check (``core/untrusted_address.py``)."""

    area = "address"


AREA_ROOTS: tuple[type[SentinelError], ...] = (
    ConfigError, GatewayError, PolicyError, IdentityError, TLSError, A2AError, AgentError, SwarmError,
    SearchError, ConsoleError, AddressError,
)  # and, in their areas: StorageError, LlmError, DeviceError, SensorError (older roots, now SentinelErrors)


def user_message(error: BaseException) -> str:
    """What a person reads: the message itself, prefixed by the area when the message does not say it."""
    message = said(error)  # Sentinel's words around values it marked stay marked, never marked again
    text: str = (Marked if isinstance(message, Marked) else str)(message.strip() or type(error).__name__)
    if not isinstance(error, SentinelError) or not error.prefixed or error.area == "sentinel" \
            or text.startswith((f"{error.area}:", f"{error.area} ")):
        return text
    return compose(f"{error.area}: ", text) if isinstance(text, Marked) else f"{error.area}: {text}"
