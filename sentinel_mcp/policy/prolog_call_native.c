/*  One call of a Prolog predicate through SWI-Prolog's C interface, as prolog_call.py's PrologCall makes it
    through ctypes, in one C function: a guard decision's thirteen ctypes calls (frame, term references, seven
    arguments, the call, the answer's text) cost about 10 us of Python, more than a tenth of the decision.

    Not linked against libswipl: prolog_call.py hands over the addresses of the functions pyswip's library
    already resolved (bind), so the module builds without SWI-Prolog's headers and uses the very library
    pyswip loaded. It takes only the common case, exact str without a lone surrogate or U+10F7FF, exact float,
    exact int within 64 bits; anything else returns NotImplemented before any Prolog call, and the caller takes the
    ctypes path, which knows every other case (a lone surrogate mapped as to_prolog_chars maps it, subclasses,
    errors).

    call(pred, arity, args) returns the answer (the last argument, an atom or string) as str; NotImplemented;
    or a tuple (what, text): (0, None) the predicate failed, (0, text) it raised the exception written as
    text, (1, i) argument i could not be put, (2, None) the answer is not text.

    call_json(pred, arity, args, index, answer_json) is call() with JSON terms in and out. args[index] (unless
    index is -1) is any value of parsed JSON, put as the term SWI-Prolog's atom_json_term/3 reads from its
    text with the options true(true), false(false), null(@(null)), then with every text value spelling a
    literal ("true", "false", "null") a string (from_result_json/2 in sentinel_core.pl): an object
    json([Key = Value, ...]) in its order, an array a list, a text an atom, true and false atoms, null @(null),
    numbers as they are. With
    answer_json the answer is a term returned as the value Python's json.loads reads from the text
    json_text.pl writes of it (then from_prolog_json's). A tool's result reached Prolog as JSON text it parsed
    character by character, and its facts came back as JSON text written and parsed again: together about
    half of an extraction. Only the common case is built or read here (exact dict with text keys, list, str
    without a lone surrogate, bool, None, int within 64 bits, finite float, 256 levels deep at most; back,
    the terms json_text.pl writes without the library's help but texts needing escapes, which are taken as
    they are); anything else answers NotImplemented, with nothing left behind in Prolog, and the caller
    takes the text path, which decides what such a value is, as it always did. Those two conversions live in
    prolog_json_terms.c, included below (one translation unit: every function stays static). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* SWI-Prolog.h (9.x) */
typedef uintptr_t term_t;
typedef uintptr_t fid_t;
typedef uintptr_t atom_t;
typedef uintptr_t functor_t;
#define PL_ATOM 2
#define REP_UTF8 0x00100000
#define CVT_ATOM 0x0001
#define CVT_STRING 0x0002
#define CVT_WRITEQ 0x0200
#define BUF_STACK 0x00010000
#define PL_Q_NODEBUG 0x0004
#define PL_Q_PASS_EXCEPTION 0x0010
#define MAX_ARITY 16

static fid_t (*open_foreign_frame)(void);
static void (*discard_foreign_frame)(fid_t);
static term_t (*new_term_refs)(int);
static uintptr_t (*new_atom_mbchars)(int, size_t, const char *);
static void (*unregister_atom)(uintptr_t);
static int (*put_float)(term_t, double);
static int (*put_int64)(term_t, int64_t);
static int (*call_predicate)(void *, int, void *, term_t);
static term_t (*exception_term)(void *);
static void (*clear_exception)(void);
static int (*get_nchars)(term_t, size_t *, char **, unsigned int);
static void (*mark_string_buffers)(uintptr_t *);
static void (*release_string_buffers)(uintptr_t);
static int bound = 0;

static int (*put_atom)(term_t, atom_t); /* bound by bind and bind_json alike */

/* args: exactly n addresses (or handles), none of them 0, into a */
static int addresses(PyObject *args, unsigned long long *a, Py_ssize_t n) {
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) != n) {
        PyErr_Format(PyExc_TypeError, "%zd function addresses", n);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        a[i] = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(args, i));
        if (PyErr_Occurred())
            return 0;
        if (a[i] == 0) {
            PyErr_SetString(PyExc_ValueError, "a null function address");
            return 0;
        }
    }
    return 1;
}

/* a text as an atom in t. PL_put_chars(PL_ATOM) leaves the atom's reference registered in SWI-Prolog 9.0: no
   atom passed that way was ever collected (every distinct text a call passed, a session's facts mirrored, a
   result's strings, stayed in the atom table: ~7 KB a call of the airline's guarded path). An atom from
   PL_new_atom_mbchars is registered by contract, so it is put, then unregistered: the term holds it while
   the call runs, and atom garbage collection takes it after. */
static int put_atom_text(term_t t, size_t n, const char *s) {
    atom_t a = new_atom_mbchars(REP_UTF8, n, s);
    if (!a)
        return 0;
    int ok = put_atom(t, a);
    unregister_atom(a);
    return ok;
}

