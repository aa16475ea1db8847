"""A hostile app's screen cannot flood the answer: a megabyte-long text or content-desc is cut in every answer
with a mark of Sentinel's own outside its quotes, a screen of 100k nodes or nested ten thousand deep is read
only to the node and depth caps, every page of the listing stays under a size cap (the elements that do not
fit go to the next page, none is dropped), and the answer says what was cut, in its text and its structured
content. Real device server, fake adb server on 127.0.0.1, a real mcp.Client."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from tests.device.device_helpers import adb_server, connect, ui_node

from device_tools.element_registry import MAX_DEPTH, MAX_NODES, PAGE_BUDGET

pytestmark = pytest.mark.timeout(120)
APP = "com.example.hostile"
DUMP = "uiautomator dump /dev/tty"


def dump_of(*children: ET.Element) -> bytes:
    root = ui_node("android.widget.FrameLayout", APP, "[0,0][1080,2400]", children)
    return b'<hierarchy rotation="0">' + ET.tostring(root) + b"</hierarchy>"


def answer_size(r) -> int:
    return sum(len(c.text) for c in r.content) + len(json.dumps(r.structured_content))


async def read(fake_adb, tmp_path, dump: bytes, page: int = 1):
    fake_adb.script[DUMP].append(dump)
    async with connect(adb_server(fake_adb, tmp_path)) as client:
        return await client.call_tool("screen_read", {"page": page})


@pytest.mark.parametrize("where", ["text", "content_desc"])
@pytest.mark.parametrize("filler", ["a", "\u202e", "\U000e0041", "'\n"])
async def test_a_megabyte_label_is_cut_with_a_visible_mark(fake_adb, tmp_path, where, filler):
    size = 1_000_000 // len(filler.encode())
    huge = ui_node("android.widget.Button", APP, "[0,100][1080,300]", clickable="true",
                   **{where: "Pay now " + filler * size})
    ok = ui_node("android.widget.Button", APP, "[0,400][1080,600]", clickable="true", text="Cancel")
    r = await read(fake_adb, tmp_path, dump_of(huge, ok))
    assert not r.is_error, r.content[0].text[:300]
    text = r.content[0].text
    assert answer_size(r) < 2 * PAGE_BUDGET, answer_size(r)
    line = next(x for x in text.splitlines() if "Pay now" in x)
    assert "characters cut)" in line.split("'")[-1] or "characters cut)" in line.rsplit('"', 1)[-1], line
    assert "text='Cancel'" in text  # the other elements are still listed
    shown = r.structured_content["elements"][0]
    field = "text" if where == "text" else "desc"
    assert len(shown[field]) < 1000 and shown["cut"][field] == len("Pay now ") + size * len(filler)
    assert r.structured_content["cut"]["labels"] == 1


async def test_a_hundred_thousand_nodes_are_read_to_the_cap_and_the_answer_says_so(fake_adb, tmp_path):
    rows = b"".join(b'<node text="r" bounds="[0,0][9,9]"/>' for _ in range(100_000))
    r = await read(fake_adb, tmp_path, b'<hierarchy rotation="0">' + rows + b"</hierarchy>")
    assert not r.is_error, r.content[0].text[:300]
    assert f"only the first {MAX_NODES} nodes were read" in r.content[0].text
    assert r.structured_content["cut"]["nodes"] == MAX_NODES
    assert answer_size(r) < 2 * PAGE_BUDGET


async def test_nodes_nested_past_the_depth_cap_are_skipped_and_the_answer_says_so(fake_adb, tmp_path):
    depth = 10_000
    body = b'<node text="d" bounds="[0,0][9,9]">' * depth + b"</node>" * depth
    r = await read(fake_adb, tmp_path, b'<hierarchy rotation="0">' + body + b"</hierarchy>")
    assert not r.is_error, r.content[0].text[:300]
    assert f"nodes deeper than {MAX_DEPTH} levels were skipped" in r.content[0].text
    assert r.structured_content["cut"]["depth"] == MAX_DEPTH
    assert answer_size(r) < 2 * PAGE_BUDGET


async def test_every_page_stays_under_the_cap_and_no_element_is_lost(fake_adb, tmp_path):
    """Sixty elements each at the label cap (in text, desc and resource id) would be a page far past the cap:
    the page ends early and the rest are on the next pages."""
    long = "\U000e0041" * 300  # a tag character: escaped as \U000e0041, ten characters in the listing
    nodes = [ui_node("android.widget.Button", APP, f"[0,{i * 10}][1080,{i * 10 + 9}]", clickable="true",
                     text=f"{i:03d}{long}", content_desc=f"d{long}", resource_id=f"{APP}:id/{long}")
             for i in range(40)]
    seen: list[str] = []
    pages = None
    page = 1
    while pages is None or page <= pages:
        fake_adb.script[DUMP].append(dump_of(*nodes))
        async with connect(adb_server(fake_adb, tmp_path)) as client:
            r = await client.call_tool("screen_read", {"page": page})
        assert answer_size(r) < 2 * PAGE_BUDGET and len(r.content[0].text) <= PAGE_BUDGET + 2000
        assert not r.is_error, r.content[0].text[:300]
        pages = r.structured_content["pages"]
        seen += [e["text"][:3] for e in r.structured_content["elements"]]
        page += 1
    assert pages > 2 and seen == [f"{i:03d}" for i in range(40)]


async def test_wait_for_returns_the_first_hits_and_says_how_many_matched(fake_adb, tmp_path):
    from device_tools.ui_tools import MAX_FOUND

    nodes = [ui_node("android.widget.TextView", APP, f"[0,{i * 10}][1080,{i * 10 + 9}]",
                     text=f"Pay {i} " + "x" * 5000) for i in range(300)]
    fake_adb.script[DUMP].append(dump_of(*nodes))
    async with connect(adb_server(fake_adb, tmp_path)) as client:
        r = await client.call_tool("wait_for", {"text": "pay", "timeout_s": 0})
    assert not r.is_error, r.content[0].text[:300]
    assert len(r.structured_content["found"]) == MAX_FOUND and r.structured_content["found_total"] == 300
    assert answer_size(r) < 3 * PAGE_BUDGET
