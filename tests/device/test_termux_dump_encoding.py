"""The accessibility dump is UTF-16, and an app's label is a Java string, which may hold a lone surrogate
(``"\\ud800"``) or end on half a character. Decoded strictly, such a label made every screen read of that
screen fail with an unexpected error; now it is read as the adb path reads a bad byte: U+FFFD, in its place,
and the rest of the screen is read whole."""

from __future__ import annotations

import pytest

from device_tools.element_registry import parse_dump
from device_tools.termux_backend import TermuxBackend

NODE = ('<node index="0" text="{}" resource-id="" class="android.widget.Button" package="com.x" '
        'content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" '
        'focused="false" scrollable="false" long-clickable="false" password="false" selected="false" '
        'bounds="[0,0][100,100]" />')


def utf16_dump(label_bytes: bytes, bom: bytes, codec: str) -> bytes:
    head, tail = NODE.split("{}")
    return (bom + f'<hierarchy rotation="0">{head}'.encode(codec) + label_bytes
            + f'{tail}<node index="1" text="Cancel" class="android.widget.Button" package="com.x" '
              f'clickable="true" bounds="[0,200][100,300]" /></hierarchy>'.encode(codec))


@pytest.mark.parametrize("bom,codec,label", [
    (b"\xff\xfe", "utf-16-le", b"\x00\xd8"),  # a lone high surrogate
    (b"\xff\xfe", "utf-16-le", b"\x00\xdc" + "ok".encode("utf-16-le")),  # a lone low surrogate
    (b"\xfe\xff", "utf-16-be", b"\xd8\x00" + "x".encode("utf-16-be")),  # big endian, high then no low
])
async def test_a_label_with_half_a_character_is_read_with_a_replacement_mark(bom, codec, label):
    dump = utf16_dump(label, bom, codec)
    out = await TermuxBackend(lambda argv, timeout: dump).exec_out(["uiautomator", "dump", "/dev/tty"])
    snapshot = parse_dump(out)
    assert [e.text for e in snapshot.elements][1] == "Cancel"
    assert "\ufffd" in snapshot.elements[0].text
