"""Print the bytes a2a-sdk signs for an agent card (run by the a2a-sdk interpreter): reads the card's JSON on
stdin. a2a-sdk's ``_canonicalize_agent_card`` lives in ``a2a.utils.signing``, which needs PyJWT (absent from
the interop venv), so its steps are taken here from the SDK's parts: the card as the SDK parses and writes it,
no ``signatures``, empties left out (its ``_clean_empty``, same rule), then the SDK's RFC 8785
canonicalizer."""

import json
import sys

from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.types import AgentCard
from a2a.utils._jcs import canonicalize


def clean(d):
    if isinstance(d, dict):
        kept = {k: v for k, item in d.items() if (v := clean(item)) is not None}
        return kept or None
    if isinstance(d, list):
        items = [v for item in d if (v := clean(item)) is not None]
        return items or None
    if isinstance(d, str) and not d:
        return None
    return d


card = MessageToDict(ParseDict(json.load(sys.stdin), AgentCard()))
card.pop("signatures", None)
sys.stdout.buffer.write(canonicalize(clean(card)).encode("utf-8"))
