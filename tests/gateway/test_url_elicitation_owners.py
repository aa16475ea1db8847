"""A URL elicitation's completion notice names the elicitation by the id the upstream chose. One upstream
serving several clients may give two of them the same id (an id it derives from what it asks, "sign-in"): the
notice for that id then names no one client, so it reaches neither, rather than the one asked last being told
that another's sign-in completed."""

from __future__ import annotations

from sentinel_mcp.gateway.front_link import UrlElicitations


def test_an_id_two_clients_were_given_completes_for_neither():
    urls = UrlElicitations()
    alice, bob = object(), object()
    urls.remember("up", "sign-in", alice)
    urls.remember("up", "sign-in", bob)
    urls.remember("up", "sign-in", alice)  # asked again: it stays nobody's until its notice comes
    assert urls.pop("up", "sign-in") is None
    assert urls.pop("up", "sign-in") is None


def test_an_id_one_client_was_given_completes_for_it_once():
    urls = UrlElicitations()
    alice, bob = object(), object()
    urls.remember("up", "a-1", alice)
    urls.remember("up", "a-1", alice)  # asked again: still alice's
    urls.remember("other", "a-1", bob)  # another upstream's id space
    assert urls.pop("up", "a-1") is alice
    assert urls.pop("up", "a-1") is None
    assert urls.pop("other", "a-1") is bob


def test_a_principals_own_session_completes_only_that_principals_elicitation():
    """``isolation: "per_principal"``: each principal's session chooses ids of its own; bob's may name the id
    alice's asked her with, and its notice is not alice's."""
    urls = UrlElicitations()
    alice = object()
    urls.remember("up", "link-0", alice, "alice")
    for other in ("bob", "Alice", "alice ", ""):
        assert urls.pop("up", "link-0", other) is None
    assert urls.pop("up", "link-0", "alice") is alice  # still there for her own session's notice
    assert urls.pop("up", "link-0", "alice") is None
    urls.remember("up", "e", alice, "alice")
    assert urls.pop("up", "e") is alice  # the upstream's one shared session: its ids are one space


def test_one_principals_flood_does_not_push_out_anothers_elicitation():
    """The bound is each principal's own: alice's calls asking URL elicitations without end drop her own
    oldest, never bob's one pending sign-in, so his completion notice still reaches him."""
    urls = UrlElicitations()
    alice, bob = object(), object()
    urls.remember("up", "bob-1", bob, "bob")
    urls.remember("up", "alice-0", alice, "alice")
    for i in range(1, 3 * urls.LIMIT + 1):
        urls.remember("up", f"alice-{i}", alice, "alice")
    assert urls.pop("up", "bob-1", "bob") is bob
    assert urls.pop("up", "alice-0", "alice") is None  # her own oldest went first
    newest = 3 * urls.LIMIT
    assert urls.pop("up", f"alice-{newest}", "alice") is alice
    kept = sum(urls.pop("up", f"alice-{i}", "alice") is alice for i in range(1, newest))
    assert kept == urls.PER_PRINCIPAL - 1


def test_the_shared_session_and_many_principals_stay_bounded():
    """Calls with no principal (the upstream's one shared session) are a bucket of their own, and the whole
    table stays bounded however many principals ask: past it, the biggest holder's oldest goes."""
    urls = UrlElicitations()
    carol = object()
    urls.remember("up", "carol-1", carol, "carol")
    for i in range(2 * urls.PER_PRINCIPAL):
        urls.remember("up", f"anon-{i}", object())
    assert urls.pop("up", "carol-1", "carol") is carol
    assert urls.pop("up", "anon-0") is None
    assert urls.pop("up", f"anon-{2 * urls.PER_PRINCIPAL - 1}") is not None
    urls.remember("up", "carol-2", carol, "carol")
    for p in range(3 * urls.LIMIT // urls.PER_PRINCIPAL):
        for i in range(urls.PER_PRINCIPAL):
            urls.remember("up", f"{p}-{i}", object(), f"p{p}")
    assert len(urls) <= urls.LIMIT
    assert urls.pop("up", "carol-2", "carol") is carol  # the smallest holder keeps its one


def test_an_id_moved_to_another_principal_counts_once():
    """The shared session's id asked during alice's call, then bob's: it is counted in bob's bound only, and
    popping it leaves neither bound holding a ghost."""
    urls = UrlElicitations()
    s = object()
    urls.remember("up", "x", s, "alice")
    urls.remember("up", "x", s, "bob")
    assert len(urls) == 1
    assert urls.pop("up", "x") is s
    assert len(urls) == 0
    for i in range(urls.PER_PRINCIPAL):
        urls.remember("up", f"a{i}", s, "alice")
    assert urls.pop("up", "a0", "alice") is s  # no ghost of "x" took a place in alice's bound
