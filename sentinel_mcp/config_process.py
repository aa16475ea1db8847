"""How a stdio upstream is started: its ``command``, ``args``, ``env`` and ``cwd``, checked when the config
loads. Mixed into the stdio server's section (``config.StdioServer``).

Why: what cannot start (an empty command, an environment variable name that is empty or holds ``=``, which no
process's environment can hold, an empty directory) failed at every start of the upstream, far from the line
("ValueError: illegal environment variable name", reconnecting for ever); here it is an error naming the key.
The command is run as given, never through a shell (``gateway/upstream_session.py``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, ValidationInfo, field_validator

_EMPTY = {"command": "is empty: name the program to run",
          "cwd": "is empty: name a directory, or leave cwd out"}


class ProcessSpec(BaseModel):
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None  # relative: to the config file's folder (config._anchor_server_cwd)

    @field_validator("command", "cwd")
    @classmethod
    def _not_empty(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not value.strip():
            raise ValueError(_EMPTY[info.field_name or "command"])
        return value

    @field_validator("env")
    @classmethod
    def _names(cls, env: dict[str, str]) -> dict[str, str]:
        for name in env:
            if not name:
                raise ValueError("a variable's name is empty")
            if "=" in name:
                raise ValueError(f"the variable name {name[:64]!r} holds '=' (no process's environment can "
                                 "hold it: the name ends at the first '=')")
        return env
