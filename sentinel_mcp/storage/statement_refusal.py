"""A statement's own error on the SQLite seam as its caller hears it: a ``StatementError`` (a
``StorageError``, which every caller fails closed on), never the ``sqlite3`` module's or the codec's
exception, which would pass every ``except StorageError`` (a traceback to a client, a task left half done).

What SQLite cannot hold exactly is refused before it is sent: a lone surrogate (no UTF-8; the module raises
``UnicodeEncodeError``), an int past 64 bits (``OverflowError``), and a NaN, which SQLite would keep as NULL
without a word (a NULL that may read as "never expires" or "no limit"). A NUL character, very long text and
the infinities are kept exactly, as written.
"""

from __future__ import annotations

from typing import Any, Callable

from sentinel_mcp.core.display_text import compose, safe_text
from sentinel_mcp.core.errors import SentinelError
from sentinel_mcp.storage.database import Params, StatementError, StorageError
from sentinel_mcp.storage.row_bytes import RowTooLarge, is_bound_refusal


class NotANumber(SentinelError, ValueError):
    """A NaN in a statement's values (SQLite would store NULL in its place). Raised where the statement runs
    and handed to its caller as the ``StatementError`` it causes (``refused``), as the module's own are."""

    area = "storage"


_NAN_SAID = "a value is not a number (NaN), which SQLite cannot keep: it would hold NULL instead"


def refuse_nan(params: Params, many: bool) -> None:
    """Raise ``NotANumber`` if a value bound (of any row, for ``executemany``) is a float NaN. Plain loops
    over the values: a statement's few values, checked in well under a microsecond each."""
    for row in (params if many else (params,)):
        for value in row:
            if isinstance(value, float) and value != value:  # a subclass too (numpy's float64)
                raise NotANumber(_NAN_SAID)


def refused(name: str, where: Any, e: BaseException, scrub: Callable[[str], str] = str) -> BaseException:
    """``e``, a job's own error (a constraint, a value that cannot be bound, SQL the store refused), as the
    caller hears it: a ``StatementError`` that carries ``e`` as its ``__cause__``; the driver's words may
    quote a client's value, so they are shown safely. A ``StorageError`` is left as it is, as is anything
    that is not an ``Exception`` (a cancellation, an interrupt). ``scrub``: what the store's own words must
    lose (a server store's password in its address)."""
    if isinstance(e, StorageError) or not isinstance(e, Exception):
        return e
    if getattr(e, "sqlite_errorname", None) == "SQLITE_TOOBIG" or is_bound_refusal(e):
        cause, e = e, RowTooLarge()  # the backends' words do not say which bound (``row_bytes.py``)
        e.__cause__ = cause
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    head = scrub(f"{name} store {where}: the statement was refused: ")
    err = StatementError(compose(head, safe_text(scrub(first), 300)))
    err.__cause__ = e
    return err
