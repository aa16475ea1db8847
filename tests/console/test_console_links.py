"""Every link and form action the console builds from data leads to the page of that same datum, whatever
characters it holds. A session id is hostile text (its principal's clients name conversations); its revoke
form's action kept ``/``, ``..`` and the like as they were, so a browser resolved
``/console/sessions/alice/../../consents/revoke`` to ``/console/consents/revoke`` and sent the person's
CSRF token and a form there. Followed here as a browser resolves a URL (dot segments removed, ``?`` and
``#`` ending the path), against a real Sentinel over HTTP on 127.0.0.1."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from sentinel_mcp.console.links import console_path
from tests.console.console_rig import ALICE, console_config, csrf_of, http_sentinel, signed_in

pytestmark = pytest.mark.timeout(180)

HOSTILE = [
    "alice/../../consents",
    "alice/../../policy/whatif",
    "alice/..",
    "alice/.",
    "alice/x/revoke",
    "alice/x?y=1",
    "alice/x#frag",
    "alice/x/",
    "alice/%2e%2e/%2E%2e/inbox",
    "alice/a%2Fb",
    "alice/x\\..\\..\\policy",
    "alice/it's \"quoted\" <b>",
    "alice/a b",
    "alice/ünïcödé/文字",
    "alice/x;y=z&q",
    # control characters: shown visibly, linked to their own page (encoded), never refused
    "alice/a b\tc", "alice/line\nbreak", "alice/bell\x07", "alice/esc\x1b[31m",
    "alice/c1\x85", "alice/del\x7f",
    # invisible and direction-changing characters: a spoof of another session's id is told apart
    "alice/x\u202e", "alice/\u202ex", "alice/x\u200b", "alice/\u2066x\u2069", "alice/x\ufeff",
    "alice/x\u2028", "alice/x\U000e0041",
    # the marks typed out: they read as the ids above unless the mark's own bracket is marked
    "alice/x⟨U+202E⟩", "alice/⟨U+202E⟩x", "alice/x⟨U+200B⟩", "alice/x〈U+202E〉", "alice/x＜U+200B＞",
]
# alike up to the listing's cut (120 characters): told apart by what follows the cut
LONG = ["alice/" + "a" * 150 + "1", "alice/" + "a" * 150 + "2", "alice/" + "a" * 114 + "\u202e" + "b" * 40]
# NUL is no id's in a path (a C reader's end of string; the link of a dot segment): listed, unlinked, refused
UNLINKABLE = ["alice/nul\x00", "alice/\x00x\u202e"]
SIBLING = "alice/x"  # what a cut at ``?``, ``#`` or a trailing ``/`` would name instead


def _planted(tmp: Path, extra: tuple[str, ...] = ()) -> Iterator[str]:
    """A Sentinel whose fact store holds one fact, ``item(i)``, for each session id (planted before start)."""
    import asyncio

    from sentinel_mcp.config import load_config
    from sentinel_mcp.policy.fact_store import Fact, FactStore
    from sentinel_mcp.policy.guard_of_config import facts_db_path

    cfg = console_config(tmp)

    async def plant() -> None:
        path = facts_db_path(load_config(cfg))
        path.parent.mkdir(parents=True, exist_ok=True)
        store = await FactStore(path).open()
        until = time.time() + 3600
        await store.add([
            Fact(session=sid, predicate="item", args=[i], fact=f"item({i})", provenance="observed",
                 source_tool="bk__list_bookings", expires_at=until)
            for i, sid in enumerate([SIBLING, *HOSTILE, *UNLINKABLE, *extra])
        ])
        await store.close()

    asyncio.run(plant())
    with http_sentinel(cfg) as (base, _proc):
        yield base


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    yield from _planted(tmp_path_factory.mktemp("console-links"))


@pytest.fixture(scope="module")
def untouched(tmp_path_factory):
    """Another, whose sessions no test revokes a fact of (a session without facts is not listed)."""
    yield from _planted(tmp_path_factory.mktemp("console-links-listed"), tuple(LONG))


def resolved(base: str, page_url: str, link: str) -> str:
    """A link of a page as a browser follows it: relative to the page, dot segments removed, no fragment."""
    url = urljoin(page_url, html.unescape(link))
    parts = urlsplit(url)
    assert parts.netloc == urlsplit(base).netloc, url
    return parts._replace(fragment="").geturl()


def heading_sid(page: str) -> str:
    found = re.search(r"<h1>Session <code>(.*?)</code></h1>", page, re.S)
    assert found, page[:1500]
    return html.unescape(found.group(1))


def shown_sid(sid: str) -> str:
    # the console makes control, invisible and direction-changing characters visible, and every bracket
    # that could pass for its marks (``⟨``, ``⟩``, look-alikes), so no id types a mark out
    from sentinel_mcp.core.display_text import is_hidden
    from sentinel_mcp.core.mark_brackets import passes_for_mark_bracket

    return "".join(f"⟨U+{ord(c):04X}⟩" if is_hidden(c) or passes_for_mark_bracket(c) else c for c in sid)


async def test_every_hostile_session_id_links_and_revokes_its_own_session(sentinel):
    base = sentinel
    async with signed_in(base, ALICE) as alice:
        listing_url = f"{base}/console/sessions"
        listing = await alice.page("/console/sessions")
        links = re.findall(r'href="(/console/sessions/[^"]+)"', listing)
        assert len(links) == len(HOSTILE) + 1, links
        reached: dict[str, str] = {}
        for link in links:
            url = resolved(base, listing_url, link)
            r = await alice.http.get(url)
            assert r.status_code == 200, (link, url, r.status_code, r.text[:300])
            reached[heading_sid(r.text)] = url
        # every session's link opened that session's own page (none another page, none a sibling session)
        assert set(reached) == {shown_sid(s) for s in [SIBLING, *HOSTILE]}, reached

        for i, sid in enumerate(HOSTILE, start=1):
            url = reached[shown_sid(sid)]
            page = (await alice.http.get(url)).text
            actions = re.findall(r'<form method="(get|post)" action="([^"]+)"', page)
            for method, action in actions:
                target = resolved(base, url, action)
                path = urlsplit(target).path
                if method == "get":  # the fact filter: this session's page
                    r = await alice.http.get(target, params={"q": f"item({i})"})
                    assert heading_sid(r.text) == shown_sid(sid), (sid, action)
                    continue
                if path == "/console/logout":
                    continue
                assert path.startswith("/console/sessions/") and path.endswith("/revoke"), (sid, action, path)
                r = await alice.http.post(
                    target,
                    data={"csrf": csrf_of(page), "fact": f"item({i})"},
                    headers={"origin": base},
                )
                assert r.status_code == 303, (sid, action, r.status_code, r.text[:500])
                back = resolved(base, target, r.headers["location"])
                assert heading_sid((await alice.http.get(back)).text) == shown_sid(sid), (sid, back)
            gone = (await alice.http.get(url)).text
            assert f"item({i})" not in gone, sid
        # the sibling a cut id would have named keeps its fact
        sibling = (await alice.http.get(reached[SIBLING])).text
        assert "item(0)" in sibling


def test_a_path_segment_is_encoded_whole_and_a_dot_segment_names_nothing():
    from sentinel_mcp.console.links import segment

    for value in ["a/b", "..", ".", "a?b#c", "it's \"q\"", "ü", "a\\b", "%2e%2e", "a b", "x;y&z=1"]:
        out = segment(value)
        assert re.fullmatch(r"[A-Za-z0-9_.~%-]+", out), (value, out)
        # a browser removes "." and ".." however their dots are spelled (%2e): no value makes one
        assert out.lower().replace("%2e", ".") not in (".", ".."), (value, out)


async def test_every_session_id_is_listed_visibly_once_and_linked_to_itself(untouched):
    """A session id holding a control character was listed without a link ("not opened here"): the router
    refused every control character in an id. A session id is only ever looked up, never a path: each one is
    linked (encoded whole), its link names that exact id, and what the person reads is the id with every
    control, invisible or direction-changing character shown as ``⟨U+XXXX⟩`` (an override or zero-width
    character would make one session's id read as another's)."""
    from sentinel_mcp.core.display_text import is_hidden

    base = untouched
    async with signed_in(base, ALICE) as alice:
        raw_page = await alice.page("/console/sessions")
        assert not any(is_hidden(c) for c in raw_page if c not in "\n"), [
            hex(ord(c)) for c in raw_page if is_hidden(c) and c != "\n"
        ]
        listed = re.findall(r'<li><a href="/console/sessions/([^"]+)"><code>(.*?)</code></a>', raw_page)
        by_link = {unquote(html.unescape(link)): html.unescape(text) for link, text in listed}
        long = {sid: by_link.pop(sid) for sid in LONG}
        assert by_link == {sid: shown_sid(sid) for sid in [SIBLING, *HOSTILE]}, by_link
        for sid, text in long.items():  # cut where the listing cuts, and told apart after it
            assert text.startswith(shown_sid(sid)[:100]) and len(text) < len(sid) + 80, text
        every = [*by_link.values(), *long.values()]
        assert len(set(every)) == len(every)  # no two read alike
        for sid in LONG:  # nor on their own pages
            r = await alice.http.get(base + console_path("sessions", sid))
            assert r.status_code == 200 and heading_sid(r.text) == long[sid], (sid, r.status_code)
        for sid in HOSTILE:
            r = await alice.http.get(base + console_path("sessions", sid))
            assert r.status_code == 200 and heading_sid(r.text) == shown_sid(sid), (sid, r.status_code)
            assert not any(is_hidden(c) for c in r.text if c != "\n"), sid  # nor raw on its own page
        listing = html.unescape(raw_page)
        for sid in UNLINKABLE:
            at = listing.index(f"<code>{shown_sid(sid)}</code>")
            assert "<a " not in listing[at - 60 : at] and "holding NUL" in listing[at : at + 200], sid
            for path in (console_path("sessions", sid), console_path("sessions", sid, "revoke")):
                r = await alice.http.request("POST" if path.endswith("/revoke") else "GET", base + path)
                assert r.status_code == 400, (sid, path, r.status_code, r.text[:300])


async def test_an_encoded_slash_in_an_id_never_reaches_another_page(sentinel):
    """Routed on the path as sent: ``/console/agent/audit%2Fx`` is the run ``audit/x`` (no run has that id,
    and a run id holds no slash: refused), never the audit row ``x``; the gateway decoded the path first and
    sent it to the audit-row page."""
    base = sentinel
    async with signed_in(base, ALICE) as alice:
        page = await alice.page("/console/inbox")
        for method, path in [
            ("GET", "/console/agent/audit%2Fx"),
            ("GET", "/console/agent/audit%2fx"),
            ("GET", "/console/builds/t%2Ffiles%2Fy"),
            ("POST", "/console/inbox/assist%2Fx"),
            ("POST", "/console/inbox/assist%5Cx"),
        ]:
            r = await alice.http.request(method, base + path, data={"csrf": csrf_of(page)},
                                         headers={"origin": base})
            assert r.request.url.raw_path.decode() == path  # sent as it is
            assert r.status_code == 400, (method, path, r.status_code, r.text[:300])
        # a session id is one segment however its slashes are spelled: its own page, with the exact id
        for raw, sid in [("alice%2Fx", SIBLING), ("alice%2fx", SIBLING), ("alice%252Fx", "alice%2Fx")]:
            r = await alice.http.get(f"{base}/console/sessions/{raw}")
            if sid == SIBLING:
                assert r.status_code == 200 and heading_sid(r.text) == sid, (raw, r.status_code)
            else:  # no such session: the session page says so (never another page)
                assert r.status_code == 404 and "no such session of yours" in r.text, (raw, r.status_code)
        # a fixed word split by an encoded slash is no route
        for path in ["/console%2Fsessions/alice%2Fx", "/console/sessions%2Falice%2Fx"]:
            r = await alice.http.get(base + path)
            assert r.status_code == 404, (path, r.status_code)
