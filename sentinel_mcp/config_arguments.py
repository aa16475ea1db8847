"""What is done with a call's argument that the tool's schema does not declare (``undeclared_arguments``), and
whether its texts must be in Unicode's composed form (``argument_texts``). Mixed into every configured
server's section (``config.ServerCommon``).

A guard is written against the tool's schema; an upstream may act on keys the schema never names
(``**kwargs``, pydantic ``extra="allow"``, a JS server spreading the object). ``"refuse"`` (the default)
refuses such a call, naming the key; ``"drop"`` forwards the call without those keys (the guard and the
upstream both go without them), for a client that sends extras to a server that ignores them; ``"pass"``
forwards them as sent, for a server whose schema is known to be incomplete (the guard's ``args(All)`` sees
them). A key ``additionalProperties`` or ``patternProperties`` admits is declared
(``gateway/argument_shape.py``). A key that reads as a declared name (an invisible or look-alike character)
is refused whatever the setting (``gateway/look_alike_keys.py``).

``argument_texts``: ``"nfc"`` (the default) refuses a text or key not in NFC before the guard
(``core/wire_limits.one_text``: it reads as its composed form to a person and to an upstream that
normalizes, yet is another atom to a rule); ``"as_sent"`` takes it, for an upstream whose texts are exact
bytes (a file-system server on HFS+/APFS lists ``cafe\u0301.txt`` decomposed, and the name only opens the
file spelled so). The guard then judges the very text forwarded, never a normalized copy: a rule comparing
atoms compares exactly (a decomposed "café" is not a rule's composed ``'café'``; a rule that means both
spells both, or tests a prefix it controls). A lone surrogate is refused either way (no text), and so are
two keys of one object that are one name to a normalizing reader (``gateway/key_spellings.py``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class ArgumentForwarding(BaseModel):
    undeclared_arguments: Literal["refuse", "drop", "pass"] = "refuse"
    argument_texts: Literal["nfc", "as_sent"] = "nfc"
