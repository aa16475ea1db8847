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
    takes the text path, which decides what such a value is, as it always did. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

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

/* call_json's term building (bind_json) */
typedef uintptr_t atom_t;
typedef uintptr_t functor_t;
static term_t (*new_term_ref)(void);
static int (*put_nil)(term_t);
static int (*cons_list)(term_t, term_t, term_t);
static int (*cons_functor_v)(term_t, functor_t, term_t);
static int (*put_atom)(term_t, atom_t);
static atom_t (*new_atom)(const char *);
static functor_t (*new_functor)(atom_t, size_t);
static int (*put_term)(term_t, term_t);
static int (*is_acyclic)(term_t);
static int (*put_string_nchars)(term_t, size_t, const char *);
static int (*term_type)(term_t);
static int (*get_list)(term_t, term_t, term_t);
static int (*get_functor)(term_t, functor_t *);
static int (*get_arg)(size_t, term_t, term_t);
static int (*get_float)(term_t, double *);
static int (*get_int64)(term_t, int64_t *);
static int (*get_atom)(term_t, atom_t *);
static functor_t json_1, eq_2, at_1, minus_2;
static atom_t atom_true, atom_false, atom_null;
static int json_bound = 0, json_named = 0;
#define MAX_JSON_DEPTH 256
#define PL_INTEGER 3
#define PL_FLOAT 5
#define PL_STRING 6
#define PL_TERM 7
#define PL_NIL 8
#define PL_LIST_PAIR 10

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

static PyObject *bind_json(PyObject *self, PyObject *args) {
    unsigned long long a[17];
    if (!addresses(args, a, 17))
        return NULL;
    new_term_ref = (term_t(*)(void))(uintptr_t)a[0];
    put_nil = (int (*)(term_t))(uintptr_t)a[1];
    cons_list = (int (*)(term_t, term_t, term_t))(uintptr_t)a[2];
    cons_functor_v = (int (*)(term_t, functor_t, term_t))(uintptr_t)a[3];
    put_atom = (int (*)(term_t, atom_t))(uintptr_t)a[4];
    new_atom = (atom_t(*)(const char *))(uintptr_t)a[5];
    new_functor = (functor_t(*)(atom_t, size_t))(uintptr_t)a[6];
    term_type = (int (*)(term_t))(uintptr_t)a[7];
    get_list = (int (*)(term_t, term_t, term_t))(uintptr_t)a[8];
    get_functor = (int (*)(term_t, functor_t *))(uintptr_t)a[9];
    get_arg = (int (*)(size_t, term_t, term_t))(uintptr_t)a[10];
    get_float = (int (*)(term_t, double *))(uintptr_t)a[11];
    get_int64 = (int (*)(term_t, int64_t *))(uintptr_t)a[12];
    get_atom = (int (*)(term_t, atom_t *))(uintptr_t)a[13];
    put_term = (int (*)(term_t, term_t))(uintptr_t)a[14];
    is_acyclic = (int (*)(term_t))(uintptr_t)a[15];
    put_string_nchars = (int (*)(term_t, size_t, const char *))(uintptr_t)a[16];
    json_bound = 1;
    Py_RETURN_NONE;
}

/* the atoms and functors a JSON term is made of, made on the first call_json: atoms are made by a thread
   with a Prolog engine (bind_json may run on any thread), and live as long as the process (PL_new_atom
   holds a reference). Two engine threads making them at once make the same handles. */
static int json_names(void) {
    if (json_named)
        return 1;
    atom_t j = new_atom("json"), eq = new_atom("="), at = new_atom("@"), minus = new_atom("-");
    atom_true = new_atom("true");
    atom_false = new_atom("false");
    atom_null = new_atom("null");
    json_1 = new_functor(j, 1);
    eq_2 = new_functor(eq, 2);
    at_1 = new_functor(at, 1);
    minus_2 = new_functor(minus, 2);
    if (!j || !eq || !at || !minus || !atom_true || !atom_false || !atom_null || !json_1 || !eq_2 || !at_1 ||
        !minus_2)
        return 0;
    json_named = 1;
    return 1;
}

/* put_json's outcomes */
#define JSON_OK 1
#define JSON_PROLOG 0     /* a Prolog call failed (its stacks are full) */
#define JSON_PYTHON -1    /* a Python error is set */
#define JSON_NOT_HERE -2  /* not the common case: the caller sends the text */

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

/* a text the reader's literals are spelled as: "true", "false", "null" (the n bytes at s) */
static int spells_literal(const char *s, Py_ssize_t n) {
    return (n == 4 && (memcmp(s, "true", 4) == 0 || memcmp(s, "null", 4) == 0)) ||
           (n == 5 && memcmp(s, "false", 5) == 0);
}

/* a text into t: an atom; a value (not a key) spelling a literal a string, as from_result_json/2 reads it
   (the upstream's text "true" is never the boolean to a guard) */
