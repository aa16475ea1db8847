"""Round three of the names the phone knows on the screen: the networks in range (a scan names the neighbours'
Wi-Fi: the phone's place), and the spellings text read off pixels gives a name (OCR splits it over lines
and words, reads 0 for O, rn for m). A name of one or two characters is matched only as a whole label: in
words it would withhold every screen. On main a neighbour's network and a name OCR split were shown to any
caller, and a paired device called "A" withheld every screen saying "a"."""

from __future__ import annotations

import shutil

import anyio
import pytest
from mcp import Client

from device_tools.network_names import NetworkNames, folded, scan_result_names, shows_name
from device_tools.read_off_names import shows_read_off
from device_tools.screen_privacy import NAMES_CROWDED, NAMES_SHOWN
from device_tools.simulated import SimulatedDevice
from device_tools.simulated_programs import network_dump
from sentinel_mcp.app.runtime import running_gateway
from tests.device.test_network_names import DUMP, dump_of, over_adb, withheld
from tests.device.test_screen_ocr import rendered
from tests.identity.identity_rig import text
from tests.identity.test_screen_consent import Person, everything

pytestmark = pytest.mark.timeout(120)
NEIGHBOUR = "Nachbar-WLAN 3.OG"


async def _screen_read(tmp_path, fake_adb) -> object:
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            return await c.call_tool("device__screen_read", {})


async def test_a_network_in_range_is_withheld_like_a_saved_one(tmp_path, fake_adb):
    fake_adb.device.network["in_range"] = [NEIGHBOUR, "Telekom_FON"]
    fake_adb.script[DUMP].extend([dump_of("com.example.browser", text=f"Free Wi-Fi nearby: {NEIGHBOUR}")] * 4)
    withheld(await _screen_read(tmp_path, fake_adb), NAMES_SHOWN, "Nachbar", "Free Wi-Fi")
    assert fake_adb.device_commands().count("cmd wifi list-scan-results") == 1


async def test_a_flood_of_networks_in_range_does_not_turn_the_check_off(tmp_path, fake_adb):
    """A beacon flooder (a few euros of hardware) puts a thousand made-up networks in range: the phone's own
    names are still checked, and since the ones in range cannot all be, every screen is withheld from a caller
    without nearby_devices until the flood is gone."""
    fake_adb.device.network["in_range"] = [f"free-wifi-{i:04d}" for i in range(1000)]
    fake_adb.script[DUMP].extend([dump_of("com.example.browser", text="Connected to Home")] * 4)
    named = await _screen_read(tmp_path, fake_adb)
    assert named.structured_content["withheld"]["apps"] == sorted([NAMES_SHOWN, NAMES_CROWDED]), named
    assert "Connected" not in everything(named)
    fake_adb.script[DUMP].clear()
    fake_adb.script[DUMP].extend([dump_of("com.example.notes", text="Shopping list")] * 4)
    withheld(await _screen_read(tmp_path, fake_adb), NAMES_CROWDED, "Shopping")


async def test_a_neighbours_name_that_breaks_the_scan_list_does_not_turn_the_check_off(tmp_path, fake_adb):
    """An SSID is 32 bytes of anything: a line break in one makes a row Android's format does not have. The
    phone's own names are still checked, and the screen is withheld (the neighbours' are not known)."""
    fake_adb.device.network["in_range"] = ["Nachbar\n[ESS]", NEIGHBOUR]
    fake_adb.script[DUMP].extend([dump_of("com.example.browser", text="Connected to Home")] * 4)
    named = await _screen_read(tmp_path, fake_adb)
    assert named.structured_content["withheld"]["apps"] == sorted([NAMES_SHOWN, NAMES_CROWDED]), named
    assert "Connected" not in everything(named)


