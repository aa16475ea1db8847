"""OCR of a screen region with the real Tesseract: a known rendered image, the simulated phone through the
gateway, the confidence gate, language hints, and bad regions."""

from __future__ import annotations

import io
import random
import shutil

import pytest
from tests.device.device_helpers import element, snapshot_id
from mcp import Client
from PIL import Image, ImageDraw, ImageFont

from device_tools.ocr import (MAX_HINTS, OcrError, choose_languages, crop, language_hints, ocr_region,
                              parse_tsv, script_of)
from sentinel_mcp.config import parse_config
from sentinel_mcp.app.runtime import running_gateway

pytestmark = [pytest.mark.timeout(90),
              pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract-ocr is not installed "
                                 "(make system installs it)")]


def rendered(lines: list[tuple[tuple[int, int], str, int]], size=(1080, 800)) -> bytes:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    for xy, text, px in lines:
        draw.text(xy, text, fill="black", font=ImageFont.load_default(size=px))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


async def test_reads_a_known_region_and_only_that_region():
    png = rendered([((40, 40), "Invoice 4711 paid", 48), ((40, 500), "Transfer 900 EUR now", 48)])
    top = await ocr_region(png, (0, 0, 1080, 200))
    assert top.passed_gate and top.confidence >= 0.6, top
    assert top.text.replace("\n", " ") == "Invoice 4711 paid"
    assert "Transfer" not in top.candidate_text and top.language_hint == "latin" and top.languages == ["eng"]
    whole = await ocr_region(png)
    assert "Invoice 4711 paid" in whole.text and "Transfer 900 EUR now" in whole.text


async def test_noise_stays_below_the_gate_and_is_only_a_candidate():
    rng = random.Random(7)
    image = Image.new("L", (600, 200), 255)
    image.putdata([rng.choice((0, 255)) for _ in range(600 * 200)])
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    result = await ocr_region(buf.getvalue())
    assert not result.passed_gate and result.text == "" and result.confidence < 0.6


async def test_language_hints_use_installed_packs_and_name_the_missing_ones():
    png = rendered([((40, 40), "Settings", 48)])
    result = await ocr_region(png, None, ["cyrillic", "latin"])
    assert "Settings" in result.text
    assert "eng" in result.languages and "rus" not in result.languages  # only eng is installed here
    assert "rus" in result.missing_languages
    assert choose_languages(["cjk"], {"eng"}) == (["eng"], ["chi_sim", "chi_tra", "jpn", "kor"])
    assert choose_languages(["eng", "ENG", " "], {"eng", "deu"}) == (["eng"], [])


@pytest.mark.parametrize("region", [(0, 0, 3, 3), (2000, 2000, 2100, 2100), (500, 500, 500, 900)])
def test_empty_or_outside_regions_are_refused(region):
    with pytest.raises(OcrError, match="empty or smaller"):
        crop(rendered([((0, 0), "x", 20)], (1080, 1000)), region)


def test_garbage_image_and_tsv_edge_cases():
    with pytest.raises(OcrError, match="not an image"):
        crop(b"\x89PNG not really", None)
    tsv = ("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
           "5\t1\t1\t1\t1\t1\t0\t0\t10\t10\t90\tHello\n5\t1\t1\t1\t1\t2\t0\t0\t10\t10\t-1\t\n"
           "5\t1\t1\t1\t2\t1\t0\t0\t10\t10\tbad\tx\n5\t1\t1\t1\t2\t1\t0\t0\t10\t10\t50\tok\nshort\trow\n")
    text, conf, words = parse_tsv(tsv)
    assert text == "Hello\nok" and words == 2 and abs(conf - (90 * 5 + 50 * 2) / 7 / 100) < 1e-9
    assert script_of("Привет мир") == "cyrillic" and script_of("مرحبا") == "arabic"
    assert script_of("你好") == "cjk" and script_of("1234 !!") == "unknown"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_screen_ocr_through_the_gateway_reads_an_element_of_the_simulated_phone(tmp_path, mode):
    config = parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": ["device"],
                                                          "device": {"backend": "simulated"}}},
                          source="<test>", base_dir=tmp_path)
    async with running_gateway(config) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")  # Messages is on the screen read
        async with Client(rt.front.server, mode=mode) as c:
            home = await c.call_tool("device__screen_read", {})
            messages = await c.call_tool("device__click", {"element_id": element(home, text="Messages")["id"],
                                                           "snapshot_id": snapshot_id(home)})
            snippet = element(messages, text="See you at 7?")
            r = await c.call_tool("device__screen_ocr", {"element_id": snippet["id"],
                                                         "snapshot_id": snapshot_id(messages)})
            assert not r.is_error, r.content[0].text
            assert r.structured_content["text"] == "See you at 7?" and r.structured_content["passed_gate"]
            assert "untrusted" in r.structured_content["source"]
            # screen text, marked as such by the gateway before the model or the client reads it
            assert r.content[0].text.startswith("[Untrusted content from the phone's screen")
            box = await c.call_tool("device__screen_ocr", {"x1": 0, "y1": 84, "x2": 1080, "y2": 240})
            assert "Messages" in box.structured_content["text"]
            half = await c.call_tool("device__screen_ocr", {"x1": 0, "y1": 84})
            assert half.is_error and "all four corners" in half.content[0].text
            stale = await c.call_tool(
                "device__screen_ocr", {"element_id": "e-00000000", "snapshot_id": "s-0"}
            )
            assert stale.is_error and "call screen_read" in stale.content[0].text


