"""A page's message line (``error``, ``problem``, ``note``: why a form was refused) is shown through the
console's ``shown`` filter on every page, as the inbox's is. Today's messages on the sign-in, session, pin
and history pages are Sentinel's own words, but one that ever quotes a value (a field, a fact, an
upstream's words) must not reach the page raw, a right-to-left override reversing the line. Checked in
every template, and over real HTTP for the sign-in page."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest
from tests.console.console_rig import ALICE, console_config, csrf_of, http_sentinel, signed_in

from sentinel_mcp.console.web import _environment

TEMPLATES = Path(__file__).resolve().parents[2] / "sentinel_mcp" / "console" / "templates"
MESSAGES = ("error", "problem", "note")
OUTPUT = re.compile(r"\{\{\s*(\w+)\s*(\|[^}]*)?\}\}")


def test_every_message_line_in_every_template_is_shown_safely() -> None:
    seen = []
    for path in sorted(TEMPLATES.glob("*.html")):
        for m in OUTPUT.finditer(path.read_text()):
            if m.group(1) in MESSAGES:
                seen.append(path.name)
                filters = (m.group(2) or "").lstrip("|").strip()
                assert filters.startswith("shown"), (path.name, m.group(0))
    assert {"login.html", "session.html", "inbox.html"} <= set(seen), seen


@pytest.mark.parametrize("template", ["login.html"])
def test_a_hostile_message_renders_marked(template: str) -> None:
    page = _environment().get_template(template).render(
        error="am\u202etnuo⟨U+200B⟩", login_csrf="x", viewer=None, csrf="", path="/console/login",
        open_access=False, changes={})
    assert "\u202e" not in page and "am⟨U+202E⟩tnuo⟨U+27E8⟩U+200B⟨U+27E9⟩" in page, page[-600:]


@pytest.mark.timeout(120)
async def test_the_sign_in_page_shows_its_refusal_over_http(tmp_path: Path) -> None:
    with http_sentinel(console_config(tmp_path)) as (base, _proc):
        async with httpx2.AsyncClient(timeout=60) as http:
            form = await http.get(f"{base}/console/login")
            data = {"csrf": csrf_of(form.text), "secret": "no\u202e"}
            r = await http.post(f"{base}/console/login", data=data, headers={"origin": base})
            assert r.status_code == 401, r.text[:300]
            assert 'role="alert">That is not a console secret.' in r.text
        async with signed_in(base, ALICE) as person:
            sessions = await person.page("/console/sessions")
            assert "Sessions" in sessions
