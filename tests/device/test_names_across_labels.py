"""A name the phone knows drawn over several labels: an app (a web page's spans, a list row's two text
views, a card that draws each letter apart) puts "Rosen" and "thaler Hof Gast" in adjacent nodes of the
dump, and OCR breaks a short name over two lines. On main each label was matched alone ("a name never runs
from one label into the next"), so such a screen was shown to a caller without ``nearby_devices``. Now
adjacent labels are joined for matching, in document order, with word edges kept at the ends."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from mcp import Client

from device_tools.network_names import folded, shows_name_across
from device_tools.read_off_names import shows_read_off
from device_tools.screen_privacy import NAMES_SHOWN
from sentinel_mcp.app.runtime import running_gateway
from tests.device.device_helpers import ui_node
from tests.device.test_network_names import DUMP, over_adb, withheld
from tests.identity.identity_rig import text
from tests.identity.test_screen_consent import Person, everything

pytestmark = pytest.mark.timeout(120)
APP = "com.example.browser"


def dump_of_labels(*labels: str, desc: bool = False) -> bytes:
    """A real dump's shape: a page, a row (a LinearLayout with an id) holding a text view per label."""
    views = tuple(ui_node("android.widget.TextView", APP, f"[{40 + 60 * i},300][{100 + 60 * i},360]",
                          index=str(i), resource_id=f"{APP}:id/part{i}",
                          **({"content_desc": label} if desc else {"text": label}))
                  for i, label in enumerate(labels))
    row = ui_node("android.widget.LinearLayout", APP, "[0,280][1080,380]", views, resource_id=f"{APP}:id/row")
    title = ui_node("android.widget.TextView", APP, "[0,100][1080,200]", text="Nearby", index="0")
    root = ui_node("android.widget.FrameLayout", APP, "[0,0][1080,2400]", (title, row))
    return b'<hierarchy rotation="0">' + ET.tostring(root, encoding="utf-8") + b"</hierarchy>"


async def _read(tmp_path, fake_adb, dump: bytes) -> object:
    fake_adb.device.network["saved"] = ["Rosenthaler Hof Gast", "HomeNet"]
    fake_adb.script[DUMP].extend([dump] * 4)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            return await c.call_tool("device__screen_read", {})


@pytest.mark.parametrize("labels, desc, secret", [
    (("Joined", "Rosenthaler", "Hof Gast"), False, "Hof Gast"),  # split at a space
    (("Joined Rosen", "thaler Hof Gast"), False, "thaler"),  # inside a word
    (("Rosenthaler ", " Hof ", "Gast today"), False, "Gast today"),  # spaces kept at the ends
    (tuple("HomeNet"), False, "part6"),  # a letter per node
    (("Home", "Net"), True, "Net"),  # in content descriptions
])
async def test_a_name_over_adjacent_labels_is_withheld(tmp_path, fake_adb, labels, desc, secret):
    withheld(await _read(tmp_path, fake_adb, dump_of_labels(*labels, desc=desc)), NAMES_SHOWN, secret)


async def test_adjacent_labels_that_do_not_spell_a_name_are_shown(tmp_path, fake_adb):
    shown = await _read(tmp_path, fake_adb, dump_of_labels("Rosenthaler", "Platz", "Hof"))
    assert "withheld" not in (shown.structured_content or {}), everything(shown)[:600]
    assert "Rosenthaler" in text(shown) and "Platz" in text(shown)


@pytest.mark.parametrize("labels, shown", [
    (["Rosen", "thaler Hof Gast"], True),
    (["Go to", "Home", "Net now"], True),
    (["xHome", "Net"], False),  # the name's edges are a label's or a word's
    (["Home", "Network"], False),
    (["Home", "Nets"], False),
    (["Rosenthaler", "Hof"], False),  # a part of the name
])
def test_the_join_keeps_a_names_edges(labels, shown):
    names = [folded(n) for n in ("Rosenthaler Hof Gast", "HomeNet")]
    assert shows_name_across(labels, names) is shown


@pytest.mark.parametrize("ocr", ["Connected to Ho-\nme", "Joined Li\nna today", "Home\nNet"])
def test_a_short_name_ocr_breaks_over_two_lines_is_the_name(ocr):
    """A name under six letters is matched as words (in a run it would be inside other words): a line break
    (after a hyphen or not) inside it is the name too."""
    assert shows_read_off(ocr, [folded(n) for n in ("Home", "Lina", "HomeNet")])


def test_a_short_name_is_not_found_across_unrelated_lines():
    assert not shows_read_off("go ho\nmeal\nhomework", [folded("Home")])
