"""The configuration file (DESIGN §4): Claude Desktop's ``mcpServers`` plus a ``sentinel`` section."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (BaseModel, ConfigDict, Discriminator, Field, StrictBool, Tag, ValidationError,
                      ValidationInfo, field_validator, model_validator)

from sentinel_mcp.core.builtin import (APPLICATION_SECTIONS, BUILTINS, SECTION_MODELS, SECTION_SEEDS,
                                       load_section_model)
from sentinel_mcp.core.host_names import is_host
from sentinel_mcp.core.untrusted_address import stays_here
from sentinel_mcp.core.url_basic_auth import credentials_problem
from sentinel_mcp.core.url_credentials import without_credentials
from sentinel_mcp.core.display_text import Marked, compose, said
from sentinel_mcp.core.errors import ConfigError  # re-exported: config.ConfigError stays valid
from sentinel_mcp.core.settings import non_finite, unknown_key_hint, validate_section
from sentinel_mcp.core.setting_keys import meant_or_known as _did_you_mean, unknown_sentinel_key
from sentinel_mcp.config_file import parse_config_json, read_config_text
from sentinel_mcp.config_isolation import SessionIsolation
from sentinel_mcp.config_arguments import ArgumentForwarding
from sentinel_mcp.config_headers import RequestHeaders
from sentinel_mcp.config_upstream_url import checked_url
from sentinel_mcp.config_process import ProcessSpec
from sentinel_mcp.config_policy import PolicySettings  # re-exported: config.PolicySettings stays valid
from sentinel_mcp.config_audit import AuditSettings, refused_on_server
from sentinel_mcp.config_lines import Lines, at_line, line_of, value_lines
from sentinel_mcp.config_raw import no_nul, paths_as_text
from sentinel_mcp.config_namespaces import check_prefixes, check_server_names
from sentinel_mcp.config_principal_names import check_principal_names
from sentinel_mcp.config_secrets import exposure_warning
from sentinel_mcp.config_shapes import ShapeError, normalize, parse_inputs
from sentinel_mcp.config_vars import ExpansionBudget, expand_tree, expand_vars, unexpanded
from sentinel_mcp.paths import RULEBASES_DIR  # noqa: F401 - re-exported (benchmarks, older callers)
from sentinel_mcp.paths import SHIPPED_PREFIX, SHIPPED_ROOT, default_anchor_dir, default_data_dir
from sentinel_mcp.config_file_paths import anchor_paths, anchored
from sentinel_mcp.core.presentable_token import RULE as TOKEN_RULE, presentable
from sentinel_mcp.config_file_trust import a2a_key_files, check_all, check_trusted, code_files
from sentinel_mcp.paths import shipped_path
from sentinel_mcp.tls.settings import CertificateMatch, ClientTLS, ServerTLS

_SECRET_WORDS = {"token": "the token", "console_secret": "the console secret"}
# times are bounded: Python's waits and sockets raise OverflowError past ~9.2e9 s, deep inside a call
_DAY, _WEEK = 86_400.0, 7 * 86_400.0


def _no_placeholder(value: str | None, what: str) -> str | None:
    # a literal "${...}" left after expansion would be a password anyone can read in the docs
    if value is not None and "${" in value:
        raise ValueError(
            f"{what} still contains '${{' after expansion; set the variable or use ${{VAR:-default}}"
        )
    if value is not None and not value.strip():
        raise ValueError(f"{what} is empty")
    return value


def _presentable(value: str | None, what: str) -> str | None:
    if value is not None and not presentable(value):  # it would never match (core/presentable_token.py)
        raise ValueError(f"{what} {TOKEN_RULE}")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerCommon(_Strict, SessionIsolation, ArgumentForwarding):  # config_isolation.py, config_arguments.py
    # "" wraps a server transparently (tools keep their own names); None means "<server>__"
    prefix: str | None = None
    disabled: bool = False
    # progress keeps a call alive past ``timeout`` up to ``max_call_seconds`` in all
    timeout: float = Field(60.0, gt=0, le=_DAY,
                           description="seconds a call may go without an answer or progress")
    max_call_seconds: float = Field(
        3600.0, gt=0, le=_WEEK, description="longest a call may run while it reports progress"
    )
    connect_timeout: float = Field(20.0, gt=0, le=3600)
    # handshake-era upstreams that ignore server/discover would delay each connect by 10 s
    protocol: Literal["auto", "legacy", "modern"] = "auto"
    # a handshake-era upstream's pushed questions over stdio or SSE name no call: its calls take turns by
    # client (one client's overlap: gateway/party_turns.py). None: so, except streamable-HTTP calls taking the
    # lean path (they read pushes on their own stream);
    # true: never serialize (it never asks mid-call); false: one call at a time, whoever calls
    concurrent: bool | None = None
    # the most tool calls this upstream is sent at once (a fragile server, a rate-limited API): the next ones
    # wait their turn in order, each at most its ``timeout``; None: as many as callers make
    max_in_flight: int | None = Field(None, ge=1, le=10_000, strict=True)
    # whether this server's tool hints (readOnlyHint, destructiveHint, idempotentHint, openWorldHint) are
    # believed: the fail-safe default lets a read-only tool through unasked, and clients read them too.
    # None: a process Sentinel starts or a server on loopback, yes; a server beyond loopback, no (its hints
    # are dropped: gateway/annotation_trust.py)
    trust_annotations: bool | None = Field(None, strict=True)
    # what this server may ask the client through Sentinel during a call: "elicitation" (a question to the
    # user), "sampling" (the client's model), "roots" (only ever on a connection serving one principal). None:
    # all three for a process Sentinel starts or a server on loopback; a server beyond loopback (another's
    # service) may only ask questions (gateway/relay_permits.py)
    relays: list[Literal["elicitation", "sampling", "roots"]] | None = None
    # the most tokens this server's sampling request may have the client's model write (the user's quota): a
    # request for more asks for this many. None: 4096 (``gateway/sampling_fields.py``)
    max_sampling_tokens: int | None = Field(None, ge=1, le=1_000_000, strict=True)
    # the most bytes one message of this server may be (an stdio line, an HTTP body), counted before any is
    # parsed (parsing 16 MiB holds the loop ~0.9 s). None: 16 MiB (``lean_upstream.MAX_ANSWER_BYTES``)
    max_result_bytes: int | None = Field(None, ge=1024, le=16 * 1024 * 1024, strict=True)


class StdioServer(ServerCommon, ProcessSpec):  # command, args, env, cwd: config_process.py
    pass


def loopback_host(host: str | None) -> bool:
    """Whether a connection to ``host`` surely stays on this machine: a loopback address literal (no zone) or
    ``localhost`` (the hosts file's). Not ``localhost.``: an absolute DNS name the hosts file does not answer
    for, looked up in DNS (the network's resolver says where it is)."""
    return stays_here(host)  # (core/untrusted_address.py: one reading of every spelling)


class RemoteServer(ServerCommon, RequestHeaders):  # headers: config_headers.py
    url: str
    transport: Literal["streamable-http", "sse"] | None = None  # None: guessed from the URL (/sse -> sse)
    # https: how the server is verified and Sentinel's client certificate; "off": plaintext beyond loopback
    tls: ClientTLS | Literal["off"] | None = None

    @field_validator("url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        return checked_url(v)  # config_upstream_url.py: one place, read one way

    @model_validator(mode="after")
    def _no_plaintext_beyond_loopback(self) -> "RemoteServer":
        parts = urlsplit(self.url)
        if parts.scheme == "http" and self.tls != "off" and not loopback_host(parts.hostname):
            raise ValueError(  # (quoted without a user name, password or query: they may be secrets)
                f"{without_credentials(self.url)} is plaintext beyond loopback (headers, tokens and results "
                'would travel in the clear): use https://, or say "tls": "off" to accept that'
            )
        if parts.scheme == "http" and isinstance(self.tls, ClientTLS):
            raise ValueError("'tls' settings need an https:// url")
        if parts.scheme == "https" and self.tls == "off":
            raise ValueError(
                '"tls": "off" accepts an http:// url beyond loopback; an https:// server is always '
                "verified (give 'ca' or 'pin_sha256' for one the system's store does not know)"
            )
        return self

    @model_validator(mode="after")
    def _sendable_credentials(self) -> "RemoteServer":
        problem = credentials_problem(self.url, self.headers)  # sent as Basic auth by both clients
        if problem is not None:
            raise ValueError(problem)
        return self

    @property
    def kind(self) -> str:
        if self.transport:
            return self.transport
        return "sse" if self.url.rstrip("/").endswith("/sse") else "streamable-http"


def _server_kind(v: Any) -> str:
    if isinstance(v, dict):
        return "remote" if "url" in v else "stdio"
    return "remote" if isinstance(v, RemoteServer) else "stdio"


ServerSpec = Annotated[
    Annotated[StdioServer, Tag("stdio")] | Annotated[RemoteServer, Tag("remote")], Discriminator(_server_kind)
]


PRINCIPAL_NAME = r"^[A-Za-z0-9_.-]{1,64}$"
# "local" is the standalone built-ins' caller (device_tools.sensors treats it as the device's owner)
RESERVED_PRINCIPALS = ("owner", "anonymous", "sentinel", "local")


class HttpSettings(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    # "token": every HTTP/A2A caller presents a token (the owner's is generated on first start unless `token`
    # is set); "none": no authentication at all, loopback only, every caller is the one principal "anonymous"
    auth: Literal["token", "none"] = "token"
    token: str | None = None  # the owner's bearer token (default: generated, kept in <data_dir>/http-token)
    # what the owner types to sign in to the web console; never a bearer (default: generated, kept in
    # <data_dir>/console-secret)
    console_secret: str | None = Field(None, min_length=16)
    allowed_hosts: list[str] = Field(default_factory=list)  # extra Host headers accepted (DNS rebinding)
    allowed_origins: list[str] = Field(default_factory=list)  # extra Origin headers accepted (browsers)
    # TLS on the whole front (MCP, SSE, A2A, WebSocket). Without it Sentinel serves loopback addresses only,
    # unless "off" says plaintext beyond loopback is wanted (then /healthz says so)
    tls: ServerTLS | Literal["off"] | None = None

    @field_validator("token", "console_secret")
    @classmethod
    def _secret(cls, v: str | None, info: ValidationInfo) -> str | None:
        what = _SECRET_WORDS[info.field_name or ""]
        v = _no_placeholder(v, what)
        return _presentable(v, what) if info.field_name == "token" else v

    @field_validator("host")
    @classmethod
    def _host(cls, v: str) -> str:
        # checked here, not at bind time after every upstream and built-in has started
        if not is_host(v.strip("[]") if v.startswith("[") and v.endswith("]") else v):
            raise ValueError(f"{v!r} is neither an IP address nor a DNS name")
        return v


class PrincipalSpec(_Strict):
    """A caller Sentinel knows by the token it presents (HTTP and A2A) or by its client certificate (mutual
    TLS: sentinel.http.tls with a CA), and what it may reach."""

    name: str = Field(pattern=PRINCIPAL_NAME)
    token: str | None = Field(None, min_length=16)
    token_sha256: str | None = Field(None, pattern=r"^[0-9a-fA-F]{64}$")  # the token's SHA-256, hex
    certificate: CertificateMatch | None = None  # the client certificates that are this principal
    # what its person types to sign in to the web console (never its token: the client holds that); without
    # one it signs in only by a client certificate
    console_secret: str | None = Field(None, min_length=16)
    console_secret_sha256: str | None = Field(None, pattern=r"^[0-9a-fA-F]{64}$")
    # glob patterns over <server>__<tool> (the server's config name and the tool's own name) and server names
    tools: list[str] = Field(default_factory=lambda: ["*"])
    upstreams: list[str] = Field(default_factory=lambda: ["*"])
    # its calls a minute (tool calls, resource reads, prompts; gateway/call_rates.py), and how many at once
    # past a quiet spell (default: a minute's worth); None: sentinel.policy.calls_per_minute
    calls_per_minute: int | None = Field(None, ge=1, le=1_000_000, strict=True)
    burst: int | None = Field(None, ge=1, le=1_000_000, strict=True)

    @field_validator("token", "console_secret")
    @classmethod
    def _secret(cls, v: str | None, info: ValidationInfo) -> str | None:
        what = _SECRET_WORDS[info.field_name or ""]
        v = _no_placeholder(v, what)
        return _presentable(v, what) if info.field_name == "token" else v

    @model_validator(mode="after")
    def _one_secret(self) -> "PrincipalSpec":
        if self.token is not None and self.token_sha256 is not None:
            raise ValueError(f"principal {self.name!r}: give exactly one of 'token' and 'token_sha256'")
        if self.console_secret is not None and self.console_secret_sha256 is not None:
            raise ValueError(
                f"principal {self.name!r}: give at most one of 'console_secret' and 'console_secret_sha256'"
            )
        if self.token is None and self.token_sha256 is None and self.certificate is None:
            raise ValueError(
                f"principal {self.name!r}: give exactly one of 'token' and 'token_sha256' (or a "
                "'certificate' for mutual TLS)"
            )
        if self.name in RESERVED_PRINCIPALS:
            raise ValueError(f"principal name {self.name!r} is reserved ({', '.join(RESERVED_PRINCIPALS)})")
        return self


class CallTimeouts(_Strict):
    """``sentinel.builtin_timeouts.<name>``: the call timeouts of one built-in (see ``ServerCommon``)."""

    timeout: float = Field(300.0, gt=0, le=_DAY)
    max_call_seconds: float | None = Field(None, gt=0, le=_WEEK)  # None: the built-in's (builtin.CALL_LIMITS)


class ClusterSettings(_Strict):
    """``sentinel.cluster``: several replicas on one PostgreSQL store (``sentinel.store = "postgresql://…"``).

    ``seal_key`` (``${VAR}`` expanded, at least 32 characters; required with a server store: a replica or
    command refuses to start without it) is the same on every replica, so a state one replica sealed (a
    2026-07-28 retry, a conversation id) opens on any other; ``replica`` names this one's audit chain
    (default: host name and a random suffix per start).

    ``commit_wait_seconds`` (1 to 120, default 15) bounds each statement on the server store (waiting on a
    lock included) and each commit's wait for the server's word (a synchronous standby that does not answer):
    past it the server cancels it, the call is refused and the store shows degraded. Lower: a stalled store
    refuses calls sooner (below 1 s ordinary load would cancel good commits); higher: calls wait longer before
    they are refused (past a balancer's patience, every call behind on one writer)."""

    replica: str | None = Field(None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9._:-]+$")
    seal_key: str | None = None
    commit_wait_seconds: float = Field(15.0, ge=1, le=120, strict=True, allow_inf_nan=False)


class SentinelSettings(BaseModel):
    model_config = ConfigDict(extra="allow")  # built-ins read their own sections (llm, device, ...)

    rulebases: list[str] = Field(default_factory=list)
    seeds: dict[str, Any] = Field(default_factory=dict)
    data_dir: str | None = None
    store: str | None = None  # a SQLite path, or a postgresql:// URL that several replicas share
    # the audit anchor's directory (key + anchors.log), outside the data dir: a path, true (the default place,
    # paths.default_anchor_dir) or false (no anchor: a rewound or removed chain goes unnoticed)
    audit_anchor: StrictBool | str | None = None

    @field_validator("audit_anchor")
    @classmethod
    def _anchor_path(cls, v: bool | str | None) -> bool | str | None:
        if isinstance(v, str) and not v.strip():
            raise ValueError("a directory outside the data dir, true (the default place) or false (off)")
        return v
    audit: AuditSettings = Field(default_factory=AuditSettings)  # how durable a row is as its call goes on
    cluster: ClusterSettings = Field(default_factory=ClusterSettings)
    builtins: list[str] = Field(default_factory=list)
    http: HttpSettings = Field(default_factory=HttpSettings)
    principals: list[PrincipalSpec] = Field(default_factory=list)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    max_argument_bytes: int = Field(1_000_000, gt=0, le=1 << 30)
    builtin_timeouts: dict[str, CallTimeouts] = Field(default_factory=dict)
    # tools whose results are personal data (read only with the caller's consent): <server>__<tool> -> kind
    personal: dict[str, str] = Field(default_factory=dict)
    # tools whose results carry text from untrusted sources (marked as data in the result): tool -> source
    untrusted: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _paths(self) -> "SentinelSettings":
        """``shipped:rulebases/x.pl`` names a file Sentinel ships, inside its own folder (never
        ``shipped:/etc/x`` or ``shipped:../x``); state (data_dir, store) is never kept there."""
        for i, p in enumerate(self.rulebases):
            if p.startswith(SHIPPED_PREFIX) and shipped_path(p) is None:
                raise ValueError(f"rulebases[{i}]: {p!r} names no file inside Sentinel's shipped files (a "
                                 f"relative path such as {SHIPPED_PREFIX}rulebases/airline.pl)")
        for key in ("data_dir", "store"):
            value = getattr(self, key)
            if isinstance(value, str) and value.startswith(SHIPPED_PREFIX):
                raise ValueError(f"{key}: {SHIPPED_PREFIX} names files Sentinel ships (rulebases), never "
                                 "where state is kept")
        if self.audit.sync != "full":  # (the storage package is not imported to read a default config)
            from sentinel_mcp.storage.location import is_server_url

            refused = refused_on_server(self.audit, is_server_url(self.store))
            if refused:
                raise ValueError(refused)
        return self

    @model_validator(mode="after")
    def _distinct_principals(self) -> "SentinelSettings":
        names = [p.name for p in self.principals]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"principals: the name {dup[0]!r} is used twice")
        tokens = [p.token for p in self.principals if p.token] + (
            [self.http.token] if self.http.token else []
        )
        if len(set(tokens)) != len(tokens):
            raise ValueError(
                "principals: two principals (or a principal and sentinel.http.token) share a token"
            )
        return self

    def builtin_settings(self, name: str) -> dict[str, Any]:
        extra = self.model_extra or {}
        section = extra.get(name, {})
        return section if isinstance(section, dict) else {}


class Config(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    mcp_servers: dict[str, ServerSpec] = Field(default_factory=dict, alias="mcpServers")
    sentinel: SentinelSettings = Field(default_factory=SentinelSettings)
    source: str = Field("<embedded default>", exclude=True)
    base_dir: str = Field(".", exclude=True)
    warnings: list[str] = Field(default_factory=list, exclude=True)  # keys of other hosts' shapes, ignored
    # each string a variable was expanded in (its place, as "mcpServers.x.args[0]") -> the string as written:
    # what is shown of it (``config show``), never the value, which may be a secret from the environment
    as_written: dict[str, str] = Field(default_factory=dict, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _pick_server_kind(cls, data: Any) -> Any:
        # Claude Desktop's shape has no type tag: "command" means stdio, "url" means remote.
        servers = data.get("mcpServers") if isinstance(data, dict) else None
        if isinstance(servers, dict):
            for name, spec in servers.items():
                if isinstance(spec, dict) and not ("command" in spec or "url" in spec):
                    raise ValueError(f"mcpServers.{name}: needs either 'command' (stdio) or 'url' (HTTP/SSE)")
                if isinstance(spec, dict) and "command" in spec and "url" in spec:
                    raise ValueError(f"mcpServers.{name}: has both 'command' and 'url'; choose one")
        return data

    @model_validator(mode="after")
    def _no_shadowing(self) -> "Config":
        check_prefixes({n: s for n, s in self.mcp_servers.items() if not s.disabled}, self.sentinel.builtins)
        return self

    def namespaces(self) -> dict[str, str]:
        """Each enabled server's and built-in's namespaces (its name, its non-empty prefix) -> that server:
        names ``<namespace>__...`` are its alone (the catalog withholds another server's tool or prompt
        there)."""
        spaces = {b: b for b in self.sentinel.builtins}
        for name, spec in self.mcp_servers.items():
            if not spec.disabled:
                for space in (name, spec.prefix):
                    if space:
                        spaces.setdefault(space, name)
        return spaces

    @property
    def data_dir(self) -> Path:
        d = self.sentinel.data_dir
        return self._resolve(d) if d else default_data_dir()

    @property
    def store_url(self) -> str | None:
        """The shared server store (``postgresql://…``, ``${VAR}`` not yet expanded), or None for SQLite."""
        from sentinel_mcp.storage.location import is_server_url

        s = self.sentinel.store
        return s.strip() if is_server_url(s) else None

    @property
    def store_path(self) -> Path:
        """The SQLite store; with a server store, this replica's own local files live beside it."""
        s = self.sentinel.store
        if self.store_url:
            return self.data_dir / "sentinel.db"
        return self._resolve(s) if s else self.data_dir / "sentinel.db"

    @property
    def audit_anchor_dir(self) -> Path | None:
        """The SQLite audit log's anchor directory (``gateway/audit_anchor.py``), or None when turned off."""
        a = self.sentinel.audit_anchor
        if a is False:
            return None
        if isinstance(a, str):
            return self._resolve(a)
        return default_anchor_dir(self.store_path.parent)

    def rulebase_paths(self) -> list[Path]:
        """Each configured rulebase: ``shipped:rulebases/airline.pl`` names one Sentinel ships; any other path
        is the config's own (absolute, or relative to the config file's folder)."""
        # a shipped: path was checked when the config was read (_paths)
        return [shipped_path(p) or self._resolve(p) for p in self.sentinel.rulebases]

    def _resolve(self, p: str) -> Path:
        """Against one base only: a file missing there is reported missing, never replaced by a shipped one of
        the same name (a deleted, tightened copy of a rulebase would silently give way to the looser one)."""
        return Path(anchored(p, self.base_dir))


def _format_validation_error(source: str, err: ValidationError, where: Lines | None = None) -> str:
    lines = [f"invalid config {source}:"]
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"] if not str(p).startswith(("function-", "tagged-union")))
        # a union of server kinds reports both branches; keep the message short and readable
        loc = re.sub(r"\.(stdio|remote)(?=\.|$)", "", loc)
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key" + unknown_key_hint(Config, e["loc"])
        lines.append(at_line(f"  {loc or '(top level)'}: {msg}", line_of(where, e['loc'])))
    return "\n".join(dict.fromkeys(lines))


# what a server entry may say: every field of the server models (a hand-kept list once dropped the documented
# ``max_call_seconds`` as "not a Sentinel setting")
SERVER_KEYS = frozenset(StdioServer.model_fields) | frozenset(RemoteServer.model_fields)


def parse_config(data: Any, source: str = "<config>", base_dir: str | Path = ".",
                 lines: Lines | None = None) -> Config:
    """``lines``: where each value of the file's text is (``config_lines``), for the errors to name."""
    if not isinstance(data, dict):
        raise ConfigError(f"invalid config {source}: the top level must be a JSON object")
    data = paths_as_text(data)
    no_nul(data, source)
    as_written: dict[str, str] = {}
    given: dict[str, str] = {}  # each value a ${VAR} gave -> that variable
    try:
        inputs = parse_inputs(data.get("inputs"))
        base = Path(base_dir)
        budget = ExpansionBudget()

        def expand(value: str, where: str) -> str:
            expanded = expand_vars(value, where, inputs, base, given, budget)
            if expanded != value:
                as_written[where] = value
            return expanded

        data, warnings = normalize(data, base, SERVER_KEYS, expand)
        data = expand_tree(data, expand)
        anchor_paths(data, base)  # (expand_tree made every container anew: anchored in place)
    except ShapeError as e:
        raise ConfigError(unexpanded(f"invalid config {source}:\n  {e}", given)) from None
    except ConfigError as e:
        raise ConfigError(unexpanded(f"invalid config {source}: {e}", given)) from None
    try:
        return _validated(data, source, base_dir, as_written, warnings, lines)
    except ConfigError as e:  # an error may quote a value a ${VAR} gave: it names the variable instead
        raise ConfigError(unexpanded(said(e), given)) from None


def _validated(data: Any, source: str, base_dir: str | Path, as_written: dict[str, str],
               warnings: list[str], lines: Lines | None = None) -> Config:
    try:
        # strict: a JSON value of the wrong type is an error naming its key, never coerced ("port": true is
        # not port 1, "disabled": "no" not a boolean)
        cfg = Config.model_validate(data, strict=True)
    except ValidationError as err:
        raise ConfigError(_format_validation_error(source, err, lines)) from None
    bad = non_finite(cfg)  # "Infinity" as a text reaches a float field too (the JSON reader refuses numbers)
    if bad is not None:
        raise ConfigError(f"invalid config {source}: {bad}: not a finite number (a time, a size or a count "
                          "must be one)")
    cfg.source = source
    cfg.base_dir = str(base_dir)
    cfg.as_written = as_written
    _check_sections(cfg, lines)
    check_server_names(list(cfg.mcp_servers), source, lines)
    check_principal_names(cfg.sentinel, RESERVED_PRINCIPALS, source, lines)
    cfg.warnings = [f"{source}: {w}" for w in warnings]
    return cfg


def _check_sections(cfg: Config, lines: Lines | None = None) -> None:
    """Every built-in named exists and every ``sentinel.<name>`` section is known and valid, before anything
    starts: a misspelt section or a bad value stops Sentinel here, naming the file, the key and the problem.
    """
    known = sorted(set(SECTION_MODELS) | APPLICATION_SECTIONS)

    def fail(problem: str) -> ConfigError:  # (a section model's problem is Marked: kept, never re-marked)
        if isinstance(problem, Marked):
            return ConfigError(compose("invalid config ", cfg.source, ": ", problem))
        return ConfigError(f"invalid config {cfg.source}: {problem}")

    def at(problem: str, *path: str | int) -> str:  # the problem and the line of sentinel.<path>
        return at_line(problem, line_of(lines, ("sentinel", *path)))

    for i, name in enumerate(cfg.sentinel.builtins):
        if name not in BUILTINS:
            raise fail(at(f"sentinel.builtins[{i}]: unknown built-in {name!r}"
                          f"{_did_you_mean(name, sorted(BUILTINS))}", "builtins", i))
    for name in cfg.sentinel.builtin_timeouts:
        if name not in BUILTINS:
            raise fail(at(f"sentinel.builtin_timeouts.{name}: unknown built-in"
                          f"{_did_you_mean(name, sorted(BUILTINS))}", "builtin_timeouts", name))
    given: dict[str, Any] = {}  # the seeds sections give (SECTION_SEEDS)
    for key, section in (cfg.sentinel.model_extra or {}).items():
        if key not in known:
            why = unknown_sentinel_key(key, known, sorted(SentinelSettings.model_fields))
            raise fail(at(f"sentinel.{key}: {why}", key))
        if not isinstance(section, dict):
            raise fail(at(f"sentinel.{key}: must be an object of settings, not "
                          f"{type(section).__name__}", key))
        model = load_section_model(key) if key in SECTION_MODELS else None
        if model is not None:

            def line(loc: tuple[Any, ...], key: str = key) -> int | None:
                return line_of(lines, ("sentinel", key, *loc))

            try:
                settings = validate_section(model, section, f"sentinel.{key}", line)
            except ConfigError as e:
                raise fail(said(e)) from None
            if key in SECTION_SEEDS:
                given.update(settings.guard_seeds())
    # a seed of a section's names written by hand would pass by its checks (a shown config read again holds
    # the same values: kept)
    for key, names in SECTION_SEEDS.items():
        seeds = cfg.sentinel.seeds
        written = sorted(n for n in names if n in seeds and seeds[n] != given.get(n))
        if written:
            raise fail(at(f"sentinel.seeds.{written[0]}: given by sentinel.{key} (its names are checked "
                          "there), never written as a seed", "seeds", written[0]))
    if given:
        cfg.sentinel.seeds = {**cfg.sentinel.seeds, **given}


def load_config(path: str | Path | None) -> Config:
    """Load a config file; ``None`` gives the embedded default."""
    if path is None:
        return embedded_default()
    p = Path(path).expanduser()
    shared: list[str] = []  # files others could change, kept by the deployer's opt-out (config_file_trust.py)
    text = read_config_text(p)  # first: a FIFO or device is "not a regular file", whoever may write it
    check_trusted("config file", p, shared)
    data = parse_config_json(text, p)
    # relative paths are the folder of the file read (a symbolic link's target), where its rulebases are
    cfg = parse_config(data, source=str(p), base_dir=p.resolve().parent, lines=value_lines(text))
    extra = cfg.sentinel.model_extra or {}
    check_all([(f"sentinel.rulebases[{i}]", f) for i, f in enumerate(cfg.rulebase_paths())]
              + a2a_key_files(extra.get("a2a")) + code_files(extra), shared)
    cfg.warnings = shared + cfg.warnings
    exposed = exposure_warning(p, data)  # secrets written in a file other users can read
    if exposed is not None:
        cfg.warnings.append(exposed)
    return cfg


def embedded_default() -> Config:
    """No config file: the airline example, the simulated device, the shipped rulebases
    (``config_default.py``)."""
    from sentinel_mcp.config_default import embedded_default_data

    return parse_config(embedded_default_data(), source="<embedded default>", base_dir=SHIPPED_ROOT)
