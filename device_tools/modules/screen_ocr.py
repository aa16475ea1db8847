"""``screen_ocr``: read the text in a region of the screen (the design's screen-selection flow) with
Tesseract."""

from __future__ import annotations

from collections.abc import Callable

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from ..arg_shapes import MAX_COORD_PX, coordinate
from .. import commands as C
from ..element_registry import Element, Snapshot
from ..errors import DeviceError
from ..ocr import CONFIDENCE_GATE, OcrError, language_hints, ocr_region
from ..results import error_result, read_result, screen_source
from ..runtime import DeviceRuntime
from ..ui_tools import READ


def register(mcp: MCPServer, rt: DeviceRuntime) -> None:
    @mcp.tool(annotations=READ, meta=rt.privacy.declaration("personal"))
    @rt.privacy.screen_tool  # the image read shows what screen_read would: the same consents
    async def screen_ocr(
        ctx: Context,
        x1: int | None = None,
        y1: int | None = None,
        x2: int | None = None,
        y2: int | None = None,
        element_id: str | None = None,
        snapshot_id: str | None = None,
        languages: list[str] | None = None,
        personal: list[str] | None = None,
    ) -> CallToolResult:
        """Read the text in a screen region: pixel corners (x1, y1)-(x2, y2), or an element (element_id with
        its
        snapshot_id), or the whole screen. `languages`: hints such as latin, cyrillic, arabic, cjk or
        Tesseract
        codes (eng, rus, ...), at most 4 (more, or an unknown spelling, is refused). Below the confidence
        gate (0.6) the text is only a candidate: ask the user.
        An app holding personal data on screen needs the user's consent, as for screen_read (`personal`)."""
        try:
            hints = language_hints(languages)  # refused whole, never cut
        except OcrError as exc:
            return error_result(str(exc))
        region: tuple[int, int, int, int] | None = None
        check = None
        if element_id is not None:
            snapshot = rt.actuator.registry.get(snapshot_id or "")
            found = snapshot.find(element_id) if snapshot else None
            if found is None:
                return error_result(
                    f"no element {element_id!r} in snapshot {snapshot_id!r}; call screen_read"
                )
            region = found.bounds
            check = _still(found, snapshot_id or "")
        elif any(v is not None for v in (x1, y1, x2, y2)):
            if None in (x1, y1, x2, y2):
                return error_result(
                    "give all four corners x1, y1, x2, y2 (pixels), or an element, or nothing"
                )
            assert x1 is not None and y1 is not None and x2 is not None and y2 is not None
            if not all(coordinate(v) for v in (x1, y1, x2, y2)):  # arg_shapes.py, mirrored by device.pl
                return error_result(f"the corners must be in 0..{MAX_COORD_PX} (integers)")
            if x2 <= x1 or y2 <= y1:
                return error_result("the region needs x2 > x1 and y2 > y1")
            region = (x1, y1, x2, y2)
        try:
            png, screens, apps = await rt.privacy.captured(
                ctx, rt.actuator.observe, lambda: rt.gate.read_bytes(C.SCREENCAP), rt.actuator.acting,
                rt.actuator.visible_windows, check)
            result = await ocr_region(png, region, hints)
            rt.privacy.read_off(result.text, result.candidate_text)  # a known network's name in the pixels
        except (OcrError, DeviceError) as exc:
            return error_result(str(exc))
        data = result.public() | ({"screens": screens} if screens else {})
        if snapshot_id is not None and element_id is not None:
            data["snapshot_id"] = snapshot_id  # the element's screen counts too
        if result.passed_gate:
            text = f"OCR ({result.language_hint}, confidence {result.confidence:.2f}):\n{result.text}"
        elif result.candidate_text:
            text = (
                f"OCR confidence {result.confidence:.2f} is below the gate ({CONFIDENCE_GATE}); the text is "
                f"unreliable, ask the user what the region says. Candidate:\n{result.candidate_text}"
            )
        else:
            text = "no text found in the region"
        if result.missing_languages:
            text += (
                f"\n(language packs not installed: {', '.join(result.missing_languages)}; "
                f"used {'+'.join(result.languages)})"
            )
        # text on the screen is whatever the apps that draw it put there: named as a listing names them
        return read_result(text, data, untrusted=screen_source(apps))


def _still(wanted: Element, snapshot_id: str) -> Callable[[Snapshot], str | None]:
    """Why a screen read around the capture does not show ``wanted`` as ``snapshot_id`` had it (None: it
    does): its pixels there would be another element's, read as this one's."""
    def check(screen: Snapshot) -> str | None:
        now = screen.by_id.get(wanted.id)
        if now is not None and now.fingerprint == wanted.fingerprint and now.bounds == wanted.bounds:
            return None
        return (f"refused as stale: element {wanted.id} ({wanted.shown}) is no longer on the screen as "
                f"snapshot {snapshot_id} had it. Nothing was read; call screen_read")
    return check
