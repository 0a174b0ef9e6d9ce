/* Compiled text kernels for a build's workers (tokenize.py, chunking.py): the twins of the
 * Python paths that read every character of every note.
 *
 * count_words: the `\w+` words of each chunk, casefolded, counted per chunk against a vocabulary
 * in first-seen order. Python spends most of a build there on one str object per token; here a
 * word is hashed from its code points and a str is made only the first time a word is seen.
 * Words are exactly re's `\w+` runs (Py_UNICODE_ISALNUM or '_', as _sre tests them) and folded by
 * str.casefold itself for non-ASCII words, so the result is the Python path's, item for item.
 *
 * markdown_chunks: chunking.chunk_markdown's blocks, heading trails, cuts and line numbers in one pass
 * over the note (Python made a str per line and a dozen small numpy calls per note).
 *
 * intern_words: a batch's words looked up (and added) in the index's vocabulary dict.
 *
 * walk_tree (not on Windows): walk.walk_folder's folder walk, stat'ing only note-named files.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_common.h"

static PyObject *casefold_name, *strip_name;

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
/* Basic Multilingual Plane look-ups, filled at import from Python's own tests: word characters as
 * _sre's \w tests them (Py_UNICODE_ISALNUM or '_') and whitespace as str.isspace/split/strip do. */
static unsigned char bmp_word[0x10000], bmp_space[0x10000];

static inline int is_word(Py_UCS4 ch) { return ch < 0x10000 ? bmp_word[ch] : Py_UNICODE_ISALNUM(ch); }

static inline int is_space(Py_UCS4 ch) { return ch < 0x10000 ? bmp_space[ch] : Py_UNICODE_ISSPACE(ch); }

/* ---- the vocabulary ------------------------------------------------------------------------- */
/* Two open-addressing tables over code points. `spellings` maps a word as it is read, with only
 * A-Z lowered, to its word id: one probe per token. Only a spelling seen for the first time is
 * casefolded (a str.casefold call when it is not ASCII; casefold(w) == casefold(ascii_lower(w)),
 * casefold being per character) and looked up in `folded`, which numbers words in first-seen order. */
typedef struct {
    uint64_t hash;
    int32_t value; /* -1: empty */
    int32_t len;
    int64_t off; /* into the arena */
} Slot;

typedef struct {
    Slot *slots;
    size_t mask, used;
    Vec arena; /* Py_UCS4 */
} Table;

typedef struct {
    Table spellings, folded;
    Vec mark, cnt; /* per word id: last chunk that had it (int64), its count there (int32) */
    Vec buf;       /* Py_UCS4 scratch */
    PyObject *words;
} Vocab;

static const uint64_t FNV_BASIS = 1469598103934665603ULL, FNV_PRIME = 1099511628211ULL;

static uint64_t hash_word(const Py_UCS4 *w, Py_ssize_t n) {
    uint64_t h = FNV_BASIS;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ w[i]) * FNV_PRIME;
    return h;
}

static inline size_t slot_of(uint64_t h) { return (size_t)(h ^ (h >> 29)); }

static int table_init(Table *t) {
    memset(t, 0, sizeof(*t));
    t->arena.item = 4;
    t->mask = 4095;
    t->slots = malloc(sizeof(Slot) * (t->mask + 1));
    if (!t->slots) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i <= t->mask; i++) t->slots[i].value = -1;
    return 0;
}

static void table_free(Table *t) { free(t->slots), free(t->arena.data); }

/* The slot holding `w` (value >= 0) or the empty slot where it would go. */
static Slot *table_find(Table *t, const Py_UCS4 *w, Py_ssize_t n, uint64_t h) {
    const Py_UCS4 *arena = (const Py_UCS4 *)t->arena.data;
    for (size_t i = slot_of(h) & t->mask;; i = (i + 1) & t->mask) {
        Slot *s = &t->slots[i];
        if (s->value < 0) return s;
        if (s->hash == h && s->len == n) {
            const Py_UCS4 *a = arena + s->off;
            Py_ssize_t k = 0;
            while (k < n && a[k] == w[k]) k++;
            if (k == n) return s;
        }
    }
}

/* Fill the empty slot `s` (from table_find) with `w` -> value; grows the table past half full. */
static int table_add(Table *t, Slot *s, const Py_UCS4 *w, Py_ssize_t n, uint64_t h, int32_t value) {
    if (vec_reserve(&t->arena, t->arena.len + (size_t)n) < 0) return -1;
    memcpy(&VEC_AT(t->arena, Py_UCS4, t->arena.len), w, sizeof(Py_UCS4) * (size_t)n);
    s->hash = h, s->value = value, s->len = (int32_t)n, s->off = (int64_t)t->arena.len;
    t->arena.len += (size_t)n;
    if (++t->used * 2 <= t->mask + 1) return 0;
    size_t cap = (t->mask + 1) * 2;
    Slot *slots = malloc(sizeof(Slot) * cap);
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < cap; i++) slots[i].value = -1;
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].value < 0) continue;
        size_t j = slot_of(t->slots[i].hash) & (cap - 1);
        while (slots[j].value >= 0) j = (j + 1) & (cap - 1);
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->mask = cap - 1;
    return 0;
}

static int vocab_init(Vocab *v) {
    memset(v, 0, sizeof(*v));
    v->mark.item = 8, v->cnt.item = 4, v->buf.item = 4;
    v->words = PyList_New(0);
    if (!v->words) return -1;
    if (table_init(&v->spellings) < 0 || table_init(&v->folded) < 0) return -1;
    return 0;
}

static void vocab_free(Vocab *v) {
    table_free(&v->spellings), table_free(&v->folded);
    free(v->mark.data), free(v->cnt.data), free(v->buf.data);
    Py_XDECREF(v->words);
}

