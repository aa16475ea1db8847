"""Print the bytes a2a-sdk signs for an agent card (run by the a2a-sdk interpreter): reads the card's JSON on
stdin and hands the card, as the SDK parses it, to the SDK's own ``_canonicalize_agent_card`` (in
``a2a.utils.signing``, which needs PyJWT: ``a2a-sdk[signing]``, installed by ``make setup-interop``)."""

import json
import sys

from google.protobuf.json_format import ParseDict

from a2a.types import AgentCard
from a2a.utils.signing import _canonicalize_agent_card

card = ParseDict(json.load(sys.stdin), AgentCard())
sys.stdout.buffer.write(_canonicalize_agent_card(card).encode("utf-8"))
