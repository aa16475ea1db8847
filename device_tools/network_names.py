"""The names of the networks and devices the phone knows, read from the phone itself: the Wi-Fi it is on,
the ones it has saved and the ones in range (``cmd wifi status``, ``cmd wifi list-networks``, ``cmd wifi
list-scan-results``: the neighbours' networks place the phone as well as its own), its own Bluetooth name and
the devices it has paired (``dumpsys bluetooth_manager``).

A network's name places the phone on public Wi-Fi maps, and a paired device's name says whose it is: what the
``nearby_devices`` consent guards. Settings shows them on many screens (its home's summary, the Wi-Fi page, a
network's details, the internet panel, a notification, the Bluetooth page) in every language and wording;
a label or a resource id names none of them all. The values do: ``ScreenPrivacy`` withholds a screen whose
text holds one of them from a caller without the consent. A read that fails or is not in the format Android
prints is ``None``: the caller then does not see Settings' screens at all (fail closed).

The names are kept for ``TTL`` seconds (one read of four commands, not four per screen; the networks in range
change as the phone moves: read again after it), at most ``MAX_NAMES`` of the phone's own and ``MAX_IN_RANGE``
in range, each at most ``MAX_NAME`` characters as Android prints it (an SSID is 32 bytes). More in range than
that (a beacon flood) keeps the phone's own names and says the list is not complete: a caller without the
consent then sees no screen.
"""

from __future__ import annotations

import functools
import re
import time
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Sequence

import anyio

from .commands import BLUETOOTH, WIFI_NETWORKS, WIFI_SCAN, WIFI_STATUS
from .errors import DeviceError

TTL = 15.0
NAMES_TIMEOUT = 10.0  # seconds for each read: a phone that does not answer leaves the names unread
MAX_NAMES = 128  # the phone's own: the Wi-Fi it is on, the saved ones, its paired devices
# the networks in range: a city street lists a hundred or more (one name for its access points); a beacon
# flooder a thousand made-up ones, which must not push the phone's own names out of the check
MAX_IN_RANGE = 384
# a name of fewer visible characters ("A", "5G", an emoji) is in the words of every screen: it counts only
# as a label (or a line read off the pixels) that is the name and nothing else, as Settings' lists show it
NAME_FLOOR = 3
# a name found this often inside longer words of one text counts as shown: a neighbour names its network
# "aaa", an app draws "aaaa…" (each place a Python step: 10 KB against 512 names would be seconds); no real
# screen holds a name's letters inside other words that often
MAX_INSIDE = 64
MAX_NAME = 128  # a hex SSID (not UTF-8) prints as 64 hex digits; a Bluetooth name is 248 bytes at most

# Android prints a name between quotes as it is (a quote inside it unescaped): up to the last quote of the
# line, or to WifiInfo's next field
_CONNECTED = re.compile(r'^\s*Wifi is connected to "(.*)"\s*$|SSID: "(.*?)", BSSID:', re.MULTILINE)
_ADDRESS = re.compile(r"^(?:[0-9A-Fa-fX]{2}:){5}[0-9A-Fa-fX]{2}\s*")
_TAGS = re.compile(r"^(?:\[[^\]]*\]\s*)+")
# ScanResultUtil.dumpScanResults: a row of BSSID, frequency, RSSI ("-61(0:-62/1:-67)"), age ("3.300", "47,180"
# in a comma locale, ">1000.0", "___?___"), the SSID padded to 32 columns (spaces inside it; none for a hidden
# network) and the flags ("[WPA2-PSK-CCMP][ESS]")
_SCAN_ROW = re.compile(r"^\s*(?:[0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}\s+-?\d+\s+\S+\s+\S+(?:\s+(.*?))?"
                       r"\s*((?:\[[^\]]*\])*)\s*$")
Read = Callable[[Sequence[str]], Awaitable[str]]


class NamesUnread(DeviceError):
    """The phone's network names could not be read, or not in the format Android prints."""


