/* Compiled text kernels for a build's workers (tokenize.py, chunking.py): the twins of the
 * Python paths that read every character of every note.
 *
 * count_words: the `\w+` words of each chunk, casefolded, counted per chunk against a vocabulary
 * in first-seen order. Python spends most of a build there on one str object per token; here a
 * word is hashed from its code points and a str is made only the first time a word is seen.
 * Words are exactly re's `\w+` runs (Py_UNICODE_ISALNUM or '_', as _sre tests them) and folded by
 * str.casefold itself for non-ASCII words, so the result is the Python path's, item for item.
 *
 * word_cuts: a markdown note's word spans and the chunk cuts chunking.chunk_markdown chooses.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static PyObject *casefold_name;

/* ---- growable arrays ------------------------------------------------------------------------- */
typedef struct {
    char *data;
    size_t len, cap, item;
} Vec;

static int vec_reserve(Vec *v, size_t n) {
    if (n <= v->cap) return 0;
    size_t cap = v->cap ? v->cap : 64;
    while (cap < n) cap *= 2;
    char *p = realloc(v->data, cap * v->item);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    v->data = p;
    v->cap = cap;
    return 0;
}

#define VEC_AT(v, type, i) (((type *)(v).data)[i])

static int vec_push32(Vec *v, int32_t x) {
    if (vec_reserve(v, v->len + 1) < 0) return -1;
    VEC_AT(*v, int32_t, v->len++) = x;
    return 0;
}

static PyObject *vec_bytes(const Vec *v) { return PyBytes_FromStringAndSize(v->data, (Py_ssize_t)(v->len * v->item)); }

/* ---- characters ------------------------------------------------------------------------------ */
static unsigned char ascii_word[128];  /* [0-9A-Za-z_] */
static unsigned char ascii_space[128]; /* str.isspace() for ASCII */

static inline int is_word(Py_UCS4 ch) { return ch < 128 ? ascii_word[ch] : Py_UNICODE_ISALNUM(ch); }

static inline int is_space(Py_UCS4 ch) { return ch < 128 ? ascii_space[ch] : Py_UNICODE_ISSPACE(ch); }

/* ---- the vocabulary: open addressing over the words' code points ----------------------------- */
typedef struct {
    int32_t *slots; /* word id or -1 */
    size_t mask;
    Vec hash, off, len; /* per word: uint64 hash, int64 offset into arena, int32 length */
    Vec arena;          /* Py_UCS4 code points of every word */
    Vec mark, cnt;      /* per word: last chunk that had it (int64), its count there (int32) */
} Vocab;

