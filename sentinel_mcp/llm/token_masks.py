"""Grammars as token masks (llguidance): GBNF and JSON Schema compiled against the model's vocabulary.

The GBNF files stay the source of truth: each is converted to llguidance's Lark dialect by
llguidance's own converter when first used, compiled once per party that uses it (``grammar_cache``),
and every generation works on a cheap copy of the compiled matcher. A JSON Schema is compiled by
llguidance's JSON compiler, which enforces what the GBNF converter could only check afterwards
(lengths, bounds). Whatever
llguidance cannot take raises ``UnsupportedGrammar`` with its reason; the engine then samples that
grammar with llama.cpp's own grammar sampler.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
from typing import Any

from sentinel_mcp.core.errors import SentinelError
from sentinel_mcp.llm.party_lru import PartyLru

MAX_PIECE_BYTES = 16 * 1024
# llama.cpp's JSON-Schema converter allows one optional space between tokens; llguidance's default
# ([ \t\n\r]+ anywhere) would let a weak model pad forever
JSON_WHITESPACE = {"whitespace_pattern": "[ ]?"}
REASON_CHARS = 400  # llguidance errors quote the grammar; keep log lines short


class UnsupportedGrammar(SentinelError):
    """llguidance cannot compile this grammar (the reason is the message)."""
    area = "llm"


def _llguidance() -> Any:
    try:
        import llguidance
        from llguidance import gbnf_to_lark
    except ImportError as exc:
        raise UnsupportedGrammar(
            f"llguidance is not installed ({exc}); pip install 'sentinel-mcp[llm]'"
        ) from None
    return llguidance, gbnf_to_lark


def build_tokenizer(llm: Any) -> Any:
    """The model's vocabulary as llguidance sees it (about 1-3 s for a 262k vocabulary; once per model).

    Control tokens are marked special (0xFF prefix) so no grammar can produce them; every
    end-of-generation token counts as EOS, as it does for llama.cpp's grammar sampler.
    """
    llguidance, _ = _llguidance()
    import llama_cpp

    vocab = llm._model.vocab
    n_tokens = llama_cpp.llama_vocab_n_tokens(vocab)
    buffer = ctypes.create_string_buffer(MAX_PIECE_BYTES + 1)
    pieces: list[bytes] = []
    eog: list[int] = []
    control = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
    user_defined = llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED
    for token in range(n_tokens):
        n = llama_cpp.llama_token_to_piece(vocab, token, buffer, MAX_PIECE_BYTES, 0, True)
        if n < 0:
            raise UnsupportedGrammar(
                f"token {token} of the vocabulary is longer than {MAX_PIECE_BYTES} bytes"
            )
        piece = buffer.raw[:n]
        attr = llama_cpp.llama_token_get_attr(vocab, token)
        if attr & control or (attr & user_defined and piece.startswith(b"<") and piece.endswith(b">")):
            piece = b"\xff" + piece
        pieces.append(piece)
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            eog.append(token)
    if not eog:
        eog = [llama_cpp.llama_vocab_eos(vocab)]
    tokenize = ctypes.cast(llama_cpp.llama_cpp._lib.llama_tokenize, ctypes.c_void_p).value
    return llguidance.LLTokenizer.from_llamacpp(
        tokens=pieces, vocab_ptr=vocab, tokenize_fptr=tokenize, eos_token=eog, slices=None
    )


class MaskCompiler:
    """Compiled matchers per party and grammar text or JSON Schema (``party_lru``: never shared between
    parties, bounded), copied per generation."""

    def __init__(self, tokenizer: Any, per_party: int, parties: int) -> None:
        self.tokenizer = tokenizer
        self.vocab_size: int = tokenizer.vocab_size
        self._templates: PartyLru[Any] = PartyLru(per_party, parties)
        self._refused: PartyLru[str] = PartyLru(per_party, parties)  # key -> reason: a bad one fails fast

    def for_gbnf(self, party: str, text: str) -> Any:
        """A fresh matcher for GBNF ``text`` (UnsupportedGrammar if llguidance cannot take it)."""
        return self._matcher(party, "gbnf:" + text, lambda: self._lark_grammar(text))

    def for_json_schema(self, party: str, schema: dict[str, Any]) -> Any:
        key = "schema:" + json.dumps(schema, sort_keys=True)
        return self._matcher(party, key, lambda: self._schema_grammar(schema))

    def held(self, party: str) -> int:
        """How many matchers and refusals ``party`` has kept."""
        return self._templates.held(party) + self._refused.held(party)

    def _matcher(self, party: str, text: str, make_grammar: Any) -> Any:
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        template = self._templates.get(party, key)
        if template is None:
            reason = self._refused.get(party, key)
            if reason is not None:
                raise UnsupportedGrammar(reason)
            try:
                template = self._compile(make_grammar())
            except UnsupportedGrammar as exc:
                self._refused.put(party, key, str(exc))
                raise
            self._templates.put(party, key, template)
        return template.deep_copy()  # the template never consumes a token

    def _compile(self, grammar: str) -> Any:
        llguidance, _ = _llguidance()
        matcher = llguidance.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise UnsupportedGrammar(short_reason(matcher.get_error()))
        return matcher

    @staticmethod
    def _lark_grammar(text: str) -> str:
        llguidance, gbnf_to_lark = _llguidance()
        try:
            lark = gbnf_to_lark.any_to_lark(text)
        except Exception as exc:  # noqa: BLE001 - the converter raises its own and assorted builtin errors
            raise UnsupportedGrammar(f"GBNF to Lark conversion failed: {short_reason(str(exc))}") from None
        return llguidance.LLMatcher.grammar_from_lark(lark)

    @staticmethod
    def _schema_grammar(schema: dict[str, Any]) -> str:
        llguidance, _ = _llguidance()
        try:
            return llguidance.LLMatcher.grammar_from_json_schema(
                close_objects(schema), overrides=JSON_WHITESPACE
            )
        except (ValueError, TypeError) as exc:
            raise UnsupportedGrammar(f"JSON Schema compilation failed: {short_reason(str(exc))}") from None


def close_objects(schema: Any) -> Any:
    """Objects with ``properties`` and no ``additionalProperties`` get ``additionalProperties: false``.

    That is what llama.cpp's converter (the fallback) does, so both samplers produce the same shapes
    and a weak model cannot pad the object with invented keys. Under ``allOf`` closing a branch would
    forbid the other branches' keys, so a schema using ``allOf`` is left as written.
    """
    if "allOf" in json.dumps(schema):
        return schema

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                out[key] = {name: walk(sub) for name, sub in value.items()}
            elif key in ("enum", "const", "default", "examples"):
                out[key] = value
            else:
                out[key] = walk(value)
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out

    return walk(schema)


def short_reason(text: str) -> str:
    """An llguidance error on one line, at most ``REASON_CHARS`` long (it quotes the grammar)."""
    text = " ".join(text.split())
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS] + "..."
