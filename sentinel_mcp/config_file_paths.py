"""Every path a config names is absolute, ``~``-relative or relative to the config file's folder: one rule,
and one table of where the paths are.

Why: a path resolved against the process's working directory names another file, or none, when the same
config is started from somewhere else (a service manager's ``/``, a shell in another project), and a file
planted under the same relative name where Sentinel is started from is read instead: a key that signs this
agent's card or that peers are trusted by, a CA, a model. The paths are anchored in the config's data as it is
read (after its variables are expanded, before any section reads a file), so whoever validates a section later
(``A2ASettings.from_section``) sees the absolute path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

# where a path is in the config's data: keys, "*" for every key of an object, "[]" for every item of a list
_TLS_FILES = ("cert", "key", "ca", "crl")
PATHS: tuple[tuple[str, ...], ...] = (
    ("mcpServers", "*", "cwd"),
    *(("mcpServers", "*", "tls", name) for name in ("cert", "key", "ca")),
    *(("sentinel", "http", "tls", name) for name in _TLS_FILES),
    ("sentinel", "a2a", "card_signing_key"),
    ("sentinel", "a2a", "peer_keys", "*"),
    ("sentinel", "a2a", "trusted_keys", "[]"),
    ("sentinel", "a2a", "tls_cert"),
    ("sentinel", "a2a", "tls_key"),
    ("sentinel", "a2a", "peer_ca_file"),
    *(("sentinel", "a2a", "peer_tls", name) for name in ("cert", "key", "ca")),
    ("sentinel", "llm", "model"),
    ("sentinel", "swarm", "local", "model_path"),
    ("sentinel", "agent", "local", "model_path"),
    ("sentinel", "search", "embedding_model"),
    ("sentinel", "sensors", "termux_bin_dir"),
)
# a public key given as PEM text or ``sha256:<hex>`` (``a2a/card_signature.load_key``), else a file's path
KEY_OR_PATH = frozenset({("sentinel", "a2a", "peer_keys", "*"), ("sentinel", "a2a", "trusted_keys", "[]")})

# settings whose names say file, key or model that are not anchored here, and why
OTHER_RULES: dict[tuple[str, ...], str] = {
    **{("sentinel", name): "a folder path resolved where it is read, by this rule (Config._resolve)"
       for name in ("rulebases", "data_dir", "store", "audit_anchor")},  # (store: or a server's URL)
    ("mcpServers", "*", "envFile"): "read as the config is (config_shapes.read_env_file), by this rule",
    ("sentinel", "a2a", "task_db"): "relative to the data dir, as documented (a2a/app.task_journal)",
    ("sentinel", "a2a", "api_keys"): "secret texts",
    ("sentinel", "cluster", "seal_key"): "a secret text",
    **{("sentinel", area, "openai", name): "an environment variable's name, or a model's at the server"
       for area in ("agent", "swarm") for name in ("api_key_env", "model", "model_env")},
    ("sentinel", "device", "risk_model_role"): "a choice",
    ("sentinel", "llm", "model_probe_seconds"): "a time",
    ("sentinel", "swarm", "breakers", "model_errors"): "a count",
    ("sentinel", "swarm", "limits", "max_file_bytes"): "a size",
    ("sentinel", "swarm", "limits", "max_model_calls"): "a count",
}


def anchored(path: str, base_dir: str | Path) -> str:
    """``path`` as the config means it: absolute, ``~``, or relative to ``base_dir`` (the config's folder)."""
    p = Path(os.path.expanduser(path))
    return str(p if p.is_absolute() else (Path(base_dir) / p).resolve())


def anchor_paths(data: Any, base_dir: str | Path) -> None:
    """Each path of ``PATHS`` in ``data`` (a config's data, its containers its own) anchored in place; a value
    of the wrong type is left for the models to refuse."""
    for where in PATHS:
        _anchor_at(data, where, base_dir, where in KEY_OR_PATH)


def _anchor_at(node: Any, steps: tuple[str, ...], base_dir: str | Path, key_or_path: bool) -> None:
    step, rest = steps[0], steps[1:]
    if step == "[]":
        slots: list[Any] = list(range(len(node))) if isinstance(node, list) else []
    elif not isinstance(node, dict):
        return
    else:
        slots = list(node) if step == "*" else [step] if step in node else []
    for slot in slots:
        if rest:
            _anchor_at(node[slot], rest, base_dir, key_or_path)
        elif isinstance(node[slot], str) and node[slot] and not (key_or_path and _key_text(node[slot])):
            node[slot] = anchored(node[slot], base_dir)


def _key_text(value: str) -> bool:
    return "-----BEGIN" in value or value.strip().lower().startswith("sha256:")