static uint64_t hash_word(const Py_UCS4 *w, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ w[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static int vocab_init(Vocab *v) {
    memset(v, 0, sizeof(*v));
    v->hash.item = 8, v->off.item = 8, v->len.item = 4, v->arena.item = 4, v->mark.item = 8, v->cnt.item = 4;
    v->mask = 4095;
    v->slots = malloc(sizeof(int32_t) * (v->mask + 1));
    if (!v->slots) {
        PyErr_NoMemory();
        return -1;
    }
    memset(v->slots, 0xff, sizeof(int32_t) * (v->mask + 1));
    return 0;
}

static void vocab_free(Vocab *v) {
    free(v->slots);
    free(v->hash.data), free(v->off.data), free(v->len.data), free(v->arena.data), free(v->mark.data);
    free(v->cnt.data);
}

static int vocab_grow(Vocab *v) {
    size_t cap = (v->mask + 1) * 2;
    int32_t *slots = malloc(sizeof(int32_t) * cap);
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    memset(slots, 0xff, sizeof(int32_t) * cap);
    for (size_t id = 0; id < v->hash.len; id++) {
        size_t i = VEC_AT(v->hash, uint64_t, id) & (cap - 1);
        while (slots[i] >= 0) i = (i + 1) & (cap - 1);
        slots[i] = (int32_t)id;
    }
    free(v->slots);
    v->slots = slots;
    v->mask = cap - 1;
    return 0;
}

/* The id of word `w` (n code points), adding it (as a str, to `words`) if it is new; -1 on error.
 * `word` is the word as a str when the caller has one (else it is made from the code points). */
static int32_t vocab_id(Vocab *v, const Py_UCS4 *w, Py_ssize_t n, PyObject *word, PyObject *words) {
    uint64_t h = hash_word(w, n);
    size_t i = h & v->mask;
    for (int32_t id; (id = v->slots[i]) >= 0; i = (i + 1) & v->mask) {
        if (VEC_AT(v->hash, uint64_t, id) == h && VEC_AT(v->len, int32_t, id) == n &&
            !memcmp(&VEC_AT(v->arena, Py_UCS4, VEC_AT(v->off, int64_t, id)), w, sizeof(Py_UCS4) * (size_t)n))
            return id;
    }
    size_t id = v->hash.len;
    if (id >= INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2**31 distinct words");
        return -1;
    }
    PyObject *s = word ? Py_NewRef(word) : PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, w, n);
    if (!s) return -1;
    int bad = PyList_Append(words, s);
    Py_DECREF(s);
    if (bad || vec_reserve(&v->hash, id + 1) || vec_reserve(&v->off, id + 1) || vec_reserve(&v->len, id + 1) ||
        vec_reserve(&v->mark, id + 1) || vec_reserve(&v->cnt, id + 1) || vec_reserve(&v->arena, v->arena.len + (size_t)n))
        return -1;
    memcpy(&VEC_AT(v->arena, Py_UCS4, v->arena.len), w, sizeof(Py_UCS4) * (size_t)n);
    VEC_AT(v->hash, uint64_t, id) = h;
    VEC_AT(v->off, int64_t, id) = (int64_t)v->arena.len;
    VEC_AT(v->len, int32_t, id) = (int32_t)n;
    VEC_AT(v->mark, int64_t, id) = -1;
    v->arena.len += (size_t)n;
    v->hash.len = v->off.len = v->len.len = v->mark.len = v->cnt.len = id + 1;
    v->slots[i] = (int32_t)id;
    if ((id + 1) * 2 > v->mask + 1 && vocab_grow(v) < 0) return -1;
    return (int32_t)id;
}

static int cmp_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Count the words of text[start:end] into the current chunk's row; returns tokens seen or -1. */
static Py_ssize_t count_piece(Vocab *v, PyObject *text, Py_ssize_t start, Py_ssize_t end, int64_t chunk, Vec *row,
                              Vec *buf, PyObject *words) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t tokens = 0;
    Py_ssize_t i = start;
    while (i < end) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (!is_word(ch)) {
            i++;
            continue;
        }
        Py_ssize_t j = i;
        Py_UCS4 top = 0;
        while (j < end && is_word(ch = PyUnicode_READ(kind, data, j))) {
            top |= ch;
            j++;
        }
        int32_t id;
        if (top < 128) { /* ASCII: casefold is lowering A-Z */
            if (vec_reserve(buf, (size_t)(j - i)) < 0) return -1;
            Py_UCS4 *w = (Py_UCS4 *)buf->data;
            for (Py_ssize_t k = i; k < j; k++) {
                Py_UCS4 c = PyUnicode_READ(kind, data, k);
                w[k - i] = (c >= 'A' && c <= 'Z') ? c + 32 : c;
            }
            id = vocab_id(v, w, j - i, NULL, words);
        } else {
            PyObject *sub = PyUnicode_Substring(text, i, j);
            PyObject *folded = sub ? PyObject_CallMethodNoArgs(sub, casefold_name) : NULL;
            Py_XDECREF(sub);
            if (!folded) return -1;
            Py_ssize_t n = PyUnicode_GET_LENGTH(folded);
            if (vec_reserve(buf, (size_t)n) < 0) {
                Py_DECREF(folded);
                return -1;
            }
            Py_UCS4 *w = (Py_UCS4 *)buf->data;
            int fk = PyUnicode_KIND(folded);
            const void *fd = PyUnicode_DATA(folded);
            for (Py_ssize_t k = 0; k < n; k++) w[k] = PyUnicode_READ(fk, fd, k);
            id = vocab_id(v, w, n, folded, words);
            Py_DECREF(folded);
        }
        if (id < 0) return -1;
        if (VEC_AT(v->mark, int64_t, id) != chunk) {
            VEC_AT(v->mark, int64_t, id) = chunk;
            VEC_AT(v->cnt, int32_t, id) = 1;
            if (vec_push32(row, id) < 0) return -1;
        } else {
            VEC_AT(v->cnt, int32_t, id)++;
        }
        tokens++;
        i = j;
    }
    return tokens;
}