/* The id of a spelling seen for the first time: text[start:end], read as `w` (A-Z lowered). */
static int32_t first_spelling(Vocab *v, PyObject *text, Py_ssize_t start, Py_ssize_t end, const Py_UCS4 *w,
                              Py_ssize_t n, int ascii) {
    PyObject *word = NULL;
    const Py_UCS4 *f = w;
    Py_ssize_t fn = n;
    Py_UCS4 *tmp = NULL;
    if (!ascii) {
        PyObject *sub = PyUnicode_Substring(text, start, end);
        word = sub ? PyObject_CallMethodNoArgs(sub, casefold_name) : NULL;
        Py_XDECREF(sub);
        if (!word) return -1;
        tmp = PyUnicode_AsUCS4Copy(word);
        if (!tmp) {
            Py_DECREF(word);
            return -1;
        }
        f = tmp, fn = PyUnicode_GET_LENGTH(word);
    }
    uint64_t h = hash_word(f, fn);
    Slot *s = table_find(&v->folded, f, fn, h);
    int32_t id = s->value;
    if (id < 0) {
        id = (int32_t)v->folded.used;
        if (!word) word = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, f, fn);
        if (!word || PyList_Append(v->words, word) < 0 || table_add(&v->folded, s, f, fn, h, id) < 0 ||
            vec_reserve(&v->mark, (size_t)id + 1) < 0 || vec_reserve(&v->cnt, (size_t)id + 1) < 0)
            id = -1;
        else
            VEC_AT(v->mark, int64_t, id) = -1, v->mark.len = v->cnt.len = (size_t)id + 1;
    }
    Py_XDECREF(word);
    PyMem_Free(tmp);
    return id;
}

static int cmp_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sort a chunk's word ids: insertion sort for the usual few dozen (glibc's qsort allocates). */
static void sort_ids(int32_t *a, size_t n) {
    if (n > 64) {
        qsort(a, n, sizeof(int32_t), cmp_int32);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        int32_t x = a[i];
        size_t j = i;
        while (j && a[j - 1] > x) a[j] = a[j - 1], j--;
        a[j] = x;
    }
}

/* Count the words of text[start:end] into the current chunk's row; returns tokens seen or -1. */
static Py_ssize_t count_piece(Vocab *v, PyObject *text, Py_ssize_t start, Py_ssize_t end, int64_t chunk, Vec *row) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t tokens = 0;
    for (Py_ssize_t i = start; i < end;) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (!is_word(ch)) {
            i++;
            continue;
        }
        Py_ssize_t j = i;
        while (j < end && is_word(PyUnicode_READ(kind, data, j))) j++;
        if (vec_reserve(&v->buf, (size_t)(j - i)) < 0) return -1;
        Py_UCS4 *w = (Py_UCS4 *)v->buf.data, top = 0;
        uint64_t h = FNV_BASIS;
        for (Py_ssize_t k = i; k < j; k++) { /* the spelling: A-Z lowered, hashed as it is read */
            Py_UCS4 c = PyUnicode_READ(kind, data, k);
            top |= c;
            c += (c - 'A' < 26u) ? 32 : 0;
            w[k - i] = c;
            h = (h ^ c) * FNV_PRIME;
        }
        Slot *s = table_find(&v->spellings, w, j - i, h);
        int32_t id = s->value;
        if (id < 0) {
            if ((id = first_spelling(v, text, i, j, w, j - i, top < 128)) < 0) return -1;
            w = (Py_UCS4 *)v->buf.data; /* unchanged: first_spelling does not touch buf */
            if (table_add(&v->spellings, table_find(&v->spellings, w, j - i, h), w, j - i, h, id) < 0) return -1;
        }
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

static PyObject *count_words(PyObject *self, PyObject *args) {
    PyObject *pieces, *bounds_obj, *ptr_obj;
    if (!PyArg_ParseTuple(args, "O!OO", &PyList_Type, &pieces, &bounds_obj, &ptr_obj)) return NULL;
    Py_buffer bb, pb;
    if (get_buffers(2, bounds_obj, &bb, 8, "bounds", ptr_obj, &pb, 8, "chunk_ptr") < 0) return NULL;
    const int64_t *bounds = bb.buf, *ptr = pb.buf;
    Py_ssize_t n_pieces = PyList_GET_SIZE(pieces), n_chunks = pb.len / 8 - 1;
    PyObject *out = NULL;
    Vocab v;
    Vec row = {NULL, 0, 0, 4}, ids = {NULL, 0, 0, 4}, counts = {NULL, 0, 0, 4}, row_len = {NULL, 0, 0, 8};
    int ok = vocab_init(&v) == 0;
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
            Py_ssize_t got = count_piece(&v, text, start, end, c, &row);
            if (got < 0) ok = 0;
            tokens += got;
        }
        if (!ok) break;
        sort_ids((int32_t *)row.data, row.len); /* np.unique's order: word ids ascending */
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
    if (ok) out = Py_BuildValue("(ONNNn)", v.words, vec_bytes(&row_len), vec_bytes(&ids), vec_bytes(&counts), tokens);
    vocab_free(&v);
    free(row.data), free(ids.data), free(counts.data), free(row_len.data);
    PyBuffer_Release(&bb);
    PyBuffer_Release(&pb);
    return out;
}

/* ---- markdown chunks ------------------------------------------------------------------------ */
/* The twin of chunking.chunk_markdown's Python path (_blocks, _cuts_python, _trail_at, _Lines),
 * step by step; tested equal on every note of several corpora under several settings. */
enum { BREAK_NONE, BREAK_SENTENCE, BREAK_BLOCK, BREAK_HEADING };
enum { BLOCK_TEXT, BLOCK_HEADING, BLOCK_CODE };

typedef struct {
    int64_t start, end, kind, trail; /* trail: index into the trails list (0: no heading yet) */
} Block;

typedef struct {
    PyObject *text;
    int kind;
    const void *data;
    Py_ssize_t len;
} Text;

#define CH(t, i) PyUnicode_READ((t)->kind, (t)->data, (i))

/* The first index of the ascending a[0..n) whose value is at least x (n if none). */
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

static int push_block(Vec *blocks, int64_t start, int64_t end, int64_t kind, int64_t trail) {
    if (vec_reserve(blocks, blocks->len + 1) < 0) return -1;
    Block *b = &VEC_AT(*blocks, Block, blocks->len++);
    b->start = start, b->end = end, b->kind = kind, b->trail = trail;
    return 0;
}

/* A paragraph from `start` ends at `end`, less trailing whitespace (_blocks.close_para). */
static int close_para(const Text *t, Vec *blocks, Py_ssize_t *para, Py_ssize_t end, int64_t trail) {
    if (*para < 0) return 0;
    while (end > *para && is_space(CH(t, end - 1))) end--;
    int bad = end > *para ? push_block(blocks, *para, end, BLOCK_TEXT, trail) : 0;
    *para = -1;
    return bad;
}

