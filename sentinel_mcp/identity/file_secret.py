"""A secret kept in a file of the data dir (the owner's token, the owner's console secret), followed while
Sentinel runs, so the owner can replace a leaked one without a restart (``config token --rotate``).

The file is looked at again at most once a second, by the request that needs it (a ``stat`` and a walk of its
folders up to ``/``, ~80 microseconds; read only when either changed): the old secret stops signing in within
about a second, and so does every open stream of it (the fronts check a stream's credentials again each
second). The new file is trusted by the rules of the first (``owner_token.read``: a regular file of this
user's, not a link, nobody else may write it nor any folder on its way), and so is the file in place: a folder
opened to others since stops it signing in, untouched. Anything else fails closed: a file gone, planted,
writable by others, holding no usable secret, or one that is also another principal's secret (a console
secret equal to a token would be a bearer, and the token a sign-in) signs nobody in until a good one is in
place; the error is logged once per change."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Callable

from sentinel_mcp.identity import owner_token
from sentinel_mcp.core.trusted_path import replaceable_by_others

log = logging.getLogger(__name__)

RECHECK_SECONDS = 1.0
Digest = Callable[[str], bytes]
_Key = tuple[tuple[int, int, int, int, int] | None, str | None]


def _key(path: Path) -> _Key:
    """What a re-read depends on: the file's own ``lstat`` (its mode, owner and ACL change its ctime) and why
    a folder on its way could be written by others, if one can (a folder's mode or owner changes none of the
    file's times: a data dir opened to others, the file untouched, must still stop it signing in)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None, None
    own = st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns
    return own, replaceable_by_others(path.parent)


class FileSecret:
    """The current digest of the secret kept at ``path`` (None: none may sign in by it now)."""

    def __init__(self, path: Path, what: str, initial: str, digest_of: Digest,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.path, self.what = Path(path), what
        self._digest_of, self._clock = digest_of, clock
        self._digest: bytes | None = digest_of(initial)
        self._last = self._digest  # the last one that signed in (a file trusted again is not "replaced")
        self._key = _key(self.path)
        self._checked = clock()
        # set once every secret is known: who else holds this digest (None: nobody), for a replaced file
        self.held_elsewhere: Callable[[bytes], str | None] = lambda digest: None
        self.on_change: list[Callable[[], None]] = []  # e.g. end the console sessions signed in with it

    def digest(self) -> bytes | None:
        now = self._clock()
        if now - self._checked >= RECHECK_SECONDS:
            self._checked = now  # first: a check that asks the others cannot come back here
            self._look()
        return self._digest

    def _look(self) -> None:
        key = _key(self.path)
        if key == self._key:
            return
        self._key = key
        digest: bytes | None = None
        try:
            digest = self._digest_of(owner_token.read(self.path, self.what))
        except FileNotFoundError:
            log.error("%s is gone from %s: nobody signs in with it until a new one is made "
                      "(`sentinel-mcp config token --rotate` or a restart)", self.what, self.path)
        except (OSError, ValueError) as e:
            log.error("%s cannot be trusted (replaced, or a folder on its way opened to others), so nobody "
                      "signs in with it: %s", self.what, e)
        if digest is not None and (other := self.held_elsewhere(digest)) is not None:
            log.error("%s in %s is also the secret of %r: nobody signs in with it (make a new one)",
                      self.what, self.path, other)
            digest = None
        if digest != self._digest:
            self._digest = digest
            if digest is not None and digest == self._last:
                log.warning("%s (%s) can be trusted again: it signs in again", self.what, self.path)
            elif digest is not None:
                log.warning("%s was replaced (%s): the old one no longer signs in", self.what, self.path)
            self._last = digest or self._last
            for hook in self.on_change:
                hook()
