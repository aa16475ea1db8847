"""The console's editor offers every file of the rulebase in force, the files an include brings in as well as
the configured ones: an included file is shown, checked and replayed where it stands (its including file and
that file's other includes copied beside it, apart); a name not of the set is refused, whatever its spelling,
and the files in force are never written. Real Sentinel, real HTTP, the signed-in owner."""

from __future__ import annotations

import json

import pytest
from tests.console.console_rig import OWNER_TOKEN, console_config, http_sentinel, signed_in

pytestmark = pytest.mark.timeout(240)
LIVE = {"x-console-live": "check"}
EXTRA = "extra_ok(x).\n:- public extra_ok/1.\n"
WORDS = "words_ok(y).\n:- public words_ok/1.\n:- include_rules('more/extra.pl').\n"


def _setup(tmp):  # type: ignore[no-untyped-def]
    cfg = console_config(tmp)
    rules = tmp / "rules"
    (rules / "more").mkdir(parents=True)
    (rules / "more" / "extra.pl").write_text(EXTRA)
    (rules / "words.pl").write_text(WORDS)
    (tmp / "outside.pl").write_text("outside_secret(42).\n")
    body = json.loads(cfg.read_text())
    body["sentinel"]["rulebases"].append(str(rules / "words.pl"))
    cfg.write_text(json.dumps(body))
    return cfg, rules


def _problems(r) -> list[str]:  # type: ignore[no-untyped-def]
    assert r.status_code == 200, r.text[:500]
    return [p["message"] for p in r.json()["problems"]]


async def test_an_included_file_is_offered_checked_and_replayed_where_it_stands(tmp_path):
    cfg, rules = _setup(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner:
            page = await owner.get("/console/policy?file=more/extra.pl")
            assert page.status_code == 200, page.text[:500]
            assert '<option value="more/extra.pl" selected>' in page.text
            assert "extra_ok(x)." in page.text  # its text is the candidate shown
            r = await owner.post("/console/policy/check", {"file": "more/extra.pl", "candidate": EXTRA},
                                 headers=LIVE)
            assert _problems(r) == []
            r = await owner.post("/console/policy/check",
                                 {"file": "more/extra.pl", "candidate": EXTRA + "also :- shell(ls).\n"},
                                 headers=LIVE)
            assert any("shell" in m for m in _problems(r)), _problems(r)
            # read where it stands: a predicate the including file declares is there to be used
            uses = EXTRA + "extra_uses(Z) :- words_ok(Z).\n:- public extra_uses/1.\n"
            r = await owner.post("/console/policy/check", {"file": "more/extra.pl", "candidate": uses},
                                 headers=LIVE)
            assert not [m for m in _problems(r) if "words_ok" in m], _problems(r)
            r = await owner.post("/console/policy/whatif", {"file": "more/extra.pl", "candidate": uses})
            assert r.status_code == 200, r.text[:500]
            assert 'id="whatif-report"' in r.text
    assert (rules / "more" / "extra.pl").read_text() == EXTRA  # nothing in force was written
    assert (rules / "words.pl").read_text() == WORDS


NOT_OF_THE_SET = [
    "../outside.pl", "more/../words.pl", "more/../../outside.pl", "./more/extra.pl", "more//extra.pl",
    "more/./extra.pl", "/etc/passwd", "/tmp/x.pl", "MORE/extra.pl", "more/extra.pl\x00", "more\\extra.pl",
    "more/extra.pl/", "more/extra", "extra.pl", "more\uff0fextra.pl", "more/extra.pl ", "%2e%2e/outside.pl",
]


async def test_a_name_not_of_the_set_is_refused_on_every_path(tmp_path):
    cfg, rules = _setup(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, OWNER_TOKEN) as owner:
            for name in NOT_OF_THE_SET:
                page = await owner.get("/console/policy", params={"file": name})
                assert page.status_code == 400 and "outside_secret" not in page.text, (name, page.text[:300])
                r = await owner.post("/console/policy/check", {"file": name, "candidate": "ok(1).\n"},
                                     headers=LIVE)
                assert "choose one of the loaded files" in r.text, (name, r.text[:300])
                r = await owner.post("/console/policy/whatif", {"file": name, "candidate": "ok(1).\n"})
                assert r.status_code == 400, (name, r.text[:300])
                assert "choose one of the loaded files" in r.text, (name, r.text[:300])
    assert (tmp_path / "outside.pl").read_text() == "outside_secret(42).\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".pl") == ["outside.pl"]