static int put_text(term_t t, PyObject *v, int value) {
    Py_ssize_t n;
    if (has_escape(v)) /* the text path escapes it */
        return JSON_NOT_HERE;
    const char *s = PyUnicode_AsUTF8AndSize(v, &n);
    if (s == NULL) { /* a lone surrogate: the text path maps it to its stand-in */
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
            return JSON_PYTHON;
        PyErr_Clear();
        return JSON_NOT_HERE;
    }
    if (value && spells_literal(s, n))
        return put_string_nchars(t, (size_t)n, s) ? JSON_OK : JSON_PROLOG;
    return put_atom_text(t, (size_t)n, s) ? JSON_OK : JSON_PROLOG;
}

/* v as atom_json_term/3 reads its JSON text, into t */
static int put_json(term_t t, PyObject *v, int depth) {
    if (PyUnicode_CheckExact(v))
        return put_text(t, v, 1);
    if (v == Py_True || v == Py_False)
        return put_atom(t, v == Py_True ? atom_true : atom_false) ? JSON_OK : JSON_PROLOG;
    if (v == Py_None) {
        term_t a = new_term_ref();
        return a && put_atom(a, atom_null) && cons_functor_v(t, at_1, a) ? JSON_OK : JSON_PROLOG;
    }
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (i == -1 && PyErr_Occurred())
            return JSON_PYTHON;
        if (overflow)
            return JSON_NOT_HERE;
        return put_int64(t, (int64_t)i) ? JSON_OK : JSON_PROLOG;
    }
    if (PyFloat_CheckExact(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        if (!isfinite(d)) /* written NaN or Infinity, which the JSON reader refuses */
            return JSON_NOT_HERE;
        return put_float(t, d) ? JSON_OK : JSON_PROLOG;
    }
    if (depth >= MAX_JSON_DEPTH)
        return JSON_NOT_HERE;
    if (PyList_CheckExact(v)) {
        term_t head = new_term_ref();
        if (!head || !put_nil(t))
            return JSON_PROLOG;
        /* built from its end; the list is not changed meanwhile (this holds the interpreter lock) */
        for (Py_ssize_t i = PyList_GET_SIZE(v) - 1; i >= 0; i--) {
            int r = put_json(head, PyList_GET_ITEM(v, i), depth + 1);
            if (r != JSON_OK)
                return r;
            if (!cons_list(t, head, t))
                return JSON_PROLOG;
        }
        return JSON_OK;
    }
    if (PyDict_CheckExact(v)) {
        Py_ssize_t n = PyDict_GET_SIZE(v), pos = 0, k = 0;
        PyObject *key, *value;
        PyObject **items = PyMem_Malloc(sizeof(PyObject *) * 2 * (size_t)(n > 0 ? n : 1));
        if (items == NULL) {
            PyErr_NoMemory();
            return JSON_PYTHON;
        }
        while (k < n && PyDict_Next(v, &pos, &key, &value)) {
            items[2 * k] = key;
            items[2 * k + 1] = value;
            k++;
        }
        term_t kv = new_term_refs(2), pair = new_term_ref(), list = new_term_ref();
        int r = kv && pair && list && put_nil(list) ? JSON_OK : JSON_PROLOG;
        for (Py_ssize_t i = k - 1; r == JSON_OK && i >= 0; i--) {
            if (!PyUnicode_CheckExact(items[2 * i])) { /* the encoder writes other keys as text */
                r = JSON_NOT_HERE;
                break;
            }
            r = put_text(kv, items[2 * i], 0);
            if (r == JSON_OK)
                r = put_json(kv + 1, items[2 * i + 1], depth + 1);
            if (r == JSON_OK && !(cons_functor_v(pair, eq_2, kv) && cons_list(list, pair, list)))
                r = JSON_PROLOG;
        }
        PyMem_Free(items);
        if (r == JSON_OK && !cons_functor_v(t, json_1, list))
            r = JSON_PROLOG;
        return r;
    }
    return JSON_NOT_HERE;
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

/* A text of the answer as Python text; NULL with JSON_NOT_HERE in *r for text json_text.pl's answer would not
   give the same way: a code point Python's UTF-8 decoder refuses (a surrogate), or the escape character
   from_prolog_json maps back (U+10F7FF: a lone surrogate's stand-in, or itself doubled). */
static PyObject *answer_text(term_t t, int *r) {
    size_t n = 0;
    char *s = NULL;
    if (!get_nchars(t, &n, &s, CVT_ATOM | CVT_STRING | BUF_STACK | REP_UTF8)) {
        *r = JSON_NOT_HERE;
        return NULL;
    }
    PyObject *text = PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, NULL);
    if (text == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            *r = JSON_PYTHON;
            return NULL;
        }
        PyErr_Clear();
        *r = JSON_NOT_HERE;
        return NULL;
    }
    if (has_escape(text)) {
        Py_DECREF(text);
        *r = JSON_NOT_HERE;
        return NULL;
    }
    return text;
}

