"""The system's own last-location lines of ``dumpsys location``, found by where they stand.

The dump also prints text apps control: a registration's attribution tag, a history line's identity. A tag
may hold ``Location[...]`` and line breaks, so it can spell a whole fix line, indented like the system's. What
tells them apart is the dump's structure, not a spelling:

- a fix is only the value of a ``last location=`` / ``last coarse location=`` line directly inside a
  ``<name> provider:`` section of the ``Location Providers:`` block (or of a ``user N:`` part of one), or a
  ``<name>: `` line directly inside the ``Last Known Locations:`` block of older Androids;
- the system prints each of those once per provider (and user), for every provider, and names only its own
  providers: a second fix line in a section, a section without one, a provider named twice, a name the
  platform does not have or sections of different users (the same running users are printed under every
  provider) means text posing as the system's, and the whole dump is refused
  (``MalformedOutput``) rather than a fix picked from it; so is a block title printed twice, or both forms.

App text stands before a section's fix lines (registrations are dumped first), so a forged header can only
move the real fix lines under a name of its choosing: the names allow list, "each once" and "the same users
everywhere" leave it none (a header of a provider the phone lacks takes a user's part from the section
before it, which is then another section's users). ``dumpsys location --proto`` is not needed for this.
"""

from __future__ import annotations

import re

from device_tools.sensors.errors import MalformedOutput

# the platform's providers (LocationManager's GPS, NETWORK, FUSED, PASSIVE and the hidden GPS_HARDWARE)
PROVIDERS = frozenset({"gps", "network", "fused", "passive", "gps_hardware"})
_HEADER = re.compile(r"(?P<name>[a-z_]{1,32}) provider(?: \[mock\])?:")
_USER = re.compile(r"user \d{1,6}:")
_LEGACY = re.compile(r"(?P<name>[a-z_]{1,32}): (?P<value>.*)")
_FIX_KEYS = ("last location=", "last coarse location=")
_BLOCKS = ("Location Providers:", "Last Known Locations:", "Last Known Coarse Locations:")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blocks(lines: list[str]) -> list[tuple[str, list[str]]]:
    """(title, the lines under it) of every block the system prints fixes in."""
    found = []
    for i, line in enumerate(lines):
        title = line.strip()
        if title not in _BLOCKS:
            continue
        depth, body = _indent(line), []
        for inner in lines[i + 1:]:
            if not inner.strip():
                continue
            if _indent(inner) <= depth:
                break
            body.append(inner)
        found.append((title, body))
    return found


def _provider(name: str, seen: set[str], title: str) -> None:
    if name not in PROVIDERS:
        raise MalformedOutput(f"dumpsys location: a provider the platform does not have, under {title!r} "
                              f"({len(name)} chars)")
    if name in seen:
        raise MalformedOutput(f"dumpsys location: a provider named twice under {title!r}")
    seen.add(name)


def _legacy_values(title: str, body: list[str]) -> list[str]:
    values: list[str] = []
    seen: set[str] = set()
    depth = _indent(body[0]) if body else 0
    for line in body:
        if _indent(line) != depth:
            continue
        m = _LEGACY.fullmatch(line.strip())
        if m is None:
            raise MalformedOutput(f"dumpsys location: a line under {title!r} that is no provider's fix")
        _provider(m.group("name"), seen, title)
        values.append(m.group("value"))
    return values


def _provider_values(body: list[str]) -> list[str]:
    values: list[str] = []
    seen: set[str] = set()
    counts: list[dict[tuple[str | None, str], int]] = []  # a section's (user, key) -> lines
    depth = _indent(body[0]) if body else 0
    user: str | None = None
    for line in body:
        indent, text = _indent(line), line.strip()
        if indent == depth:
            m = _HEADER.fullmatch(text)
            if m is None:
                raise MalformedOutput("dumpsys location: a line at the providers' level that is no provider")
            _provider(m.group("name"), seen, "Location Providers:")
            counts.append({})
            user = None
            continue
        if indent == depth + 2:
            user = text if _USER.fullmatch(text) else None
            where: str | None = None
        elif indent == depth + 4 and user is not None:
            where = user
        else:
            continue  # deeper: a registration's items, an app's identity, a provider's own extras
        for key in _FIX_KEYS:
            if text.startswith(key):
                section = counts[-1]
                section[(where, key)] = section.get((where, key), 0) + 1
                values.append(text[len(key):])
    for section in counts:
        users = {w for w, _ in section}
        if not users or any(section.get((w, _FIX_KEYS[0]), 0) != 1 for w in users) or any(
                n > 1 for n in section.values()):
            raise MalformedOutput("dumpsys location: a provider section without exactly one last location "
                                  "line: text an app controls poses as the system's")
    # the platform prints the same running users' parts under every provider (or, for one user, none): a
    # section of other users, or a fix of no user beside users' parts, is a header an app's text wrote (one
    # of a provider the phone lacks passes the names' allow list and takes a user's real lines as its own)
    parts = {frozenset(w for w, _ in section) for section in counts}
    if len(parts) > 1 or any(None in users and len(users) > 1 for users in parts):
        raise MalformedOutput("dumpsys location: provider sections with different users' parts: text an app "
                              "controls poses as the system's")
    return values


def fix_values(text: str) -> list[str]:
    """The values (``null`` or ``Location[...]``) of the system's last-location lines."""
    blocks = _blocks(text.splitlines())
    if not blocks:
        raise MalformedOutput("dumpsys location: no block of last known locations")
    titles = [title for title, _ in blocks]
    # an Android prints each block once, and either the providers' sections or the older blocks: a second
    # one (or both forms) is an app's text spelling a block of its own
    if len(set(titles)) != len(titles) or (_BLOCKS[0] in titles and len(titles) > 1):
        raise MalformedOutput("dumpsys location: a block of last known locations printed twice")
    values: list[str] = []
    for title, body in blocks:
        values += _provider_values(body) if title == _BLOCKS[0] else _legacy_values(title, body)
    return values
