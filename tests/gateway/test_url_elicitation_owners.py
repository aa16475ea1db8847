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