/* A heading line's title (the regexes' group 2, .strip()ped), or NULL with no error if `pos`
 * starts no heading. `mark` is '#' (ATX: trailing " \t#" dropped) or '*' (org). */
static PyObject *heading_title(const Text *t, Py_ssize_t pos, Py_ssize_t line_end, Py_UCS4 mark, Py_ssize_t *level) {
    Py_ssize_t k = pos;
    while (k < line_end && CH(t, k) == mark) k++;
    *level = k - pos;
    if (*level < 1 || *level > 6 || k >= line_end || (CH(t, k) != ' ' && CH(t, k) != '\t')) return NULL;
    while (k < line_end && (CH(t, k) == ' ' || CH(t, k) == '\t')) k++;
    Py_ssize_t end = line_end;
    if (mark == '#')
        while (end > k && (CH(t, end - 1) == ' ' || CH(t, end - 1) == '\t' || CH(t, end - 1) == '#')) end--;
    PyObject *sub = PyUnicode_Substring(t->text, k, end);
    if (!sub) return NULL;
    PyObject *title = PyObject_CallMethodNoArgs(sub, strip_name);
    Py_DECREF(sub);
    return title;
}

/* Paragraphs, headings and fenced code blocks of the body with their heading trails (_blocks);
 * trails[i] is a trail joined by `sep` (trails[0] = "": before the first heading). */
static int find_blocks(const Text *t, Py_ssize_t body_start, Py_UCS4 mark, PyObject *sep, Vec *blocks,
                       PyObject *trails) {
    PyObject *titles[6] = {NULL};
    Py_ssize_t levels[6], depth = 0, para = -1, fence_start = 0;
    Py_UCS4 fence = 0;
    int64_t trail = 0;
    int bad = 0;
    for (Py_ssize_t pos = body_start; !bad && pos <= t->len;) {
        Py_ssize_t line_end = pos;
        while (line_end < t->len && CH(t, line_end) != '\n') line_end++;
        Py_ssize_t s = pos; /* first non-space: line.lstrip() */
        while (s < line_end && is_space(CH(t, s))) s++;
        Py_ssize_t k = pos; /* ^[ \t]{0,3}(`{3,}|~{3,}) */
        while (k < line_end && k - pos < 3 && (CH(t, k) == ' ' || CH(t, k) == '\t')) k++;
        Py_UCS4 c = k < line_end ? CH(t, k) : 0;
        Py_ssize_t level;
        if (fence) {
            if (s + 3 <= line_end && CH(t, s) == fence && CH(t, s + 1) == fence && CH(t, s + 2) == fence) {
                bad = push_block(blocks, fence_start, line_end, BLOCK_CODE, trail);
                fence = 0;
            }
        } else if ((c == '`' || c == '~') && k + 3 <= line_end && CH(t, k + 1) == c && CH(t, k + 2) == c) {
            bad = close_para(t, blocks, &para, pos, trail);
            fence = c, fence_start = pos;
        } else if (pos < line_end && CH(t, pos) == mark) {
            PyObject *title = heading_title(t, pos, line_end, mark, &level);
            if (!title) { /* not a heading: a text line (it starts with the mark, so it is not blank) */
                if (PyErr_Occurred())
                    bad = -1;
                else if (para < 0)
                    para = pos;
            } else {
                bad = close_para(t, blocks, &para, pos, trail);
                while (depth && levels[depth - 1] >= level) {
                    depth--; /* not inside Py_CLEAR: a macro that names its argument more than once */
                    Py_CLEAR(titles[depth]);
                }
                levels[depth] = level, titles[depth++] = title;
                PyObject *tuple = PyTuple_New(depth);
                PyObject *joined = NULL;
                if (tuple) {
                    for (Py_ssize_t d = 0; d < depth; d++) PyTuple_SET_ITEM(tuple, d, Py_NewRef(titles[d]));
                    joined = PyUnicode_Join(sep, tuple);
                    Py_DECREF(tuple);
                }
                if (!joined || PyList_Append(trails, joined) < 0) bad = -1;
                Py_XDECREF(joined);
                trail = PyList_GET_SIZE(trails) - 1;
                if (!bad) bad = push_block(blocks, pos, line_end, BLOCK_HEADING, trail);
            }
        } else if (s == line_end) {
            bad = close_para(t, blocks, &para, pos, trail);
        } else if (para < 0) {
            para = pos;
        }
        pos = line_end + 1;
    }
    if (!bad && fence) bad = push_block(blocks, fence_start, t->len, BLOCK_CODE, trail);
    if (!bad) bad = close_para(t, blocks, &para, t->len, trail);
    for (Py_ssize_t d = 0; d < depth; d++) Py_XDECREF(titles[d]);
    return bad;
}

/* Where chunks start and end, in words (_cuts_python): appends (first word, last word + 1) pairs. */
static int cut_words(const Text *t, const int64_t *ws, const int64_t *we, Py_ssize_t n, const Vec *blocks,
                     Py_ssize_t size, Py_ssize_t overlap, Py_ssize_t lo, Vec *cuts) {
    Py_ssize_t short_max = size + size / 4; /* a little over beats a tiny last chunk */
    if (!n) return 0;
    if (n <= short_max) { /* the common short note: one chunk */
        if (vec_reserve(cuts, 2) < 0) return -1;
        VEC_AT(*cuts, int64_t, cuts->len++) = 0;
        VEC_AT(*cuts, int64_t, cuts->len++) = n;
        return 0;
    }
    signed char *breaks = calloc((size_t)n, 1);
    if (!breaks) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 1; k < n; k++) {
        Py_UCS4 ch = CH(t, we[k - 1] - 1);
        breaks[k] = (ch == '.' || ch == '!' || ch == '?' || ch == ':' || ch == ';') ? BREAK_SENTENCE : BREAK_NONE;
    }
    const Block *b = (const Block *)blocks->data;
    Py_ssize_t n_blocks = (Py_ssize_t)blocks->len;
    for (Py_ssize_t i = 0; i < n_blocks; i++) {
        Py_ssize_t first = lower_bound(ws, n, b[i].start);
        if (first < n) breaks[first] = b[i].kind == BLOCK_HEADING ? BREAK_HEADING : BREAK_BLOCK;
    }
    for (Py_ssize_t i = 0; i < n_blocks; i++) { /* never cut inside a code block if a better place exists */
        if (b[i].kind != BLOCK_CODE) continue;
        Py_ssize_t first = lower_bound(ws, n, b[i].start), last = lower_bound(ws, n, b[i].end);
        for (Py_ssize_t k = first + 1; k < last; k++) breaks[k] = BREAK_NONE;
    }
    int bad = 0;
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
        if ((bad = vec_reserve(cuts, cuts->len + 2)) < 0) break;
        VEC_AT(*cuts, int64_t, cuts->len++) = i;
        VEC_AT(*cuts, int64_t, cuts->len++) = cut;
        if (cut >= n) break;
        i = breaks[cut] >= BREAK_BLOCK ? cut : (cut - overlap > i + 1 ? cut - overlap : i + 1);
    }
    free(breaks);
    return bad;
}

