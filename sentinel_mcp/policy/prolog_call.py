"""Calling one Prolog predicate directly through SWI-Prolog's C interface, without query text.

pyswip runs a goal by writing it as text, having Prolog read it, and converting every binding back to
Python: for a guard decision that is more work than the decision. A ``PrologCall`` looks the predicate up
once and puts each argument into a term reference (atoms from any text, length given, so no quoting and no
parsing), calls it, and reads the last argument (an atom holding JSON) back as text.

A call runs on the calling thread's own SWI-Prolog engine: the engine thread's, or (``PrologEngine.try_now``)
that of a thread that already has one, such as the thread that initialised SWI-Prolog.

The common case (texts without a lone surrogate, floats, integers) runs in one C function when the package was
built with a C compiler (``prolog_call_native.c``, the same steps, ~1 us instead of ~10 us of ctypes calls);
everything else, and every call of an install without it, takes the ctypes steps below.
``SENTINEL_PROLOG_CALL=ctypes`` in the environment (or ``use_native(False)``) turns the C function off.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from types import ModuleType
from typing import Any

from sentinel_mcp.policy.prolog_text import to_prolog_chars
from sentinel_mcp.core.errors import PolicyError
from sentinel_mcp.policy.swipl_location import import_pyswip_core

# SWI-Prolog.h (9.x)
_REP_UTF8 = 0x00100000
_CVT_ATOM = 0x0001
_CVT_STRING = 0x0002
_CVT_WRITEQ = 0x0200
_BUF_STACK = 0x00010000
_PL_Q_NODEBUG = 0x0004
# the exception is left pending for PL_exception(0) (with PL_Q_CATCH_EXCEPTION it is gone once the call
# returns, and a predicate that raised read as one that failed), then cleared here
_PL_Q_PASS_EXCEPTION = 0x0010
_WHY_CHARS = 2000  # an exception may hold a big term: its text is cut there

log = logging.getLogger(__name__)
_lib: Any = None
_string_at = ctypes.string_at
_native: ModuleType | None = None  # the C function's module, bound to pyswip's library (_bind)
_native_wanted = os.environ.get("SENTINEL_PROLOG_CALL", "") != "ctypes"
_mark_strings: Any = None  # PL_mark_string_buffers, PL_release_string_buffers_from_mark (_bind)
_release_strings: Any = None
_new_atom: Any = None  # PL_new_atom_mbchars, PL_put_atom, PL_unregister_atom (_bind, _put_atom_text)
_put_atom: Any = None
_unregister_atom: Any = None


def _load_native(lib: Any) -> ModuleType | None:
    try:
        from sentinel_mcp.policy import prolog_call_native  # type: ignore[attr-defined]
    except ImportError:  # built without a C compiler: the ctypes steps
        return None
    names = ("PL_open_foreign_frame", "PL_discard_foreign_frame", "PL_new_term_refs", "PL_new_atom_mbchars",
             "PL_put_float", "PL_put_int64", "PL_call_predicate", "PL_exception", "PL_clear_exception",
             "PL_get_nchars", "PL_mark_string_buffers", "PL_release_string_buffers_from_mark", "PL_put_atom",
             "PL_unregister_atom")
    json_names = ("PL_new_term_ref", "PL_put_nil", "PL_cons_list", "PL_cons_functor_v", "PL_put_atom",
                  "PL_new_atom", "PL_new_functor_sz", "PL_term_type", "PL_get_list", "PL_get_functor",
                  "PL_get_arg_sz", "PL_get_float", "PL_get_int64", "PL_get_atom", "PL_put_term",
                  "PL_is_acyclic", "PL_put_string_nchars")
    try:
        prolog_call_native.bind(*(_address(lib, n) for n in names))
        prolog_call_native.bind_json(*(_address(lib, n) for n in json_names))
    except (AttributeError, ValueError, TypeError) as e:  # a library without one of them: the ctypes steps
        log.warning("the C call into SWI-Prolog is off (%s); calls go through ctypes", e)
        return None
    return prolog_call_native


def _address(lib: Any, name: str) -> int:
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value or 0


def use_native(on: bool) -> bool:
    """Turn the C function on or off (tests and benchmarks compare the two); whether it is now in use."""
    global _native_wanted, _native
    _native_wanted = on
    _native = _load_native(_bind()) if on else None
    return _native is not None


def native_in_use() -> bool:
    _bind()
    return _native is not None


def _bind() -> Any:
    global _lib
    if _lib is None:
        import_pyswip_core()  # as the engine imports it (its location, no init file): whichever comes first
        from pyswip.core import _lib as lib

        size_t, c_int, vp = ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p
        lib.PL_open_foreign_frame.restype = size_t
        lib.PL_open_foreign_frame.argtypes = []
        lib.PL_discard_foreign_frame.argtypes = [size_t]
        lib.PL_discard_foreign_frame.restype = None
        lib.PL_new_term_refs.argtypes = [c_int]
        lib.PL_new_term_refs.restype = size_t
        lib.PL_put_float.argtypes = [size_t, ctypes.c_double]
        lib.PL_put_float.restype = c_int
        lib.PL_put_int64.argtypes = [size_t, ctypes.c_int64]
        lib.PL_put_int64.restype = c_int
        lib.PL_predicate.argtypes = [ctypes.c_char_p, c_int, ctypes.c_char_p]
        lib.PL_predicate.restype = vp
        lib.PL_call_predicate.argtypes = [vp, c_int, vp, size_t]
        lib.PL_call_predicate.restype = c_int
        lib.PL_get_nchars.argtypes = [
            size_t,
            ctypes.POINTER(size_t),
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_uint,
        ]
        lib.PL_get_nchars.restype = c_int
        lib.PL_exception.argtypes = [vp]
        lib.PL_exception.restype = size_t
        lib.PL_clear_exception.argtypes = []
        lib.PL_clear_exception.restype = None
        # functions of their own, not pyswip's objects (pyswip declares these two for its own use, otherwise)
        global _mark_strings, _release_strings
        _mark_strings = ctypes.CFUNCTYPE(None, vp)(_address(lib, "PL_mark_string_buffers"))
        release = _address(lib, "PL_release_string_buffers_from_mark")
        _release_strings = ctypes.CFUNCTYPE(None, size_t)(release)
        global _new_atom, _put_atom, _unregister_atom
        new_atom = _address(lib, "PL_new_atom_mbchars")
        _new_atom = ctypes.CFUNCTYPE(size_t, c_int, size_t, ctypes.c_char_p)(new_atom)
        _put_atom = ctypes.CFUNCTYPE(c_int, size_t, size_t)(_address(lib, "PL_put_atom"))
        _unregister_atom = ctypes.CFUNCTYPE(None, size_t)(_address(lib, "PL_unregister_atom"))
        lib.PL_thread_self.argtypes = []
        lib.PL_thread_self.restype = c_int
        _lib = lib
        global _native
        _native = _load_native(lib) if _native_wanted else None
    return _lib


def _put_atom_text(t: int, b: bytes) -> int:
    """UTF-8 text as an atom in term ``t``. PL_put_chars(PL_ATOM) leaves the atom's reference registered in
    SWI-Prolog 9.0, so no atom passed that way was ever collected; an atom from PL_new_atom_mbchars is
    registered by contract: put, then unregistered (the term holds it while the call runs)."""
    a = _new_atom(_REP_UTF8, len(b), b)
    if not a:
        return 0
    ok = _put_atom(t, a)
    _unregister_atom(a)
    return int(ok)


def thread_has_engine() -> bool:
    """Whether the calling thread has a SWI-Prolog engine of its own (it initialised Prolog, or attached)."""
    return bool(_bind().PL_thread_self() > 0)


# PrologCall.json_call's answer when the C function did not make the call
NOT_NATIVE: Any = type("NotNative", (), {"__repr__": lambda self: "NOT_NATIVE"})()


class PrologCallError(PolicyError):
    """The predicate failed or raised (its text, when it raised)."""


class PrologCall:
    """``module:name(A1, ..., An, Out)``: inputs are str (atoms), float or int; Out must be bound to an atom.
    """

    def __init__(self, module: str, name: str, arity: int) -> None:
        self.module, self.name, self.arity = module, name, arity
        self._pred: Any = None

    def _predicate(self, args: tuple[Any, ...]) -> Any:
        if len(args) != self.arity - 1:
            raise ValueError(f"{self.name} takes {self.arity - 1} inputs")
        lib = _bind()
        if self._pred is None:
            self._pred = lib.PL_predicate(self.name.encode(), self.arity, self.module.encode())
        return self._pred

    def _answer(self, out: Any) -> str | None:
        """The C function's answer: its text, an error raised, or None (NotImplemented: not its case)."""
        if type(out) is str:
            return out
        if out is NotImplemented:
            return None
        what, detail = out
        if what == 0:
            raise _failed(self.name, detail)
        if what == 1:
            raise PrologCallError(f"{self.name}: cannot pass argument {detail}")
        raise PrologCallError(f"{self.name}: the answer is not text")

    def json_call(self, index: int, *args: Any) -> Any:
        """The call with ``args[index]`` (a value of parsed JSON; -1: none) put as the term atom_json_term/3
        reads from its text, and Out a term returned as the value of the JSON text json_text.pl writes of it
        (from_prolog_json's): ``prolog_call_native.c``'s call_json, no text written or parsed on either side.
        NOT_NATIVE when the C function is off or a value is not its common case: the caller then takes the
        text path (a predicate given JSON text and answering it)."""
        pred = self._predicate(args)
        native = _native
        if native is None:
            return NOT_NATIVE
        out = native.call_json(pred, self.arity, args, index, True)
        if type(out) is tuple:
            self._answer(out)  # raises
        return NOT_NATIVE if out is NotImplemented else out

    def __call__(self, *args: str | float | int) -> str:
        pred = self._pred if self._pred is not None and len(args) == self.arity - 1 else self._predicate(args)
        native = _native
        if native is not None:
            answer = native.call(pred, self.arity, args)
            if type(answer) is str:  # the common case, first
                return answer
            out = self._answer(answer)
            if out is not None:
                return out
        lib = _bind()
        fid = lib.PL_open_foreign_frame()
        try:
            t0 = lib.PL_new_term_refs(self.arity)
            for i, a in enumerate(args):
                t = type(a)
                if t is str:
                    # ASCII (most arguments: names, digests) has no surrogate to map
                    b = (a if a.isascii() else to_prolog_chars(a)).encode()  # type: ignore[union-attr, arg-type]
                    ok = _put_atom_text(t0 + i, b)
                elif t is int:
                    ok = lib.PL_put_int64(t0 + i, a)
                elif t is float:
                    ok = lib.PL_put_float(t0 + i, a)
                elif isinstance(a, str):  # a str subclass: its text, as above
                    b = to_prolog_chars(str(a)).encode()
                    ok = _put_atom_text(t0 + i, b)
                elif isinstance(a, bool) or not isinstance(a, (int, float)):
                    raise TypeError(f"argument {i} of {self.name}: {type(a).__name__}")
                elif isinstance(a, int):
                    ok = lib.PL_put_int64(t0 + i, int(a))
                else:
                    ok = lib.PL_put_float(t0 + i, float(a))
                if not ok:
                    raise PrologCallError(f"{self.name}: cannot pass argument {i}")
            if not lib.PL_call_predicate(None, _PL_Q_NODEBUG | _PL_Q_PASS_EXCEPTION, pred, t0):
                ex = lib.PL_exception(None)
                why = _text(lib, ex, _CVT_WRITEQ) if ex else None
                if ex:
                    lib.PL_clear_exception()
                raise _failed(self.name, why)
            out = _text(lib, t0 + self.arity - 1, _CVT_ATOM | _CVT_STRING)
            if out is None:
                raise PrologCallError(f"{self.name}: the answer is not text")
            return out
        finally:
            lib.PL_discard_foreign_frame(fid)


