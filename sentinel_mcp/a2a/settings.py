"""The ``sentinel.a2a`` config section."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic_core import InitErrorDetails
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from sentinel_mcp.core.presentable_token import RULE as TOKEN_RULE, presentable
from sentinel_mcp.a2a.card_signature import CardKeys, folded_name, load_key
from sentinel_mcp.a2a.key_files import SharedKeyFile
from sentinel_mcp.a2a.bearer_token import token_problem
from sentinel_mcp.a2a.config_urls import (listed_name_clash, listed_url, orchestrator_url,
                                          token_spelling_problem)
from sentinel_mcp.a2a.listed_peers import ListedPeers
from sentinel_mcp.a2a.peer_networks import IPNetwork, default_networks, parse_networks
from sentinel_mcp.config import PRINCIPAL_NAME, RESERVED_PRINCIPALS, ConfigError
from sentinel_mcp.core.display_text import Marked, safe_text
from sentinel_mcp.core.settings import section_problems
from sentinel_mcp.core.look_alike_names import looks_alike, name_flaw
from sentinel_mcp.tls.settings import ClientTLS


def _peer_name(name: str) -> str:
    flaw = name_flaw(name) if name else "it is empty"
    if flaw is not None:  # such a name is refused as a peer's: its pin or listing could never be used
        raise ValueError(Marked(f"{safe_text(name, 100)!r} is not a name a peer is taken by: "
                                f"{safe_text(flaw)}"))
    return name


# a key naming a peer (``peer_keys``, ``bridge_targets``) and a URL naming an endpoint (``config_urls``): each
# checked on its own, so a problem is reported at its own key (``sentinel.a2a.bridge_targets.travel``)
PeerName = Annotated[str, AfterValidator(_peer_name)]
EndpointURL = Annotated[str, AfterValidator(listed_url)]
OrchestratorURL = Annotated[str, AfterValidator(orchestrator_url)]  # (may carry its credentials)


def _problem_at(model: str, loc: tuple[str, ...], value: Any, why: str) -> ValidationError:
    """A value error at ``loc`` whose message keeps its marks (``core.settings.section_problems``)."""
    return ValidationError.from_exception_data(model, [InitErrorDetails(
        type="value_error", loc=loc, input=value, ctx={"error": ValueError(why)})])


class A2ASettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    name: str = Field("Sentinel", min_length=1, max_length=63)  # also the mDNS instance name (<= 63 bytes)
    description: str = (
        "Sentinel: a governed MCP gateway taking part in agent systems. Device sensors and "
        "tools, every call checked by a Prolog guard and audited."
    )
    version: str = "0.1.0"
    # Auth: a bearer token and/or API keys (X-API-Key). The identity of a caller is the key's name.
    token: str | None = None
    token_identity: str = Field("bearer", min_length=1)
    api_keys: dict[str, str] = Field(default_factory=dict)  # identity -> key
    # mDNS
    advertise: bool = False
    # a peer announced over mDNS with plaintext (tls=0) on a loopback address: refused unless this is on. The
    # announcement's addresses are whatever its sender says, so any host on the link could otherwise make
    # Sentinel send GETs to this machine's own local services
    allow_loopback_plaintext: bool = False
    interfaces: list[str] = Field(default_factory=lambda: ["127.0.0.1"])
    # the networks an mDNS announcement may point a card fetch at (CIDRs); None: the subnets of ``interfaces``
    # (the local link; loopback only when it is browsed). An announcement's addresses are its sender's word
    # (a2a/peer_networks.py)
    peer_networks: list[str] | None = None
    # agent card signatures (a2a/card_signature.py): a peer's name (card name or mDNS instance) -> the public
    # key (PEM text or file) its card must be signed by; and keys whose signature vouches for any card
    peer_keys: dict[PeerName, str] = Field(default_factory=dict)
    trusted_keys: list[str] = Field(default_factory=list)
    # seconds: a peer's card whose vouching signature says it was signed (``iat``) longer ago is refused (an
    # old signed card served again from a departed peer's address); None: no bound (card_signature.py)
    card_max_age: float | None = Field(None, gt=0, le=10 * 365 * 86400)
    # this agent's own card is signed with this private key (PEM file, unencrypted) when set
    # (a2a/card_signer.py)
    card_signing_key: str | None = None
    # seconds its signature holds (``exp``, beside ``iat``): it is made anew once half of it has passed, so
    # a peer's card_max_age of at least half of it takes every card served (a2a/card_signer.py)
    card_signature_lifetime: int = Field(3600, ge=60, le=366 * 86400, strict=True)
    # Deprecated: TLS is sentinel.http.tls now (these still switch the whole front to HTTPS, with a warning)
    tls_cert: str | None = None
    tls_key: str | None = None
    peer_ca_file: str | None = None  # deprecated: peer_tls.ca
    # How peers are verified (their CA, pins) and the client certificate Sentinel shows them. A peer found
    # over mDNS counts only if its certificate checks out (plaintext only on a loopback address).
    peer_tls: ClientTLS | None = None
    public_url: EndpointURL | None = None  # base URL to put in the card; default: the URL the caller used
    # the orchestrator's JSON-RPC endpoint; None: none configured
    orchestrator_url: OrchestratorURL | None = None
    # with no orchestrator_url: take a peer found over mDNS whose verified card declares the role (a skill
    # tagged "orchestrator")
    orchestrator_discover: bool = False
    # the principal the orchestrator authenticates as when it calls Sentinel: only its task offers are
    # sub-tasks
    # (run locally, never offered back); anyone else's intent is offered to the orchestrator first
    orchestrator_principal: str | None = None
    orchestrator_timeout: float = Field(30.0, gt=0, le=600)  # an offer not settled by then runs locally
    # agents a person's chat (chat_open with a target) may be bridged to: name -> JSON-RPC endpoint; verified
    # mDNS peers count too. Sentinel only hosts the channel: it relays both ways and acts on nothing relayed
    bridge_targets: dict[PeerName, EndpointURL] = Field(default_factory=dict)
    # tasks: kept in memory, and in SQLite when a path is given (relative paths: under the data dir);
    # the gateway's HTTP server defaults it to its instance's own journal
    # (<data_dir>/instances/<id>/a2a-tasks.db,
    # taking over those of ended instances), "" turns persistence off
    task_db: str | None = None
    # replicas on one PostgreSQL (sentinel.store): a running task's lease, renewed by its replica; a task
    # whose
    # lease lapsed (its replica died) is ended FAILED with the reason by another replica (a2a/task_lease.py)
    task_lease_seconds: float = Field(30.0, gt=0, le=3600)
    task_lease_renew_seconds: float = Field(10.0, gt=0, le=3600)
    # limits
    max_tasks: int = Field(1000, ge=1, le=1_000_000)
    # unfinished tasks one caller may hold at once (its share of max_tasks, so one peer cannot lock the
    # others out); None: max_tasks // 10 (at least 1)
    max_open_per_caller: int | None = Field(None, ge=1, le=1_000_000)
    # a task waiting for input (INPUT_REQUIRED, AUTH_REQUIRED) with no answer after this long ends FAILED
    # ("no answer in time"); as the console's question_ttl by default (600 s)
    input_wait_seconds: float = Field(600.0, gt=0, le=86400)
    max_frame_bytes: int = Field(1 << 20, ge=1024, le=1 << 30)
    # what one caller's tasks (their messages, results) may hold in the task store, in bytes of JSON; past it
    # its own oldest finished tasks make room, and with none finished a new task is refused. None: 16 frames
    max_task_bytes_per_caller: int | None = Field(None, ge=1, le=1 << 36)
    max_concurrent_per_socket: int = Field(8, ge=1, le=1024)
    # open streams (SSE responses of SendStreamingMessage/SubscribeToTask, WebSocket connections), counted
    # together: one caller's, so one peer cannot take every connection, and all callers' (a2a/stream_slots.py)
    max_streams_per_caller: int = Field(32, ge=1, le=100_000)
    max_streams: int = Field(1000, ge=1, le=100_000)
    # Who answered a HumanAssistRequest relayed by a peer cannot be checked: "agent" by default, so
    # rules that demand a user's own confirmation are not satisfied by a remote agent.
    answers_provenance: Literal["agent", "user"] = "agent"
    # peer URL (a listed one, its origin, the orchestrator's) -> bearer token for a2a_send
    peer_tokens: dict[EndpointURL, str] = Field(default_factory=dict)
    # a2a_send and bridged chats refuse a peer whose card no pinned or trusted key verified (instead of asking
    # the user to confirm sending to it: rulebases/a2a.pl)
    require_verified_peers: bool = False
    discovery_timeout: float = Field(3.0, gt=0, le=60)
    chat_max_turns: int = Field(20, ge=1, le=10_000)
    # the bytes one caller's chat turns may hold over all its channels and connections (oldest go first)
    chat_bytes_per_caller: int = Field(2 * 1024 * 1024, ge=16 * 1024, le=1 << 30)
    chat_bytes_total: int = Field(64 * 1024 * 1024, ge=16 * 1024, le=1 << 36)  # every caller's together

    @field_validator("interfaces")
    @classmethod
    def _interfaces(cls, v: list[str]) -> list[str]:
        for address in v:  # the mDNS library takes addresses only ("eth0" failed when browsing began)
            try:
                ipaddress.ip_address(address)
            except ValueError:
                raise ValueError(f"{address!r} is not an IP address (name an interface by its address)"
                                 ) from None
        return v

    @field_validator("peer_networks")
    @classmethod
    def _networks(cls, v: list[str] | None) -> list[str] | None:
        if v is not None:
            parse_networks(v)
        return v

    @field_validator("name")
    @classmethod
    def _own_name(cls, v: str) -> str:
        flaw = name_flaw(v)
        if flaw is not None:  # this agent's card and mDNS name must read as themselves, as a peer's must
            raise ValueError(Marked(f"{safe_text(v, 100)!r} cannot be this agent's name: {safe_text(flaw)}"))
        return v

    @field_validator("peer_keys", "trusted_keys")
    @classmethod
    def _card_keys(cls, v: Any) -> Any:
        for key in v.values() if isinstance(v, dict) else v:
            try:
                load_key(key)
            except SharedKeyFile:  # the loader refuses it, naming the setting (config_file_trust.py)
                pass
            except (OSError, ValueError, TypeError) as e:
                raise ValueError(f"not a public key (PEM text or file, or sha256:<hex>): {str(e)[:100]}"
                                 ) from None
        return v

    @field_validator("card_signing_key")
    @classmethod
    def _signing_key(cls, v: str | None) -> str | None:
        if v is not None:
            from sentinel_mcp.a2a.card_signer import CardSigner

            try:
                CardSigner(v)
            except SharedKeyFile:  # as a peer key's
                pass
            except (OSError, ValueError, TypeError) as e:
                raise ValueError(f"not a usable PEM private key: {str(e)[:100]}") from None
        return v

    @field_validator("orchestrator_principal")
    @classmethod
    def _orchestrator_principal(cls, v: str | None) -> str | None:
        # the orchestrator is an agent wherever it signs in (``http_auth.a2a_peer_names``): the owner (or
        # Sentinel itself, or anonymous) named here would be an orchestrator answering for the user
        return _principal_name(v) if v is not None else None

    @field_validator("api_keys")
    @classmethod
    def _keys(cls, v: dict[str, str]) -> dict[str, str]:
        for name, key in v.items():
            _principal_name(name)
            if len(key) < 8:
                raise ValueError(f"api key of {name!r} is shorter than 8 characters")
            if "${" in key:
                raise ValueError(f"api key of {name!r} still contains '${{' after expansion")
            if not presentable(key):
                raise ValueError(f"api key of {name!r} {TOKEN_RULE}")
        return v

    @field_validator("token_identity")
    @classmethod
    def _identity(cls, v: str) -> str:
        return _principal_name(v)

    @field_validator("token")
    @classmethod
    def _token(cls, v: str | None) -> str | None:
        if v is not None and len(v) < 8:
            raise ValueError("token is shorter than 8 characters")
        if v is not None and "${" in v:
            raise ValueError("token still contains '${' after expansion; set the variable")
        if v is not None and not presentable(v):
            raise ValueError(f"token {TOKEN_RULE}")
        return v

    @model_validator(mode="after")
    def _own_name_apart(self) -> A2ASettings:
        """This agent's name is neither a configured peer's name nor a look-alike of one: a person, or a peer
        pinning that name, would take this agent for the other (reported at ``name``, the key to change)."""
        for where, names in (("peer_keys", self.peer_keys), ("bridge_targets", self.bridge_targets)):
            for peer in names:
                if folded_name(peer) == folded_name(self.name):
                    problem = Marked(f"is the name of the peer {safe_text(peer, 100)!r} in "
                                     f"sentinel.a2a.{where}")
                elif looks_alike(peer, self.name):
                    problem = Marked(f"reads as the peer {safe_text(peer, 100)!r} in sentinel.a2a.{where} "
                                     "but is not that name (a look-alike)")
                else:
                    continue
                raise _problem_at(type(self).__name__, ("name",), self.name, Marked(
                    f"{safe_text(self.name, 100)!r} cannot be this agent's name: it {problem}"))
        return self

    @model_validator(mode="after")
    def _endpoints_apart(self) -> A2ASettings:
        """One listed name per endpoint (and per name as read), no pin that only reads as a listed name, and
        each token keyed as it is looked up: reported at the key to change."""
        clash = listed_name_clash(self.bridge_targets)
        if clash is not None:
            name, why = clash
            raise _problem_at(type(self).__name__, ("bridge_targets", name), self.bridge_targets[name], why)
        for pinned in self.peer_keys:  # (folded alike is one name: pinned in any case, it pins that peer)
            listed = next((n for n in self.bridge_targets if folded_name(n) != folded_name(pinned)
                           and looks_alike(n, pinned)), None)
            if listed is not None:
                raise _problem_at(type(self).__name__, ("peer_keys", pinned), pinned, Marked(
                    f"{safe_text(pinned, 100)!r} reads as the listed peer {safe_text(listed, 100)!r} "
                    "(sentinel.a2a.bridge_targets) but is not that name: that peer's own card would be "
                    "refused as imitating this pin; pin it by its listed name"))
        for key in self.peer_tokens:
            spelling = token_spelling_problem(key, self.bridge_targets, self.orchestrator_url)
            if spelling is not None:
                raise _problem_at(type(self).__name__, ("peer_tokens", key), key, spelling)
        return self

    @model_validator(mode="after")
    def _tokens_sendable(self) -> A2ASettings:
        """Each token is one a header can carry (``bearer_token``); the error names its key, never the
        token (nor is it the error's input)."""
        for key, token in self.peer_tokens.items():
            problem = token_problem(token)
            if problem is not None:
                raise _problem_at(type(self).__name__, ("peer_tokens", key), key, "the token " + problem)
        return self

    @model_validator(mode="after")
    def _tls_pair(self) -> A2ASettings:
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("tls_cert and tls_key go together")
        for p in (self.tls_cert, self.tls_key, self.peer_ca_file):
            if p and not Path(p).expanduser().is_file():
                raise ValueError(f"TLS file not found: {p}")
        return self

    _front_tls: bool = PrivateAttr(default=False)  # the HTTP front serves TLS (sentinel.http.tls)
    _client_certificates: str = PrivateAttr(default="off")  # ... and asks for client certificates

    @property
    def tls(self) -> bool:
        """Whether this agent is reached over TLS (the card and the TXT record say https/wss)."""
        return bool(self.tls_cert) or self._front_tls

    def served_over_tls(self, on: bool = True, client_certificates: str = "off") -> "A2ASettings":
        """A copy for a front that serves TLS; ``client_certificates``: its mode ("optional", "required",
        "off"),
        declared in the card as the mutual TLS scheme."""
        copy = self.model_copy()
        copy._front_tls = on
        copy._client_certificates = client_certificates if on else "off"
        return copy

    @property
    def client_certificates(self) -> str:
        return self._client_certificates

    @property
    def peer_client_tls(self) -> ClientTLS | None:
        """``peer_tls``, with the deprecated ``peer_ca_file`` as its CA."""
        if self.peer_tls is not None:
            if self.peer_ca_file and not self.peer_tls.ca:
                return self.peer_tls.model_copy(update={"ca": self.peer_ca_file})
            return self.peer_tls
        return ClientTLS(ca=self.peer_ca_file) if self.peer_ca_file else None

    @property
    def card_networks(self) -> tuple[IPNetwork, ...]:
        """Where a card announced over mDNS may be fetched from (``peer_networks``, or loopback and link)."""
        if self.peer_networks is not None:
            return parse_networks(self.peer_networks)
        return default_networks(self.interfaces)

    @property
    def card_keys(self) -> CardKeys:
        """The keys peers' cards are checked against (loaded when asked: the files may have changed)."""
        return CardKeys.load(self.peer_keys, self.trusted_keys, self.card_max_age)

    @property
    def listed_peers(self) -> ListedPeers:
        """The peers listed by name and URL (``bridge_targets``): their names are theirs alone over mDNS."""
        return ListedPeers(dict(self.bridge_targets))

    @property
    def open_per_caller(self) -> int:
        """The unfinished tasks one caller may hold (``max_open_per_caller``, or a tenth of ``max_tasks``)."""
        return min(self.max_tasks, self.max_open_per_caller or max(1, self.max_tasks // 10))

    @property
    def task_bytes_per_caller(self) -> int:
        """``max_task_bytes_per_caller``, at least two frames (a caller can always send one message)."""
        return max(self.max_task_bytes_per_caller or 16 * self.max_frame_bytes, 2 * self.max_frame_bytes)

    @property
    def auth_required(self) -> bool:
        return bool(self.token or self.api_keys)

    @classmethod
    def from_section(cls, section: dict[str, Any] | None) -> A2ASettings:
        """Validate the config's ``sentinel.a2a`` dict; errors name the key (ConfigError)."""
        try:
            return cls.model_validate(section or {})
        except ValidationError as e:  # (the first problem, its marks kept, as the config's load says it)
            raise ConfigError(Marked(section_problems(e, "sentinel.a2a", cls)[0])) from None


def _principal_name(name: str) -> str:
    """A peer signs in as a principal: its name is one (the gateway checks the same, ``http_auth``), never a
    reserved one (``owner``), never one with a newline or a path in it."""
    import re

    if not re.fullmatch(PRINCIPAL_NAME, name) or name in RESERVED_PRINCIPALS:
        raise ValueError(
            f"{name!r} cannot name a principal (letters, digits, '_', '.', '-'; "
            f"not {', '.join(RESERVED_PRINCIPALS)})"
        )
    return name