/* Whether v holds to_prolog_chars' escape character (U+10F7FF, core/stored_text.py), which the text path
   doubles (a text holding it as itself would otherwise read as the escape of a lone surrogate's stand-in).
   Only texts beyond the BMP are looked at. */
static int has_escape(PyObject *v) {
    if (PyUnicode_KIND(v) != PyUnicode_4BYTE_KIND)
        return 0;
    Py_ssize_t len = PyUnicode_GET_LENGTH(v);
    const Py_UCS4 *data = PyUnicode_4BYTE_DATA(v);
    for (Py_ssize_t i = 0; i < len; i++)
        if (data[i] == 0x10F7FF)
            return 1;
    return 0;
}

/* a JSON value as a term and a term as a JSON value (call_json's conversions): their own file, one
   translation unit with this one (its functions stay static) */
#include "prolog_json_terms.c"

static PyObject *bind(PyObject *self, PyObject *args) {
    unsigned long long a[14];
    if (!addresses(args, a, 14))
        return NULL;
    open_foreign_frame = (fid_t(*)(void))(uintptr_t)a[0];
    discard_foreign_frame = (void (*)(fid_t))(uintptr_t)a[1];
    new_term_refs = (term_t(*)(int))(uintptr_t)a[2];
    new_atom_mbchars = (uintptr_t(*)(int, size_t, const char *))(uintptr_t)a[3];
    put_float = (int (*)(term_t, double))(uintptr_t)a[4];
    put_int64 = (int (*)(term_t, int64_t))(uintptr_t)a[5];
    call_predicate = (int (*)(void *, int, void *, term_t))(uintptr_t)a[6];
    exception_term = (term_t(*)(void *))(uintptr_t)a[7];
    clear_exception = (void (*)(void))(uintptr_t)a[8];
    get_nchars = (int (*)(term_t, size_t *, char **, unsigned int))(uintptr_t)a[9];
    mark_string_buffers = (void (*)(uintptr_t *))(uintptr_t)a[10];
    release_string_buffers = (void (*)(uintptr_t))(uintptr_t)a[11];
    put_atom = (int (*)(term_t, uintptr_t))(uintptr_t)a[12];
    unregister_atom = (void (*)(uintptr_t))(uintptr_t)a[13];
    bound = 1;
    Py_RETURN_NONE;
}

/* the text of a term (copied out: SWI-Prolog's buffer lives until call_with releases the thread's strings),
   or NULL with no Python error when it is not text of the kinds asked */
static PyObject *term_text(term_t t, unsigned int cvt) {
    size_t n = 0;
    char *s = NULL;
    if (!get_nchars(t, &n, &s, cvt | BUF_STACK | REP_UTF8))
        return NULL;
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "replace");
}

static PyObject *failure(long what, PyObject *text) {
    if (text == NULL) {
        if (PyErr_Occurred())
            return NULL;
        text = Py_None;
        Py_INCREF(text);
    }
    PyObject *out = Py_BuildValue("(lN)", what, text);
    return out;
}

/* call() and call_json(): json is the index of the argument put as a JSON term, or -1; answer_json, whether
   the answer is a term to give as Python's value of its JSON (else it is text) */