static int get_int64s(PyObject *obj, Py_buffer *view, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->itemsize != 8 || view->len % 8) {
        PyErr_Format(PyExc_TypeError, "%s: expected int64 items", what);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *count_words(PyObject *self, PyObject *args) {
    PyObject *pieces, *bounds_obj, *ptr_obj;
    if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &pieces, &bounds_obj, &ptr_obj)) return NULL;
    Py_buffer bb, pb;
    if (get_int64s(bounds_obj, &bb, "bounds") < 0) return NULL;
    if (get_int64s(ptr_obj, &pb, "chunk_ptr") < 0) {
        PyBuffer_Release(&bb);
        return NULL;
    }
    const int64_t *bounds = bb.buf, *ptr = pb.buf;
    Py_ssize_t n_pieces = PyList_GET_SIZE(pieces), n_chunks = pb.len / 8 - 1;
    PyObject *out = NULL, *words = PyList_New(0);
    Vocab v;
    Vec row = {NULL, 0, 0, 4}, ids = {NULL, 0, 0, 4}, counts = {NULL, 0, 0, 4}, row_len = {NULL, 0, 0, 8};
    Vec buf = {NULL, 0, 0, 4};
    int ok = words && vocab_init(&v) == 0;
    if (ok && (bb.len / 16 != n_pieces || n_chunks < 0 || ptr[0] != 0 || ptr[n_chunks] != n_pieces)) {
        PyErr_SetString(PyExc_ValueError, "bounds must be (start, end) per piece; chunk_ptr must span the pieces");
        ok = 0;
    }
    Py_ssize_t tokens = 0;
    if (ok) ok = vec_reserve(&row_len, (size_t)(n_chunks > 0 ? n_chunks : 1)) == 0;
    for (Py_ssize_t c = 0; ok && c < n_chunks; c++) {
        row.len = 0;
        if (ptr[c + 1] < ptr[c]) {
            PyErr_SetString(PyExc_ValueError, "chunk_ptr must not decrease");
            ok = 0;
            break;
        }
        for (int64_t p = ptr[c]; ok && p < ptr[c + 1]; p++) {
            PyObject *text = PyList_GET_ITEM(pieces, p);
            if (!PyUnicode_Check(text)) {
                PyErr_SetString(PyExc_TypeError, "pieces must be str");
                ok = 0;
                break;
            }
            Py_ssize_t len = PyUnicode_GET_LENGTH(text), start = bounds[2 * p], end = bounds[2 * p + 1];
            if (start < 0 || end > len || start > end) {
                PyErr_SetString(PyExc_ValueError, "piece bounds outside its text");
                ok = 0;
                break;
            }
            Py_ssize_t got = count_piece(&v, text, start, end, c, &row, &buf, words);
            if (got < 0) ok = 0;
            tokens += got;
        }
        if (!ok) break;
        qsort(row.data, row.len, sizeof(int32_t), cmp_int32); /* np.unique's order: word ids ascending */
        if (vec_reserve(&ids, ids.len + row.len) < 0 || vec_reserve(&counts, counts.len + row.len) < 0) {
            ok = 0;
            break;
        }
        for (size_t k = 0; k < row.len; k++) {
            int32_t id = VEC_AT(row, int32_t, k);
            VEC_AT(ids, int32_t, ids.len++) = id;
            VEC_AT(counts, int32_t, counts.len++) = VEC_AT(v.cnt, int32_t, id);
        }
        VEC_AT(row_len, int64_t, row_len.len++) = (int64_t)row.len;
    }
    if (ok) out = Py_BuildValue("(ONNNn)", words, vec_bytes(&row_len), vec_bytes(&ids), vec_bytes(&counts), tokens);
    if (words) vocab_free(&v);
    Py_XDECREF(words);
    free(row.data), free(ids.data), free(counts.data), free(row_len.data), free(buf.data);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&pb);
    return out;
}

