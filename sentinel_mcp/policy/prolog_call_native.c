/*  One call of a Prolog predicate through SWI-Prolog's C interface, as prolog_call.py's PrologCall makes it
    through ctypes, in one C function: a guard decision's thirteen ctypes calls (frame, term references, seven
    arguments, the call, the answer's text) cost about 10 us of Python, more than a tenth of the decision.

    Not linked against libswipl: prolog_call.py hands over the addresses of the functions pyswip's library
    already resolved (bind), so the module builds without SWI-Prolog's headers and uses the very library
    pyswip loaded. It takes only the common case, exact str of ASCII text, exact float, exact int within 64
    bits; anything else returns NotImplemented before any Prolog call, and the caller takes the ctypes path,
    which knows every other case (non-ASCII text mapped as to_prolog_chars maps it, subclasses, errors).

    call(pred, arity, args) returns the answer (the last argument, an atom or string) as str; NotImplemented;
    or a tuple (what, text): (0, None) the predicate failed, (0, text) it raised the exception written as
    text, (1, i) argument i could not be put, (2, None) the answer is not text. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* SWI-Prolog.h (9.x) */
typedef uintptr_t term_t;
typedef uintptr_t fid_t;
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
static int (*put_chars)(term_t, int, size_t, const char *);
static int (*put_float)(term_t, double);
static int (*put_int64)(term_t, int64_t);
static int (*call_predicate)(void *, int, void *, term_t);
static term_t (*exception_term)(void *);
static void (*clear_exception)(void);
static int (*get_nchars)(term_t, size_t *, char **, unsigned int);
static int bound = 0;

static PyObject *bind(PyObject *self, PyObject *args) {
    unsigned long long a[10];
    if (!PyArg_ParseTuple(args, "KKKKKKKKKK", &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &a[7], &a[8],
                          &a[9]))
        return NULL;
    for (int i = 0; i < 10; i++)
        if (a[i] == 0) {
            PyErr_SetString(PyExc_ValueError, "a null function address");
            return NULL;
        }
    open_foreign_frame = (fid_t(*)(void))(uintptr_t)a[0];
    discard_foreign_frame = (void (*)(fid_t))(uintptr_t)a[1];
    new_term_refs = (term_t(*)(int))(uintptr_t)a[2];
    put_chars = (int (*)(term_t, int, size_t, const char *))(uintptr_t)a[3];
    put_float = (int (*)(term_t, double))(uintptr_t)a[4];
    put_int64 = (int (*)(term_t, int64_t))(uintptr_t)a[5];
    call_predicate = (int (*)(void *, int, void *, term_t))(uintptr_t)a[6];
    exception_term = (term_t(*)(void *))(uintptr_t)a[7];
    clear_exception = (void (*)(void))(uintptr_t)a[8];
    get_nchars = (int (*)(term_t, size_t *, char **, unsigned int))(uintptr_t)a[9];
    bound = 1;
    Py_RETURN_NONE;
}

/* the text of a term (copied out: SWI-Prolog's buffer lives until the frame is discarded), or NULL with no
   Python error when it is not text of the kinds asked */
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

static PyObject *call(PyObject *self, PyObject *const *argv, Py_ssize_t argc) {
    if (argc != 3 || !PyLong_CheckExact(argv[0]) || !PyLong_CheckExact(argv[1]) || !PyTuple_CheckExact(argv[2])) {
        PyErr_SetString(PyExc_TypeError, "call(pred: int, arity: int, args: tuple)");
        return NULL;
    }
    if (!bound) {
        PyErr_SetString(PyExc_RuntimeError, "prolog_call_native is not bound to SWI-Prolog");
        return NULL;
    }
    void *pred = PyLong_AsVoidPtr(argv[0]);
    long arity = PyLong_AsLong(argv[1]);
    PyObject *args = argv[2];
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    if (PyErr_Occurred())
        return NULL;
    if (pred == NULL || arity < 1 || arity > MAX_ARITY || n != arity - 1) {
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
        if (PyUnicode_CheckExact(a)) {
            if (!PyUnicode_IS_ASCII(a))
                Py_RETURN_NOTIMPLEMENTED;
            text[i] = PyUnicode_AsUTF8AndSize(a, &size[i]);
            if (text[i] == NULL)
                return NULL;
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
    fid_t fid = open_foreign_frame();
    term_t t0 = new_term_refs((int)arity);
    PyObject *out = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = PyTuple_GET_ITEM(args, i);
        int ok;
        if (text[i] != NULL)
            ok = put_chars(t0 + i, PL_ATOM | REP_UTF8, (size_t)size[i], text[i]);
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
    out = term_text(t0 + arity - 1, CVT_ATOM | CVT_STRING);
    if (out == NULL)
        out = failure(2, NULL);
done:
    discard_foreign_frame(fid);
    return out;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS, "bind(*addresses): the SWI-Prolog functions to call, by address"},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL, "call(pred, arity, args): see the module"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "prolog_call_native",
    "A Prolog predicate called through SWI-Prolog's C interface in one C function (see prolog_call.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit_prolog_call_native(void) { return PyModule_Create(&module); }
