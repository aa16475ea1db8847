"""What counts as a phone number in a tool's argument, the one rule the gateway and the device built-in share.

A tool that takes "a phone number or a contact's name" (``device__sms_send``'s ``to``) reads the contacts
whenever the value is not a phone number, and the gateway's consent gate asks for the contacts consent in
exactly that case (``"sentinel/personal_names"``): both sides decide with ``is_phone_number``, so a value one
side reads as a number the other can never treat as a name.
"""

from __future__ import annotations

import re

PHONE_RE = re.compile(r"\+?[0-9][0-9 ()\-.]{2,24}")


def is_phone_number(value: object) -> bool:
    """Whether ``value`` (stripped of surrounding whitespace) is a phone number: an optional ``+``, a digit,
    then 2-24 digits, spaces, parentheses, dashes or dots. Anything else (a name, a number type, None) is
    not."""
    return isinstance(value, str) and PHONE_RE.fullmatch(value.strip()) is not None
