"""Encoding text for Android's ``input text`` command.

``input text`` turns ``%s`` into a space and knows no other escape, so a space is sent as ``%s``
and a literal ``%s`` in the user's text is split across two commands (``...%`` then ``s...``).
Shell metacharacters are not handled here: every argv is quoted with ``shlex`` when it is joined
for ``adb shell``. Non-ASCII cannot travel through ``input text`` (it injects key events from the
ASCII key map), so it is refused unless the backend has a Unicode path.
"""

from __future__ import annotations

from .errors import TextNotTypeable

MAX_TEXT = 2000


def check_typeable(text: str, *, unicode_ok: bool) -> None:
    if not text:
        raise TextNotTypeable("nothing to type: the text is empty")
    if len(text) > MAX_TEXT:
        raise TextNotTypeable(f"text too long ({len(text)} characters, at most {MAX_TEXT})")
    controls = sorted({repr(c) for c in text if ord(c) < 32 or ord(c) == 127})
    if controls:
        raise TextNotTypeable(
            f"text contains control characters {', '.join(controls)}; type the lines separately "
            "and use press_key ENTER between them"
        )
    if not unicode_ok:
        bad = sorted({c for c in text if ord(c) > 126})
        if bad:
            raise TextNotTypeable(
                "this backend types through `adb shell input text`, which carries ASCII only; "
                f"cannot type {''.join(bad)!r}. Use the termux backend (accessibility ACTION_SET_TEXT) "
                "or an IME such as ADBKeyboard for non-ASCII text"
            )


def input_text_chunks(text: str) -> list[str]:
    """The ``input text`` arguments that type ``text`` exactly (spaces as %s, literal %s split)."""
    chunks: list[str] = []
    current: list[str] = []
    previous = ""
    for char in text:
        if char == "s" and previous == "%" and current:
            # A literal "%s" would become a space; end the command after the "%".
            chunks.append("".join(current))
            current = []
        current.append("%s" if char == " " else char)
        previous = char
    if current:
        chunks.append("".join(current))
    return chunks


def decode_input_text(argument: str) -> str:
    """What Android's ``input text`` types for one argument (mirrors Input.sendText)."""
    out: list[str] = []
    escape = False
    for char in argument:
        if escape:
            escape = False
            if char == "s":
                out[-1] = " "
                continue
        out.append(char)
        if char == "%":
            escape = True
    return "".join(out)
