"""Sign an agent card with a2a-sdk's own signer (``a2a.utils.signing.create_agent_card_signer``, PyJWT
underneath: ``a2a-sdk[signing]``); run by the a2a-sdk interpreter. Reads the card's JSON on stdin; arguments:
the private key (PEM file) and the JWS algorithm. Prints the signed card's JSON, as the SDK serializes it."""

import json
import sys

from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer

key_path, alg = sys.argv[1:3]
card = ParseDict(json.load(sys.stdin), AgentCard())
signer = create_agent_card_signer(open(key_path, "rb").read(), {"alg": alg, "kid": "sdk-key", "typ": "JOSE"})
print(json.dumps(MessageToDict(signer(card))))