def wifi_status_names(text: str) -> list[str]:
    """The network ``cmd wifi status`` says the phone is on (``Wifi is connected to "Home"``, WifiInfo's
    ``SSID: "Home"``); none when it is not connected. Text that is not that command's raises."""
    if "Wifi is" not in text:
        raise NamesUnread("`cmd wifi status` did not print the Wi-Fi's state")
    return [m.group(1) if m.group(1) is not None else m.group(2) for m in _CONNECTED.finditer(text)]


def saved_network_names(text: str) -> list[str]:
    """The saved networks of ``cmd wifi list-networks`` (AOSP ``WifiShellCommand``: a header, then
    ``%-12d %-32s %-4s`` of id, SSID and security type per network, or "No networks")."""
    lines = text.splitlines()
    if lines and lines[0].strip() == "No networks":
        return []
    if not lines or not lines[0].startswith("Network Id"):
        raise NamesUnread("`cmd wifi list-networks` did not print its list")
    names = []
    for line in lines[1:]:
        head, _, rest = line.strip().partition(" ")
        if not head.isdigit():
            continue
        ssid, _, _security = rest.strip().rpartition(" ")
        names.append(ssid.strip())
    return names


def scan_result_names(text: str) -> list[str]:
    """The networks in range of ``cmd wifi list-scan-results`` (a header, a row per access point; "No scan
    results"); a hidden network (no SSID) names nothing."""
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and lines[0].strip() == "No scan results":
        return []
    if not lines or lines[0].split()[:2] != ["BSSID", "Frequency"]:
        raise NamesUnread("`cmd wifi list-scan-results` did not print its list")
    names = []
    for line in lines[1:]:
        row = _SCAN_ROW.match(line)
        if row is None:
            raise NamesUnread("`cmd wifi list-scan-results` did not print its list")
        if row.group(1):
            names.append(row.group(1))
    return names


def bluetooth_names(text: str) -> list[str]:
    """The phone's own Bluetooth name (``name:`` under "Bluetooth Status") and its paired devices' (the
    "Bonded devices:" lines: an address, bracketed tags, the name)."""
    if "Bluetooth Status" not in text:
        raise NamesUnread("`dumpsys bluetooth_manager` did not print the adapter's status")
    names: list[str] = []
    section = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in ("Bluetooth Status", "Bonded devices:") or (line and not line[0].isspace()):
            section = stripped  # a release may indent the bonded list under its service's heading
            continue
        if section == "Bluetooth Status" and stripped.startswith("name:"):
            names.append(stripped[5:].strip())
        elif section == "Bonded devices:" and _ADDRESS.match(stripped):
            names.append(_TAGS.sub("", _ADDRESS.sub("", stripped)).strip())
    return names


def folded(text: str) -> str:
    """``text`` as names are compared: compatibility forms and case folded, invisible format characters
    (a zero-width joiner in a name or around it) dropped."""
    if text.isascii():
        return text.casefold()  # no format characters, nothing to compose
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def _word(c: str) -> bool:
    return c.isalnum()


def shows_name(text: str, names: Iterable[str]) -> bool:
    """Whether ``text`` holds one of the (folded) ``names`` as a whole: not inside a longer word ("Home" in
    "Connected to Home", "„Home“ verbunden"; not in "Homepage"). A name under ``NAME_FLOOR`` counts only as a
    line of its own (``text`` holds a label a line)."""
    if not text:
        return False
    seen = folded(text)
    lines: set[str] | None = None
    for name in names:
        if short(name):
            lines = {line.strip() for line in seen.splitlines()} if lines is None else lines
            if name.strip() in lines:
                return True
            continue
        start = seen.find(name)
        for _ in range(MAX_INSIDE):
            if start < 0:
                break
            end = start + len(name)
            edge_before = start == 0 or not (_word(seen[start - 1]) and _word(name[0]))
            edge_after = end == len(seen) or not (_word(seen[end]) and _word(name[-1]))
            if edge_before and edge_after:
                return True
            start = seen.find(name, start + 1)
        else:
            return start >= 0  # still more: counted as shown (the check's cost stays bounded)
    return False


