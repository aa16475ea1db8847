"""The configuration file (DESIGN §4): Claude Desktop's ``mcpServers`` plus a ``sentinel`` section."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError, field_validator,
                      model_validator)

from sentinel_mcp.paths import RULEBASES_DIR, default_data_dir

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ConfigError(Exception):
    """A config problem a user can fix: says which file, which key and what is wrong."""


def expand_vars(value: str, where: str) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}``; an unset variable without default is an error."""

    def sub(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{where}: environment variable ${{{name}}} is not set")

    return _VAR.sub(sub, value)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ServerCommon(_Strict):
    # "" wraps a server transparently (tools keep their own names); None means "<server>__"
    prefix: str | None = None
    disabled: bool = False
    timeout: float = Field(60.0, gt=0, description="per-call timeout in seconds")
    connect_timeout: float = Field(20.0, gt=0)
    # handshake-era upstreams that ignore server/discover would delay each connect by 10 s
    protocol: Literal["auto", "legacy", "modern"] = "auto"
    # a handshake-era upstream's pushed questions name no call; serialize its calls unless it never asks
    concurrent: bool = False


class StdioServer(ServerCommon):
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None


class RemoteServer(ServerCommon):
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    transport: Literal["streamable-http", "sse"] | None = None  # None: guessed from the URL (/sse -> sse)

    @field_validator("url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return v

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


class HttpSettings(_Strict):
    host: str = "127.0.0.1"
    port: int = Field(8765, ge=0, le=65535)
    token: str | None = None  # bearer token required on /mcp, /sse and A2A when set
    allowed_hosts: list[str] = Field(default_factory=list)  # extra Host headers accepted (DNS rebinding)


class PolicySettings(_Strict):
    default: Literal["fail-safe", "allow", "deny"] = "fail-safe"
    allow: list[str] = Field(default_factory=list)  # glob patterns of catalog names always allowed
    deny: list[str] = Field(default_factory=list)  # glob patterns always denied
    confirm_ttl: float = Field(300.0, gt=0)  # seconds a confirmation stays valid
    guard_timeout: float = Field(10.0, gt=0)
    # Built-ins trusted to confirm their own risky actions (their tools' _meta "sentinel/confirms"): the fail-safe
    # default lets those tools through to the built-in's own risk check instead of asking first. Only names of
    # built-ins Sentinel mounts count; a configured upstream is never trusted this way.
    self_confirming: list[str] = Field(default_factory=lambda: ["device", "agent"])


class SentinelSettings(BaseModel):
    model_config = ConfigDict(extra="allow")  # built-ins read their own sections (llm, device, ...)

    rulebases: list[str] = Field(default_factory=list)
    seeds: dict[str, Any] = Field(default_factory=dict)
    data_dir: str | None = None
    store: str | None = None
    builtins: list[str] = Field(default_factory=list)
    http: HttpSettings = Field(default_factory=HttpSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    max_argument_bytes: int = Field(1_000_000, gt=0)

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

    @property
    def data_dir(self) -> Path:
        d = self.sentinel.data_dir
        return self._resolve(d) if d else default_data_dir()

    @property
    def store_path(self) -> Path:
        s = self.sentinel.store
        return self._resolve(s) if s else self.data_dir / "sentinel.db"

    def rulebase_paths(self) -> list[Path]:
        return [self._resolve(p) for p in self.sentinel.rulebases]

    def _resolve(self, p: str) -> Path:
        path = Path(os.path.expanduser(p))
        if path.is_absolute():
            return path
        # relative paths: next to the config file, else the shipped project files
        candidate = Path(self.base_dir) / path
        if candidate.exists() or not (RULEBASES_DIR.parent / path).exists():
            return candidate.resolve()
        return (RULEBASES_DIR.parent / path).resolve()

    def expanded(self) -> "Config":
        """A copy with ``${VAR}`` expanded in stdio env/args and remote headers/url."""
        servers: dict[str, ServerSpec] = {}
        for name, spec in self.mcp_servers.items():
            if isinstance(spec, StdioServer):
                servers[name] = spec.model_copy(update={
                    "env": {k: expand_vars(v, f"mcpServers.{name}.env.{k}") for k, v in spec.env.items()},
                    "args": [expand_vars(a, f"mcpServers.{name}.args[{i}]") for i, a in enumerate(spec.args)],
                })
            else:
                servers[name] = spec.model_copy(update={
                    "url": expand_vars(spec.url, f"mcpServers.{name}.url"),
                    "headers": {k: expand_vars(v, f"mcpServers.{name}.headers.{k}")
                                for k, v in spec.headers.items()},
                })
        return self.model_copy(update={"mcp_servers": servers})


def _format_validation_error(source: str, err: ValidationError) -> str:
    lines = [f"invalid config {source}:"]
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"] if not str(p).startswith(("function-", "tagged-union")))
        # a union of server kinds reports both branches; keep the message short and readable
        loc = re.sub(r"\.(stdio|remote)(?=\.|$)", "", loc)
        msg = e["msg"].removeprefix("Value error, ")
        lines.append(f"  {loc or '(top level)'}: {msg}")
    return "\n".join(dict.fromkeys(lines))


def parse_config(data: Any, source: str = "<config>", base_dir: str | Path = ".") -> Config:
    if not isinstance(data, dict):
        raise ConfigError(f"invalid config {source}: the top level must be a JSON object")
    try:
        cfg = Config.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_validation_error(source, err)) from None
    cfg.source = source
    cfg.base_dir = str(base_dir)
    try:
        return cfg.expanded()
    except ConfigError as e:
        raise ConfigError(f"invalid config {source}: {e}") from None


def load_config(path: str | Path | None) -> Config:
    """Load a config file; ``None`` gives the embedded default."""
    if path is None:
        return embedded_default()
    p = Path(path).expanduser()
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {p}") from None
    except OSError as e:
        raise ConfigError(f"cannot read config file {p}: {e.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"invalid JSON in {p}, line {e.lineno} column {e.colno}: {e.msg}") from None
    return parse_config(data, source=str(p), base_dir=p.resolve().parent)


def embedded_default() -> Config:
    """No config file: the airline example, the simulated device, the shipped rulebases."""
    import sys

    data = {
        "mcpServers": {
            "airline": {"command": sys.executable, "args": ["-m", "examples.airline"], "protocol": "auto"},
        },
        "sentinel": {
            "rulebases": [str(RULEBASES_DIR / n) for n in ("default.pl", "airline.pl", "device.pl",
                                                            "sensors.pl", "swarm.pl")
                          if (RULEBASES_DIR / n).exists()],
            "seeds": {"current_user": "mia_li_3668", "today": "2024-05-15"},
            "builtins": ["sentinel", "device", "sensors", "llm", "swarm", "a2a", "agent"],
            # RiskRules decide (measured in benchmarks/risk_classifier.py); the shipped 270M model made them worse
            # where it was asked, so it is not asked until a better model is configured ("rules+model")
            "device": {"backend": "simulated", "risk_classifier": "rules"},
            "sensors": {"source": "simulated"},
        },
    }
    return parse_config(data, source="<embedded default>", base_dir=RULEBASES_DIR.parent)
