"""The plain 2026-07-28 ``tools/call``: params the SDK's kernel is sure to accept, known without asking again.

Every 2026-era request carries its client's envelope (protocol version, client info, capabilities) in
``_meta``, and the kernel validates it twice per call: its surface check of the params for the era (typing the
reserved ``_meta`` keys strictly) and ``Connection.from_envelope`` (client info and capabilities as models). A
client sends the same envelope on every call, so the verdict is kept per envelope (its JSON text, bounded):
params are *plain* when they hold only ``name`` (a string), ``arguments`` (an object, or absent) and
``_meta`` with the envelope (a verdict kept as accepted) and ``sentinel/`` keys with string values (the
session a client carries back, the purpose of the call). Such params pass the kernel's surface check whatever
the name and arguments are (``tests/gateway/test_plain_calls.py`` puts both to the SDK), so the lean path runs
the kernel without it (``unspanned_kernel.serve_checked_call``), on a connection built from the kept models.
Anything else (other params keys, another ``_meta`` key, an envelope the SDK refuses, an unseen envelope
over ``MAX_KEY_CHARS``) takes the kernel's full way, which answers as before.
"""

from __future__ import annotations

from collections import OrderedDict
from contextlib import AsyncExitStack
from typing import Any, Mapping

from mcp.server.connection import _NO_CHANNEL, Connection
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    ClientCapabilities,
    Implementation,
    InitializeRequestParams,
)
from mcp_types import methods as _methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from sentinel_mcp.core.json_text import compact_encoder
from sentinel_mcp.gateway.quick_event import new_event

MODERN = "2026-07-28"
# plain params pass every rung of the SDK's inbound ladder (``classify_inbound_request``: ``_meta`` a mapping
# with both required keys, the version a string it serves), so a caller may skip the ladder for them; an SDK
# that no longer serves this version makes no params plain
SERVED = MODERN in MODERN_PROTOCOL_VERSIONS
PLAIN_KEYS = frozenset(("name", "arguments", "_meta"))
ENVELOPE_KEYS = frozenset((PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY))
GATEWAY_PREFIX = "sentinel/"
MAX_KEY_CHARS = 4096  # an envelope this long is checked by the kernel each time, never kept
_KEY = compact_encoder(sort_keys=True)  # core/json_text.py
_ABSENT = object()
# a handshake-era tools/call's params the surface check accepts whatever the values (plain_handshake_params)
HANDSHAKE_PLAIN_KEYS = frozenset(("name", "arguments"))
HANDSHAKE_VERSIONS = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
# what a kept envelope holds: the client's params as the kernel would build them, and its capabilities
Kept = tuple[InitializeRequestParams | None, ClientCapabilities | None]


class PlainCalls:
    """The verdicts on the envelopes seen (the last ``capacity`` of them), and connections built from them."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._kept: OrderedDict[str, Kept | None] = OrderedDict()  # None: the SDK refuses it

    def connection(self, params: Mapping[str, Any], outbound: Any = _NO_CHANNEL) -> Connection | None:
        """A connection for plain ``params`` (a ``tools/call`` of the 2026 era: plain params pass the inbound
        ladder, ``SERVED``), as ``Connection.from_envelope`` builds it (``outbound``: the same argument); None
        when they are not plain."""
        if not PLAIN_KEYS.issuperset(params) or type(params.get("name")) is not str:
            return None
        arguments = params.get("arguments", _ABSENT)
        meta = params.get("_meta")
        if (arguments is not _ABSENT and type(arguments) is not dict) or type(meta) is not dict:
            return None
        for key, value in meta.items():
            if key not in ENVELOPE_KEYS and not (key.startswith(GATEWAY_PREFIX) and type(value) is str):
                return None
        if (meta.get(PROTOCOL_VERSION_META_KEY) != MODERN or CLIENT_CAPABILITIES_META_KEY not in meta
                or not SERVED):
            return None
        info = meta.get(CLIENT_INFO_META_KEY, _ABSENT)
        raw_capabilities = meta[CLIENT_CAPABILITIES_META_KEY]
        envelope = [info is not _ABSENT, None if info is _ABSENT else info, raw_capabilities]
        try:
            key = _KEY(envelope)
        except (TypeError, ValueError):
            return None
        if key in self._kept:
            kept = self._kept[key]
        else:
            if len(key) > MAX_KEY_CHARS:
                return None
            kept = self._kept[key] = self._judge(meta)
            while len(self._kept) > self.capacity:
                self._kept.popitem(last=False)
        if kept is None:
            return None
        client_params: InitializeRequestParams | None = kept[0]
        capabilities: ClientCapabilities | None = kept[1]
        return _ready_connection(outbound, client_params, capabilities)

    @staticmethod
    def _judge(meta: Mapping[str, Any]) -> Kept | None:
        """The kernel's surface check of a call carrying this envelope (None: refused), and the models
        ``Connection.from_envelope`` makes of it."""
        envelope = {k: v for k, v in meta.items() if k in ENVELOPE_KEYS}
        try:
            _methods.validate_client_request("tools/call", MODERN, {"name": "t", "_meta": envelope})
        except (ValidationError, ValueError, KeyError):
            return None
        info = _typed(Implementation, envelope.get(CLIENT_INFO_META_KEY))
        capabilities = _typed(ClientCapabilities, envelope[CLIENT_CAPABILITIES_META_KEY])
        client_params = None
        if info is not None and capabilities is not None:
            client_params = InitializeRequestParams(
                protocol_version=MODERN, capabilities=capabilities, client_info=info)
        return client_params, capabilities


def _ready_connection(outbound: Any, client_params: InitializeRequestParams | None,
                      capabilities: ClientCapabilities | None) -> Connection:
    """``Connection(outbound, protocol_version=MODERN, client_params=client_params)`` with its capabilities
    set and ``initialized`` set: the same attributes in the same order, its event made without anyio's look-up
    of the running library (``quick_event.py``: a ``getpid`` a call on 3.11). ``test_plain_calls.py``
    compares it with the SDK's constructor, attribute by attribute."""
    connection = Connection.__new__(Connection)
    connection.outbound = outbound
    connection.protocol_version = MODERN
    connection.session_id = None
    connection.client_capabilities = None
    connection.client_params = client_params
    connection.initialized = new_event()
    connection.state = {}
    connection.exit_stack = AsyncExitStack()
    connection.client_capabilities = capabilities
    connection.initialized.set()
    return connection


def _typed(model: Any, raw: Any) -> Any:
    """As ``mcp.server.connection._typed``: a mis-shaped value reads as not supplied."""
    try:
        return model.model_validate(raw, by_name=False)
    except ValidationError:
        return None


def plain_handshake_params(params: Any, version: Any) -> bool:
    """Whether the kernel's surface check of a ``tools/call`` on a handshake-era connection of ``version`` is
    sure to accept ``params``: a dict holding ``name`` (a string) and ``arguments`` (an object, or absent),
    nothing else, on a version the SDK serves. ``tests/gateway/test_plain_calls.py`` puts such params (names
    and argument values of every JSON kind) to the SDK's check for every handshake version; anything else (a
    ``_meta``, a task, another key, another type) is checked by the kernel as before."""
    return (type(params) is dict and HANDSHAKE_PLAIN_KEYS.issuperset(params)
            and type(params.get("name")) is str and type(params.get("arguments", _EMPTY)) is dict
            and version in HANDSHAKE_VERSIONS)


_EMPTY: dict[str, Any] = {}