def shows_name_across(labels: Iterable[str], names: Iterable[str]) -> bool:
    """Whether a (folded) name of ``NAME_FLOOR`` characters or more runs over adjacent ``labels`` (in the
    order the screen draws them): a row's two text views ("Rosen", "thaler Hof Gast"), a letter per node. A
    label's edge is a word's edge; a space of the name may be at a label's edge or gone. The join is bounded
    by the name: it spans at most as many labels as the name has characters."""
    joined = _LABEL_EDGE.join(f for f in (folded(label) for label in labels) if f.strip())
    if not joined:
        return False
    squashed = _SQUASH.sub("", joined)
    for name in names:
        if short(name) or _SQUASH.sub("", name) not in squashed:
            continue  # (one substring search: the pattern only where the letters are there)
        if _across(name).search(joined):
            return True
    return False


_LABEL_EDGE = "\x1f"  # between two labels: not a word character (an edge), and no label holds it folded
_SQUASH = re.compile(r"[\s\x1f]+")


@functools.lru_cache(maxsize=1024)
def _across(name: str) -> re.Pattern[str]:
    """``name`` with a label's edge allowed between any two of its characters, a space of it as spaces or
    an edge (or both), and word edges at its ends."""
    parts = [part for part in name.split() if part]
    gap = f"(?:{_LABEL_EDGE})?"
    body = r"(?:\s*\x1f\s*|\s+)".join(gap.join(re.escape(c) for c in part) for part in parts)
    before = r"(?<![^\W_])" if _word(name.strip()[0]) else ""
    after = r"(?![^\W_])" if _word(name.strip()[-1]) else ""
    return re.compile(before + body + after)


def short(name: str) -> bool:
    return sum(not c.isspace() for c in name) < NAME_FLOOR


class KnownNames(frozenset[str]):
    """The folded names; ``complete`` is False when more networks are in range than are kept (any screen may
    show one that is not here)."""

    complete: bool

    def __new__(cls, names: Iterable[str] = (), complete: bool = True) -> KnownNames:
        made = super().__new__(cls, names)
        made.complete = complete
        return made


class NetworkNames:
    """The phone's network and device names, read at most once per ``TTL`` (one read at a time)."""

    def __init__(self, read: Read, ttl: float = TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self._read = read
        self._ttl = ttl
        self._clock = clock
        self._lock = anyio.Lock()
        self._names: KnownNames | None = None
        self._at: float | None = None
        self.reads = 0  # how many times the phone was asked (the cache's measure)

    async def current(self) -> KnownNames | None:
        """The folded names, or None when they could not be read (the caller withholds Settings)."""
        async with self._lock:
            now = self._clock()
            if self._at is not None and now - self._at < self._ttl:
                return self._names
            self._names = await self._fetch()
            self._at = self._clock()
            return self._names

    async def _fetch(self) -> KnownNames | None:
        self.reads += 1
        try:
            own = _kept([*wifi_status_names(await self._read(WIFI_STATUS)),
                         *saved_network_names(await self._read(WIFI_NETWORKS)),
                         *bluetooth_names(await self._read(BLUETOOTH))])
        except DeviceError:
            return None
        if len(own) > MAX_NAMES or any(len(n) > MAX_NAME for n in own):
            return None  # not what a phone prints: no name is trusted to be the whole list
        try:
            in_range = _kept(scan_result_names(await self._read(WIFI_SCAN)))
        except DeviceError:
            # the neighbours name their networks: one whose name breaks the list (a line break in it) must not
            # turn the check of the phone's own names off, nor pass unchecked
            return KnownNames(own, complete=False)
        if len(in_range) > MAX_IN_RANGE or any(len(n) > MAX_NAME for n in in_range):
            return KnownNames(own, complete=False)
        return KnownNames(own | in_range)


def _kept(names: Iterable[str]) -> set[str]:
    return {f for f in (folded(n) for n in names) if f.strip()}