def _failed(name: str, why: str | None) -> PrologCallError:
    if not why:
        return PrologCallError(f"{name} failed")
    if len(why) > _WHY_CHARS:
        why = why[:_WHY_CHARS] + f"... ({len(why)} characters)"
    return PrologCallError(f"{name} raised {why}")


class _TextBuffers(threading.local):
    """The length, pointer and string mark PL_get_nchars and its release use, made once per thread (ctypes
    objects and their byref per answer otherwise: a few microseconds of every decision)."""

    def __init__(self) -> None:
        self.n = ctypes.c_size_t()
        self.s = ctypes.c_char_p()
        self.mark = ctypes.c_size_t()
        self.n_ref = ctypes.byref(self.n)
        self.s_ref = ctypes.byref(self.s)
        self.mark_ref = ctypes.byref(self.mark)


_buffers = _TextBuffers()


def _text(lib: Any, term: int, cvt: int) -> str | None:
    buf = _buffers
    # a text read with BUF_STACK stays on the thread's stack of strings until released (discarding the frame
    # does not): about a million of them abort the process ("Too many stacked strings")
    _mark_strings(buf.mark_ref)
    try:
        if not lib.PL_get_nchars(term, buf.n_ref, buf.s_ref, cvt | _BUF_STACK | _REP_UTF8):
            return None
        # the bytes are SWI-Prolog's (its stack) until released: copied out here
        return _string_at(buf.s, buf.n.value).decode("utf-8", "replace")
    finally:
        _release_strings(buf.mark.value)
