"""The Policy page over real HTTP against a real Sentinel: every rulebase version loaded (start-up, hot
reload,
a refused change) with hash, time, cause and loader, the difference between two versions, the hot-reload
status, the editor's check (a plain form post, and the script's live request), and the what-if replay's two
proofs side by side as trees. Hostile rule text is never markup; forms need the principal's CSRF token."""

from __future__ import annotations

import asyncio
import html
import json
import re
import shutil

import pytest
from tests.console.console_rig import BOB, OWNER_TOKEN, console_config, csrf_of, http_sentinel, signed_in
from tests.identity.identity_rig import BOOKINGS_PL

pytestmark = pytest.mark.timeout(180)
XSS_RULE = "% <script>alert('rule')</script> </pre><img src=x onerror=alert(1)>\n"
VERSIONS = re.compile(r"<td><code>([0-9a-f]{64})</code></td>")


async def wait_versions(person, n: int) -> list[str]:
    for _ in range(150):
        page = await person.page("/console/policy/history")
        found = VERSIONS.findall(page)
        if len(found) >= n:
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"fewer than {n} loads in the history")


async def test_history_diff_hot_reload_and_check(tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    mine = rules / "bookings.pl"
    shutil.copy(BOOKINGS_PL, mine)
    cfg = console_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["sentinel"]["rulebases"] = [
        r if not r.endswith("bookings.pl") else str(mine) for r in body["sentinel"]["rulebases"]
    ]
    cfg.write_text(json.dumps(body))
    original = mine.read_text()
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner, signed_in(base, BOB) as bob:
            [first] = await wait_versions(owner, 1)
            page = await owner.page("/console/policy/history")
            assert "start-up" in page and "in force" in page and "Sentinel pid" in page
            # a change on disk: hot reload loads it, the history names the file that changed
            mine.write_text(original + XSS_RULE + "% second version\n")
            second, again = (await wait_versions(owner, 2))[:2]
            assert again == first and second != first
            page = await owner.page("/console/policy/history")
            assert "hot reload: changed bookings.pl" in page
            # a change that does not load is recorded as refused; the version before stays in force
            mine.write_text(original + "guard(x, (\n")
            refused = (await wait_versions(owner, 3))[0]
            page = await owner.page("/console/policy/history")
            assert "refused" in page and refused not in (first, second)
            policy = await owner.page("/console/policy")
            assert "the last change did not load" in policy and f'id="policy-version">{second}<' in policy
            # the difference between two versions, hostile rule text shown as text
            diff = await owner.page(f"/console/policy/history?a={first}&b={second}")
            block = diff[diff.index('id="version-diff"') :]
            assert '<span class="l-add">+% second version</span>' in block
            assert "<script>alert" not in block and "<img src=x" not in block and "&lt;script&gt;" in block
            for a, b, status in (
                (first, "0" * 64, 404),
                ("../../etc", second, 400),
                ("<b>", "x", 400),
                (first, "", 400),
            ):
                r = await owner.get("/console/policy/history", params={"a": a, "b": b})
                assert r.status_code == status and "<b>" not in r.text[r.text.index("<main") :], (a, b)
            # another principal reads the same versions (they are Sentinel's, not owner's)
            assert first in await bob.page("/console/policy/history")

            # the editor's check: a plain form post (no script) answers with the problems and keeps the text
            broken = original + "\nguard(x, (\n" + XSS_RULE
            r = await owner.post("/console/policy/check", {"file": "bookings.pl", "candidate": broken})
            assert r.status_code == 200 and 'id="candidate-check"' in r.text
            section = r.text[r.text.index('id="candidate-check"') :]
            assert "error" in section and "<script>alert" not in r.text[r.text.index("<main") :]
            assert html.escape("guard(x, (") in r.text  # the text is kept in the editor
            r = await owner.post("/console/policy/check", {"file": "bookings.pl", "candidate": original})
            assert "No problems." in r.text[r.text.index('id="candidate-check"') :]
            # the script's live check: the same form, JSON back
            csrf = csrf_of(await owner.page("/console/policy"))
            r = await owner.http.post(
                f"{base}/console/policy/check",
                data={"csrf": csrf, "file": "bookings.pl", "candidate": broken},
                headers={"origin": base, "x-console-live": "check"},
            )
            assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
            assert any(p["severity"] == "error" for p in r.json()["problems"])
            # the syntax error's column a field of its own, for the editor to place it (none: null)
            assert any(p["severity"] == "error" and isinstance(p["column"], int) and p["column"] > 0
                       for p in r.json()["problems"]), r.json()
            # not a loaded file, a path, too long: refused, nothing written anywhere
            for name, text in (
                ("../bookings.pl", original),
                ("/etc/passwd", original),
                ("other.pl", original),
                ("bookings.pl", "x" * 200_001),
            ):
                r = await owner.post("/console/policy/check", {"file": name, "candidate": text})
                assert r.status_code in (400, 413), name
            assert mine.read_text() == original + "guard(x, (\n"  # the files in force are never touched
            # CSRF: no token, a forged one, bob's, or a cross-site form: refused (the JSON variant too)
            for forged in (None, "", "0" * 64, csrf_of(await bob.page("/console/policy"))):
                r = await owner.post(
                    "/console/policy/check", {"file": "bookings.pl", "candidate": original}, csrf=forged
                )
                assert r.status_code == 403, forged
                r = await owner.post(
                    "/console/policy/check",
                    {"file": "bookings.pl", "candidate": original},
                    csrf=forged,
                    headers={"x-console-live": "check"},
                )
                assert r.status_code == 403 and not r.headers["content-type"].startswith("application/json")
            r = await owner.post(
                "/console/policy/check",
                {"file": "bookings.pl", "candidate": original},
                headers={"sec-fetch-site": "cross-site"},
            )
            assert r.status_code == 403
            # every form of the console, signed in: without owner's own token, nothing is done
            forms = (
                "/console/inbox/x",
                "/console/policy/whatif",
                "/console/policy/check",
                "/console/sessions/owner/x/revoke",
                "/console/consents/revoke",
                "/console/consents/sensors/revoke",
                "/console/logout",
            )
            bobs = csrf_of(await bob.page("/console/inbox"))
            for path in forms:
                for forged in (None, "", "0" * 64, bobs):
                    r = await owner.post(
                        path,
                        {
                            "file": "bookings.pl",
                            "candidate": original,
                            "fact": "x(1)",
                            "kind": "camera",
                            "decision": "approve",
                        },
                        csrf=forged,
                    )
                    assert r.status_code == 403, (path, forged)
                r = await owner.post(path, {"decision": "deny"}, headers={"sec-fetch-site": "cross-site"})
                assert r.status_code == 403, path
            assert (await owner.get("/console/inbox")).status_code == 200  # still signed in: logout refused
            # a candidate is code run in Sentinel's engine: only the owner tries one (bob with his own token)
            page = await bob.page("/console/policy")
            assert 'id="owner-only"' in page and 'id="candidate-text"' not in page
            for path in ("/console/policy/check", "/console/policy/whatif"):
                r = await bob.post(path, {"file": "bookings.pl", "candidate": original})
                assert r.status_code == 403 and "only the owner" in r.text, (path, r.text[:300])
                r = await bob.post(path, {"file": "bookings.pl", "candidate": original},
                                   headers={"x-console-live": "check"})
                assert r.status_code == 403, path
            for path in ("/console/policy/check", "/console/policy/history"):
                async with __import__("httpx2").AsyncClient() as anon:
                    r = await anon.request("POST" if path.endswith("check") else "GET", base + path)
                    assert r.status_code in (401, 303), path
