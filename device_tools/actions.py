"""ProposedAction: what is about to be done to the device, as the security layer sees it."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, Field

from .element_registry import Element

Risk = Literal["low", "medium", "high", "critical"]
RISK_ORDER: dict[str, int] = {"low": 0, "medium": 1, "high": 2, "critical": 3}


def max_risk(*risks: Risk) -> Risk:
    return max(risks, key=lambda r: RISK_ORDER[r])


class Target(BaseModel):
    """The element an action touches (what the firewall reads)."""

    id: str
    text: str = ""
    desc: str = ""
    resource_id: str = ""
    cls: str = ""
    package: str = ""
    checkable: bool = False
    checked: bool = False
    # whether the element handles a long press itself: if not, Android performs a click when the finger lifts
    long_clickable: bool = False
    editable: bool = False
    password: bool = False
    hint: str = ""  # labels inside an unlabeled container (a settings row, a list item)
    inside: str = ""  # every label and id inside it: what a tap on it can activate (``Snapshot.inside``)
    # what the screen says around it (screen_context.py): a tap's meaning when its own label says little
    context: str = ""  # the labels it stands under (a dialog's title and message)
    screen: str = ""  # for a label that says nothing ("OK"): every other label on the screen
    row: str = ""  # for a control without a label (a switch): the labels of its row
    toggles: bool = False  # a tap flips a switch (it is one, or a row holding one)

    @classmethod
    def of(cls, e: Element) -> Target:
        return cls(
            id=e.id,
            text=e.text,
            desc=e.desc,
            resource_id=e.resource_id,
            cls=e.cls,
            package=e.package,
            checkable=e.checkable,
            checked=e.checked,
            long_clickable=e.long_clickable,
            editable=e.editable,
            password=e.password,
            hint=e.hint,
        )


class ProposedAction(BaseModel):
    # click, long_click, type, clear, scroll, swipe, back, home, recents, open_app, sms_send, terminal, ...
    kind: str
    tool: str  # the MCP tool that proposed it
    target: Target | None = None
    text: str | None = None  # text to type, message body, note text
    package: str | None = None  # app to open, or the foreground app
    details: dict[str, Any] = Field(default_factory=dict)  # recipient, command argv, event fields ...
    # keys of ``details`` Sentinel worked out itself from the owner's data (a contact's number looked up by
    # the name the caller gave), not given by the caller: a result that is not done never shows them
    derived: list[str] = Field(default_factory=list)

    @property
    def digest(self) -> str:
        """What a confirmation, its sealed answer round and an approval bind to: the whole sha256. The caller
        writes the text and details, the screen's app the target's labels; cut to 64 bits, a pair of actions
        found in 2^32 hashes would share it, and a yes to the one shown would send the other."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()

    def describe(self) -> str:
        """One line for a confirmation prompt. Typed text is shown, but never a password's."""
        what = self.kind.replace("_", " ")
        if self.target is not None:
            label = (
                self.target.text
                or self.target.desc
                or self.target.hint.split(" | ")[0]
                or self.target.resource_id.rsplit("/", 1)[-1]
                or self.target.cls
            )
            what += f" on {label!r}"
            if self.target.package:
                what += f" in {self.target.package}"
        if self.text is not None:
            shown = "•" * len(self.text) if (self.target and self.target.password) else self.text
            what += f": {shown!r}"
        if self.package and (self.target is None or self.target.package != self.package):
            what += f" (app {self.package})"
        for key, value in self.details.items():
            what += f", {key}={value}"
        return what

    def for_classifier(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", exclude_none=True)
        if self.target and self.target.password and self.text is not None:
            data["text"] = "<redacted password>"  # the risk model never sees a password
        if not self.derived:
            data.pop("derived", None)
        return data

    def for_caller(self) -> dict[str, Any]:
        """The action as a result that was not done shows it: what the caller gave, not what Sentinel derived
        from the owner's data (a denied or unanswered SMS to "Alice" does not tell Alice's number)."""
        data = self.for_classifier()
        data["details"] = {k: v for k, v in data.get("details", {}).items() if k not in self.derived}
        data.pop("derived", None)
        return data

    @property
    def caller_digest(self) -> str:
        """The digest of what the caller gave (``for_caller``): the full digest would let a caller test
        guesses of a derived value (a phone number has few digits) against it offline."""
        canonical = json.dumps(self.for_caller(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()

    def derived_values(self) -> list[str]:
        """The derived details' values as text (to be scrubbed from anything else a result says)."""
        return [str(self.details[k]) for k in self.derived if str(self.details.get(k, "")).strip()]