def test_the_scan_is_read_again_once_its_time_is_up():
    """The neighbours change as the phone moves: the scan is kept ``ttl`` seconds, then read again."""
    phone = SimulatedDevice()
    phone.network["in_range"] = ["Cafe Zentral"]
    now = [100.0]

    async def read(argv):
        return network_dump(list(argv), phone.network)

    names = NetworkNames(read, ttl=15.0, clock=lambda: now[0])

    async def run() -> None:
        assert folded("Cafe Zentral") in (await names.current() or ())
        phone.network["in_range"] = ["Bahnhof Free WLAN"]
        now[0] += 14.0
        assert folded("Bahnhof Free WLAN") not in (await names.current() or ())
        now[0] += 2.0
        fresh = await names.current() or frozenset()
        assert folded("Bahnhof Free WLAN") in fresh and folded("Cafe Zentral") not in fresh
        assert names.reads == 2

    anyio.run(run)


def test_androids_scan_list_gives_the_names():
    """``cmd wifi list-scan-results`` (AOSP ``ScanResultUtil.dumpScanResults``, as phones print it): an SSID
    padded to 32 columns between the age and the flags; a hidden network (no SSID); a name in two access
    points; ages as a comma locale and a stale result print them."""
    head = ("    BSSID              Frequency      RSSI           Age(sec)     SSID"
            "                                 Flags")
    rows = [("02:00:00:00:01:00", 2412, "-50(0:-50/1:-51)", "3.104", "Caf\u00e9 Zentral [5G]",
             "[WPA2-PSK-CCMP][RSN-PSK-CCMP][ESS]"),
            ("02:00:00:00:01:01", 5180, "-61", "47,180", "Caf\u00e9 Zentral [5G]", "[WPA2-PSK-CCMP][ESS]"),
            ("0a:1b:2c:3d:4e:5f", 2437, "-80", ">1000.0", "", "[WPA2-PSK-CCMP][ESS]"),
            ("0a:1b:2c:3d:4e:60", 2437, "-71", "___?___", "\U0001f3e0 Fam. M\u00fcller", "[ESS]")]
    lines = [head] + [f"  {b:>17}  {f:9d}  {r:>15}   {a:>8}    {s:<32}  {fl}" for b, f, r, a, s, fl in rows]
    assert scan_result_names("\n".join(lines) + "\n") == [
        "Caf\u00e9 Zentral [5G]", "Caf\u00e9 Zentral [5G]", "\U0001f3e0 Fam. M\u00fcller"]
    assert scan_result_names("No scan results\n") == []
    for bad in ("cmd: Can't find service: wifi\n", "", "Unknown command: list-scan-results\n"):
        with pytest.raises(Exception, match="did not print"):
            scan_result_names(bad)


async def test_a_name_of_one_or_two_characters_does_not_withhold_every_screen(tmp_path, fake_adb):
    """A paired device called "A", a saved network called "5G": in words they are everywhere ("buy a cake");
    only a label that is the name and nothing else (the Wi-Fi list's row, the Bluetooth page's) counts."""
    fake_adb.device.network["bonded"] = ["A"]
    fake_adb.device.network["saved"] = ["Home", "5G"]
    fake_adb.script[DUMP].extend([dump_of("com.example.notes", text="Buy a cake, 5G plan")] * 4)
    shown = await _screen_read(tmp_path, fake_adb)
    assert "Buy a cake, 5G plan" in text(shown), everything(shown)[:600]
    for label in ("A", " 5g ", "\uff21"):  # the row, spaced, fullwidth
        fake_adb.script[DUMP].clear()
        fake_adb.script[DUMP].extend([dump_of("com.android.settings", text=label)] * 4)
        withheld(await _screen_read(tmp_path, fake_adb), NAMES_SHOWN)


def test_the_floor_on_a_short_name_in_words():
    names = [folded(n) for n in ("A", "5G", "\u2615")]
    assert not shows_name("Buy a cake\nGet 5G now \u2615", names)
    assert shows_name("Wi-Fi\n  5G \nConnected", names) and shows_name("\u2615", names)
    assert shows_name("Home", [folded("Home")])  # three characters and more: as words, as before


