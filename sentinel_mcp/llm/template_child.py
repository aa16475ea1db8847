"""The child's side of template rendering: the model file's Jinja runs here, under the kernel's bounds.

One process per template (``template_process`` starts and feeds it). Its address space is capped
(``RLIMIT_AS``) and each render gets a CPU-time allowance (``RLIMIT_CPU``, raised per render): a template that
builds a gigabyte in one C-level step (``'a' * 10**9``, ``'%999999999s' % x``, a filter's width, Jinja's own
constant folding at compile time) meets ``MemoryError`` or ``SIGXCPU`` here, never in the gateway. Python
lines are still counted (``template_budget``) so a pure loop is refused with the same words as before.

Protocol, one JSON object a line (ASCII: lone surrogates travel as escapes): the first line is
``{"template", "eos", "bos"}``; then each request ``{"messages", "max_chars"}`` is answered with
``{"prompt", "stop", "added_special"}`` or ``{"error": "costly" | "template", "why"}``. After a costly
answer the child exits: whatever the template left behind goes with it.

The formatter matches llama-cpp-python's ``Jinja2ChatFormatter`` (an immutable sandbox, ``trim_blocks``,
``lstrip_blocks``, loop controls, the ``{% generation %}`` tag ignored, ``tojson`` as Transformers has it).
"""

from __future__ import annotations

import json
import os
import resource
import sys
from datetime import datetime
from typing import Any

MEMORY_BYTES = 768 << 20  # address space of the whole child: Python and Jinja take ~40 MiB of it
# per render (and the compile), beyond what the child has used; a real template takes milliseconds
CPU_SECONDS = 2
COSTLY = "costly"
# the exit code of a child that ran out of memory outside a render's own check (reading a request, writing an
# answer): the parent reads it as a too costly template, any other early end as a process that could not run
MEMORY_EXIT = 86


def _formatter(template: str) -> Any:
    import jinja2
    from jinja2.ext import Extension, loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class IgnoreGenerationTags(Extension):
        tags = {"generation"}

        def parse(self, parser: Any) -> Any:
            parser.stream.skip(1)
            return parser.parse_statements(("name:endgeneration",), drop_needle=True)

    def tojson(x: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None,
               sort_keys: bool = False) -> str:
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(
        loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True,
        extensions=[IgnoreGenerationTags, loopcontrols],
    )
    env.filters["tojson"] = tojson
    return env.from_string(template)


def _raise_exception(message: str) -> None:
    raise ValueError(message)


def _strftime_now(f: str) -> str:
    return datetime.now().strftime(f)


def _render(compiled: Any, eos: str, bos: str, messages: list[dict[str, Any]]) -> str:
    return str(compiled.render(
        messages=messages, eos_token=eos, bos_token=bos, raise_exception=_raise_exception,
        add_generation_prompt=True, functions=None, function_call=None, tools=None, tool_choice=None,
        strftime_now=_strftime_now,
    ))


def _allow_cpu(seconds: int) -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime) + 1 + seconds
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.getrlimit(resource.RLIMIT_CPU)[1]))


def _answer(out: Any, reply: dict[str, Any]) -> None:
    out.write(json.dumps(reply).encode("ascii") + b"\n")
    out.flush()


def main() -> None:
    from sentinel_mcp.llm.template_budget import TemplateTooCostly, within_budget

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a SIGXCPU end writes no core file
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    source, out = sys.stdin.buffer, sys.stdout.buffer
    head = json.loads(source.readline())
    compiled: Any = None
    compile_error: str | None = None
    _allow_cpu(CPU_SECONDS)
    try:
        compiled = _formatter(head["template"])  # Jinja folds constants here: a bomb can go off at compile
    except MemoryError:
        compile_error = COSTLY
    except Exception as exc:  # noqa: BLE001 - a template that does not compile renders nothing (plain format)
        compile_error = type(exc).__name__
    for line in source:
        request = json.loads(line)
        if compile_error == COSTLY:
            _answer(out, {"error": COSTLY, "why": "memory"})
            break
        if compiled is None:
            _answer(out, {"error": "template", "why": compile_error})
            continue
        _allow_cpu(CPU_SECONDS)
        try:
            prompt = within_budget(lambda: _render(compiled, head["eos"], head["bos"], request["messages"]))  # noqa: B023
        except TemplateTooCostly as exc:
            _answer(out, {"error": COSTLY, "why": str(exc)})
            break
        except MemoryError:
            _answer(out, {"error": COSTLY, "why": "memory"})
            break
        except Exception as exc:  # noqa: BLE001 - raise_exception, template errors: the caller tries another shape
            _answer(out, {"error": "template", "why": type(exc).__name__})
            continue
        if len(prompt) > request["max_chars"]:
            _answer(out, {"error": COSTLY, "why": "length"})
            break
        try:
            prompt.encode("utf-8")  # a lone surrogate: no UTF-8 holds it, and the model reads UTF-8
        except UnicodeEncodeError:
            _answer(out, {"error": "template", "why": "a lone surrogate"})
            continue
        _answer(out, {"prompt": prompt, "stop": [head["eos"]], "added_special": True})
    out.flush()
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except MemoryError:
        os._exit(MEMORY_EXIT)