/* t as Python's json.loads reads the text json_text.pl writes of it (json(Pairs) an object of K = V or K - V
   with text keys, lists, @(true), @(false), @(null), integers within 64 bits, finite floats, atoms and strings
   as texts); NULL with *r JSON_NOT_HERE for any other term, which the text path writes (or refuses). t is
   acyclic. */
static PyObject *get_json(term_t t, int depth, int *r) {
    if (depth >= MAX_JSON_DEPTH) {
        *r = JSON_NOT_HERE;
        return NULL;
    }
    switch (term_type(t)) {
    case PL_ATOM:
    case PL_STRING:
        return answer_text(t, r);
    case PL_INTEGER: {
        int64_t i;
        if (!get_int64(t, &i)) { /* past 64 bits */
            *r = JSON_NOT_HERE;
            return NULL;
        }
        PyObject *v = PyLong_FromLongLong((long long)i);
        if (v == NULL)
            *r = JSON_PYTHON;
        return v;
    }
    case PL_FLOAT: {
        double d;
        if (!get_float(t, &d) || !isfinite(d)) {
            *r = JSON_NOT_HERE;
            return NULL;
        }
        PyObject *v = PyFloat_FromDouble(d);
        if (v == NULL)
            *r = JSON_PYTHON;
        return v;
    }
    case PL_NIL: {
        PyObject *v = PyList_New(0);
        if (v == NULL)
            *r = JSON_PYTHON;
        return v;
    }
    case PL_LIST_PAIR: {
        PyObject *list = PyList_New(0);
        if (list == NULL) {
            *r = JSON_PYTHON;
            return NULL;
        }
        term_t rest = new_term_ref(), head = new_term_ref();
        if (!rest || !head || !put_term(rest, t)) {
            Py_DECREF(list);
            *r = JSON_NOT_HERE;
            return NULL;
        }
        while (get_list(rest, head, rest)) {
            PyObject *item = get_json(head, depth + 1, r);
            if (item == NULL || PyList_Append(list, item) < 0) {
                if (item != NULL)
                    *r = JSON_PYTHON;
                Py_XDECREF(item);
                Py_DECREF(list);
                return NULL;
            }
            Py_DECREF(item);
        }
        if (term_type(rest) != PL_NIL) { /* a partial list */
            Py_DECREF(list);
            *r = JSON_NOT_HERE;
            return NULL;
        }
        return list;
    }
    case PL_TERM: {
        functor_t f;
        term_t a = new_term_ref();
        if (!a || !get_functor(t, &f) || !get_arg(1, t, a)) {
            *r = JSON_NOT_HERE;
            return NULL;
        }
        if (f == at_1) {
            atom_t c;
            if (get_atom(a, &c) && (c == atom_true || c == atom_false || c == atom_null)) {
                PyObject *v = c == atom_true ? Py_True : c == atom_false ? Py_False : Py_None;
                return Py_NewRef(v);
            }
            *r = JSON_NOT_HERE;
            return NULL;
        }
        if (f != json_1) {
            *r = JSON_NOT_HERE;
            return NULL;
        }
        PyObject *dict = PyDict_New();
        if (dict == NULL) {
            *r = JSON_PYTHON;
            return NULL;
        }
        term_t pair = new_term_ref(), k = new_term_ref(), v = new_term_ref();
        if (!pair || !k || !v) {
            Py_DECREF(dict);
            *r = JSON_NOT_HERE;
            return NULL;
        }
        while (get_list(a, pair, a)) {
            functor_t pf;
            int kt;
            if (!get_functor(pair, &pf) || (pf != eq_2 && pf != minus_2) || !get_arg(1, pair, k) ||
                !get_arg(2, pair, v) || ((kt = term_type(k)) != PL_ATOM && kt != PL_STRING)) {
                Py_DECREF(dict);
                *r = JSON_NOT_HERE;
                return NULL;
            }
            PyObject *key = answer_text(k, r);
            PyObject *value = key == NULL ? NULL : get_json(v, depth + 1, r);
            /* a key twice: the last value, at the first one's place, as json.loads does */
            int bad = value == NULL || PyDict_SetItem(dict, key, value) < 0;
            if (bad && value != NULL)
                *r = JSON_PYTHON;
            Py_XDECREF(key);
            Py_XDECREF(value);
            if (bad) {
                Py_DECREF(dict);
                return NULL;
            }
        }
        if (term_type(a) != PL_NIL) {
            Py_DECREF(dict);
            *r = JSON_NOT_HERE;
            return NULL;
        }
        return dict;
    }
    default: /* a variable, a rational, a blob */
        *r = JSON_NOT_HERE;
        return NULL;
    }
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
