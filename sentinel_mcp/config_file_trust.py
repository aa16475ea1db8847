"""The files a config makes Sentinel trust (the config itself, its rulebases, each ``envFile``, the A2A key
files) are refused when another account could change them, as OpenSSH's StrictModes refuses an
``authorized_keys``: a rulebase any local user may write lets that user rewrite the policy; a config, the
servers Sentinel starts and the principals it admits; an ``envFile``, an upstream's environment; a peer key,
whom the A2A front trusts.

The rule is the TLS files' (``tls/file_modes.replaceable_by_others``): the file, the directory it is in and
every directory up to ``/`` (on the path of the link given and of the file it names) are owned by root or by
the gateway's own account, and no group but the account's own and no other account may write them (a
directory with the sticky bit, as ``/tmp``, excepted for writes).

Containers: a bind-mounted config is often owned by the host's account, not the container's. The deployer,
not the files, may say so: ``SENTINEL_SHARED_FILES=trust`` in the environment (a file's writer cannot set it)
keeps such files in use, each named as a problem on ``/healthz`` and by ``config show``, never silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sentinel_mcp.core.display_text import compose
from sentinel_mcp.core.errors import ConfigError
from sentinel_mcp.core.trusted_code import OPT_OUT, OPT_OUT_VALUE, opted_out
from sentinel_mcp.tls.file_modes import replaceable_by_others

__all__ = ["OPT_OUT", "OPT_OUT_VALUE", "SharedFile", "a2a_key_files", "check_all", "check_trusted",
           "opted_out"]


class SharedFile(ConfigError):
    """A file the config makes Sentinel trust that another account could change: refused."""


def check_trusted(what: str, path: Path, warnings: list[str] | None) -> None:
    """Raise ``SharedFile`` naming ``path`` and the fix when another account could change it; with the
    opt-out, append that as a warning instead (``warnings`` None: refuse whatever the opt-out says)."""
    why = replaceable_by_others(path)
    if why is None:
        return
    if warnings is not None and opted_out():
        warnings.append(str(compose(what, " ", str(path), " is in use although another account could "
                                    "change it (", OPT_OUT, "=", OPT_OUT_VALUE, "): ", why)))
        return
    raise SharedFile(compose(
        what, " ", str(path), " is refused: another account could change it, and with it what Sentinel "
        "trusts: ", why, " (or, for a file you cannot own, such as a container's bind mount, start with ",
        OPT_OUT, "=", OPT_OUT_VALUE, ": each such file is then named on /healthz)"))


def check_all(files: Iterable[tuple[str, Path]], warnings: list[str]) -> None:
    for what, path in files:
        check_trusted(what, path, warnings)


def a2a_key_files(section: Any) -> list[tuple[str, Path]]:
    """The key files of ``sentinel.a2a`` (already anchored): the card's signing key, and each peer or
    trusted key given as a path (not as PEM text or ``sha256:<hex>``)."""
    if not isinstance(section, dict):
        return []
    found: list[tuple[str, Path]] = []

    def add(what: str, value: Any) -> None:
        if isinstance(value, str) and value and not value.lstrip().startswith("-----") \
                and not value.startswith("sha256:"):
            found.append((what, Path(value)))

    add("sentinel.a2a.card_signing_key", section.get("card_signing_key"))
    peers = section.get("peer_keys")
    if isinstance(peers, dict):
        for name, value in peers.items():
            add(f"sentinel.a2a.peer_keys.{name}", value)
    trusted = section.get("trusted_keys")
    if isinstance(trusted, list):
        for i, value in enumerate(trusted):
            add(f"sentinel.a2a.trusted_keys[{i}]", value)
    return found


# files that become code: programs run from this folder, model files native code parses (``trusted_code.py``)
CODE_PATHS: tuple[tuple[str, ...], ...] = (
    ("sensors", "termux_bin_dir"),
    ("llm", "model"),
    ("search", "embedding_model"),
    ("swarm", "local", "model_path"),
    ("agent", "local", "model_path"),
)


def code_files(extra: Any) -> list[tuple[str, Path]]:
    """The paths of ``CODE_PATHS`` set in the ``sentinel`` sections (already anchored), as the load checks
    them; each is judged again where it is used, since it may change while Sentinel runs."""
    found: list[tuple[str, Path]] = []
    for steps in CODE_PATHS:
        node = extra
        for step in steps:
            node = node.get(step) if isinstance(node, dict) else None
        if isinstance(node, str) and node:
            found.append(("sentinel." + ".".join(steps), Path(node)))
    return found
