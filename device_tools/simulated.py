"""SimulatedDevice: an in-memory phone that answers the same shell commands a real one does.

Screens are uiautomator XML fixtures (``screens/*.xml``); ``screens/transitions.json`` says what a
tap on element X of screen A does. Typed text appears in the focused field, back/home work,
intents open screens or record alarms, ``content`` queries read seed tables, and sent messages
are recorded. Because it interprets the *commands* (``input tap 540 1200``, ``am start ...``),
the tool modules and the actuator run the same code path as on a phone.
"""

from __future__ import annotations

import copy
import functools
import io
import json
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from . import adb_request, content_rows
from .android_time import epoch_ms
from .backend import Listening
from .element_registry import handles_touch, parse_bounds
from .commands import NAME_READS
from .simulated_programs import alarm_dump_text, network_dump, shell_program
from .text_input import decode_input_text

SCREENS_DIR = Path(__file__).parent / "screens"


@functools.lru_cache(maxsize=16)
def _font(size: int):  # noqa: ANN202 - a PIL font
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


@dataclass
class SentMessage:
    to: str
    body: str
    via: str  # "ui" (tapped Send) or the intent that prefilled it


@dataclass
class SimState:
    screen: str
    history: list[str] = field(default_factory=list)
    vars: dict[str, str] = field(default_factory=dict)
    fields: dict[tuple[str, str], str] = field(default_factory=dict)  # (screen, node key) -> text
    toggles: dict[tuple[str, str], bool] = field(default_factory=dict)
    focused: tuple[str, str] | None = None


