"""The agent reads the screen from its device server's structured content, and the device server is whichever
server the config names (``sentinel.agent.device``), so its fields are read strictly: a wrong type, a number
past any screen or a field left out is dropped or unknown, never a crash of the run (before, ``"index":
"x"`` raised ValueError and ``1e400`` OverflowError out of ``Screen.from_result``) and never letters read as
flags."""

from __future__ import annotations

import json

import pytest

from sentinel_mcp.agent.screen import MAX_ELEMENTS, Screen

GOOD = {"id": "e-1a2b3c4d", "index": 1, "class": "android.widget.Button", "text": "Send", "desc": "",
        "resource_id": "com.example:id/send", "flags": ["clickable"], "hint": ""}


def screen_of(element: dict | object = None, **top: object) -> Screen | None:
    data = {"snapshot_id": "s-1", "package": "com.example.app", "total": 1,
            "elements": [GOOD if element is None else element]} | top
    return Screen.from_result(json.loads(json.dumps(data).replace('"INF"', "1e400")))


@pytest.mark.parametrize("index", ["x", "1e400", "INF", True, [1], {"n": 1}, -5, 10**30, 2.5, None])
def test_an_index_not_a_small_whole_number_is_its_position(index):
    screen = screen_of(GOOD | {"index": index})
    assert screen is not None and screen.elements[0].index == 1
    assert screen.element("1") is screen.elements[0]


@pytest.mark.parametrize("total", ["many", "INF", True, [3], -1, 10**30, 2.5])
def test_a_total_not_a_small_whole_number_is_the_elements_read(total):
    screen = screen_of(total=total)
    assert screen is not None and screen.total == 1 and "(1 elements)" in screen.describe()


@pytest.mark.parametrize("flags", ["clickable,editable", {"editable": True}, 7, [["editable"]], "password"])
def test_flags_that_are_not_a_list_of_words_are_none(flags):
    screen = screen_of(GOOD | {"flags": flags})
    assert screen is not None
    element = screen.elements[0]
    assert element.flags == () and not element.editable and not element.password


@pytest.mark.parametrize("field", ["text", "desc", "hint", "class", "resource_id"])
@pytest.mark.parametrize("value", [{"a": "Send"}, ["Send"], 7, True, "INF"])
def test_a_label_that_is_not_text_is_empty(field, value):
    screen = screen_of(GOOD | {field: value})
    assert screen is not None
    e = screen.elements[0]
    shown = {"text": e.text, "desc": e.desc, "hint": e.hint, "class": e.cls, "resource_id": e.resource}[field]
    assert shown == ""
    screen.describe()


@pytest.mark.parametrize("bad", [["s-1"], 7, None])
def test_a_snapshot_id_or_elements_of_the_wrong_type_is_no_screen(bad):
    assert screen_of(snapshot_id=bad) is None
    assert Screen.from_result({"snapshot_id": "s-1", "elements": {"0": GOOD}}) is None


def test_at_most_the_cap_of_elements_is_read_and_each_label_is_bounded():
    many = [GOOD | {"id": f"e-{i:08x}", "index": i + 1, "text": "x" * 1_000_000} for i in range(5000)]
    screen = Screen.from_result({"snapshot_id": "s-1", "elements": many, "total": 5000})
    assert screen is not None and len(screen.elements) == MAX_ELEMENTS
    assert len(screen.describe()) < 7000
