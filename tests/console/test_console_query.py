"""A page's query parameters are read strictly: each one the page takes, at most once, UTF-8 text within its
bound, a choice among its choices, a time that is a time. Anything else is refused (400) and says why, never
read some other way: ``?q=a&q=b`` was the last one (a proxy or a person reading the address sees the first),
``%FF`` a replacement character, ``?since=yesterday`` and ``?decision=denyy`` no filter at all (every row,
shown as if filtered), ``?file=`` any length. A real Sentinel over HTTP on 127.0.0.1 (the console rig)."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.console.console_rig import ALICE, OWNER_TOKEN, console_config, http_sentinel, signed_in

pytestmark = pytest.mark.timeout(180)
SID = "alice/http-query"
SESSION = "/console/sessions/alice%2Fhttp-query"

# (who, page, a query it takes): each is read as it is
FINE = [
    (OWNER_TOKEN, "/console/activity", "tool=bk&decision=allow&since=2020-01-01T00:00&chain=verified"),
    (OWNER_TOKEN, "/console/activity", "session=&tool=&decision=&since=&until=&chain=&principal="),
    (ALICE, SESSION, "q=item"),
    (OWNER_TOKEN, "/console/policy", "file=bookings.pl"),
    (OWNER_TOKEN, "/console/pins/tool", "tool=bk__list_bookings"),
    (OWNER_TOKEN, "/console/policy/history", ""),
    (ALICE, "/console/activity", "principal=alice"),  # her own rows: what she sees anyway
]
# (who, page, a query no page reads as it was meant): each is refused
REFUSED = [
    (OWNER_TOKEN, "/console/activity", "tool=a&tool=b"),
    (OWNER_TOKEN, "/console/activity", "decision=allow&decision=deny"),
    (OWNER_TOKEN, "/console/activity", "tool=%FF"),
    (OWNER_TOKEN, "/console/activity", "tool=%C0%AE"),
    (OWNER_TOKEN, "/console/activity", "tool=%ED%A0%80"),  # a surrogate
    (OWNER_TOKEN, "/console/activity", "decision=denyy"),
    (OWNER_TOKEN, "/console/activity", "decision=%3Cscript%3E"),
    (OWNER_TOKEN, "/console/activity", "chain=%3Cscript%3E"),
    (OWNER_TOKEN, "/console/activity", "since=yesterday"),
    (OWNER_TOKEN, "/console/activity", "until=2020-13-45T99:00"),
    (OWNER_TOKEN, "/console/activity", "tool=" + "x" * 201),
    (OWNER_TOKEN, "/console/activity", "nosuch=1"),
    (OWNER_TOKEN, "/console/activity", "tool"),  # no "=": no value was given
    # another principal's rows are the owner's to filter by: for anyone else the filter was ignored, and her
    # own rows were shown under an address that names bob's
    (ALICE, "/console/activity", "principal=bob"),
    (ALICE, SESSION, "q=a&q=b"),
    (ALICE, SESSION, "q=%FF"),
    (ALICE, SESSION, "q=" + "x" * 201),
    (ALICE, SESSION, "filter=x"),
    (OWNER_TOKEN, "/console/policy", "file=" + "x" * 300),
    (OWNER_TOKEN, "/console/policy", "file=bookings.pl&file=other.pl"),
    (OWNER_TOKEN, "/console/policy", "file=no-such.pl"),
    (OWNER_TOKEN, "/console/policy", "file=%FF"),
    (OWNER_TOKEN, "/console/pins/tool", "tool=a&tool=b"),
    (OWNER_TOKEN, "/console/pins/tool", "tool=%FF"),
    (OWNER_TOKEN, "/console/policy/history", "a=x&a=y&b=z"),
    (OWNER_TOKEN, "/console/policy/history", "a=%FF&b=1"),
]


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory):
    from sentinel_mcp.config import load_config
    from sentinel_mcp.policy.fact_store import Fact, FactStore
    from sentinel_mcp.policy.guard_of_config import facts_db_path

    cfg = console_config(tmp_path_factory.mktemp("console-query"))

    async def plant() -> None:
        path = facts_db_path(load_config(cfg))
        path.parent.mkdir(parents=True, exist_ok=True)
        store = await FactStore(path).open()
        await store.add([Fact(session=SID, predicate="item", args=[1], fact="item(1)", provenance="observed",
                              source_tool="bk__list_bookings", expires_at=time.time() + 3600)])
        await store.close()

    asyncio.run(plant())
    with http_sentinel(cfg) as (base, _proc):
        yield base


async def test_each_page_takes_its_own_parameters(sentinel):
    for who, page, query in FINE:
        async with signed_in(sentinel, who) as person:
            r = await person.get(f"{page}?{query}")
            # taken: the page itself (a pin page of a tool never pinned says it has none: 404)
            assert r.status_code in (200, 404) and "refused" not in r.text, (page, query, r.status_code)


@pytest.mark.parametrize("who, page, query", REFUSED)
async def test_anything_else_is_refused_and_says_why(sentinel, who, page, query):
    async with signed_in(sentinel, who) as person:
        r = await person.get(f"{page}?{query}")
        assert r.status_code == 400, (page, query, r.status_code, r.text[:500])
        assert "refused" in r.text, r.text[:500]
        assert "<script>" not in r.text  # what was sent is never markup on the problem page


async def test_a_form_field_given_twice_or_not_utf8_is_refused_and_nothing_is_done(sentinel):
    """A form's body, read as strictly: a field given twice was its last value (``fact=x&fact=item(1)``
    revoked ``item(1)``, where a proxy or a log reading the body saw ``x``), and ``%FF`` became U+FFFD."""
    from tests.console.console_rig import csrf_of

    async with signed_in(sentinel, ALICE) as alice:
        csrf = csrf_of(await alice.page(SESSION))
        r = await alice.post(SESSION + "/revoke", {"fact": ["x", "item(1)"]}, csrf=csrf)
        assert r.status_code == 400 and "refused" in r.text, (r.status_code, r.text[:500])
        r = await alice.http.post(
            sentinel + SESSION + "/revoke", content=f"csrf={csrf}&fact=item(1)%FF".encode(),
            headers={"origin": sentinel, "content-type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 400 and "refused" in r.text, (r.status_code, r.text[:500])
        assert "item(1)" in await alice.page(SESSION)  # nothing was revoked


# pages that take no parameter: any query at all is refused as on the pages that take some (query_params),
# never ignored (a link, a log or a person reading the address would take it for a filter that held)
NO_PARAMETERS = [
    (OWNER_TOKEN, "/console/inbox"), (OWNER_TOKEN, "/console/sessions"), (OWNER_TOKEN, "/console/upstreams"),
    (OWNER_TOKEN, "/console/consents"), (OWNER_TOKEN, "/console/pins"), (OWNER_TOKEN, "/console/builds"),
    (OWNER_TOKEN, "/console/agent"), (OWNER_TOKEN, "/console/model"), (OWNER_TOKEN, "/console/events"),
    (OWNER_TOKEN, "/console/activity/1"), (ALICE, "/console/inbox"), (ALICE, "/console/sessions"),
]
SPELLINGS = [
    "x=1", "q=item", "file=bookings.pl", "tool=bk", "a=x&b=y", "x", "x=1&x=2", "%FF=1", "x=%FF", "=1", "&",
    "&&", "X=1", "Q=item", "x=" + "y" * 9000, ";", "a;b=1", "%00=1", "+=1", "x%3D1", "%3F=1", "q=",
]


@pytest.mark.parametrize("who, page", NO_PARAMETERS)
async def test_a_page_that_takes_no_parameter_refuses_every_one(sentinel, who, page):
    async with signed_in(sentinel, who) as person:
        for query in SPELLINGS:
            r = await person.get(f"{page}?{query}")
            assert r.status_code == 400, (page, query[:40], r.status_code, r.text[:300])
            assert "refused" in r.text and "<script>" not in r.text, r.text[:300]
        if page != "/console/events":  # a stream: it is not read to its end here
            r = await person.get(page)  # without a query it is the page itself (or its own 404)
            assert r.status_code in (200, 403, 404) and "refused: " not in r.text, (page, r.status_code)


async def test_a_form_and_the_sign_in_page_refuse_a_query_too(sentinel):
    from tests.console.console_rig import csrf_of

    async with signed_in(sentinel, ALICE) as alice:
        csrf = csrf_of(await alice.page(SESSION))
        for query in ("fact=item(1)", "q=item", "x", "x=1&x=2"):
            r = await alice.post(f"{SESSION}/revoke?{query}", {"fact": "item(1)"}, csrf=csrf)
            assert r.status_code == 400 and "refused" in r.text, (query, r.status_code, r.text[:300])
        assert "item(1)" in await alice.page(SESSION)  # nothing was revoked
    async with __import__("httpx2").AsyncClient() as anon:
        for query in ("x=1", "next=https://evil.example/", "x"):
            r = await anon.get(f"{sentinel}/console/login?{query}")
            assert r.status_code == 400 and "refused" in r.text, (query, r.status_code)
        assert (await anon.get(f"{sentinel}/console/login")).status_code == 200