/* A chunk's heading trail (_trail_at): that of its first text block under a heading, else of its
 * first heading, else none. */
static int64_t trail_at(const Vec *blocks, int64_t start, int64_t end) {
    const Block *b = (const Block *)blocks->data;
    Py_ssize_t n = (Py_ssize_t)blocks->len;
    Py_ssize_t lo = 0, hi = n; /* first block ending after start */
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (b[mid].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t first_heading = 0;
    for (Py_ssize_t i = lo; i < n && b[i].start < end; i++) {
        if (b[i].kind != BLOCK_HEADING && b[i].trail) return b[i].trail;
        if (b[i].kind == BLOCK_HEADING && !first_heading) first_heading = b[i].trail;
    }
    return first_heading;
}

static PyObject *markdown_chunks(PyObject *self, PyObject *args) {
    PyObject *text, *sep;
    Py_ssize_t body_start, size, overlap, lo;
    int org;
    if (!PyArg_ParseTuple(args, "UnpUnnn", &text, &body_start, &org, &sep, &size, &overlap, &lo)) return NULL;
    Text t = {text, PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)};
    if (body_start < 0 || body_start > t.len || size < 1 || overlap < 0 || overlap >= size || lo < 1 || lo > size) {
        PyErr_SetString(PyExc_ValueError, "markdown_chunks: bad body start, size, overlap or shortest chunk");
        return NULL;
    }
    Vec blocks = {NULL, 0, 0, sizeof(Block)}, starts = {NULL, 0, 0, 8}, ends = {NULL, 0, 0, 8}, cuts = {NULL, 0, 0, 8};
    Vec rows = {NULL, 0, 0, 8}, newlines = {NULL, 0, 0, 8};
    PyObject *out = NULL, *trails = PyList_New(1);
    if (!trails) return NULL;
    PyList_SET_ITEM(trails, 0, PyUnicode_New(0, 0));
    if (!PyList_GET_ITEM(trails, 0) || find_blocks(&t, body_start, org ? '*' : '#', sep, &blocks, trails) < 0)
        goto done;
    for (Py_ssize_t i = 0; i < t.len; i++) /* for line numbers */
        if (CH(&t, i) == '\n' && (vec_reserve(&newlines, newlines.len + 1) < 0 ||
                                  (VEC_AT(newlines, int64_t, newlines.len++) = i, 0)))
            goto done;
    for (Py_ssize_t i = body_start; i < t.len;) { /* whitespace-separated words (str.split()) */
        if (is_space(CH(&t, i))) {
            i++;
            continue;
        }
        Py_ssize_t j = i + 1;
        while (j < t.len && !is_space(CH(&t, j))) j++;
        if (vec_reserve(&starts, starts.len + 1) < 0 || vec_reserve(&ends, ends.len + 1) < 0) goto done;
        VEC_AT(starts, int64_t, starts.len++) = i;
        VEC_AT(ends, int64_t, ends.len++) = j;
        i = j;
    }
    Py_ssize_t n = (Py_ssize_t)starts.len;
    const int64_t *ws = (const int64_t *)starts.data, *we = (const int64_t *)ends.data;
    int bad = cut_words(&t, ws, we, n, &blocks, size, overlap, lo, &cuts);
    for (size_t c = 0; !bad && c < cuts.len; c += 2) {
        int64_t start = ws[VEC_AT(cuts, int64_t, c)], end = we[VEC_AT(cuts, int64_t, c + 1) - 1];
        const int64_t *nl = (const int64_t *)newlines.data;
        Py_ssize_t n_nl = (Py_ssize_t)newlines.len;
        int64_t row[5] = {start, end, 1 + lower_bound(nl, n_nl, start),
                          1 + lower_bound(nl, n_nl, end - 1 > start ? end - 1 : start), trail_at(&blocks, start, end)};
        if ((bad = vec_reserve(&rows, rows.len + 5)) < 0) break;
        memcpy(&VEC_AT(rows, int64_t, rows.len), row, sizeof(row));
        rows.len += 5;
    }
    if (!bad) out = Py_BuildValue("(NO)", vec_bytes(&rows), trails);
done:
    Py_DECREF(trails);
    free(blocks.data), free(starts.data), free(ends.data), free(cuts.data), free(rows.data), free(newlines.data);
    return out;
}

#ifndef _WIN32
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- walking a notes folder (the twin of walk._walk_python) ---------------------------------- */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>

typedef struct {
    char *path, *rel; /* absolute (as given) and relative ("" for the root) */
} Dir;

typedef struct {
    dev_t dev;
    ino_t ino;
} DirId;

/* Folders entered so far, by device and inode: open addressing, grown past half full. */
typedef struct {
    DirId *slots;
    unsigned char *used;
    size_t mask, n;
} DirSet;

static int dirset_add(DirSet *s, dev_t dev, ino_t ino) { /* 1 if new, 0 if seen, -1 on error */
    if ((s->n + 1) * 2 > s->mask + 1) {
        size_t cap = s->mask ? (s->mask + 1) * 2 : 256;
        DirSet bigger = {calloc(cap, sizeof(DirId)), calloc(cap, 1), cap - 1, 0};
        if (!bigger.slots || !bigger.used) {
            free(bigger.slots), free(bigger.used);
            PyErr_NoMemory();
            return -1;
        }
        for (size_t i = 0; s->mask && i <= s->mask; i++)
            if (s->used[i]) dirset_add(&bigger, s->slots[i].dev, s->slots[i].ino);
        free(s->slots), free(s->used);
        *s = bigger;
    }
    size_t i = (size_t)mix64((uint64_t)dev * 0x9E3779B97F4A7C15ULL ^ (uint64_t)ino) & s->mask;
    for (; s->used[i]; i = (i + 1) & s->mask)
        if (s->slots[i].dev == dev && s->slots[i].ino == ino) return 0;
    s->used[i] = 1, s->slots[i].dev = dev, s->slots[i].ino = ino, s->n++;
    return 1;
}