/* ---- chunk cuts ------------------------------------------------------------------------------ */
enum { BREAK_NONE, BREAK_SENTENCE, BREAK_BLOCK, BREAK_HEADING };
enum { BLOCK_TEXT, BLOCK_HEADING, BLOCK_CODE };

static Py_ssize_t lower_bound(const int64_t *a, Py_ssize_t n, int64_t x) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int int64_items(PyObject *seq, Py_ssize_t n, int64_t *out) {
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (out[i] == -1 && PyErr_Occurred()) return -1;
    }
    return 0;
}

/* Where chunk_markdown cuts: see _cuts_python in chunking.py, which this follows step by step. */
static PyObject *word_cuts(PyObject *self, PyObject *args) {
    PyObject *text, *bs_obj, *be_obj, *bk_obj;
    Py_ssize_t body_start, size, overlap, lo;
    if (!PyArg_ParseTuple(args, "UnnnnOOO", &text, &body_start, &size, &overlap, &lo, &bs_obj, &be_obj, &bk_obj))
        return NULL;
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    if (body_start < 0 || body_start > len || size < 1 || overlap < 0 || overlap >= size || lo < 1 || lo > size) {
        PyErr_SetString(PyExc_ValueError, "word_cuts: bad body start, size, overlap or shortest chunk");
        return NULL;
    }
    PyObject *bs = PySequence_Fast(bs_obj, "block starts"), *be = PySequence_Fast(be_obj, "block ends");
    PyObject *bk = PySequence_Fast(bk_obj, "block kinds");
    PyObject *out = NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Vec starts = {NULL, 0, 0, 8}, ends = {NULL, 0, 0, 8}, cuts = {NULL, 0, 0, 8}, blocks = {NULL, 0, 0, 8};
    signed char *breaks = NULL;
    if (!bs || !be || !bk) goto done;
    Py_ssize_t n_blocks = PySequence_Fast_GET_SIZE(bs);
    if (PySequence_Fast_GET_SIZE(be) != n_blocks || PySequence_Fast_GET_SIZE(bk) != n_blocks) {
        PyErr_SetString(PyExc_ValueError, "word_cuts: one start, end and kind per block");
        goto done;
    }
    /* whitespace-separated words of the body (str.split()) */
    for (Py_ssize_t i = body_start; i < len;) {
        if (is_space(PyUnicode_READ(kind, data, i))) {
            i++;
            continue;
        }
        Py_ssize_t j = i + 1;
        while (j < len && !is_space(PyUnicode_READ(kind, data, j))) j++;
        if (vec_reserve(&starts, starts.len + 1) < 0 || vec_reserve(&ends, ends.len + 1) < 0) goto done;
        VEC_AT(starts, int64_t, starts.len++) = i;
        VEC_AT(ends, int64_t, ends.len++) = j;
        i = j;
    }
    Py_ssize_t n = (Py_ssize_t)starts.len;
    const int64_t *ws = (const int64_t *)starts.data, *we = (const int64_t *)ends.data;
    Py_ssize_t short_max = size + size / 4; /* a little over beats a tiny last chunk */
    if (n && n <= short_max) {             /* the common short note: one chunk */
        if (vec_reserve(&cuts, 2) < 0) goto done;
        VEC_AT(cuts, int64_t, 0) = ws[0];
        VEC_AT(cuts, int64_t, 1) = we[n - 1];
        cuts.len = 2;
    } else if (n) {
        breaks = calloc((size_t)n, 1);
        if (!breaks || vec_reserve(&blocks, (size_t)n_blocks * 3 + 1) < 0) {
            if (!breaks) PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t k = 1; k < n; k++) {
            Py_UCS4 ch = PyUnicode_READ(kind, data, we[k - 1] - 1);
            breaks[k] = (ch == '.' || ch == '!' || ch == '?' || ch == ':' || ch == ';') ? BREAK_SENTENCE : BREAK_NONE;
        }
        int64_t *b_start = (int64_t *)blocks.data, *b_end = b_start + n_blocks, *b_kind = b_end + n_blocks;
        if (int64_items(bs, n_blocks, b_start) < 0 || int64_items(be, n_blocks, b_end) < 0 ||
            int64_items(bk, n_blocks, b_kind) < 0)
            goto done;
        for (Py_ssize_t b = 0; b < n_blocks; b++) {
            Py_ssize_t first = lower_bound(ws, n, b_start[b]);
            if (first < n) breaks[first] = b_kind[b] == BLOCK_HEADING ? BREAK_HEADING : BREAK_BLOCK;
        }
        for (Py_ssize_t b = 0; b < n_blocks; b++) { /* never cut inside a code block if a better place exists */
            Py_ssize_t first = lower_bound(ws, n, b_start[b]), last = lower_bound(ws, n, b_end[b]);
            if (b_kind[b] == BLOCK_CODE && first < n)
                for (Py_ssize_t k = first + 1; k < last; k++) breaks[k] = BREAK_NONE;
        }
        for (Py_ssize_t i = 0; i < n;) {
            Py_ssize_t cut;
            if (n - i <= short_max) {
                cut = n;
            } else {
                int best = 0;
                cut = i + size;
                for (Py_ssize_t k = i + lo; k <= i + size; k++) /* the best break, the later on a tie */
                    if (breaks[k] && breaks[k] >= best) best = breaks[k], cut = k;
            }
            if (vec_reserve(&cuts, cuts.len + 2) < 0) goto done;
            VEC_AT(cuts, int64_t, cuts.len++) = ws[i];
            VEC_AT(cuts, int64_t, cuts.len++) = we[cut - 1];
            if (cut >= n) break;
            i = breaks[cut] >= BREAK_BLOCK ? cut : (cut - overlap > i + 1 ? cut - overlap : i + 1);
        }
    }
    out = vec_bytes(&cuts);
done:
    Py_XDECREF(bs), Py_XDECREF(be), Py_XDECREF(bk);
    free(starts.data), free(ends.data), free(cuts.data), free(blocks.data), free(breaks);
    return out;
}

