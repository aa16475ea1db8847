"""A model file's chat template is rendered in a child process: the gateway never runs the file's Jinja.

Counting Python lines (``template_budget``) stops a loop, not one C-level step: ``{{ 'a' * 10**9 }}``,
``'%999999999s' % x``, ``x|center(10**9)``, a list times a number, a string doubled forty times, and Jinja's
constant folding (which builds ``'a' * 10**9`` while compiling) each built a gigabyte in the gateway, on every
call. An operator-by-operator size check would be a list of the spellings we thought of; a process whose
memory and CPU the kernel bounds is the general defence (``template_child``). One child per template stays up
between renders (a render costs a line of JSON each way, and the template is compiled once, where it was
compiled on every call before); a child that dies, or answers "too costly", is replaced on the next call.

The answer is read with a bound (``max_chars`` of prompt), so a child cannot hand the gateway the gigabyte
either.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections import OrderedDict
from typing import Any

from sentinel_mcp.llm.child_environment import child_environment
from sentinel_mcp.llm.errors import LlmError, ModelUnavailable
from sentinel_mcp.llm.template_budget import TemplateTooCostly
from sentinel_mcp.llm.template_child import MEMORY_EXIT

_CHILD = "sentinel_mcp.llm.template_child"
_END_SECONDS = 5.0  # a child that closed its output ends within this, or is killed
MAX_PROCESSES = 4  # templates with a child kept running (one a loaded model, usually one in all)
# a render's answer within this (wall clock; a render takes milliseconds, its CPU is bounded in the child):
# a child stopped from outside, or swapped out past it, is killed rather than holding the model's turn
ANSWER_SECONDS = 60.0
_COSTLY = (
    "the model's chat template builds more than its rendering process may hold (memory or CPU time) on this "
    "text; nothing was sent to the model"
)
# how a child the kernel or the child's own memory check stopped ends: its template was too costly; any other
# end before an answer is the process's trouble, not the template's (an interpreter that cannot start)
_COSTLY_ENDS = frozenset({MEMORY_EXIT, -signal.SIGXCPU, -signal.SIGKILL, -signal.SIGABRT})


class TemplateFailed(LlmError):
    """The template raised (``raise_exception``, an undefined name): the caller tries another shape."""


class TemplateProcess:
    """One template's child process; ``render`` is serialized (one request line, one answer line)."""

    def __init__(self, template: str, eos: str, bos: str) -> None:
        self._head = json.dumps({"template": template, "eos": eos, "bos": bos}).encode("ascii") + b"\n"
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self.started = 0  # children started (tests count them)

    def _start(self) -> subprocess.Popen[bytes]:
        env = child_environment()  # the interpreter's own settings only, never the gateway's secrets
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", _CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=env,
            )
        except OSError as exc:  # no such interpreter, no processes left: say so, not "too costly"
            raise ModelUnavailable(
                f"the model's chat template could not be rendered: its rendering process did not start "
                f"({exc.strerror or exc}); nothing was sent to the model") from exc
        self.started += 1
        assert child.stdin is not None
        child.stdin.write(self._head)
        child.stdin.flush()
        return child

    def render(self, messages: list[dict[str, Any]], max_chars: int) -> tuple[str, list[str], bool]:
        """(prompt, stop strings, added_special). TemplateTooCostly, TemplateFailed. Blocking."""
        line = json.dumps({"messages": messages, "max_chars": max_chars}).encode("ascii") + b"\n"
        with self._lock:
            child = self._child or self._start()
            self._child = child
            assert child.stdin is not None and child.stdout is not None
            backstop = threading.Timer(ANSWER_SECONDS, child.kill)
            backstop.daemon = True
            backstop.start()
            try:
                child.stdin.write(line)
                child.stdin.flush()
                # an ASCII JSON line: at most 6 bytes a character (\\uXXXX), and the envelope
                answer = child.stdout.readline(6 * max_chars + 65_536)
            except (BrokenPipeError, OSError):
                answer = b""
            finally:
                backstop.cancel()
            if not answer.endswith(b"\n"):  # died (memory, SIGXCPU) or over-long: this child is done
                code = self._stop_locked(wait_end=not answer)
                if answer or code in _COSTLY_ENDS:
                    raise TemplateTooCostly(_COSTLY)
                raise ModelUnavailable(
                    f"the model's chat template could not be rendered: its rendering process ended (exit "
                    f"{code}) before answering; nothing was sent to the model")
            reply = json.loads(answer)
            if reply.get("error") == "costly":
                self._stop_locked()
                why = reply.get("why", "")
                raise TemplateTooCostly(why if "steps" in why else _COSTLY)
            if reply.get("error"):
                raise TemplateFailed(f"the model's chat template failed ({reply.get('why', '')})")
            return str(reply["prompt"]), [str(s) for s in reply["stop"]], bool(reply["added_special"])

    def _stop_locked(self, wait_end: bool = False) -> int | None:
        """Stop the child; its exit code. ``wait_end``: it closed its answer, so it is ending on its own: its
        own end (why it died) is waited for a moment before it is killed."""
        child, self._child = self._child, None
        if child is None:
            return None
        for stream in (child.stdin, child.stdout):
            if stream is not None:
                stream.close()
        if wait_end:
            try:
                return child.wait(_END_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        child.kill()  # it ends on its own at end of input; a child mid-render would not
        return child.wait()

    def close(self) -> None:
        with self._lock:
            self._stop_locked()


_PROCESSES: OrderedDict[tuple[str, str, str], TemplateProcess] = OrderedDict()
_LOCK = threading.Lock()


def process_for(template: str, eos: str, bos: str) -> TemplateProcess:
    """The running (or to be started) process for this template; the least recently used past
    MAX_PROCESSES is stopped."""
    key = (template, eos, bos)
    evicted: list[TemplateProcess] = []
    with _LOCK:
        found = _PROCESSES.get(key)
        if found is None:
            found = _PROCESSES[key] = TemplateProcess(template, eos, bos)
        _PROCESSES.move_to_end(key)
        while len(_PROCESSES) > MAX_PROCESSES:
            evicted.append(_PROCESSES.popitem(last=False)[1])
    for process in evicted:
        process.close()
    return found
