/*  Part of prolog_call_native.c (included there, one translation unit): a parsed JSON value put as the term
    from_result_json/2 reads from its text (put_json), and an answer term read as the value json.loads reads
    from the text json_text.pl writes of it (get_json); see prolog_call_native.c's comment for the cases. */

/* call_json's term building (bind_json) */
static term_t (*new_term_ref)(void);
static int (*put_nil)(term_t);
static int (*cons_list)(term_t, term_t, term_t);
static int (*cons_functor_v)(term_t, functor_t, term_t);
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
