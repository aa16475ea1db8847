"""What Sentinel's own tools search: the policy documents of the active rulebase, and each principal's memory.

Policy documents are indexed by paragraph (``paragraphs.py``) when the rulebase that declares them loads or
changes; a hit is a cited passage (document, heading path, line range). Memories (seed 001's agent memory)
belong to one principal each (a namespace of the same index), expire (a default and a maximum lifetime), are
capped in size and number, and pass through the audit's redactor (``gateway/redactor.py``: card numbers,
one-time codes, bearer tokens, JWTs, ``password=`` pairs) before they are stored.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from sentinel_mcp.core.redactor import scrub_text
from sentinel_mcp.core.stored_text import lone_surrogate, surrogates_replaced
from sentinel_mcp.core.stored_text import stored as kept_text
from sentinel_mcp.search.paragraphs import Paragraph
from sentinel_mcp.search.settings import SearchSettings
from sentinel_mcp.core.errors import SearchError
from sentinel_mcp.storage.location import is_server_url

if TYPE_CHECKING:  # numpy comes with them: imported when the index first opens, not at start-up
    from sentinel_mcp.search.embedding import Embedder
    from sentinel_mcp.search.passage_index import PassageIndex

log = logging.getLogger(__name__)
POLICY = "policy"
MAX_TAGS, MAX_TAG_CHARS = 16, 64


class MemoryRefused(SearchError, ValueError):
    """A memory that cannot be stored (empty, too long, bad tags or lifetime)."""


def _refuse_surrogates(text: str, tags: list[str]) -> None:
    """A memory is kept as given, so text SQLite cannot hold is refused, naming the character and where it is.
    Every other code point (private use, non-characters, U+10F7FF, ...) is valid Unicode and kept exactly."""
    for where, value in [("text", text), *((f"tag {i}", t) for i, t in enumerate(tags, 1))]:
        found = lone_surrogate(value)
        if found is not None:
            at, ch = found
            raise MemoryRefused(
                f"a memory's {where} must be valid Unicode: a lone surrogate U+{ord(ch):04X} at "
                f"character {at + 1} (JSON can carry one, but it is half of a character)"
            )


class SearchService:
    def __init__(
        self,
        path: str | Path,
        settings: SearchSettings | None = None,
        embedder: Embedder | None = None,
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.settings = settings or SearchSettings()
        # a postgresql:// URL: the index replicas share (``shared_index.py``); else the embedded SQLite file
        self.path: str | Path = path if is_server_url(path) else Path(path)
        self._embedder = embedder
        self.redact = redact or scrub_text  # the audit's redactor: what a memory may keep
        self.index: PassageIndex | None = None
        # what a server store's rows are signed with (the cluster's ``SharedStore.key("passages")``; None:
        # this process's own); set before ``open``
        self.key: bytes | None = None
        self.problem: str | None = None  # why the configured embedding model is not used

    async def open(self) -> "SearchService":
        if self.index is None:
            from sentinel_mcp.search.embedding import HashingEmbedder, embedder_for
            from sentinel_mcp.search.passage_index import PassageIndex

            embedder = self._embedder
            if embedder is None:
                try:
                    embedder = embedder_for(
                        self.settings.embedding_model,
                        dim=self.settings.hashing_dim,
                        threads=self.settings.embedding_threads,
                    )
                except Exception as e:  # noqa: BLE001 - a bad model path must not stop the gateway
                    self.problem = f"embedding model not loaded ({e}); using hashing vectors"
                    log.error("sentinel.search: %s", self.problem)
                    embedder = HashingEmbedder(self.settings.hashing_dim)
            if isinstance(self.path, str):
                from sentinel_mcp.search.shared_index import SharedPassageIndex

                self.index = await SharedPassageIndex(self.path, embedder, self.key).open()
            else:
                self.index = await PassageIndex(self.path, embedder).open()
        return self

    async def close(self) -> None:
        if self.index is not None:
            await self.index.close()
            self.index = None

    async def _idx(self) -> PassageIndex:
        return (await self.open()).index  # type: ignore[return-value]

    # ---------------------------------------------------------------- policy documents
    async def index_documents(
        self, paragraphs: dict[str, list[Paragraph]], texts: dict[str, str]
    ) -> list[str]:
        """Index each document's paragraphs (unchanged documents are skipped); returns those indexed now."""
        idx = await self._idx()
        done = []
        for name, paras in paragraphs.items():
            # whole: a document changed to a text with the old one's digest would keep its old passages
            digest = hashlib.sha256(texts.get(name, "").encode("utf-8", "surrogatepass")).hexdigest()
            passages = [
                _passage(
                    text=p.text,
                    source=name,
                    heading=p.heading_text,
                    line_start=p.line_start,
                    line_end=p.line_end,
                )
                for p in paras
            ]
            if await idx.replace_source(POLICY, name, passages, digest):
                done.append(name)
        return done

    async def policy_search(self, query: str, k: int = 3) -> list[dict[str, Any]]:
        k = max(1, min(int(k), self.settings.max_results))
        hits = await (await self._idx()).search(POLICY, query, k)
        return [
            {
                "document": h.source,
                "heading": h.heading,
                "lines": [h.line_start, h.line_end],
                "text": h.text,
                "score": round(h.score, 5),
                "found_by": h.by,
            }
            for h in hits
        ]

    # ---------------------------------------------------------------- memory
    @staticmethod
    def _namespace(principal: str) -> str:
        if not principal:  # every caller has a principal; a memory of nobody's would be everybody's
            raise MemoryRefused("no principal: memories belong to the caller Sentinel established")
        # any principal name is a key SQLite can hold, distinct from others
        return f"memory:{kept_text(principal)}"

    async def memory_store(
        self,
        principal: str,
        text: str,
        tags: list[str] | None = None,
        ttl: float | None = None,
        *,
        now: float,
    ) -> dict[str, Any]:
        s = self.settings
        text = (text or "").strip()
        if not text:
            raise MemoryRefused("a memory needs some text")
        if len(text) > s.memory_max_chars:
            raise MemoryRefused(
                f"a memory is at most {s.memory_max_chars} characters (this one has {len(text)})"
            )
        tags = [str(t).strip() for t in (tags or []) if str(t).strip()]
        _refuse_surrogates(text, tags)
        if len(tags) > MAX_TAGS or any(len(t) > MAX_TAG_CHARS for t in tags):
            raise MemoryRefused(f"at most {MAX_TAGS} tags of at most {MAX_TAG_CHARS} characters each")
        if ttl is not None and not (0 < ttl <= s.memory_max_ttl):
            raise MemoryRefused(f"the lifetime must be between 1 second and {s.memory_max_ttl:.0f} seconds")
        stored, stored_tags = self.redact(text), [self.redact(t) for t in tags]
        expires = now + (ttl if ttl is not None else s.memory_ttl)
        await (await self._idx()).add(
            self._namespace(principal),
            _passage(text=stored, source="memory", tags=stored_tags, expires_at=expires),
            keep=s.memory_max_items,
        )
        return {
            "stored": stored,
            "tags": stored_tags,
            "expires_at": expires,
            "redacted": stored != text or stored_tags != tags,
        }

    async def memory_search(self, principal: str, query: str, k: int = 5) -> list[dict[str, Any]]:
        k = max(1, min(int(k), self.settings.max_results))
        # a lone surrogate matches nothing stored (none is kept); the rest of the query still counts
        hits = await (await self._idx()).search(self._namespace(principal), surrogates_replaced(query), k)
        return [h.as_dict() for h in hits]

    async def memory_recent(self, principal: str, n: int = 10) -> list[dict[str, Any]]:
        n = max(1, min(int(n), self.settings.max_results))
        return [h.as_dict() for h in await (await self._idx()).recent(self._namespace(principal), n)]


def _passage(**fields: Any) -> Any:
    from sentinel_mcp.search.passage_index import NewPassage

    return NewPassage(**fields)