/* folder names behind their one-letter kind (see walk_tree) */
static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a + 1, *(char *const *)b + 1); }

static char *join_path(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *out = malloc(la + lb + 2);
    if (!out) return NULL;
    memcpy(out, a, la);
    size_t at = la;
    if (la && a[la - 1] != '/') out[at++] = '/';
    memcpy(out + at, b, lb + 1);
    return out;
}

/* name ends with one of the extensions (lowercase ASCII), ASCII letters compared without case; 2 if
 * the name has non-ASCII bytes (Python decides: str.lower is Unicode-aware), 0 if not a note */
static int note_name(const char *name, char **exts, Py_ssize_t n_exts) {
    size_t len = strlen(name);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)name[i] >= 128) return 2;
    for (Py_ssize_t e = 0; e < n_exts; e++) {
        size_t le = strlen(exts[e]);
        if (le > len) continue;
        size_t i = 0;
        for (; i < le; i++) {
            char c = name[len - le + i];
            if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
            if (c != exts[e][i]) break;
        }
        if (i == le) return 1;
    }
    return 0;
}

/* note_name's answer 2 settled as Python settles it: name.lower().endswith(exts); -1 on error */
static int note_name_py(const char *name, PyObject *exts) {
    PyObject *s = PyUnicode_DecodeFSDefault(name);
    PyObject *low = s ? PyObject_CallMethod(s, "lower", NULL) : NULL;
    PyObject *ends = low ? PyObject_CallMethod(low, "endswith", "(O)", exts) : NULL;
    int answer = ends ? PyObject_IsTrue(ends) : -1;
    Py_XDECREF(s), Py_XDECREF(low), Py_XDECREF(ends);
    return answer;
}

/* Note files whose stat waits for the end of the walk: then they are stat'ed by several threads
 * without the GIL, a folder at a time (fstatat from the folder: one path lookup per folder). */
typedef struct {
    size_t folder; /* index into the deferred folders' paths */
    size_t slot;   /* the note's index in the walk's columns */
    char *name;
} Pending;

typedef struct {
    char **folders;           /* paths */
    const Pending *pending;   /* in folder order */
    size_t n_pending;
    int64_t *sizes, *mtimes;
    signed char *kinds;
    size_t next;              /* the next pending entry to claim (a folder's run at a time) */
    pthread_mutex_t lock;
} StatJob;

/* A note's columns from its stat (NULL: no stat, kind -1). */
static void fill_stat(int64_t *sizes, int64_t *mtimes, signed char *kinds, size_t slot, const struct stat *st) {
    if (!st) {
        kinds[slot] = -1, sizes[slot] = 0, mtimes[slot] = 0;
        return;
    }
    kinds[slot] = S_ISREG(st->st_mode) ? 0 : S_ISDIR(st->st_mode) ? 1 : 2;
    sizes[slot] = (int64_t)st->st_size;
#ifdef __APPLE__
    mtimes[slot] = (int64_t)st->st_mtimespec.tv_sec * 1000000000 + st->st_mtimespec.tv_nsec;
#else
    mtimes[slot] = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
#endif
}

static void *stat_pending(void *arg) {
    StatJob *job = arg;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        size_t start = job->next, end = start;
        while (end < job->n_pending && job->pending[end].folder == job->pending[start].folder) end++;
        job->next = end;
        pthread_mutex_unlock(&job->lock);
        if (start >= job->n_pending) return NULL;
        int fd = open(job->folders[job->pending[start].folder], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        for (size_t i = start; i < end; i++) {
            struct stat st;
            int found = fd >= 0 && fstatat(fd, job->pending[i].name, &st, 0) == 0; /* follows links */
            fill_stat(job->sizes, job->mtimes, job->kinds, job->pending[i].slot, found ? &st : NULL);
        }
        if (fd >= 0) close(fd);
    }
}

/* Stat every pending note, in up to STAT_THREADS threads (one below STAT_PER_THREAD notes each):
 * 31,000 notes took 43-54 ms in one thread, 23-27 ms in two, on a warm cache; on a cold one the
 * threads wait for the disk side by side. Called without the GIL. */
#define STAT_THREADS 4
#define STAT_PER_THREAD 2048
static void stat_all(StatJob *job) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t want = job->n_pending / STAT_PER_THREAD + 1;
    if (cpus > 0 && want > (size_t)cpus) want = (size_t)cpus;
    if (want > STAT_THREADS) want = STAT_THREADS;
    pthread_t threads[STAT_THREADS];
    size_t started = 0;
    for (size_t t = 1; t < want; t++)
        if (pthread_create(&threads[started], NULL, stat_pending, job) == 0) started++;
    stat_pending(job); /* this thread too; it finishes whatever threads could not be started */
    for (size_t t = 0; t < started; t++) pthread_join(threads[t], NULL);
}

static int push_event(PyObject *events, const char *rel, int code, const char *message) {
    PyObject *r = PyUnicode_DecodeFSDefault(rel);
    PyObject *t = r ? Py_BuildValue("(Nis)", r, code, message) : NULL;
    int bad = !t || PyList_Append(events, t) < 0;
    Py_XDECREF(t);
    return bad ? -1 : 0;
}

/* walk_tree(root, exts, skip_names, skip_dir[, outside]) -> (notes, sizes, mtimes, kinds, links, events): see
 * walk.walk_folder. Names starting with "." or in skip_names are not entered or listed; skip_dir(rel)
 * (or None) is asked about every folder, by its relative path with a trailing "/". notes: relative
 * paths of note-named entries that are not folders (with their stat, links followed: kind 0 file,
 * 1 folder, 2 other, -1 no stat; links 1 for a symbolic link, 2 when the name is not ASCII and Python
 * must check it); events: (relative path, code, text): 0 folder cannot be read (text: the error),
 * 1 folder named like a note seen again (a link loop), 2 folder named like a note, 3 a linked folder that
 * outside(path) (optional; None: none) says leads out of the notes folder, not entered (text: outside's
 * answer when it is a str, the reason; else ""). */