def test_a_screen_image_past_a_screens_size_is_refused_before_it_is_decoded():
    buf = io.BytesIO()
    Image.new("1", (5000, 4000)).save(buf, format="PNG")  # 2.5 KB declaring 20 million pixels
    with pytest.raises(OcrError, match="5000x4000 image, more than a screen's"):
        crop(buf.getvalue(), None)


@pytest.mark.parametrize("hints", [
    ["latin"] * (MAX_HINTS + 1),  # one more than is read: it was dropped, and nothing said so
    ["eng", "x" * 21],  # past 20 characters: it was cut to 20, and the cut name looked up
    ["eng+rus"], ["../../tmp/evil"], ["eng "], [""], ["en"], ["e\u0301ng"], ["ｅｎｇ"], ["eng\n"],
    ["eng\x00"],
    ["script/Latin"], ["chi_sim_vert_x"], ["-l"], ["1eng"],
])
def test_language_hints_past_the_bounds_are_refused_saying_what(hints):
    """A hint the tool would cut, drop or cannot read is refused, naming it: no silent change of what was
    asked."""
    with pytest.raises(OcrError) as refused:
        language_hints(hints)
    said = str(refused.value)
    assert "languages" in said and ("at most" in said or "not a language" in said), said


def test_language_hints_within_the_bounds_are_kept_whole():
    assert language_hints(None) == []
    assert language_hints(["latin", "CJK", "eng", "chi_sim"]) == ["latin", "cjk", "eng", "chi_sim"]
    assert language_hints(["chi_sim_vert"]) == ["chi_sim_vert"]


async def test_screen_ocr_refuses_bad_hints_before_any_capture(tmp_path):
    config = parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": ["device"],
                                                          "device": {"backend": "simulated"}}},
                          source="<test>", base_dir=tmp_path)
    async with running_gateway(config) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server) as c:
            before = len(phone.commands)
            r = await c.call_tool("device__screen_ocr", {"languages": ["latin"] * (MAX_HINTS + 1)})
            assert r.is_error and f"at most {MAX_HINTS}" in r.content[0].text, r.content[0].text
            r = await c.call_tool("device__screen_ocr", {"languages": ["eng", "x" * 30]})
            assert r.is_error and "not a language" in r.content[0].text, r.content[0].text
            assert len(phone.commands) == before  # refused before the screen was read or captured
            r = await c.call_tool("device__screen_ocr", {"languages": ["latin", "eng"]})
            assert not r.is_error, r.content[0].text


async def test_ocr_of_an_element_no_longer_where_its_snapshot_had_it_is_refused(tmp_path):
    """OCR of an element reads the pixels where the snapshot had it: the screen moved on since (another app,
    the list scrolled), and the text read there was another element's, returned as this one's. The dumps read
    around the capture must show the element unchanged, where it was; else the read is refused as stale."""
    config = parse_config({"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "builtins": ["device"],
                                                          "device": {"backend": "simulated"}}},
                          source="<test>", base_dir=tmp_path)
    async with running_gateway(config) as rt:
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server) as c:
            home = await c.call_tool("device__screen_read", {})
            messages = await c.call_tool("device__click", {"element_id": element(home, text="Messages")["id"],
                                                           "snapshot_id": snapshot_id(home)})
            snippet = element(messages, text="See you at 7?")
            phone._go("home")  # the person went home meanwhile
            r = await c.call_tool("device__screen_ocr", {"element_id": snippet["id"],
                                                         "snapshot_id": snapshot_id(messages)})
            text = r.content[0].text
            assert r.is_error and "refused as stale" in text and "call screen_read" in text, text
            # back on the screen it was read on: read
            phone._go("messages_list")
            r = await c.call_tool("device__screen_ocr", {"element_id": snippet["id"],
                                                         "snapshot_id": snapshot_id(messages)})
            assert not r.is_error and r.structured_content["text"] == "See you at 7?", r.content[0].text
