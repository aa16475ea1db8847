"""Which extra of the distribution brings a missing optional module: a wheel installed without it (``pip
install sentinel-mcp-gateway``) runs, and a built-in that needs one says what to install."""

from __future__ import annotations

EXTRA_OF_MODULE = {
    "adbutils": "device",
    "llama_cpp": "llm",
    "llguidance": "llm",
    "psycopg": "postgres",
    "psycopg_pool": "postgres",
    "opentelemetry": "otel",
}


def install_hint(error: BaseException) -> str:
    """`` (install the X extra: pip install ...)`` for a ModuleNotFoundError of an optional module, else
    ``""``."""
    name = getattr(error, "name", None) if isinstance(error, ModuleNotFoundError) else None
    extra = EXTRA_OF_MODULE.get(name.partition(".")[0]) if isinstance(name, str) else None
    if extra is None:
        return ""
    return f" (install the {extra} extra: pip install 'sentinel-mcp-gateway[{extra}]')"
