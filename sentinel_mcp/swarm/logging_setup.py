"""Daily rotating swarm logs in the data dir, with personal data redacted before anything is written."""

from __future__ import annotations

import logging
import re
from logging.handlers import TimedRotatingFileHandler
from pathlib import Path

from sentinel_mcp.core.display_text import safe_text

MAX_RECORD_CHARS = 16_000  # of one record's message (a debug record quotes 2,000 characters of a reply)
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 [REDACTED]"),
    (re.compile(r"(?i)\b(api[_-]?key|token|secret|password|passwd)(\"?\s*[:=]\s*\"?)[^\s\"',;]{4,}"),
     r"\1\2[REDACTED]"),
    (re.compile(r"\b(?:sk|pk|rk|ghp|gho|xox[abp])[-_][A-Za-z0-9_-]{12,}\b"), "[REDACTED-KEY]"),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), "[REDACTED-KEY]"),
    (re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"), "[REDACTED-EMAIL]"),
]


# phone numbers: an optional +country code, then digit groups; 8-15 digits in all, and not an ISO date
_PHONE = re.compile(
    r"(?<![\w.:/-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,5}(?:[\s.-]\d{2,8}){1,4}(?![\w:/-]|\.\d)"
    r"|(?<![\w.:/-])\+\d{8,15}(?![\w:/-]|\.\d)"
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _phone(m: re.Match[str]) -> str:
    text = m.group(0)
    digits = sum(c.isdigit() for c in text)
    if not 8 <= digits <= 15 or _DATE.fullmatch(text):
        return text
    return "[REDACTED-PHONE]"


def redact(text: str) -> str:
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return _PHONE.sub(_phone, text)


class RedactingFilter(logging.Filter):
    """Rewrites the formatted message so neither the message nor its arguments leak personal data, and so it
    is one line: a message quotes others (a model's words, an endpoint's error page), whose line breaks and
    terminal escapes would write lines that read as records of their own (shown as ``⟨U+XXXX⟩`` instead)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string must not lose the record
            return True
        record.msg = safe_text(redact(message), MAX_RECORD_CHARS)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        elif record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True


_MARK = "_sentinel_swarm_log_dir"


def _handler(path: Path, retention_days: int, level: int, mark: str) -> TimedRotatingFileHandler:
    handler = TimedRotatingFileHandler(
        path, when="midnight", backupCount=retention_days, encoding="utf-8", delay=True
    )
    setattr(handler, _MARK, mark)
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    return handler


def setup_swarm_logging(
    log_dir: Path, retention_days: int = 30, *, debug_retention_days: int | None = None
) -> Path:
    """Attach a midnight-rotating file handler to the ``sentinel.swarm`` logger (once per directory), and a
    debug log with its own (shorter) retention when ``debug_retention_days`` is given."""
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / "swarm.log"
    logger = logging.getLogger("sentinel.swarm")
    marks = {getattr(h, _MARK, None) for h in logger.handlers}
    if str(log_dir) not in marks:
        logger.addHandler(_handler(path, retention_days, logging.INFO, str(log_dir)))
    if debug_retention_days is not None and f"{log_dir}#debug" not in marks:
        logger.addHandler(
            _handler(log_dir / "swarm-debug.log", debug_retention_days, logging.DEBUG, f"{log_dir}#debug")
        )
        # only this logger goes to DEBUG, and its records stop here: the console keeps its own level
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
    elif logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    return path
