"""What is done with a call's argument that the tool's schema does not declare (``undeclared_arguments``).
Mixed into every configured server's section (``config.ServerCommon``).

A guard is written against the tool's schema; an upstream may act on keys the schema never names
(``**kwargs``, pydantic ``extra="allow"``, a JS server spreading the object). ``"refuse"`` (the default)
refuses such a call, naming the key; ``"drop"`` forwards the call without those keys (the guard and the
upstream both go without them), for a client that sends extras to a server that ignores them; ``"pass"``
forwards them as sent, for a server whose schema is known to be incomplete (the guard's ``args(All)`` sees
them). A key ``additionalProperties`` or ``patternProperties`` admits is declared
(``gateway/argument_shape.py``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class ArgumentForwarding(BaseModel):
    undeclared_arguments: Literal["refuse", "drop", "pass"] = "refuse"
