"""psycopg, imported on first use (a SQLite-only install never needs it), and which of its errors are the
server's or the connection's fault (fail closed, degrade, reconnect) rather than the statement's own."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.storage.database import StorageError

# what binding a client's value may raise before anything is sent (a lone surrogate, an int too wide)
VALUE_ERRORS = (UnicodeError, ValueError, OverflowError)


def psycopg_driver() -> Any:
    try:
        import psycopg
    except ImportError:  # pragma: no cover - depends on the install
        raise StorageError(
            "a postgresql:// store needs the PostgreSQL driver: pip install "
            "'sentinel-mcp-gateway[postgres]' (psycopg 3)"
        ) from None
    return psycopg


def is_fault(e: BaseException) -> bool:
    """The server or the connection is at fault (not the statement): fail closed, degrade, reconnect."""
    psycopg = psycopg_driver()
    if isinstance(e, (psycopg.OperationalError, psycopg.InterfaceError)):
        return not isinstance(e, (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure))
    return isinstance(
        e,
        (
            psycopg.errors.ReadOnlySqlTransaction,
            psycopg.errors.AdminShutdown,
            psycopg.errors.CannotConnectNow,
        ),
    )


def reported_fault(e: BaseException, cause: BaseException | None) -> BaseException:
    """A direct read's fault, or the pool's timeout that sent it there (what the store was waiting for)."""
    return cause if cause is not None and not isinstance(cause, psycopg_driver().Error) else e
