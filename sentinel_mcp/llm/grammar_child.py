"""The child's side of llama.cpp's grammar sampler: its stacks grow here, under the kernel's bounds.

llama.cpp's grammar keeps one stack per way the text so far can be read, and a grammar can make those
multiply with every token: ``r0 ::= "[" r1 "x" | "[" r1 "y"`` and so on, a few hundred bytes, doubles them at
each ``[``, and one step (``llama_sampler_init_grammar``, ``apply``, ``accept``) is one C call that runs for
minutes or takes all memory, which no clock read between tokens interrupts. So the sampler runs in this
process (``grammar_process`` starts and feeds it, and kills it when a step outlives its bound); its address
space is capped, so a grammar that eats memory ends this process, never the gateway.

Each step also gets a CPU-time allowance (``RLIMIT_CPU``, raised per step to argv[2] seconds beyond what
the child used): a step no one waits for any more (the gateway gone) still ends.

Protocol (bytes): argv[1] is the model file (only its vocabulary is loaded); the child answers ``ready N\\n``
(N tokens). Then ``g LEN\\n`` and LEN bytes of GBNF start a grammar (answer ``ok\\n`` or ``no\\n``: llama.cpp
refused it); ``m\\n`` asks for the mask (answer: ceil(N/8) bytes, one bit a token, little-endian bit order);
``a TOKEN\\n`` accepts a token the last mask allowed (no answer).
"""

from __future__ import annotations

import os
import resource
import sys

# the address space of the whole child: Python, numpy and llama.cpp's libraries take ~160 MiB of it, a
# 262,144-token vocabulary some tens more; the rest is the grammar's stacks
MEMORY_BYTES = 1 << 30
MEMORY_EXIT = 86  # the exit of a child out of memory in Python (llama.cpp's own std::bad_alloc aborts it)


def _vocab(path: str) -> tuple[object, int]:
    import llama_cpp

    llama_cpp.llama_backend_init()
    params = llama_cpp.llama_model_default_params()
    params.vocab_only = True
    model = llama_cpp.llama_model_load_from_file(path.encode("utf-8"), params)
    if not model:
        raise SystemExit(2)
    vocab = llama_cpp.llama_model_get_vocab(model)
    return vocab, int(llama_cpp.llama_vocab_n_tokens(vocab))


def _allow_cpu(seconds: int) -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime) + 1 + seconds
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.getrlimit(resource.RLIMIT_CPU)[1]))


def main() -> None:
    from sentinel_mcp.llm.llama_grammar_mask import LlamaGrammarMatcher

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # an abort writes no core file
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    # the answers go on their own descriptor: whatever a library prints on stdout goes to stderr instead
    source, out = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    step_cpu = max(1, int(float(sys.argv[2])))
    vocab, n = _vocab(sys.argv[1])
    out.write(b"ready %d\n" % n)
    out.flush()
    nbytes = (n + 7) // 8
    buffer = bytearray(nbytes)
    import ctypes

    address = ctypes.addressof((ctypes.c_uint8 * nbytes).from_buffer(buffer))
    matcher: LlamaGrammarMatcher | None = None
    for line in source:
        kind, _, arg = line.strip().partition(b" ")
        _allow_cpu(step_cpu)
        if kind == b"g":
            gbnf = source.read(int(arg)).decode("utf-8")
            if matcher is not None:
                matcher.close()
                matcher = None
            try:
                matcher = LlamaGrammarMatcher.over(vocab, n, gbnf, "grammar")
                out.write(b"ok\n")
            except Exception:  # noqa: BLE001 - llama.cpp refused it: the parent names the grammar
                out.write(b"no\n")
        elif kind == b"m" and matcher is not None:
            matcher.unsafe_compute_mask_ptr(address, nbytes)
            out.write(buffer)
        elif kind == b"a" and matcher is not None:
            matcher.consume_token(int(arg))
            continue
        else:
            break  # not the protocol: end
        out.flush()
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except MemoryError:
        os._exit(MEMORY_EXIT)
