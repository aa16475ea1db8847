"""The chat turns a caller's channels hold, bounded in bytes over all its channels and connections.

A channel keeps its last ``chat_max_turns`` exchanges; a caller may hold 16 channels on each of its
connections (32 streams), so without a bound per caller one peer's words could take about 160 MB of the
gateway's memory. Every turn kept is counted against its caller (``chat_bytes_per_caller``); when a new one
passes the bound, the caller's oldest turns go first, whichever channel holds them. A closed channel (or
connection) gives its bytes back. All callers' chats together hold at most ``chat_bytes_total`` (many
callers, each within its own bound, add up): past it, the caller adding a turn loses its own oldest ones,
never another's.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field


@dataclass
class Transcript:
    """One channel's turns, with when each was kept (a number shared by every channel) and their size."""

    owner: str
    turns: list[tuple[str, str]] = field(default_factory=list)  # (speaker, text)
    seqs: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    def drop_oldest(self) -> int:
        self.turns.pop(0)
        self.seqs.pop(0)
        return self.sizes.pop(0)


def turn_bytes(speaker: str, text: str) -> int:
    return len(speaker.encode()) + len(text.encode())


class ChatMemory:
    def __init__(self, max_bytes: int, total_bytes: int | None = None) -> None:
        self.max_bytes = max_bytes
        self.total_bytes = total_bytes if total_bytes is not None else 64 * max_bytes
        self.total = 0  # every caller's
        self._open: dict[str, list[Transcript]] = {}  # caller -> its channels' transcripts
        self._held: dict[str, int] = {}
        self._seq = itertools.count()

    def held(self, caller: str) -> int:
        return self._held.get(caller, 0)

    def opened(self, transcript: Transcript) -> None:
        self._open.setdefault(transcript.owner, []).append(transcript)

    def closed(self, transcript: Transcript) -> None:
        mine = self._open.get(transcript.owner, [])
        if any(t is transcript for t in mine):
            mine[:] = [t for t in mine if t is not transcript]
            self._take(transcript.owner, sum(transcript.sizes))
        transcript.turns.clear()
        transcript.seqs.clear()
        transcript.sizes.clear()
        if not mine:
            self._open.pop(transcript.owner, None)

    def keep(self, transcript: Transcript, speaker: str, text: str, max_turns: int) -> None:
        """Keep a turn: at most ``max_turns`` in this channel, at most ``max_bytes`` in all the owner's."""
        size = turn_bytes(speaker, text)
        transcript.turns.append((speaker, text))
        transcript.seqs.append(next(self._seq))
        transcript.sizes.append(size)
        owner = transcript.owner
        self._held[owner] = self._held.get(owner, 0) + size
        while len(transcript.turns) > max_turns:
            self._take(owner, transcript.drop_oldest())
        self.total += size
        while self._held.get(owner, 0) > self.max_bytes or self.total > self.total_bytes:
            holding = [t for t in self._open.get(owner, []) if t.turns]
            if transcript.turns and not any(t is transcript for t in holding):
                holding.append(transcript)  # a channel not registered still counts while it holds turns
            if not holding:
                break
            self._take(owner, min(holding, key=lambda t: t.seqs[0]).drop_oldest())

    def _take(self, owner: str, size: int) -> None:
        self.total -= size
        left = self._held.get(owner, 0) - size
        if left > 0:
            self._held[owner] = left
        else:
            self._held.pop(owner, None)