static PyObject *walk_tree(PyObject *self, PyObject *args) {
    PyObject *exts_obj, *skip_obj, *skip_dir, *outside = Py_None, *root_b = NULL;
    if (!PyArg_ParseTuple(args, "O&O!O!O|O", PyUnicode_FSConverter, &root_b, &PyTuple_Type, &exts_obj, &PyTuple_Type,
                          &skip_obj, &skip_dir, &outside))
        return NULL;
    Py_ssize_t n_exts = PyTuple_GET_SIZE(exts_obj), n_skip = PyTuple_GET_SIZE(skip_obj);
    char **exts = PyMem_Calloc((size_t)n_exts + 1, sizeof(char *)), **skip = PyMem_Calloc((size_t)n_skip + 1, sizeof(char *));
    PyObject *notes = PyList_New(0), *events = PyList_New(0), *out = NULL;
    Vec sizes = {NULL, 0, 0, 8}, mtimes = {NULL, 0, 0, 8}, kinds = {NULL, 0, 0, 1}, links = {NULL, 0, 0, 1};
    Vec stack = {NULL, 0, 0, sizeof(Dir)}, names = {NULL, 0, 0, sizeof(char *)};
    Vec pending = {NULL, 0, 0, sizeof(Pending)}, folders = {NULL, 0, 0, sizeof(char *)};
    DirSet seen = {NULL, NULL, 0, 0};
    int ok = exts && skip && notes && events;
    for (Py_ssize_t i = 0; ok && i < n_exts; i++)
        ok = (exts[i] = (char *)PyUnicode_AsUTF8(PyTuple_GET_ITEM(exts_obj, i))) != NULL;
    for (Py_ssize_t i = 0; ok && i < n_skip; i++)
        ok = (skip[i] = (char *)PyUnicode_AsUTF8(PyTuple_GET_ITEM(skip_obj, i))) != NULL;
    struct stat st;
    if (ok && stat(PyBytes_AS_STRING(root_b), &st) == 0) ok = dirset_add(&seen, st.st_dev, st.st_ino) >= 0;
    Dir top = {strdup(PyBytes_AS_STRING(root_b)), strdup("")};
    if (ok && (!top.path || !top.rel || vec_reserve(&stack, 1) < 0)) ok = 0, PyErr_NoMemory();
    if (ok) VEC_AT(stack, Dir, stack.len++) = top;
    else free(top.path), free(top.rel);
    while (ok && stack.len) {
        Dir d = VEC_AT(stack, Dir, --stack.len);
        DIR *dir = opendir(d.path);
        if (!dir) {
            ok = push_event(events, *d.rel ? d.rel : ".", 0, strerror(errno)) == 0;
            free(d.path), free(d.rel);
            continue;
        }
        names.len = 0;
        size_t folder = (size_t)-1; /* this folder's index in `folders`, once a note in it waits for its stat */
        struct dirent *e;
        while (ok && (e = readdir(dir)) != NULL) {
            const char *name = e->d_name;
            if (name[0] == '.') continue;
            int skipped = 0;
            for (Py_ssize_t i = 0; i < n_skip && !skipped; i++) skipped = !strcmp(name, skip[i]);
            if (skipped) continue;
            int is_dir = e->d_type == DT_DIR, is_link = e->d_type == DT_LNK;
            struct stat target;
            int have_target = 0;
            if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
                have_target = fstatat(dirfd(dir), name, &target, 0) == 0;
                is_dir = have_target && S_ISDIR(target.st_mode);
                if (e->d_type == DT_UNKNOWN) {
                    struct stat own;
                    is_link = fstatat(dirfd(dir), name, &own, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(own.st_mode);
                }
            }
            if (is_dir) { /* kept as "L<name>" for a link, "D<name>" otherwise */
                size_t len = strlen(name);
                char *copy = malloc(len + 2);
                if (copy) copy[0] = is_link ? 'L' : 'D', memcpy(copy + 1, name, len + 1);
                if (!copy || vec_reserve(&names, names.len + 1) < 0) {
                    free(copy);
                    ok = 0;
                    break;
                }
                VEC_AT(names, char *, names.len++) = copy;
                continue;
            }
            int kind_of_name = note_name(name, exts, n_exts);
            if (!kind_of_name) continue;
            if (!have_target) { /* the common case (a regular file): stat'ed after the walk, see stat_all */
                char *copy = strdup(name), *path = folder == (size_t)-1 ? strdup(d.path) : NULL;
                if (!copy || (folder == (size_t)-1 && (!path || vec_reserve(&folders, folders.len + 1) < 0)) ||
                    vec_reserve(&pending, pending.len + 1) < 0) {
                    free(copy), free(path);
                    if (!PyErr_Occurred()) PyErr_NoMemory();
                    ok = 0;
                    break;
                }
                if (path) VEC_AT(folders, char *, folder = folders.len++) = path;
                VEC_AT(pending, Pending, pending.len++) = (Pending){folder, sizes.len, copy};
            }
            char *rel = *d.rel ? join_path(d.rel, name) : strdup(name);
            PyObject *r = rel ? PyUnicode_DecodeFSDefault(rel) : NULL;
            free(rel);
            if (!r || PyList_Append(notes, r) < 0 || vec_reserve(&sizes, sizes.len + 1) < 0 ||
                vec_reserve(&mtimes, mtimes.len + 1) < 0 || vec_reserve(&kinds, kinds.len + 1) < 0 ||
                vec_reserve(&links, links.len + 1) < 0) {
                Py_XDECREF(r);
                ok = 0;
                break;
            }
            Py_DECREF(r);
            fill_stat((int64_t *)sizes.data, (int64_t *)mtimes.data, (signed char *)kinds.data, sizes.len,
                      have_target ? &target : NULL); /* a pending note's are filled after the walk */
            sizes.len++, mtimes.len++, kinds.len++;
            VEC_AT(links, signed char, links.len++) = (signed char)(is_link | (kind_of_name == 2 ? 2 : 0));
        }
        closedir(dir);
        /* folders, in name order; pushed in reverse so the first is walked first */
        qsort(names.data, names.len, sizeof(char *), cmp_names);
        size_t first_new = stack.len;
        for (size_t i = 0; ok && i < names.len; i++) {
            char *tagged = VEC_AT(names, char *, i), *name = tagged + 1;
            int linked = tagged[0] == 'L';
            char *rel = *d.rel ? join_path(d.rel, name) : strdup(name), *path = join_path(d.path, name);
            int drop = 0;
            if (!rel || !path) {
                ok = 0;
            } else if (skip_dir != Py_None) {
                char *slash = join_path(rel, "");
                PyObject *r = slash ? PyUnicode_DecodeFSDefault(slash) : NULL;
                free(slash);
                PyObject *answer = r ? PyObject_CallOneArg(skip_dir, r) : NULL;
                Py_XDECREF(r);
                int truth = answer ? PyObject_IsTrue(answer) : -1;
                Py_XDECREF(answer);
                if (truth < 0) ok = 0;
                drop = truth > 0;
            }
            if (ok && !drop && linked && outside != Py_None) { /* outside(path) says if a link leaves the folder */
                PyObject *p = PyUnicode_DecodeFSDefault(path);
                PyObject *answer = p ? PyObject_CallOneArg(outside, p) : NULL;
                Py_XDECREF(p);
                int truth = answer ? PyObject_IsTrue(answer) : -1;
                /* a str answer is the reason it is not entered (else the reason is the caller's default) */
                const char *why = answer && PyUnicode_Check(answer) ? PyUnicode_AsUTF8(answer) : "";
                if (!why) truth = -1;
                if (truth < 0) ok = 0;
                else if (truth > 0) drop = 1, ok = push_event(events, rel, 3, why) == 0;
                Py_XDECREF(answer);
            }
            struct stat target;
            int found = ok && !drop ? stat(path, &target) == 0 : 0, why = errno;
            if (found) {
                int added = dirset_add(&seen, target.st_dev, target.st_ino);
                int noted = note_name(name, exts, n_exts);
                if (noted == 2) noted = note_name_py(name, exts_obj);
                if (added < 0 || noted < 0) {
                    ok = 0;
                } else if (!added) {
                    if (noted) ok = push_event(events, rel, 1, "") == 0;
                    drop = 1;
                } else if (noted) {
                    ok = push_event(events, rel, 2, "") == 0;
                }
            } else if (ok && !drop) { /* gone since it was listed, or cannot be reached (a path too long) */
                if (why != ENOENT) ok = push_event(events, rel, 0, strerror(why)) == 0;
                drop = 1;
            }
            if (ok && !drop && vec_reserve(&stack, stack.len + 1) == 0) {
                VEC_AT(stack, Dir, stack.len++) = (Dir){path, rel};
                path = rel = NULL;
            } else if (ok && !drop) {
                ok = 0;
            }
            free(path), free(rel), free(tagged);
            VEC_AT(names, char *, i) = NULL;
        }
        for (size_t i = 0; i < names.len; i++) free(VEC_AT(names, char *, i)); /* those not reached */
        if (ok) { /* reverse the pushed folders: the stack pops the last first */
            Dir *a = &VEC_AT(stack, Dir, first_new), *b = &VEC_AT(stack, Dir, stack.len - 1);
            for (; a < b; a++, b--) {
                Dir t = *a;
                *a = *b, *b = t;
            }
        }
        free(d.path), free(d.rel);
    }
    for (size_t i = 0; i < stack.len; i++) free(VEC_AT(stack, Dir, i).path), free(VEC_AT(stack, Dir, i).rel);
    if (ok && pending.len) {
        StatJob job = {(char **)folders.data, (const Pending *)pending.data, pending.len, (int64_t *)sizes.data,
                       (int64_t *)mtimes.data, (signed char *)kinds.data, 0, PTHREAD_MUTEX_INITIALIZER};
        Py_BEGIN_ALLOW_THREADS
        stat_all(&job);
        Py_END_ALLOW_THREADS
    }
    for (size_t i = 0; i < pending.len; i++) free(VEC_AT(pending, Pending, i).name);
    for (size_t i = 0; i < folders.len; i++) free(VEC_AT(folders, char *, i));
    free(pending.data), free(folders.data);
    if (ok) {
        out = Py_BuildValue("(ONNNNO)", notes, vec_bytes(&sizes), vec_bytes(&mtimes), vec_bytes(&kinds),
                            vec_bytes(&links), events);
    } else if (!PyErr_Occurred()) {
        PyErr_NoMemory();
    }
    Py_XDECREF(notes), Py_XDECREF(events), Py_XDECREF(root_b);
    free(sizes.data), free(mtimes.data), free(kinds.data), free(links.data), free(stack.data);
    free(seen.slots), free(seen.used);
    free(names.data);
    PyMem_Free(exts), PyMem_Free(skip);
    return out;
}
#endif

