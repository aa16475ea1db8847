"""The screen as the agent sees it: parsed from a device result (``screen_read`` or an action's fresh screen).

Everything in it came from the phone, so it is data: it goes to the model only inside the fenced context, is
capped, and no field of it is ever used as a tool name or an instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_ELEMENTS = 60
MAX_LABEL = 80
MAX_CONTEXT_CHARS = 6000
MAX_INDEX = 100_000  # an element's index or a screen's total: past any dump's node cap
# how an id, a class, a resource id or a package is spelled: shown bare only then. The screen (and a device
# server) may put a line break there (\n, \r, U+2028, U+0085, ...) and a line that reads as Sentinel's own
_NAME = re.compile(r"[A-Za-z0-9_.$:/#-]{1,120}")
# a short index as the model writes one ("7", "#7"): ASCII digits, as many as a screen can number. Not
# ``str.isdigit``: it is true of "²" (``int`` refuses it), "٣" (``int`` reads 3) and of 5,000 digits
_INDEX = re.compile(r"#?([0-9]{1,6})")


@dataclass(frozen=True)
class ScreenElement:
    id: str
    index: int
    cls: str
    text: str
    desc: str
    resource: str
    flags: tuple[str, ...]
    hint: str = ""
    # the app whose window it is drawn in, as the device names it ("" when it does not): a node's own
    # ``package``, and the screen's (the package most nodes claim), are the apps' word
    window: str = ""

    @property
    def label(self) -> str:
        return (self.text or self.desc or self.hint.split(" | ")[0] or self.resource
                or f"(unlabeled {self.cls})")[:MAX_LABEL]

    @property
    def editable(self) -> bool:
        return "editable" in self.flags

    @property
    def password(self) -> bool:
        return "password" in self.flags

    def line(self, app: str = "") -> str:
        """Its line in the listing; ``app``: the screen's, whose window goes unsaid."""
        parts = [f"{_name(self.id)} {_name(self.cls)}"]
        if self.text:
            parts.append(f"text={_clip(self.text)!r}")
        if self.desc and self.desc != self.text:
            parts.append(f"desc={_clip(self.desc)!r}")
        if self.hint and not (self.text or self.desc):
            parts.append(f"contains={_clip(self.hint)!r}")
        if self.resource and not (self.text or self.desc):
            parts.append(f"res={_name(self.resource)}")
        shown = [f for f in self.flags if f in ("clickable", "editable", "checked", "scrollable", "password")]
        if shown:
            parts.append(",".join(shown))
        if self.window and self.window != app:  # another app's window drawn on this screen
            parts.append(f"in-app={_name(self.window)}")
        return " ".join(parts)


@dataclass
class Screen:
    snapshot_id: str
    package: str
    elements: list[ScreenElement] = field(default_factory=list)
    total: int = 0

    @classmethod
    def from_result(cls, structured: Any) -> Screen | None:
        """A screen from ``screen_read``'s structured content or an action result's ``screen``; None if
        absent."""
        if not isinstance(structured, dict):
            return None
        inner = structured.get("screen")
        data: dict[str, Any] = inner if isinstance(inner, dict) else structured
        sid, elements = data.get("snapshot_id"), data.get("elements")
        if not isinstance(sid, str) or not isinstance(elements, list):
            return None
        parsed: list[ScreenElement] = []
        for raw in elements[:MAX_ELEMENTS]:
            if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
                continue
            flags = raw.get("flags")
            parsed.append(
                ScreenElement(
                    id=raw["id"][:64],
                    index=_count(raw.get("index"), MAX_INDEX) or len(parsed) + 1,
                    cls=_text(raw.get("class")).rsplit(".", 1)[-1][:40],
                    text=_text(raw.get("text")),
                    desc=_text(raw.get("desc")),
                    resource=_text(raw.get("resource_id")).rsplit("/", 1)[-1][:60],
                    # a list of words, or none: a string's letters are no flags ("password" is not p,a,s,...)
                    flags=tuple(f for f in flags if isinstance(f, str))[:12]
                    if isinstance(flags, list) else (),
                    hint=_text(raw.get("hint")),
                    window=_text(raw.get("window"))[:120],
                )
            )
        return cls(
            snapshot_id=sid[:80],  # the device's: "s-" and a whole sha256 (66), bounded all the same
            package=_text(data.get("package"))[:120],
            elements=parsed,
            total=_count(data.get("total"), MAX_INDEX) or len(parsed),
        )

    def element(self, ref: str | None) -> ScreenElement | None:
        if not ref:
            return None
        ref = str(ref).strip()
        index = _INDEX.fullmatch(ref)
        if index is not None:
            i = int(index.group(1))
            return next((e for e in self.elements if e.index == i), None)
        return next((e for e in self.elements if e.id == ref), None)

    def window_of(self, ref: str | None) -> str:
        """The app whose window the element ``ref`` is drawn in, as the device names it; "" when unknown."""
        found = self.element(ref)
        return found.window if found is not None else ""

    def summary(self, limit: int = 240) -> str:
        """One line for a trace: the app and the first labels on the screen."""
        labels = ", ".join(_clip(e.label) for e in self.elements[:12])
        app = _name(self.package) if self.package else "unknown app"
        text = f"{app}, {len(self.elements)} elements: {labels}"
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def describe(self) -> str:
        """The listing the model reads (inside the fenced context), bounded."""
        app = _name(self.package) if self.package else "unknown"
        lines = [f"screen {_name(self.snapshot_id)} of app {app} ({self.total} elements)"]
        size = len(lines[0])
        for e in self.elements:
            line = e.line(self.package)
            if size + len(line) + 1 > MAX_CONTEXT_CHARS:
                lines.append("… (more elements not shown)")
                break
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)


def _count(value: Any, limit: int) -> int | None:
    """A whole number from 1 to ``limit`` as JSON carries one, else None (a string, a bool, a float, a
    number past any screen: the device server's word, which int() would turn into a crash or a 10**30)."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= limit:
        return value
    return None


def _text(value: Any) -> str:
    """A text field, or "" when it is not text (an object's repr is no label)."""
    return value if isinstance(value, str) else ""


def _name(value: str) -> str:
    """A name from the screen as the model reads it: bare when spelled as one, else quoted (``repr``: one
    line, line breaks and control characters escaped) and cut, so it cannot start a line of its own."""
    return value if _NAME.fullmatch(value) else repr(_clip(value))


def _clip(text: str, limit: int = MAX_LABEL) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def withheld_kinds(result: Any) -> list[str]:
    """The consent kinds a screen read was withheld for (``device_tools/screen_privacy.py``), if any."""
    structured = getattr(result, "structured_content", None)
    withheld = structured.get("withheld") if isinstance(structured, dict) else None
    kinds = withheld.get("kinds") if isinstance(withheld, dict) else None
    return [k for k in kinds if isinstance(k, str)][:8] if isinstance(kinds, list) else []
