"""The screen as the agent sees it: parsed from a device result (``screen_read`` or an action's fresh screen).

Everything in it came from the phone, so it is data: it goes to the model only inside the fenced context, is
capped, and no field of it is ever used as a tool name or an instruction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_ELEMENTS = 60
MAX_LABEL = 80
MAX_CONTEXT_CHARS = 6000


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

    def line(self) -> str:
        parts = [f"{self.id} {self.cls}"]
        if self.text:
            parts.append(f"text={_clip(self.text)!r}")
        if self.desc and self.desc != self.text:
            parts.append(f"desc={_clip(self.desc)!r}")
        if self.hint and not (self.text or self.desc):
            parts.append(f"contains={_clip(self.hint)!r}")
        if self.resource and not (self.text or self.desc):
            parts.append(f"res={self.resource}")
        shown = [f for f in self.flags if f in ("clickable", "editable", "checked", "scrollable", "password")]
        if shown:
            parts.append(",".join(shown))
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
            parsed.append(
                ScreenElement(
                    id=raw["id"][:64],
                    index=int(raw.get("index") or len(parsed) + 1),
                    cls=str(raw.get("class") or "").rsplit(".", 1)[-1][:40],
                    text=str(raw.get("text") or ""),
                    desc=str(raw.get("desc") or ""),
                    resource=str(raw.get("resource_id") or "").rsplit("/", 1)[-1][:60],
                    flags=tuple(str(f) for f in (raw.get("flags") or []) if isinstance(f, str))[:12],
                    hint=str(raw.get("hint") or ""),
                )
            )
        return cls(
            snapshot_id=sid[:64],
            package=str(data.get("package") or "")[:120],
            elements=parsed,
            total=int(data.get("total") or len(parsed)),
        )

    def element(self, ref: str | None) -> ScreenElement | None:
        if not ref:
            return None
        ref = str(ref).strip()
        if ref.lstrip("#").isdigit():
            i = int(ref.lstrip("#"))
            return next((e for e in self.elements if e.index == i), None)
        return next((e for e in self.elements if e.id == ref), None)

    def summary(self, limit: int = 240) -> str:
        """One line for a trace: the app and the first labels on the screen."""
        labels = ", ".join(e.label for e in self.elements[:12])
        text = f"{self.package or 'unknown app'}, {len(self.elements)} elements: {labels}"
        return text if len(text) <= limit else text[: limit - 1] + "…"

    def describe(self) -> str:
        """The listing the model reads (inside the fenced context), bounded."""
        lines = [f"screen {self.snapshot_id} of app {self.package or 'unknown'} ({self.total} elements)"]
        size = len(lines[0])
        for e in self.elements:
            line = e.line()
            if size + len(line) + 1 > MAX_CONTEXT_CHARS:
                lines.append("… (more elements not shown)")
                break
            lines.append(line)
            size += len(line) + 1
        return "\n".join(lines)


def _clip(text: str, limit: int = MAX_LABEL) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def withheld_kinds(result: Any) -> list[str]:
    """The consent kinds a screen read was withheld for (``device_tools/screen_privacy.py``), if any."""
    structured = getattr(result, "structured_content", None)
    withheld = structured.get("withheld") if isinstance(structured, dict) else None
    kinds = withheld.get("kinds") if isinstance(withheld, dict) else None
    return [k for k in kinds if isinstance(k, str)][:8] if isinstance(kinds, list) else []