static PyMethodDef methods[] = {
    {"count_words", count_words, METH_VARARGS,
     "count_words(pieces, bounds, chunk_ptr) -> (vocab, row_len, word_ids, counts, n_tokens).\n"
     "pieces: list of str; bounds: int64 (start, end) per piece; chunk_ptr: int64, chunk c is pieces\n"
     "chunk_ptr[c]:chunk_ptr[c + 1]. Words are casefolded `\\w+` runs, ids in first-seen order; per chunk\n"
     "its distinct word ids ascending (int32 bytes) with their counts (int32), row_len int64 per chunk."},
    {"word_cuts", word_cuts, METH_VARARGS,
     "word_cuts(text, body_start, size, overlap, shortest, block_starts, block_ends, block_kinds) -> int64 bytes:\n"
     "(start, end) per chunk of a markdown note, as chunking.chunk_markdown cuts it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_text",
                                    "Compiled text kernels: word counting and chunk cuts (see tokenize.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__text(void) {
    for (int c = 0; c < 128; c++) {
        ascii_word[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        ascii_space[c] = (c >= 9 && c <= 13) || (c >= 28 && c <= 32);
    }
    casefold_name = PyUnicode_InternFromString("casefold");
    if (!casefold_name) return NULL;
    return PyModule_Create(&module);
}