class SimulatedDevice:
    name = "simulated"
    unicode_text = False  # it mirrors adb's `input text`, which is ASCII-only
    lists_windows = True

    def __init__(self, screens_dir: Path = SCREENS_DIR) -> None:
        spec = json.loads((screens_dir / "transitions.json").read_text())
        self._spec = spec
        self.size: tuple[int, int] = tuple(spec.get("size", [1080, 2400]))  # type: ignore[assignment]
        self._trees = {name: ET.parse(screens_dir / f).getroot() for name, f in spec["screens"].items()}
        self.state = SimState(screen=spec["start"])
        self.tables: dict[str, list[dict[str, str]]] = copy.deepcopy(spec.get("providers", {}))
        self.contacts: dict[str, str] = dict(spec.get("contacts", {}))
        self.sent_messages: list[SentMessage] = []
        self.transfers: list[dict[str, str]] = []
        # other apps' windows: {"package", "bounds": (x1, y1, x2, y2), "touchable", "below"?, "dumped"?},
        # later ones on top; in ``dumpsys window windows``, and they take taps; not in the dump (it reads the
        # active window) unless "dumped" (a test put its nodes in the screen's tree: they take taps and focus)
        self.overlays: list[dict[str, Any]] = []
        self.overlay_taps: list[tuple[str, int, int]] = []  # taps an overlay received instead of the app
        self.alarms: list[dict[str, str]] = [dict(a) for a in spec.get("alarms", [])]
        # the Wi-Fi and Bluetooth names the phone knows (None: its services do not answer)
        self.network: dict[str, Any] | None = copy.deepcopy(spec.get("network", {}))
        self.timers: list[dict[str, str]] = []
        self.commands: list[list[str]] = []  # every command received, in order (tests assert on it)
        self.recents_shown = 0
        self._presses = 0
        self.waiting_for_key = False
        self.connected = True

    # ---- test / user API ----------------------------------------------------------
    def press_volume_up(self) -> None:
        """The user presses the physical Volume Up button."""
        self._presses += 1

    @property
    def screen(self) -> str:
        return self.state.screen

    def field_text(self, resource_id_suffix: str) -> str:
        """What the user would see typed in a field of the current screen (by resource-id suffix)."""
        return self._field_by_rid(resource_id_suffix)

    # ---- DeviceBackend ------------------------------------------------------------
    async def describe(self) -> dict[str, str]:
        return {"backend": "simulated", "serial": "simulated-1", "screen": self.state.screen}

    def check_sendable(self, argv: Sequence[str]) -> None:
        """What adb could not send is refused here too, with adb's error (``adb_request``): a test on the
        simulated phone meets the limit a phone has."""
        adb_request.check_sendable(argv)

    async def shell(self, argv: Sequence[str], *, timeout: float = 20.0) -> str:
        adb_request.check_fits(adb_request.service("shell", argv))
        return (await self._exec(argv)).decode("utf-8", errors="replace")

    async def exec_out(self, argv: Sequence[str], *, timeout: float = 20.0) -> bytes:
        adb_request.check_fits(adb_request.service("exec", argv))
        return await self._exec(argv)

    async def _exec(self, argv: Sequence[str]) -> bytes:
        argv = [str(a) for a in argv]
        if not self.connected:
            from .errors import DeviceUnavailable

            raise DeviceUnavailable("simulated device is disconnected")
        self.commands.append(argv)
        return self._run(argv)

    async def wait_for_key(self, key: str, *, timeout: float, question: str = "",
                           listening: Listening | None = None) -> bool:
        self.commands.append(["getevent", "-l"])
        start = self._presses
        deadline = time.monotonic() + timeout
        self.waiting_for_key = True
        try:
            if listening is not None:
                await listening()
            while time.monotonic() < deadline:
                if self._presses > start and key == "KEY_VOLUMEUP":
                    return True
                await anyio.sleep(0.02)
            return False
        finally:
            self.waiting_for_key = False

    # ---- the interpreter ----------------------------------------------------------
    def _run(self, a: list[str]) -> bytes:
        if a[:3] == ["uiautomator", "dump", "/dev/tty"]:
            xml = ET.tostring(self._render(), encoding="unicode")
            return (
                "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
                + xml
                + "UI hierchary dumped to: /dev/tty\n"
            ).encode()
        if a == ["screencap", "-p"]:
            return self._screencap()
        if a == ["wm", "size"]:
            return f"Physical size: {self.size[0]}x{self.size[1]}\n".encode()
        if a[:2] == ["input", "tap"] and len(a) == 4:
            self._tap(int(a[2]), int(a[3]), long=False)
            return b""
        if a[:2] == ["input", "swipe"] and len(a) in (6, 7):
            x1, y1, x2, y2 = (int(v) for v in a[2:6])
            if (x1, y1) == (x2, y2):
                self._tap(x1, y1, long=True)
            return b""
        if a[:2] == ["input", "text"] and len(a) == 3:
            if self.state.focused is not None:
                self.state.fields[self.state.focused] = self.state.fields.get(
                    self.state.focused, ""
                ) + decode_input_text(a[2])
            return b""
        if a[:2] == ["input", "keyevent"]:
            for code in a[2:]:
                self._key(code)
            return b""
        if a[:2] == ["monkey", "-p"] and len(a) >= 3:
            target = self._spec.get("apps", {}).get(a[2])
            if target is None:
                return b"** No activities found to run, monkey aborted.\n"
            self._go(target)
            return b"Events injected: 1\n"
        if a[:2] == ["am", "start"]:
            return self._intent(a[2:]).encode()
        if a[:2] == ["content", "query"]:
            return self._content_query(a[2:]).encode()
        if a[:2] == ["content", "insert"]:
            return self._content_insert(a[2:]).encode()
        if a == ["dumpsys", "alarm"]:
            return alarm_dump_text(self.alarms, time.time()).encode()
        if a == ["dumpsys", "window", "windows"]:
            return self._window_list().encode()
        if a in NAME_READS:
            return network_dump(a, self.network).encode()
        return shell_program(a, packages=sorted(self._spec.get("apps", {}))).encode()

    # ---- screens ------------------------------------------------------------------
    def _go(self, screen: str) -> None:
        if screen == "@back":
            self._key("KEYCODE_BACK")
            return
        if screen != self.state.screen:
            self.state.history.append(self.state.screen)
        self.state.screen = screen
        self.state.focused = None

    @staticmethod
    def _walk(root: ET.Element) -> list[tuple[str, ET.Element, list[ET.Element]]]:
        """(position key, node, ancestors) for every node, in document order."""
        out: list[tuple[str, ET.Element, list[ET.Element]]] = []

        def visit(node: ET.Element, key: str, ancestors: list[ET.Element]) -> None:
            out.append((key, node, ancestors))
            for i, child in enumerate(node):
                visit(child, f"{key}/{i}", ancestors + [node])

        for i, child in enumerate(root):
            visit(child, str(i), [])
        return out

    def _render(self) -> ET.Element:
        screen = self.state.screen
        root = copy.deepcopy(self._trees[screen])
        for key, node, _ in self._walk(root):
            text = node.get("text", "")
            if "{" in text:
                for var, value in self.state.vars.items():
                    text = text.replace("{" + var + "}", value)
                node.set("text", text)
            if (screen, key) in self.state.fields:
                value = self.state.fields[(screen, key)]
                node.set("text", "•" * len(value) if node.get("password") == "true" else value)
            if (screen, key) in self.state.toggles:
                node.set("checked", "true" if self.state.toggles[(screen, key)] else "false")
            node.set("focused", "true" if self.state.focused == (screen, key) else "false")
        return root

    def _hit(self, x: int, y: int) -> tuple[str, ET.Element, list[ET.Element]] | None:
        """The node a touch at (x, y) reaches, as Android dispatches it and as ``hit_test.receiver`` predicts:
        the topmost node there that takes touches (later in document order = drawn on top); a node that does
        not take touches lets it through to what lies under it."""
        best = None
        for key, node, ancestors in self._walk(self._render()):
            b = parse_bounds(node.get("bounds", ""))
            if b and b[0] <= x < b[2] and b[1] <= y < b[3] and handles_touch(node):
                best = (key, node, ancestors)
        return best

    def _windows(self) -> list[dict[str, Any]]:
        """Every window, topmost first: the overlays above the app, the app's, the ones below it."""
        root = self._trees[self.state.screen]
        app = {"package": root[0].get("package", "") if len(root) else "",
               "bounds": (0, 0, *self.size), "touchable": True, "type": "BASE_APPLICATION"}
        above = [o for o in self.overlays if not o.get("below")]
        below = [o for o in self.overlays if o.get("below")]
        overlay = {"type": "APPLICATION_OVERLAY"}
        return [*({**overlay, **o} for o in reversed(above)), app,
                *({**overlay, **o} for o in reversed(below))]

    def _window_list(self) -> str:
        """``dumpsys window windows`` as Android 12 prints it (the fields the observer reads)."""
        out = ["WINDOW MANAGER WINDOWS (dumpsys window windows)"]
        windows = self._windows()
        for i, w in enumerate(windows):
            x1, y1, x2, y2 = w["bounds"]
            title = w.get("title", w["package"])  # the owner's name for it (the system UI's: StatusBar, ...)
            flags = "NOT_FOCUSABLE LAYOUT_IN_SCREEN" + ("" if w["touchable"] else " NOT_TOUCHABLE")
            out += [
                f"  Window #{len(windows) - 1 - i} Window{{{i + 0x4f1c2a0:x} u0 {title}}}:",
                f"    mDisplayId=0 rootTaskId=1 mSession=Session{{7c2b3{i} 1234:u0a10123}}",
                f"    mOwnerUid=10123 showForAllUsers=false package={w['package']} appop=NONE",
                f"    mAttrs={{(0,0)(fillxfill) sim={{adjust=pan}} ty={w['type']} fmt=TRANSLUCENT",
                f"      fl={flags}}}",
                "    mHasSurface=true isReadyForDisplay()=true mWindowRemovalAllowed=false",
                f"    Frames: parent=[0,0][{self.size[0]},{self.size[1]}] display=[0,0][{self.size[0]},"
                f"{self.size[1]}] frame=[{x1},{y1}][{x2},{y2}] last=[{x1},{y1}][{x2},{y2}] "
                "insetsChanged=false",
                "    mViewVisibility=0x0 mHaveFrame=true mObscured=false",
                f"    isOnScreen={str(w.get('visible', True)).lower()}",
                f"    isVisible={str(w.get('visible', True)).lower()}",
            ]
        return "\n".join(out) + "\n"

    def _tap(self, x: int, y: int, *, long: bool) -> None:
        for w in self._windows():  # the topmost window there that takes touches gets it
            x1, y1, x2, y2 = w["bounds"]
            if w.get("visible", True) and w["touchable"] and x1 <= x < x2 and y1 <= y < y2:
                if w.get("dumped"):  # a window whose nodes the screen's dump holds: they take the touch
                    break
                if w.get("type") == "APPLICATION_OVERLAY":
                    self.overlay_taps.append((w["package"], x, y))
                    return
                break
        hit = self._hit(x, y)
        if hit is None:
            return
        key, node, ancestors = hit
        chain = [(key, node)] + [
            ("/".join(key.split("/")[:-i]), anc) for i, anc in enumerate(reversed(ancestors), 1)
        ]
        screen = self.state.screen
        for k, n in chain:
            if n.get("class", "").endswith("EditText"):
                self.state.focused = (screen, k)
                return
            if n.get("checkable") == "true" and not long:
                self.state.toggles[(screen, k)] = n.get("checked") != "true"
                return
            rule = self._rule_for(screen, n)
            if rule is not None and not long:
                for var, source in rule.get("set", {}).items():
                    self.state.vars[var] = (
                        self._descendant_text(n, source[1:]) if source.startswith("@") else source
                    )
                if "effect" in rule:
                    self._effect(rule["effect"])
                if "to" in rule:
                    self._go(rule["to"])
                return
            if n.get("clickable") == "true" or n.get("long-clickable") == "true":
                return  # a control with no scripted effect: the tap lands, nothing changes

    def _rule_for(self, screen: str, node: ET.Element) -> dict[str, Any] | None:
        for rule in self._spec.get("transitions", []):
            if rule["screen"] != screen:
                continue
            if all(node.get(attr, "") == want for attr, want in rule["target"].items()):
                return rule
        return None

    @staticmethod
    def _descendant_text(node: ET.Element, rid_suffix: str) -> str:
        for d in node.iter():
            if d.get("resource-id", "").endswith("/" + rid_suffix):
                return d.get("text", "")
        return ""

    def _field_by_rid(self, rid_suffix: str) -> str:
        for key, node, _ in self._walk(self._trees[self.state.screen]):
            if node.get("resource-id", "").endswith("/" + rid_suffix):
                return self.state.fields.get((self.state.screen, key), "")
        return ""

    def _clear_field(self, rid_suffix: str) -> None:
        for key, node, _ in self._walk(self._trees[self.state.screen]):
            if node.get("resource-id", "").endswith("/" + rid_suffix):
                self.state.fields.pop((self.state.screen, key), None)

    def _effect(self, effect: str) -> None:
        if effect == "send_message":
            body = self._field_by_rid("compose_message_text")
            if not body:
                return  # the real Send button is disabled with an empty field
            to = self.state.vars.get("conversation", "")
            self.sent_messages.append(SentMessage(to=self.contacts.get(to, to), body=body, via="ui"))
            rows = self.tables.setdefault("content://sms/sent", [])
            rows.append(
                {
                    "_id": str(len(rows) + 1),
                    "address": self.contacts.get(to, to),
                    "body": body,
                    "date": str(int(time.time() * 1000)),
                    "read": "1",
                }
            )
            self.state.vars["last_message"] = body
            self._clear_field("compose_message_text")
        elif effect == "transfer":
            self.transfers.append(
                {"recipient": self._field_by_rid("recipient_iban"), "amount": self._field_by_rid("amount")}
            )

    def _key(self, code: str) -> None:
        if code in ("KEYCODE_BACK", "4"):
            if self.state.history:
                self.state.screen = self.state.history.pop()
                self.state.focused = None
        elif code in ("KEYCODE_HOME", "3"):
            if self.state.screen != self._spec["start"]:
                self.state.history.append(self.state.screen)
            self.state.screen = self._spec["start"]
            self.state.focused = None
        elif code in ("KEYCODE_APP_SWITCH", "187"):
            self.recents_shown += 1
        elif code in ("KEYCODE_DEL", "67") and self.state.focused is not None:
            self.state.fields[self.state.focused] = self.state.fields.get(self.state.focused, "")[:-1]

    # ---- intents and providers ----------------------------------------------------
    def _intent(self, args: list[str]) -> str:
        opts: dict[str, str] = {}
        extras: dict[str, str] = {}
        i = 0
        while i < len(args):
            if args[i] in ("-a", "-d", "-t", "-n") and i + 1 < len(args):
                opts[args[i]] = args[i + 1]
                i += 2
            elif args[i] in ("--es", "--ei", "--ez", "--el", "--eia", "-e") and i + 2 < len(args):
                extras[args[i + 1]] = args[i + 2]
                i += 3
            else:
                i += 1
        action = opts.get("-a", "")
        ok = f"Starting: Intent {{ act={action} }}\n"
        if action == "android.intent.action.SENDTO" and opts.get("-d", "").split(":")[0] in ("sms", "smsto"):
            number = opts["-d"].split(":", 1)[1]
            name = next((n for n, num in self.contacts.items() if num == number), number)
            self._go("compose")
            self.state.vars.update(conversation=name, last_message="")
            for key, node, _ in self._walk(self._trees["compose"]):
                if node.get("resource-id", "").endswith("/compose_message_text"):
                    self.state.fields[("compose", key)] = extras.get("sms_body", "")
            return ok
        if action == "android.intent.action.SET_ALARM":
            self.alarms.append({k.rsplit(".", 1)[-1]: v for k, v in extras.items()})
            return ok
        if action == "android.intent.action.SET_TIMER":
            self.timers.append({k.rsplit(".", 1)[-1]: v for k, v in extras.items()})
            return ok
        if action == "android.intent.action.SHOW_ALARMS":
            return ok
        if action == "android.intent.action.INSERT" and opts.get("-t") == "vnd.android.cursor.dir/contact":
            # The simulated contacts editor saves at once (a real one waits for the user's Save).
            rows = self.tables.setdefault("content://com.android.contacts/data/phones", [])
            name, phone = extras.get("name", ""), extras.get("phone", "")
            rows.append({"_id": str(len(rows) + 1), "display_name": name, "data1": phone})
            self.contacts[name] = phone
            return ok
        return f"Starting: Intent {{ act={action} }}\nError: Activity not started, unable to resolve Intent\n"

    def _content_query(self, args: list[str]) -> str:
        opts = dict(zip(args[::2], args[1::2]))
        uri = opts.get("--uri", "")
        if uri not in self.tables:
            return f"Error while accessing provider:{uri.split('/')[2] if '//' in uri else uri}\n"
        projection = opts.get("--projection", "").split(":") if "--projection" in opts else None
        rows = self.tables[uri]
        if projection is None:
            projection = list(rows[0]) if rows else []
        if opts.get("--sort", "").endswith(" DESC"):
            col = opts["--sort"].split()[0]
            # as SQLite orders a text column it cannot read as a number: below every number
            rows = sorted(rows, key=lambda r: epoch_ms(r.get(col) or "0") or 0, reverse=True)
        return content_rows.format_rows(rows, projection) + "\n"

    def _content_insert(self, args: list[str]) -> str:
        uri = args[args.index("--uri") + 1] if "--uri" in args else ""
        if uri not in self.tables:
            return f"Error while accessing provider:{uri}\n"
        row: dict[str, str] = {}
        for i, arg in enumerate(args):
            if arg == "--bind" and i + 1 < len(args):
                name, _kind, value = args[i + 1].split(":", 2)
                row[name] = value
        row.setdefault("_id", str(len(self.tables[uri]) + 1))
        self.tables[uri].append(row)
        return ""

    def _screencap(self) -> bytes:
        from PIL import Image, ImageDraw

        image = Image.new("RGB", self.size, "white")
        draw = ImageDraw.Draw(image)
        for _key, node, _ in self._walk(self._render()):
            b = parse_bounds(node.get("bounds", ""))
            if not b:
                continue
            cls = node.get("class", "")
            if cls.endswith(("Button", "EditText", "CheckBox", "Switch")):
                # controls get a light surface, as on a phone; text has none
                draw.rectangle(b, fill="#e6e6e6")
            label = node.get("text")  # a content-desc labels an icon for screen readers: it is not drawn
            if label:
                # text at a phone's size, shrunk to fit its box, so a screenshot reads like a real one
                size = max(12, min(40, (b[3] - b[1]) * 3 // 5))
                while size > 12 and _font(size).getlength(label) > b[2] - b[0] - 16:
                    size -= 2
                draw.text((b[0] + 8, b[1] + 4), label, fill="black", font=_font(size))
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        return buf.getvalue()
