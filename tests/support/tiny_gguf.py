"""Write a tiny random-weight llama GGUF with a byte-level vocabulary (470 KB, no download).

It exercises llama.cpp's real loading, tokenizing, chat-template, grammar and sampling code; its
output is noise, which is exactly what grammar-constrained decoding must turn into valid JSON.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

# ChatML: the most common template; llama-cpp-python renders it with jinja2 like any GGUF template.
CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% "
    "endif %}"
)


def write_tiny_gguf(
    path: Path,
    *,
    n_ctx: int = 4096,
    chat_template: str | None = None,
    seed: int = 0,
    user_defined: tuple[str, ...] = (),
    extra_uint32: dict[str, int] | None = None,
) -> Path:
    """``user_defined``: tokens of that type added after the bytes (as a GGUF converted from a model whose
    added tokens were not marked special has its chat markers). ``extra_uint32``: more metadata keys (a
    hostile file's)."""
    n_vocab, n_embd, n_layer, n_head, n_ff = 259 + len(user_defined), 64, 2, 4, 128
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny-test")
    w.add_context_length(n_ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head)
    w.add_rope_dimension_count(n_embd // n_head)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(0)
    for key, value in (extra_uint32 or {}).items():
        w.add_uint32(key, value)
    # SPM-style vocab: <unk>, <s>, </s>, then the 256 byte tokens <0xNN>
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)] + list(user_defined)
    types = [gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL] + [
        gguf.TokenType.BYTE
    ] * 256 + [gguf.TokenType.USER_DEFINED] * len(user_defined)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores([0.0] * len(tokens))
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    if chat_template:
        w.add_chat_template(chat_template)
    rng = np.random.default_rng(seed)

    def rand(name: str, *shape: int) -> None:
        w.add_tensor(name, (rng.standard_normal(shape[::-1]) * 0.02).astype(np.float32))

    def ones(name: str, n: int) -> None:
        w.add_tensor(name, np.ones(n, dtype=np.float32))

    rand("token_embd.weight", n_embd, n_vocab)
    for i in range(n_layer):
        ones(f"blk.{i}.attn_norm.weight", n_embd)
        for k in ("attn_q", "attn_k", "attn_v", "attn_output"):
            rand(f"blk.{i}.{k}.weight", n_embd, n_embd)
        ones(f"blk.{i}.ffn_norm.weight", n_embd)
        rand(f"blk.{i}.ffn_gate.weight", n_embd, n_ff)
        rand(f"blk.{i}.ffn_up.weight", n_embd, n_ff)
        rand(f"blk.{i}.ffn_down.weight", n_ff, n_embd)
    ones("output_norm.weight", n_embd)
    rand("output.weight", n_embd, n_vocab)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path
