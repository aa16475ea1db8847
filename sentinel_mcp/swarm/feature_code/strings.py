"""String resources: every text a model wrote becomes one, named after where it is used, escaped for Android.

Kotlin and layouts refer to ``R.string.<name>`` only (the coding profile: no user-visible strings in
code), so the texts are data in ``strings.xml`` and can never become code.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from sentinel_mcp.swarm.feature_code.answers import Decisions
from sentinel_mcp.swarm.project_plan import snake

CONFIRM_MESSAGE = "confirm_message"


def resource_text(text: str) -> str:
    """Escape a text for an Android string resource (XML first, then aapt's own escapes)."""
    out = text.replace("\\", "\\\\").replace("'", "\\'").replace('"', '\\"').replace("\n", "\\n")
    if out[:1] in ("@", "?"):
        out = "\\" + out
    return escape(out)


def title(screen: str) -> str:
    return f"{snake(screen)}_title"


def hint(screen: str, field: str) -> str:
    return f"{snake(screen)}_{snake(field)}_hint"


def button(screen: str, action: str) -> str:
    return f"{snake(screen)}_{snake(action)}_button"


def empty(screen: str) -> str:
    return f"{snake(screen)}_empty"


def done(screen: str, action: str) -> str:
    return f"{snake(screen)}_{snake(action)}_done"


def blank(screen: str, action: str) -> str:
    return f"{snake(screen)}_{snake(action)}_blank"


def label(screen: str) -> str:
    return f"{snake(screen)}_label"


def screen_strings(d: Decisions, screen: str) -> dict[str, str]:
    """The resources one screen's accepted answers define (name -> text)."""
    out: dict[str, str] = {}
    ui = d.screens.get(screen)
    if ui is not None:
        out[title(screen)] = ui.title
        out |= {hint(screen, i.field): i.hint for i in ui.inputs}
        out |= {button(screen, b.action): b.label for b in ui.buttons}
        out[empty(screen)] = ui.empty
    vm = d.viewmodels.get(screen)
    if vm is not None:
        for f in vm.functions:
            out[done(screen, f.action)] = f.done
            if f.blank:
                out[blank(screen, f.action)] = f.blank
    act = d.activities.get(screen)
    if act is not None:
        out[label(screen)] = act.label
    return out


def all_strings(d: Decisions) -> dict[str, str]:
    out = {"app_name": d.spec.app_name, CONFIRM_MESSAGE: "Are you sure?"}
    for screen in d.blueprint.screen_names():
        out |= screen_strings(d, screen)
    return out


def strings_xml(strings: dict[str, str]) -> str:
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<resources>"]
    lines += [f'    <string name="{name}">{resource_text(text)}</string>' for name, text in strings.items()]
    return "\n".join(lines + ["</resources>", ""])