static PyObject *call_with(PyObject *const *argv, Py_ssize_t json, int answer_json) {
    if (!bound || ((json >= 0 || answer_json) && !json_bound)) {
        PyErr_SetString(PyExc_RuntimeError, "prolog_call_native is not bound to SWI-Prolog");
        return NULL;
    }
    void *pred = PyLong_AsVoidPtr(argv[0]);
    long arity = PyLong_AsLong(argv[1]);
    PyObject *args = argv[2];
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (PyErr_Occurred())
        return NULL;
    if (pred == NULL || arity < 1 || arity > MAX_ARITY || n != arity - 1 || json >= n) {
        PyErr_SetString(PyExc_ValueError, "a predicate, its arity (1 to 16) and arity - 1 inputs");
        return NULL;
    }
    /* every input checked before Prolog is touched: anything but the common case goes back to ctypes */
    const char *text[MAX_ARITY];
    Py_ssize_t size[MAX_ARITY];
    int64_t integer[MAX_ARITY];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyTuple_GET_ITEM(args, i);
        text[i] = NULL;
        if (i == json)
            continue;
        if (PyUnicode_CheckExact(a)) {
            if (has_escape(a)) /* ctypes escapes it (to_prolog_chars) */
                Py_RETURN_NOTIMPLEMENTED;
            text[i] = PyUnicode_AsUTF8AndSize(a, &size[i]);
            if (text[i] == NULL) { /* a lone surrogate: ctypes puts its stand-in (to_prolog_chars) */
                if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
                    return NULL;
                PyErr_Clear();
                Py_RETURN_NOTIMPLEMENTED;
            }
        } else if (PyLong_CheckExact(a)) {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(a, &overflow);
            if (overflow || (v == -1 && PyErr_Occurred())) {
                PyErr_Clear();
                Py_RETURN_NOTIMPLEMENTED;
            }
            integer[i] = (int64_t)v;
        } else if (!PyFloat_CheckExact(a)) {
            Py_RETURN_NOTIMPLEMENTED;
        }
    }
    if ((json >= 0 || answer_json) && !json_names()) {
        PyErr_SetString(PyExc_RuntimeError, "SWI-Prolog made no atom for a JSON term");
        return NULL;
    }
    /* a text read with BUF_STACK stays on the thread's stack of strings until released (a foreign frame does
       not release it): about a million of them abort the process ("Too many stacked strings") */
    uintptr_t strings;
    mark_string_buffers(&strings);
    fid_t fid = open_foreign_frame();
    term_t t0 = new_term_refs((int)arity);
    PyObject *out = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyTuple_GET_ITEM(args, i);
        int ok;
        if (i == json) {
            int r = put_json(t0 + i, a, 0);
            if (r == JSON_NOT_HERE) {
                out = Py_NewRef(Py_NotImplemented);
                goto done;
            }
            if (r == JSON_PYTHON)
                goto done;
            if (r == JSON_PROLOG)
                clear_exception(); /* a stack's resource error: this argument could not be put */
            ok = r == JSON_OK;
        } else if (text[i] != NULL)
            ok = put_atom_text(t0 + i, (size_t)size[i], text[i]);
        else if (PyFloat_CheckExact(a))
            ok = put_float(t0 + i, PyFloat_AS_DOUBLE(a));
        else
            ok = put_int64(t0 + i, integer[i]);
        if (!ok) {
            out = failure(1, PyLong_FromSsize_t(i));
            goto done;
        }
    }
    int called;
    /* other Python threads run while Prolog decides, as they do around a ctypes call */
    Py_BEGIN_ALLOW_THREADS
    called = call_predicate(NULL, PL_Q_NODEBUG | PL_Q_PASS_EXCEPTION, pred, t0);
    Py_END_ALLOW_THREADS
    if (!called) {
        term_t ex = exception_term(NULL);
        PyObject *why = NULL;
        if (ex) {
            why = term_text(ex, CVT_WRITEQ);
            clear_exception();
        }
        out = failure(0, why);
        goto done;
    }
    if (answer_json) {
        int r = JSON_NOT_HERE;
        /* a cyclic term has no JSON (its lists would never end here) */
        out = is_acyclic(t0 + arity - 1) ? get_json(t0 + arity - 1, 0, &r) : NULL;
        if (out == NULL && r == JSON_NOT_HERE)
            out = Py_NewRef(Py_NotImplemented);
        goto done;
    }
    out = term_text(t0 + arity - 1, CVT_ATOM | CVT_STRING);
    if (out == NULL)
        out = failure(2, NULL);
done:
    discard_foreign_frame(fid);
    release_string_buffers(strings); /* the texts are copied into Python's */
    return out;
}

static PyObject *call(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 3 || !PyLong_CheckExact(argv[0]) || !PyLong_CheckExact(argv[1]) || !PyTuple_CheckExact(argv[2])) {
        PyErr_SetString(PyExc_TypeError, "call(pred: int, arity: int, args: tuple)");
        return NULL;
    }
    return call_with(argv, -1, 0);
}

static PyObject *call_json(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 5 || !PyLong_CheckExact(argv[0]) || !PyLong_CheckExact(argv[1]) || !PyTuple_CheckExact(argv[2]) ||
        !PyLong_CheckExact(argv[3]) || !PyBool_Check(argv[4])) {
        PyErr_SetString(PyExc_TypeError,
                        "call_json(pred: int, arity: int, args: tuple, index: int, answer_json: bool)");
        return NULL;
    }
    Py_ssize_t json = PyLong_AsSsize_t(argv[3]);
    if (json == -1 && PyErr_Occurred())
        return NULL;
    if (json < -1) {
        PyErr_SetString(PyExc_ValueError, "the JSON argument's index is -1 (none) or an input's");
        return NULL;
    }
    return call_with(argv, json, argv[4] == Py_True);
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "bind(*addresses): the SWI-Prolog functions to call, by address"},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL, "call(pred, arity, args): see the module"},
    {"bind_json", bind_json, METH_VARARGS, "bind_json(*addresses): the functions call_json builds terms with"},
    {"call_json", (PyCFunction)(void (*)(void))call_json, METH_FASTCALL,
     "call_json(pred, arity, args, index, answer_json): call() with JSON terms in and out; see the module"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "prolog_call_native",
    "A Prolog predicate called through SWI-Prolog's C interface in one C function (see prolog_call.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit_prolog_call_native(void) { return PyModule_Create(&module); }