/* ---- merging vocabularies -------------------------------------------------------------------- */
static PyObject *intern_words(PyObject *self, PyObject *args) {
    PyObject *vocab, *words;
    if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &vocab, &PyList_Type, &words)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(words);
    PyObject *out = PyBytes_FromStringAndSize(NULL, sizeof(int32_t) * n);
    if (!out) return NULL;
    int32_t *ids = (int32_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *w = PyList_GET_ITEM(words, i), *id = PyDict_GetItemWithError(vocab, w);
        if (id) {
            ids[i] = (int32_t)PyLong_AsLong(id);
            if (ids[i] == -1 && PyErr_Occurred()) goto fail;
            continue;
        }
        Py_ssize_t next = PyDict_GET_SIZE(vocab);
        if (PyErr_Occurred() || next > INT32_MAX) goto fail;
        PyObject *value = PyLong_FromSsize_t(next);
        int bad = !value || PyDict_SetItem(vocab, w, value) < 0;
        Py_XDECREF(value);
        if (bad) goto fail;
        ids[i] = (int32_t)next;
    }
    return out;
fail:
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_OverflowError, "more than 2**31 distinct words");
    Py_DECREF(out);
    return NULL;
}

/* ---- looking up a term ----------------------------------------------------------------------- */
static PyObject *find_term(PyObject *self, PyObject *args) {
    PyObject *blob_obj, *starts_obj, *order_obj, *term;
    if (!PyArg_ParseTuple(args, "OOOU", &blob_obj, &starts_obj, &order_obj, &term)) return NULL;
    Py_ssize_t key_len;
    const char *key = PyUnicode_AsUTF8AndSize(term, &key_len);
    if (!key) return NULL;
    Py_buffer bb, sb, ob;
    if (get_buffers(3, blob_obj, &bb, 1, "blob", starts_obj, &sb, 8, "starts", order_obj, &ob, 4, "order") < 0)
        return NULL;
    const char *blob = bb.buf;
    const int64_t *starts = sb.buf;
    const int32_t *order = ob.buf;
    Py_ssize_t n = ob.len / 4, found = -1, lo = 0, hi = n;
    int bad = sb.len / 8 != n + 1;
    while (!bad && lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        int32_t id = order[mid];
        if (id < 0 || id >= n || starts[id] < 0 || starts[id + 1] - 1 < starts[id] || starts[id + 1] - 1 > bb.len) {
            bad = 1;
            break;
        }
        Py_ssize_t len = (Py_ssize_t)(starts[id + 1] - 1 - starts[id]);
        int c = memcmp(key, blob + starts[id], (size_t)(key_len < len ? key_len : len));
        if (c == 0) c = (key_len > len) - (key_len < len);
        if (c == 0) {
            found = id;
            break;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    PyBuffer_Release(&bb);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&ob);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "order must hold each term id once and starts one offset per term + 1");
        return NULL;
    }
    return PyLong_FromSsize_t(found);
}