def test_a_name_inside_other_words_too_often_counts_as_shown():
    """A neighbour names its network "aaa" and an app draws "aaaa…": every place the name sits inside a word
    is a step of the check; past a count the screen is withheld (no real screen repeats a name so)."""
    assert shows_name("a" * 10_000, [folded("aaa")])
    assert not shows_name("homework " * 40, [folded("Home")])


NAMES = ["HomeNet 5G", "Rosenthaler Hof Gast", "Fernweh Lounge", "Villa Kunterbunt",
         "\u2615 Caf\u00e9 Zentral", "\U0001f697 VW Golf 7F3A", NEIGHBOUR]


@pytest.mark.parametrize("ocr", [
    "Connected to Home-\nNet 5G",  # broken over a line with a hyphen
    "H o m e N e t  5 G",  # letter-spaced
    "HOMENET 5G",
    "\uff28\uff4f\uff4d\uff45\uff2e\uff45\uff54 \uff15\uff27",  # fullwidth
    "Home\u200bNet\u200d 5G",  # zero-width inside
    "H0meNet 5G", "HomeNet SG", "Ro5enthaIer Hof Ga5t", "Rosenthaler\nHof\nGast",
    "Femweh Lounge",  # rn read as m
    "Vi11a Kunterbunt", "VIlla KunterBunt", "ViIIa Kunter-\nbunt",
    "Cafe Zentral", "Caf\u00e9\nZentral",  # the emoji is not in the pixels OCR reads, the accent may go
    "VW Golf 7F3A", "VW GoIf 7F3A",
    "Hier Nach bar-WLAN 3.OG", "Uber Nachbar-VV LAN 3.0G",  # an r before its n, a v before its w: no m
])
def test_an_ocr_spelling_of_a_name_is_the_name(ocr):
    names = [folded(n) for n in NAMES]
    assert shows_read_off(ocr, names)


def test_a_name_split_at_every_position_is_the_name():
    names = [folded(n) for n in NAMES]
    for name in NAMES[:4]:
        for i in range(1, len(name)):
            for cut in ("\n", " ", "-\n", "\u200b"):
                spelled = name[:i] + cut + name[i:]
                assert shows_read_off(f"Joined {spelled} today", names), spelled


@pytest.mark.parametrize("ocr", [
    "Homework and homepages",  # "Home" is four characters: matched as a word only, not across words
    "Homepage",
    "Rosenthal Hofgarten",  # a part of a name is not the name
    "Villa Kunter",
    "Buy a cake",
])
def test_what_is_not_a_name(ocr):
    names = [folded(n) for n in [*NAMES, "Home", "A", "5G"]]
    assert not shows_read_off(ocr, names)


def test_a_short_name_read_off_counts_only_alone_on_its_line():
    names = [folded(n) for n in ("A", "Home", "Mi", "Hamm")]
    assert shows_read_off("Wi-Fi\nA\nSaved", names) and shows_read_off("go H0me", names)
    assert shows_read_off("Wi-Fi\nMi\n", names)
    # the m read as rn is spelled out in the run of a longer name only: "Mi", "Hamm" are not six letters
    assert not shows_read_off("a list of a things, mi casa, hammer, harnrnrn", names)


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed")
async def test_a_name_ocr_reads_over_two_lines_is_withheld(tmp_path, fake_adb):
    fake_adb.script[DUMP].extend([dump_of("com.example.game", content_desc="")] * 6)
    image = rendered([((40, 300), "Joined Rosen-", 48), ((40, 380), "thaler Hof Gast", 48)],
                     size=(1080, 2400))
    fake_adb.script["screencap -p"].extend([image] * 2)
    async with running_gateway(over_adb(tmp_path, fake_adb)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Person()) as c:
            result = await c.call_tool("device__screen_ocr", {})
    withheld(result, NAMES_SHOWN, "thaler", "Joined")