/* ---- a chunk's text out of its note's UTF-8 ------------------------------------------------- */
/* The byte where character `chars` starts in UTF-8 `s` (n bytes), from byte `pos` (character `at`),
   or -1 past the end: eight bytes at a time, counting those that start a character (a continuation
   byte is 10xxxxxx), so a chunk at the end of a long note does not decode the note before it. */
static Py_ssize_t utf8_advance(const unsigned char *s, Py_ssize_t n, Py_ssize_t pos, Py_ssize_t at, Py_ssize_t chars) {
    while (pos + 8 <= n) {
        uint64_t w;
        memcpy(&w, s + pos, 8);
        uint64_t cont = (w & ~(w << 1)) & 0x8080808080808080ULL; /* bit 7 set, bit 6 clear, per byte */
        Py_ssize_t started = 8 - (Py_ssize_t)((((cont >> 7) * 0x0101010101010101ULL) >> 56) & 0xff);
        if (at + started > chars) break;
        at += started;
        pos += 8;
    }
    for (; pos < n; pos++) {
        if ((s[pos] & 0xC0) == 0x80) continue;
        if (at == chars) return pos;
        at++;
    }
    return at == chars ? n : -1;
}

static PyObject *utf8_slice(PyObject *self, PyObject *args) {
    PyObject *obj;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "Onn", &obj, &start, &end)) return NULL;
    Py_buffer b;
    if (get_buffer(obj, &b, 1, "text") < 0) return NULL;
    Py_ssize_t b0, b1;
    /* without the GIL: a note not read since the index was opened faults in from disk (~80 ms per
       hit with a cold cache), and the window's thread must not wait for it; the decode below then
       reads pages already in memory */
    Py_BEGIN_ALLOW_THREADS
    b0 = start < 0 || end < start ? -1 : utf8_advance(b.buf, b.len, 0, 0, start);
    b1 = b0 < 0 ? -1 : utf8_advance(b.buf, b.len, b0, start, end);
    Py_END_ALLOW_THREADS
    PyObject *out = NULL;
    if (b1 < 0)
        PyErr_Format(PyExc_ValueError, "characters %zd-%zd are not in the text", start, end);
    else
        out = PyUnicode_DecodeUTF8((const char *)b.buf + b0, b1 - b0, "strict");
    PyBuffer_Release(&b);
    return out;
}

static PyMethodDef methods[] = {
    {"utf8_slice", utf8_slice, METH_VARARGS,
     "utf8_slice(utf8, start, end) -> str: characters start..end of UTF-8 text, decoding only those."},
    {"count_words", count_words, METH_VARARGS,
     "count_words(pieces, bounds, chunk_ptr) -> (vocab, row_len, word_ids, counts, n_tokens).\n"
     "pieces: list of str; bounds: int64 (start, end) per piece; chunk_ptr: int64, chunk c is pieces\n"
     "chunk_ptr[c]:chunk_ptr[c + 1]. Words are casefolded `\\w+` runs, ids in first-seen order; per chunk\n"
     "its distinct word ids ascending (int32 bytes) with their counts (int32), row_len int64 per chunk."},
    {"markdown_chunks", markdown_chunks, METH_VARARGS,
     "markdown_chunks(text, body_start, org, sep, size, overlap, shortest) -> (rows, trails): rows are int64 bytes,\n"
     "(start, end, start line, end line, trail index) per chunk, as chunking.chunk_markdown cuts the note; trails\n"
     "are the heading trails joined by sep (trails[0] = '')."},
#ifndef _WIN32
    {"walk_tree", walk_tree, METH_VARARGS,
     "walk_tree(root, exts, skip_names, skip_dir[, outside]) -> (notes, sizes, mtimes, kinds, links, events): a notes\n"
     "folder's note-named files with their stat, and what walk.walk_folder reports about folders."},
#endif
    {"intern_words", intern_words, METH_VARARGS,
     "intern_words(vocab, words) -> int32 bytes: each word's id in the dict vocab, adding an unseen word\n"
     "with the next id (len(vocab))."},
    {"find_term", find_term, METH_VARARGS,
     "find_term(blob, starts, order, term) -> int: the id of `term` among the \\n-joined UTF-8 terms of blob\n"
     "(term i is blob[starts[i]:starts[i + 1] - 1], int64 starts), by binary search over order (int32 ids\n"
     "sorted by their bytes); -1 when it is not there."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_text",
                                    "Compiled text kernels: word counting, vocabularies and markdown chunks (see tokenize.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__text(void) {
    for (Py_UCS4 c = 0; c < 0x10000; c++) {
        bmp_word[c] = Py_UNICODE_ISALNUM(c) || c == '_';
        bmp_space[c] = Py_UNICODE_ISSPACE(c);
    }
    casefold_name = PyUnicode_InternFromString("casefold");
    strip_name = PyUnicode_InternFromString("strip");
    if (!casefold_name || !strip_name) return NULL;
    return PyModule_Create(&module);
}
