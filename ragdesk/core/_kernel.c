/* Compiled kernels for topk.py, postings.py and derive.py: the exact BM25 top k with MaxScore pruning (the twin of
 * search_top_k_numpy), term frequency look-ups for explanations, and the term-major derivation
 * of an analyzer's index from the word-level forward index (the twin of the scipy product).
 *
 * The top k:
 *
 * numpy spends most of a long query on temporaries (gather the norms, compute, gather the
 * accumulator, scatter it back); here each posting is one pass. The scores are the same floats
 * as the numpy path: every chunk receives the same additions, in the same term order, computed
 * with the same operations in the same order (built with -ffp-contract=off, so no fused
 * multiply-add changes a rounding). Pruning only skips chunks that provably cannot reach the
 * top k, so the result is exactly the top k of scoring everything.
 *
 * Range bounds: the terms left for last (long, low-scoring: common trigrams) are looked up only for
 * chunks that can still reach the k-th score. With a bound per term and per range of 2^shift chunks
 * (range_maxima), "can still" is judged by what the remaining terms give that chunk's range at most,
 * not by their overall bounds: a long claim's candidates drop from tens of thousands to a few
 * thousand at the scale corpus, since most ranges hold none of a term's best postings.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_common.h"


typedef struct {
    Py_buffer docs_buf, tfs_buf, norms_buf, ranges_buf;
    const int32_t *docs;
    const int32_t *tfs;
    const double *norms;
    const uint8_t *ranges; /* per chunk range, the range's best as a share of `bound` in 255ths (rounded up), or NULL */
    Py_ssize_t n;
    double idf, weight, bound;
} Term;

typedef struct {
    double score;
    int32_t doc;
} Scored;

/* a ranks before b: higher score, then lower chunk id */
static int ranks_before(const Scored *a, const Scored *b) {
    return a->score > b->score || (a->score == b->score && a->doc < b->doc);
}

static void release_terms(Term *terms, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        PyBuffer_Release(&terms[i].docs_buf);
        PyBuffer_Release(&terms[i].tfs_buf);
        PyBuffer_Release(&terms[i].norms_buf);
        if (terms[i].ranges) PyBuffer_Release(&terms[i].ranges_buf);
    }
    PyMem_Free(terms);
}

static inline double contribution(const Term *t, double f, double kp1, int32_t doc) {
    /* numpy: weight * (idf * f * (k1 + 1) / (f + norm)), evaluated left to right */
    double c = t->idf * f;
    c = c * kp1;
    c = c / (f + t->norms[doc]);
    return t->weight * c;
}

/* The value that would sit at index `kth` if `a[0..n)` were sorted ascending (a is reordered). */
static double select_kth(double *a, Py_ssize_t n, Py_ssize_t kth) {
    Py_ssize_t lo = 0, hi = n - 1;
    while (hi > lo) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        /* median of three as the pivot */
        double x = a[lo], y = a[mid], z = a[hi];
        double pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        Py_ssize_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) {
                double tmp = a[i];
                a[i] = a[j];
                a[j] = tmp;
                i++;
                j--;
            }
        }
        if (kth <= j)
            hi = j;
        else if (kth >= i)
            lo = i;
        else
            return a[kth];
    }
    return a[kth];
}

/* Put `s` at `pos` of the heap heap[0..size) and sift it down: a parent ranks after its children. */
static void sift_down(Scored *heap, Py_ssize_t size, Py_ssize_t pos, Scored s) {
    for (;;) {
        Py_ssize_t child = 2 * pos + 1;
        if (child >= size) break;
        if (child + 1 < size && ranks_before(&heap[child], &heap[child + 1])) child++;
        if (!ranks_before(&s, &heap[child])) break;
        heap[pos] = heap[child];
        pos = child;
    }
    heap[pos] = s;
}

/* Keep the k best of `ids` (by acc) in a heap whose root ranks last; return them best first.
   Ties rank by order[id] (the chunk's number in the caller's numbering), which is also what is
   returned; without `order` the ids themselves. */
static PyObject *best_k(const double *acc, const int32_t *ids, Py_ssize_t n, Py_ssize_t k, const int32_t *order) {
    Scored *heap = PyMem_Malloc(sizeof(Scored) * (size_t)(k > 0 ? k : 1));
    if (!heap) return PyErr_NoMemory();
    Py_ssize_t size = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Scored s = {acc[ids[i]], order ? order[ids[i]] : ids[i]};
        if (size < k) {
            Py_ssize_t pos = size++;
            while (pos > 0) { /* sift up: the parent must rank after its children */
                Py_ssize_t parent = (pos - 1) / 2;
                if (!ranks_before(&heap[parent], &s)) break;
                heap[pos] = heap[parent];
                pos = parent;
            }
            heap[pos] = s;
        } else if (ranks_before(&s, &heap[0])) {
            sift_down(heap, size, 0, s); /* it replaces the worst kept so far */
        }
    }
    /* pop the worst to the end, repeatedly: the array ends up best first */
    for (Py_ssize_t end = size - 1; end > 0; end--) {
        Scored last = heap[end];
        heap[end] = heap[0];
        sift_down(heap, end, 0, last);
    }
    PyObject *docs = PyList_New(size), *scores = PyList_New(size);
    if (!docs || !scores) {
        Py_XDECREF(docs);
        Py_XDECREF(scores);
        PyMem_Free(heap);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        PyList_SET_ITEM(docs, i, PyLong_FromLong(heap[i].doc));
        PyList_SET_ITEM(scores, i, PyFloat_FromDouble(heap[i].score));
    }
    PyMem_Free(heap);
    return Py_BuildValue("(NN)", docs, scores);
}

enum { HOT = 1, CAND = 2 };

/* Keep exactly k hot chunks (n_hot >= k): all above the k-th best sum, then ties; return that sum. */
static double shrink(const double *acc, int32_t *hot, Py_ssize_t *n_hot, Py_ssize_t k, unsigned char *flags,
                     double *scratch) {
    Py_ssize_t n = *n_hot, kept = 0;
    for (Py_ssize_t j = 0; j < n; j++) scratch[j] = acc[hot[j]];
    double kth = select_kth(scratch, n, n - k);
    Py_ssize_t ties = k;
    for (Py_ssize_t j = 0; j < n; j++) ties -= acc[hot[j]] > kth;
    for (Py_ssize_t j = 0; j < n; j++) {
        int32_t d = hot[j];
        if (acc[d] > kth || (acc[d] == kth && ties-- > 0))
            hot[kept++] = d;
        else
            flags[d] &= (unsigned char)~HOT;
    }
    *n_hot = kept;
    return kth;
}

/* rr[r] += what terms [from, to) can add at most to a chunk of range r (each term's bound where it
   has no range bounds); `sign` -1 takes them away again. */
static void add_range_bounds(const Term *terms, Py_ssize_t from, Py_ssize_t to, Py_ssize_t n_ranges, double *rr,
                             double sign) {
    for (Py_ssize_t j = from; j < to; j++) {
        const Term *t = &terms[j];
        const double b = sign * t->bound, unit = b * (1.0 / 255.0);
        if (t->ranges)
            for (Py_ssize_t r = 0; r < n_ranges; r++) rr[r] += unit * (double)t->ranges[r];
        else
            for (Py_ssize_t r = 0; r < n_ranges; r++) rr[r] += b;
    }
}

static PyObject *top_k(PyObject *self, PyObject *args) {
    PyObject *seq, *order_obj = Py_None, *mask_obj = Py_None;
    Py_ssize_t n_docs, k;
    double k1;
    int shift = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "Ondn|OiO", &seq, &n_docs, &k1, &k, &order_obj, &shift, &mask_obj)) return NULL;
    if (k <= 0) {
        PyErr_SetString(PyExc_ValueError, "k must be positive");
        return NULL;
    }
    if (shift < 0 || shift > 30) {
        PyErr_SetString(PyExc_ValueError, "shift must be 0 (no range bounds) to 30");
        return NULL;
    }
    const Py_ssize_t n_ranges = shift && n_docs ? ((n_docs - 1) >> shift) + 1 : 0;
    /* mask: one byte per chunk, 0 for chunks a query's filters leave out (they never rank) */
    Py_buffer mask_buf = {0};
    const uint8_t *mask = NULL;
    if (mask_obj != Py_None) {
        if (get_buffer(mask_obj, &mask_buf, 1, "mask") < 0) return NULL;
        if (mask_buf.len < n_docs) {
            PyBuffer_Release(&mask_buf);
            PyErr_SetString(PyExc_ValueError, "mask must have one entry per chunk");
            return NULL;
        }
        mask = mask_buf.buf;
    }
    PyObject *fast = PySequence_Fast(seq, "terms must be a sequence");
    if (!fast) {
        if (mask) PyBuffer_Release(&mask_buf);
        return NULL;
    }
    Py_ssize_t nt = PySequence_Fast_GET_SIZE(fast);
    Term *terms = PyMem_Calloc((size_t)(nt ? nt : 1), sizeof(Term));
    if (!terms) {
        Py_DECREF(fast);
        return PyErr_NoMemory();
    }
    Py_ssize_t parsed = 0;
    for (; parsed < nt; parsed++) {
        Term *t = &terms[parsed];
        PyObject *docs, *tfs, *norms, *ranges = Py_None;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, parsed), "OOOddd|O", &docs, &tfs, &norms, &t->idf,
                              &t->weight, &t->bound, &ranges))
            break;
        if (get_buffer(docs, &t->docs_buf, 4, "docs") < 0) break;
        if (get_buffer(tfs, &t->tfs_buf, 4, "tfs") < 0) {
            PyBuffer_Release(&t->docs_buf);
            break;
        }
        if (get_buffer(norms, &t->norms_buf, 8, "norms") < 0) {
            PyBuffer_Release(&t->docs_buf);
            PyBuffer_Release(&t->tfs_buf);
            break;
        }
        t->docs = t->docs_buf.buf;
        t->tfs = t->tfs_buf.buf;
        t->norms = t->norms_buf.buf;
        t->n = t->docs_buf.len / 4;
        if (t->tfs_buf.len / 4 != t->n || t->norms_buf.len / 8 < n_docs) {
            PyErr_SetString(PyExc_ValueError, "postings and norms do not match the number of chunks");
            parsed++;
            break;
        }
        if (ranges != Py_None && n_ranges) {
            parsed++; /* from here on release_terms releases this term's buffers */
            if (get_buffer(ranges, &t->ranges_buf, 1, "ranges") < 0) break;
            t->ranges = t->ranges_buf.buf;
            if (t->ranges_buf.len < n_ranges) {
                PyErr_SetString(PyExc_ValueError, "ranges must have one entry per range of chunks");
                break;
            }
            parsed--;
        }
    }
    Py_DECREF(fast);
    if (parsed < nt || PyErr_Occurred()) {
        release_terms(terms, parsed);
        if (mask) PyBuffer_Release(&mask_buf);
        return NULL;
    }

    double *acc = calloc((size_t)(n_docs ? n_docs : 1), sizeof(double));
    int32_t *touched = malloc(sizeof(int32_t) * (size_t)(n_docs + 1)); /* +1: written one past before counting */
    double *scratch = malloc(sizeof(double) * (size_t)(n_docs ? n_docs : 1));
    double *rest = malloc(sizeof(double) * (size_t)(nt + 1));
    const Py_ssize_t hot_cap = 4 * k + 1024;
    int32_t *hot = malloc(sizeof(int32_t) * (size_t)hot_cap);
    unsigned char *flags = calloc((size_t)(n_docs ? n_docs : 1), 1);
    if (!acc || !touched || !scratch || !rest || !hot || !flags) {
        free(hot);
        free(flags);
        free(acc);
        free(touched);
        free(scratch);
        free(rest);
        release_terms(terms, nt);
        if (mask) PyBuffer_Release(&mask_buf);
        return PyErr_NoMemory();
    }
    const double kp1 = k1 + 1.0;
    rest[nt] = 0.0; /* rest[i]: what terms i.. can still add at most */
    for (Py_ssize_t i = nt - 1; i >= 0; i--) rest[i] = rest[i + 1] + terms[i].bound;
    Py_ssize_t n_touched = 0, n_cand = 0;
    int pruned = 0, damaged = 0;
    double floor_ = 0.0;

    Py_BEGIN_ALLOW_THREADS
    /* The hot list holds every chunk whose partial sum exceeds theta: the k-th best partial sum
       at the last shrink (0 before), a lower bound of the final k-th score, since partial sums
       only grow. Shrinking it to its k best is cheap, so the bound is renewed before every term. */
    Py_ssize_t n_hot = 0;
    double theta = 0.0;
    Py_ssize_t i = 0;
    for (; i < nt; i++) {
        const Term *t = &terms[i];
        if (i && n_hot >= k) {
            theta = shrink(acc, hot, &n_hot, k, flags, scratch);
            floor_ = theta * (1.0 - 1e-9); /* slack keeps a hair more: always safe */
            if (rest[i] < floor_) {
                pruned = 1;
                break;
            }
        }
        for (Py_ssize_t p = 0; p < t->n; p++) {
            int32_t d = t->docs[p];
            if ((uint32_t)d >= (uint32_t)n_docs || t->tfs[p] < 1) { /* damaged: no write out of bounds, no f < 1 */
                damaged = 1;
                break;
            }
            if (mask && !mask[d]) continue;
            double before = acc[d];
            double after = before + contribution(t, (double)t->tfs[p], kp1, d);
            touched[n_touched] = d; /* branch-free: kept only if this is the chunk's first match */
            n_touched += (before == 0.0) & (after > 0.0);
            acc[d] = after;
            if (after > theta && !(flags[d] & HOT)) {
                flags[d] |= HOT;
                hot[n_hot++] = d;
                if (n_hot == hot_cap) theta = shrink(acc, hot, &n_hot, k, flags, scratch);
            }
        }
        if (damaged) break;
    }
    double *rr = NULL; /* with range bounds: what the terms not yet added can add to each range's chunks */
    Py_ssize_t rr_from = i;
    if (pruned && !damaged && n_ranges) {
        int any = 0;
        for (Py_ssize_t j = i; j < nt; j++) any |= terms[j].ranges != NULL;
        if (any && (rr = calloc((size_t)n_ranges, sizeof(double))) != NULL)
            add_range_bounds(terms, i, nt, n_ranges, rr, 1.0);
    }
#define REST_FOR(d) (rr ? rr[(d) >> shift] : rest[rr_from])
    if (pruned && !damaged) {
        /* Only chunks that can still reach the k-th score (found in chunk order, so ascending) get
           the remaining terms, each looked up for them; their growing sums raise the k-th score.
           With range bounds, "can still" is judged by the best the remaining terms give the chunk's
           range of 2^shift chunks, which is far less than their overall bounds for most ranges. */
        if (n_touched > n_docs / 8) { /* most chunks touched: one branch-free pass in chunk order */
            for (Py_ssize_t d = 0; d < n_docs; d++) {
                int keep = (acc[d] > 0.0) & (acc[d] + REST_FOR(d) >= floor_);
                touched[n_cand] = (int32_t)d;
                n_cand += keep;
                flags[d] |= (unsigned char)(keep * CAND);
            }
        } else { /* few: flag them, then collect the flags in chunk order, eight at a time */
            for (Py_ssize_t j = 0; j < n_touched; j++) {
                int32_t d = touched[j];
                flags[d] |= (unsigned char)((acc[d] + REST_FOR(d) >= floor_) * CAND);
            }
            Py_ssize_t n_words = n_docs / 8;
            for (Py_ssize_t w = 0; w <= n_words; w++) {
                Py_ssize_t lo = w * 8, hi = lo + 8 < n_docs ? lo + 8 : n_docs;
                if (w < n_words) {
                    uint64_t word;
                    memcpy(&word, flags + lo, 8);
                    if (!(word & 0x0202020202020202ULL)) continue; /* CAND is bit 1 of each byte */
                }
                for (Py_ssize_t d = lo; d < hi; d++)
                    if (flags[d] & CAND) touched[n_cand++] = (int32_t)d;
            }
        }
        double filtered_rest = rest[i], filtered_floor = floor_;
        for (; i < nt && n_cand > 0 && !damaged; i++) {
            const Term *t = &terms[i];
            if (t->n <= n_cand) { /* walk the postings, skipping non-candidates */
                for (Py_ssize_t p = 0; p < t->n; p++) {
                    int32_t d = t->docs[p];
                    if ((uint32_t)d >= (uint32_t)n_docs || t->tfs[p] < 1) {
                        damaged = 1;
                        break;
                    }
                    if (flags[d] & CAND) acc[d] += contribution(t, (double)t->tfs[p], kp1, d);
                }
            } else { /* walk the candidates, galloping through the postings */
                Py_ssize_t p = 0;
                for (Py_ssize_t c = 0; c < n_cand && p < t->n; c++) {
                    int32_t d = touched[c];
                    if (t->docs[p] < d) {
                        Py_ssize_t step = 1, lo = p, hi = p + 1;
                        while (hi < t->n && t->docs[hi] < d) {
                            lo = hi;
                            step <<= 1;
                            hi = lo + step;
                        }
                        if (hi > t->n) hi = t->n;
                        while (lo + 1 < hi) {
                            Py_ssize_t mid = lo + (hi - lo) / 2;
                            if (t->docs[mid] < d)
                                lo = mid;
                            else
                                hi = mid;
                        }
                        p = hi;
                    }
                    if (p < t->n && t->docs[p] == d) acc[d] += contribution(t, (double)t->tfs[p], kp1, d);
                }
            }
            double theta = acc[hot[0]]; /* the k hot chunks' sums still bound the k-th score */
            for (Py_ssize_t j = 1; j < k; j++)
                if (acc[hot[j]] < theta) theta = acc[hot[j]];
            if (theta * (1.0 - 1e-9) > floor_) floor_ = theta * (1.0 - 1e-9);
            /* Drop hopeless candidates once the bound has moved enough to be worth a pass. A dropped
               one stays out (its best case only shrinks); one kept a little longer costs only time. */
            if (rest[i + 1] <= filtered_rest * 0.75 || floor_ >= filtered_floor * 1.05) {
                Py_ssize_t kept = 0;
                if (rr) add_range_bounds(terms, rr_from, i + 1, n_ranges, rr, -1.0);
                rr_from = i + 1;
                for (Py_ssize_t c = 0; c < n_cand; c++) {
                    int32_t d = touched[c];
                    if (acc[d] + REST_FOR(d) >= floor_)
                        touched[kept++] = d;
                    else
                        flags[d] &= (unsigned char)~CAND;
                }
                n_cand = kept;
                if (n_cand > k) { /* and the k best survivors become the hot chunks */
                    for (Py_ssize_t c = 0; c < n_cand; c++) scratch[c] = acc[touched[c]];
                    double kth = select_kth(scratch, n_cand, n_cand - k);
                    Py_ssize_t n_lead = 0;
                    for (Py_ssize_t c = 0; c < n_cand && n_lead < k; c++)
                        if (acc[touched[c]] >= kth) hot[n_lead++] = touched[c];
                    if (kth * (1.0 - 1e-9) > floor_) floor_ = kth * (1.0 - 1e-9);
                }
                filtered_rest = rest[i + 1];
                filtered_floor = floor_;
            }
        }
    } else {
        n_cand = n_touched;
    }
#undef REST_FOR
    free(rr);
    Py_END_ALLOW_THREADS

    PyObject *out = NULL;
    Py_buffer order_buf = {0};
    if (damaged) {
        PyErr_SetString(PyExc_ValueError,
                        "a posting is out of range (a chunk that does not exist, or f < 1): the index is damaged");
    } else if (order_obj == Py_None) {
        out = best_k(acc, touched, n_cand, k, NULL);
    } else if (get_buffer(order_obj, &order_buf, 4, "order") == 0) {
        if (order_buf.len / 4 < n_docs)
            PyErr_SetString(PyExc_ValueError, "order must have one entry per chunk");
        else
            out = best_k(acc, touched, n_cand, k, order_buf.buf);
        PyBuffer_Release(&order_buf);
    }
    free(acc);
    free(touched);
    free(scratch);
    free(rest);
    free(hot);
    free(flags);
    release_terms(terms, nt);
    if (mask) PyBuffer_Release(&mask_buf);
    return out;
}

/* Per range of 2^shift chunks, the largest f(k1+1)/(f + norm) of a term's postings there, as a share
   of `top` (the term's bound of the same, with headroom) in 255ths, rounded up: 0 where the term does
   not occur. Rounded up with room to spare, so `bound * q / 255` never falls below a contribution. */
static PyObject *range_maxima(PyObject *self, PyObject *args) {
    PyObject *docs_obj, *tfs_obj, *norms_obj;
    double k1, top;
    int shift;
    Py_ssize_t n_ranges;
    Py_buffer docs, tfs, norms;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOdidn", &docs_obj, &tfs_obj, &norms_obj, &k1, &shift, &top, &n_ranges)) return NULL;
    if (shift < 1 || shift > 30 || n_ranges < 0 || !(top > 0.0)) {
        PyErr_SetString(PyExc_ValueError, "range_maxima: shift 1..30, n_ranges >= 0 and top > 0");
        return NULL;
    }
    if (get_buffers(3, docs_obj, &docs, 4, "docs", tfs_obj, &tfs, 4, "tfs", norms_obj, &norms, 8, "norms") < 0)
        return NULL;
    PyObject *out = NULL;
    double *best = calloc((size_t)(n_ranges ? n_ranges : 1), sizeof(double));
    const Py_ssize_t n = docs.len / 4, n_norms = norms.len / 8;
    int bad = tfs.len != docs.len;
    if (best && !bad) {
        const int32_t *d = docs.buf, *f = tfs.buf;
        const double *nm = norms.buf, kp1 = k1 + 1.0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t p = 0; p < n; p++) {
            if (d[p] < 0 || d[p] >= n_norms || (d[p] >> shift) >= n_ranges || f[p] < 1) {
                bad = 1;
                break;
            }
            double w = (double)f[p] * kp1 / ((double)f[p] + nm[d[p]]);
            if (w > best[d[p] >> shift]) best[d[p] >> shift] = w;
        }
        Py_END_ALLOW_THREADS
    }
    if (!best)
        PyErr_NoMemory();
    else if (bad)
        PyErr_SetString(PyExc_ValueError, "range_maxima: postings out of range, or docs and tfs differ in length");
    else if ((out = PyBytes_FromStringAndSize(NULL, n_ranges)) != NULL) {
        uint8_t *q = (uint8_t *)PyBytes_AS_STRING(out);
        const double scale = 255.0 * (1.0 + 1e-9) / top;
        for (Py_ssize_t r = 0; r < n_ranges; r++) {
            double v = ceil(best[r] * scale);
            q[r] = (uint8_t)(v >= 255.0 ? 255 : v);
        }
    }
    free(best);
    PyBuffer_Release(&docs);
    PyBuffer_Release(&tfs);
    PyBuffer_Release(&norms);
    return out;
}

static PyObject *frequencies(PyObject *self, PyObject *args) {
    PyObject *seq, *keys_obj;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &seq, &keys_obj)) return NULL;
    Py_buffer keys;
    if (get_buffer(keys_obj, &keys, 4, "docs") < 0) return NULL;
    PyObject *fast = PySequence_Fast(seq, "postings must be a sequence");
    if (!fast) {
        PyBuffer_Release(&keys);
        return NULL;
    }
    Py_ssize_t nt = PySequence_Fast_GET_SIZE(fast), nk = keys.len / 4;
    PyObject *out = PyBytes_FromStringAndSize(NULL, nt * nk * 4);
    const int32_t *key = keys.buf;
    for (Py_ssize_t t = 0; out && t < nt; t++) {
        PyObject *docs_obj, *tfs_obj;
        Py_buffer docs, tfs;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, t), "OO", &docs_obj, &tfs_obj) ||
            get_buffer(docs_obj, &docs, 4, "docs") < 0) {
            Py_CLEAR(out);
            break;
        }
        if (get_buffer(tfs_obj, &tfs, 4, "tfs") < 0 || tfs.len != docs.len) {
            if (!PyErr_Occurred()) {
                PyErr_SetString(PyExc_ValueError, "docs and tfs differ in length");
                PyBuffer_Release(&tfs);
            }
            PyBuffer_Release(&docs);
            Py_CLEAR(out);
            break;
        }
        const int32_t *d = docs.buf, *f = tfs.buf;
        int32_t *row = (int32_t *)PyBytes_AS_STRING(out) + t * nk;
        Py_ssize_t n = docs.len / 4;
        /* without the GIL: postings not read since the index was opened fault in from disk (tens of
           ms when the cache is cold), and the window's thread must not wait for them */
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t j = 0; j < nk; j++) { /* binary search: the first posting >= key */
            Py_ssize_t lo = 0, hi = n;
            while (lo < hi) {
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if (d[mid] < key[j])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            row[j] = lo < n && d[lo] == key[j] ? f[lo] : 0;
        }
        Py_END_ALLOW_THREADS
        PyBuffer_Release(&docs);
        PyBuffer_Release(&tfs);
    }
    Py_DECREF(fast);
    PyBuffer_Release(&keys);
    return out;
}

/* One pass over chunks [first, last) of the forward index. With `docs` NULL it adds to at[term] the
   number of those chunks each term occurs in; else it sums each chunk's term frequencies over its
   words (count x multiplicity) in the scratch array `tf` and appends (chunk, tf) at at[term]++
   (0 if every position was inside docs' n_docs, -1 if not: nothing is written outside). */
static int walk_chunks(const int64_t *row_ptr, Py_ssize_t first, Py_ssize_t last, const int32_t *word_ids,
                       const int32_t *counts, const int64_t *map_ptr, const int32_t *map_ids, const int32_t *map_mult,
                       int32_t *tf, int32_t *seen, int64_t *at, int32_t *docs, int32_t *tfs, int64_t n_docs,
                       const double *norms, double kp1, double *bounds) {
    if (!docs) { /* counting: only whether a term occurs in the chunk matters; tf holds the last chunk + 1 */
        for (Py_ssize_t c = first; c < last; c++) {
            int32_t stamp = (int32_t)(c - first) + 1;
            for (int64_t j = row_ptr[c]; j < row_ptr[c + 1]; j++) {
                int32_t w = word_ids[j];
                for (int64_t m = map_ptr[w]; m < map_ptr[w + 1]; m++) {
                    int32_t t = map_ids[m];
                    at[t] += tf[t] != stamp;
                    tf[t] = stamp;
                }
            }
        }
        return 0;
    }
    int bad = 0;
    for (Py_ssize_t c = first; c < last; c++) {
        Py_ssize_t n_seen = 0;
        for (int64_t j = row_ptr[c]; j < row_ptr[c + 1]; j++) {
            int32_t w = word_ids[j], cnt = counts[j];
            for (int64_t m = map_ptr[w]; m < map_ptr[w + 1]; m++) {
                int32_t t = map_ids[m];
                if (tf[t] == 0) seen[n_seen++] = t;
                tf[t] += cnt * map_mult[m];
            }
        }
        for (Py_ssize_t j = 0; j < n_seen; j++) {
            int32_t t = seen[j];
            int64_t pos = at[t]++;
            if (pos < 0 || pos >= n_docs) {
                bad = -1;
            } else {
                docs[pos] = (int32_t)c;
                tfs[pos] = tf[t];
            }
            if (bounds) { /* numpy's max_tf_weights: f * (k1 + 1) / (f + norm), the largest per term */
                double f = (double)tf[t], w = f * kp1;
                w = w / (f + norms[c]);
                if (w > bounds[t]) bounds[t] = w;
            }
            tf[t] = 0;
        }
    }
    return bad;
}

/* postings_by_term(row_ptr, word_ids, counts, map_ptr, map_ids, map_mult, first, last, at[, docs, tfs[,
   norms, bounds, k1]]): an analyzer's term-major index derived from chunks [first, last) of the
   word-level forward index. Without docs/tfs it adds each term's number of postings there to `at`
   (int64 per term); with them it writes each posting at at[term]++ (so, from the offsets of a
   counting pass, per term chunks ascending: chunks are walked in order). With norms (per chunk) and
   bounds (per term) it also raises each term's bound to its largest tf weight. The GIL is released:
   threads may derive disjoint chunk ranges into disjoint positions at once. */
static PyObject *postings_by_term(PyObject *self, PyObject *args) {
    PyObject *objs[11] = {NULL};
    Py_ssize_t first, last;
    double k1 = 0.0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOOOnnO|OOOOd", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5], &first,
                          &last, &objs[6], &objs[7], &objs[8], &objs[9], &objs[10], &k1))
        return NULL;
    static const Py_ssize_t sizes[11] = {8, 4, 4, 8, 4, 4, 8, 4, 4, 8, 8};
    static const char *names[11] = {"row_ptr", "word_ids", "counts", "map_ptr", "map_ids", "map_mult",
                                    "at", "docs", "tfs", "norms", "bounds"};
    Py_buffer bufs[11];
    int got = 0, n_bufs = objs[7] && objs[7] != Py_None ? (objs[9] && objs[9] != Py_None ? 11 : 9) : 7;
    for (; got < n_bufs; got++) {
        int flags = got >= 6 && got != 9 ? PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE : PyBUF_C_CONTIGUOUS;
        if (PyObject_GetBuffer(objs[got], &bufs[got], flags) < 0) break;
        if (bufs[got].itemsize != sizes[got]) {
            PyErr_Format(PyExc_TypeError, "%s: expected items of %zd bytes", names[got], sizes[got]);
            PyBuffer_Release(&bufs[got]);
            break;
        }
    }
    PyObject *out = NULL;
    if (got == n_bufs) {
        Py_ssize_t n_chunks = bufs[0].len / 8 - 1, n_words = bufs[3].len / 8 - 1, n_terms = bufs[6].len / 8;
        const int64_t *row_ptr = bufs[0].buf, *map_ptr = bufs[3].buf;
        int64_t *at = bufs[6].buf;
        int ok = n_chunks >= 0 && n_words >= 0 && 0 <= first && first <= last && last <= n_chunks &&
                 (n_chunks == 0 || (row_ptr[0] >= 0 && row_ptr[n_chunks] <= bufs[1].len / 4)) &&
                 bufs[1].len == bufs[2].len && (n_words == 0 || map_ptr[n_words] <= bufs[4].len / 4) &&
                 bufs[4].len == bufs[5].len;
        const int32_t *word_ids = bufs[1].buf, *map_ids = bufs[4].buf;
        for (Py_ssize_t c = first; ok && c < last; c++) ok = row_ptr[c] <= row_ptr[c + 1];
        for (int64_t j = ok && last > first ? row_ptr[first] : 0; ok && j < (last > first ? row_ptr[last] : 0); j++)
            ok = word_ids[j] >= 0 && word_ids[j] < n_words;
        for (Py_ssize_t w = 0; ok && w < n_words; w++) ok = 0 <= map_ptr[w] && map_ptr[w] <= map_ptr[w + 1];
        for (Py_ssize_t j = 0; ok && j < bufs[4].len / 4; j++) ok = map_ids[j] >= 0 && map_ids[j] < n_terms;
        if (ok && n_bufs >= 9) ok = bufs[8].len == bufs[7].len;
        if (ok && n_bufs == 11) ok = bufs[9].len / 8 == n_chunks && bufs[10].len / 8 == n_terms;
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "inconsistent forward index, word map, chunk range or output sizes");
        } else {
            int32_t *tf = calloc((size_t)(n_terms ? n_terms : 1), sizeof(int32_t));
            int32_t *seen = malloc(sizeof(int32_t) * (size_t)(n_terms ? n_terms : 1));
            if (!tf || !seen) {
                PyErr_NoMemory();
            } else {
                int bad;
                Py_BEGIN_ALLOW_THREADS
                bad = walk_chunks(row_ptr, first, last, word_ids, bufs[2].buf, map_ptr, map_ids, bufs[5].buf, tf, seen,
                                  at, n_bufs >= 9 ? bufs[7].buf : NULL, n_bufs >= 9 ? bufs[8].buf : NULL,
                                  n_bufs >= 9 ? bufs[7].len / 4 : 0, n_bufs == 11 ? bufs[9].buf : NULL, k1 + 1.0,
                                  n_bufs == 11 ? bufs[10].buf : NULL);
                Py_END_ALLOW_THREADS
                if (bad)
                    PyErr_SetString(PyExc_ValueError, "posting positions outside docs: offsets do not match the counts");
                else
                    out = Py_NewRef(Py_None);
            }
            free(tf);
            free(seen);
        }
    }
    for (int j = 0; j < got; j++) PyBuffer_Release(&bufs[j]);
    return out;
}

/* ---- trigram word map (the twin of index._trigram_word_map) ------------------------------------ */
/* A trigram packed into one integer, 21 bits a code point: ordering the integers orders the terms
 * by code points, as numpy's unique over the same packing does. */
static inline uint64_t pack3(Py_UCS4 a, Py_UCS4 b, Py_UCS4 c) {
    return ((uint64_t)a << 42) | ((uint64_t)b << 21) | (uint64_t)c;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* trigram_word_map(words) -> (terms, ptr, ids, mult): every word padded with "_" on both sides, its
 * distinct trigrams' term ids ascending with how often each occurs; terms sorted by code points. */
static PyObject *trigram_word_map(PyObject *self, PyObject *args) {
    PyObject *words;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &words)) return NULL;
    Py_ssize_t n_words = PyList_GET_SIZE(words), total = 0;
    for (Py_ssize_t i = 0; i < n_words; i++) {
        PyObject *w = PyList_GET_ITEM(words, i);
        if (!PyUnicode_Check(w)) {
            PyErr_SetString(PyExc_TypeError, "words must be str");
            return NULL;
        }
        Py_ssize_t n = PyUnicode_GET_LENGTH(w);
        total += n ? n : 0; /* a word of n letters has n trigrams ("" has none: a stop word) */
    }
    uint64_t *keys = malloc(sizeof(uint64_t) * (size_t)(total ? total : 1));
    int32_t *key_id = malloc(sizeof(int32_t) * (size_t)(total ? total : 1));
    size_t cap = 1024;
    while (cap < (size_t)total * 2 + 2) cap *= 2; /* at most `total` distinct trigrams, half full */
    uint64_t *slot_key = malloc(sizeof(uint64_t) * cap);
    int32_t *slot_id = malloc(sizeof(int32_t) * cap);
    uint64_t *uniq = malloc(sizeof(uint64_t) * (size_t)(total ? total : 1));
    int64_t *ptr = calloc((size_t)n_words + 1, sizeof(int64_t));
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)(total ? total : 1));
    int32_t *mult = malloc(sizeof(int32_t) * (size_t)(total ? total : 1));
    int32_t *rank = NULL;
    PyObject *out = NULL, *terms = NULL;
    if (!keys || !key_id || !slot_key || !slot_id || !uniq || !ptr || !ids || !mult) {
        PyErr_NoMemory();
        goto done;
    }
    memset(slot_id, 0xff, sizeof(int32_t) * cap);
    Py_ssize_t k = 0, n_uniq = 0;
    for (Py_ssize_t i = 0; i < n_words; i++) { /* each trigram's key and first-seen id */
        PyObject *w = PyList_GET_ITEM(words, i);
        int kind = PyUnicode_KIND(w);
        const void *data = PyUnicode_DATA(w);
        Py_ssize_t n = PyUnicode_GET_LENGTH(w);
        for (Py_ssize_t j = 0; j < n; j++) {
            Py_UCS4 a = j ? PyUnicode_READ(kind, data, j - 1) : '_', b = PyUnicode_READ(kind, data, j);
            Py_UCS4 c = j + 1 < n ? PyUnicode_READ(kind, data, j + 1) : '_';
            uint64_t key = pack3(a, b, c);
            size_t h = (size_t)mix64(key) & (cap - 1);
            while (slot_id[h] >= 0 && slot_key[h] != key) h = (h + 1) & (cap - 1);
            if (slot_id[h] < 0) slot_key[h] = key, slot_id[h] = (int32_t)n_uniq, uniq[n_uniq++] = key;
            keys[k] = key;
            key_id[k++] = slot_id[h];
        }
    }
    /* term ids: ranks of the distinct keys in sorted order */
    uint64_t *sorted = malloc(sizeof(uint64_t) * (size_t)(n_uniq ? n_uniq : 1));
    rank = malloc(sizeof(int32_t) * (size_t)(n_uniq ? n_uniq : 1));
    if (!sorted || !rank) {
        free(sorted);
        PyErr_NoMemory();
        goto done;
    }
    memcpy(sorted, uniq, sizeof(uint64_t) * (size_t)n_uniq);
    qsort(sorted, (size_t)n_uniq, sizeof(uint64_t), cmp_u64);
    terms = PyList_New(n_uniq);
    for (Py_ssize_t t = 0; terms && t < n_uniq; t++) {
        uint64_t key = sorted[t];
        size_t h = (size_t)mix64(key) & (cap - 1);
        while (slot_key[h] != key) h = (h + 1) & (cap - 1);
        rank[slot_id[h]] = (int32_t)t;
        Py_UCS4 cps[3] = {(Py_UCS4)(key >> 42), (Py_UCS4)((key >> 21) & 0x1FFFFF), (Py_UCS4)(key & 0x1FFFFF)};
        PyObject *term = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, cps, 3);
        if (!term) {
            Py_CLEAR(terms);
            break;
        }
        PyList_SET_ITEM(terms, t, term);
    }
    free(sorted);
    if (!terms) goto done;
    /* per word: its distinct term ids ascending, with multiplicities */
    Py_ssize_t m = 0;
    k = 0;
    for (Py_ssize_t i = 0; i < n_words; i++) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(PyList_GET_ITEM(words, i)), first = m;
        for (Py_ssize_t j = 0; j < n; j++) {
            int32_t t = rank[key_id[k++]];
            Py_ssize_t q = m; /* insertion into this word's sorted run */
            while (q > first && ids[q - 1] > t) q--;
            if (q > first && ids[q - 1] == t) {
                mult[q - 1]++;
                continue;
            }
            memmove(ids + q + 1, ids + q, sizeof(int32_t) * (size_t)(m - q));
            memmove(mult + q + 1, mult + q, sizeof(int32_t) * (size_t)(m - q));
            ids[q] = t, mult[q] = 1, m++;
        }
        ptr[i + 1] = m;
    }
    out = Py_BuildValue("(ONNN)", terms, PyBytes_FromStringAndSize((const char *)ptr, sizeof(int64_t) * (n_words + 1)),
                        PyBytes_FromStringAndSize((const char *)ids, sizeof(int32_t) * m),
                        PyBytes_FromStringAndSize((const char *)mult, sizeof(int32_t) * m));
done:
    Py_XDECREF(terms);
    free(keys), free(key_id), free(slot_key), free(slot_id), free(uniq), free(ptr), free(ids), free(mult), free(rank);
    return out;
}

/* ---- nearest chunks by quantized cosine ------------------------------------------------------- */
static void heap_down(int32_t *h, Py_ssize_t k, Py_ssize_t i) {
    for (;;) {
        Py_ssize_t l = 2 * i + 1, m = i;
        if (l < k && h[l] < h[m]) m = l;
        if (l + 1 < k && h[l + 1] < h[m]) m = l + 1;
        if (m == i) return;
        int32_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static PyObject *near_candidates(PyObject *self, PyObject *args) {
    PyObject *codes_obj, *query_obj, *mask_obj = Py_None;
    Py_ssize_t k;
    long long margin;
    if (!PyArg_ParseTuple(args, "OOnL|O", &codes_obj, &query_obj, &k, &margin, &mask_obj)) return NULL;
    Py_buffer cb, qb, mb = {0};
    if (get_buffers(2, codes_obj, &cb, 1, "codes", query_obj, &qb, 2, "query") < 0) return NULL;
    Py_ssize_t d = qb.len / 2, n = d ? cb.len / d : 0;
    if (d == 0 || cb.len != n * d || k < 1 || margin < 0 || d > 65536) {
        PyBuffer_Release(&cb);
        PyBuffer_Release(&qb);
        PyErr_SetString(PyExc_ValueError, "codes must be n rows of len(query) int8; k >= 1, margin >= 0");
        return NULL;
    }
    /* mask: one byte per row, 0 for rows a query's filters leave out (never scored, never returned) */
    const uint8_t *mask = NULL;
    if (mask_obj != Py_None) {
        if (get_buffer(mask_obj, &mb, 1, "mask") < 0) {
            PyBuffer_Release(&cb);
            PyBuffer_Release(&qb);
            return NULL;
        }
        if (mb.len < n) {
            PyBuffer_Release(&mb);
            PyBuffer_Release(&cb);
            PyBuffer_Release(&qb);
            PyErr_SetString(PyExc_ValueError, "mask must have one byte per row");
            return NULL;
        }
        mask = mb.buf;
    }
    Py_ssize_t n_kept = n;
    if (mask) {
        n_kept = 0;
        for (Py_ssize_t i = 0; i < n; i++) n_kept += mask[i] != 0;
    }
    Py_ssize_t kk = k < n_kept ? k : n_kept;
    int32_t *scores = malloc(sizeof(int32_t) * (size_t)(n ? n : 1)), *heap = malloc(sizeof(int32_t) * (size_t)(kk ? kk : 1));
    if (!scores || !heap) {
        free(scores);
        free(heap);
        if (mask) PyBuffer_Release(&mb);
        PyBuffer_Release(&cb);
        PyBuffer_Release(&qb);
        return PyErr_NoMemory();
    }
    const int8_t *codes = cb.buf;
    const int16_t *q = qb.buf;
    Py_ssize_t found = 0, seen = 0;
    long long least = 0; /* the k-th largest score minus margin: what a candidate must reach */
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (mask && !mask[i]) continue;
        const int8_t *row = codes + i * d;
        int32_t acc = 0;
        for (Py_ssize_t j = 0; j < d; j++) acc += (int32_t)row[j] * (int32_t)q[j];
        scores[i] = acc;
        if (seen < kk) {
            heap[seen] = acc;
            if (seen == kk - 1)
                for (Py_ssize_t h = kk / 2; h-- > 0;) heap_down(heap, kk, h);
        } else if (acc > heap[0]) {
            heap[0] = acc;
            heap_down(heap, kk, 0);
        }
        seen++;
    }
    least = kk ? (long long)heap[0] - margin : 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if ((!mask || mask[i]) && (long long)scores[i] >= least) found++;
    Py_END_ALLOW_THREADS;
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(int64_t) * (kk ? found : 0));
    if (out && kk) {
        int64_t *ids = (int64_t *)PyBytes_AS_STRING(out);
        for (Py_ssize_t i = 0, w = 0; i < n; i++)
            if ((!mask || mask[i]) && (long long)scores[i] >= least) ids[w++] = i;
    }
    free(scores);
    free(heap);
    if (mask) PyBuffer_Release(&mb);
    PyBuffer_Release(&cb);
    PyBuffer_Release(&qb);
    return out;
}

static float half_to_float[65536]; /* every float16 bit pattern's value (filled at import) */

static float half_value(uint16_t h) {
    int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    float v;
    if (exponent == 0)
        v = ldexpf((float)mantissa, -24); /* subnormal */
    else if (exponent == 31)
        v = mantissa ? NAN : INFINITY;
    else
        v = ldexpf((float)(mantissa | 0x400), exponent - 25);
    return sign ? -v : v;
}

static PyObject *near_cosines(PyObject *self, PyObject *args) {
    PyObject *rows_obj, *query_obj, *ids_obj;
    if (!PyArg_ParseTuple(args, "OOO", &rows_obj, &query_obj, &ids_obj)) return NULL;
    Py_buffer rb, qb, ib;
    if (get_buffers(3, rows_obj, &rb, 2, "rows", query_obj, &qb, 8, "query", ids_obj, &ib, 8, "ids") < 0) return NULL;
    Py_ssize_t d = qb.len / 8, n = d ? rb.len / 2 / d : 0, m = ib.len / 8;
    const uint16_t *rows = rb.buf;
    const double *q = qb.buf;
    const int64_t *ids = ib.buf;
    int bad = d == 0 || rb.len != 2 * n * d;
    for (Py_ssize_t i = 0; !bad && i < m; i++) bad = ids[i] < 0 || ids[i] >= n;
    PyObject *out = bad ? NULL : PyBytes_FromStringAndSize(NULL, (Py_ssize_t)sizeof(double) * m);
    if (out) {
        double *cos = (double *)PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS;
        for (Py_ssize_t i = 0; i < m; i++) {
            const uint16_t *row = rows + ids[i] * d;
            /* four running sums, dimension j into sum j % 4, then (s0 + s1) + (s2 + s3): the order
               nearest.exact_cosines sums in (four independent chains run ~3x faster than one) */
            double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
            Py_ssize_t j = 0;
            for (; j + 4 <= d; j += 4) {
                s0 += (double)half_to_float[row[j]] * q[j];
                s1 += (double)half_to_float[row[j + 1]] * q[j + 1];
                s2 += (double)half_to_float[row[j + 2]] * q[j + 2];
                s3 += (double)half_to_float[row[j + 3]] * q[j + 3];
            }
            if (j < d) s0 += (double)half_to_float[row[j]] * q[j];
            if (j + 1 < d) s1 += (double)half_to_float[row[j + 1]] * q[j + 1];
            if (j + 2 < d) s2 += (double)half_to_float[row[j + 2]] * q[j + 2];
            cos[i] = (s0 + s1) + (s2 + s3);
        }
        Py_END_ALLOW_THREADS;
    }
    PyBuffer_Release(&rb);
    PyBuffer_Release(&qb);
    PyBuffer_Release(&ib);
    if (bad) PyErr_SetString(PyExc_ValueError, "rows must be n x len(query) float16 and ids within 0..n-1");
    return out;
}

static PyObject *near_quantize(PyObject *self, PyObject *args) {
    PyObject *rows_obj;
    Py_ssize_t d, levels;
    if (!PyArg_ParseTuple(args, "Onn", &rows_obj, &d, &levels)) return NULL;
    Py_buffer rb;
    if (get_buffer(rows_obj, &rb, 2, "rows") < 0) return NULL;
    Py_ssize_t n = d > 0 ? rb.len / 2 / d : 0;
    if (d <= 0 || rb.len != 2 * n * d || levels < 1 || levels > 127) {
        PyBuffer_Release(&rb);
        PyErr_SetString(PyExc_ValueError, "rows must be n x dim float16; 1 <= levels <= 127");
        return NULL;
    }
    PyObject *codes_obj = PyBytes_FromStringAndSize(NULL, n * d), *step_obj = PyBytes_FromStringAndSize(NULL, 8 * d);
    double *inverse = malloc(sizeof(double) * (size_t)d);
    if (!codes_obj || !step_obj || !inverse) {
        Py_XDECREF(codes_obj);
        Py_XDECREF(step_obj);
        free(inverse);
        PyBuffer_Release(&rb);
        return PyErr_NoMemory();
    }
    const uint16_t *rows = rb.buf;
    int8_t *codes = (int8_t *)PyBytes_AS_STRING(codes_obj);
    double *step = (double *)PyBytes_AS_STRING(step_obj), widest = 0.0, residual = 0.0;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t j = 0; j < d; j++) step[j] = 0.0;
    for (Py_ssize_t i = 0; i < n; i++) /* each dimension's largest |value| */
        for (Py_ssize_t j = 0; j < d; j++) {
            double v = fabs((double)half_to_float[rows[i * d + j]]);
            if (v > step[j]) step[j] = v;
        }
    for (Py_ssize_t j = 0; j < d; j++) {
        step[j] = step[j] / (double)levels;
        inverse[j] = step[j] > 0.0 ? 1.0 / step[j] : 0.0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        double l1 = 0.0, r2 = 0.0;
        for (Py_ssize_t j = 0; j < d; j++) {
            double x = (double)half_to_float[rows[i * d + j]], c = rint(x * inverse[j]);
            c = c > (double)levels ? (double)levels : c < -(double)levels ? -(double)levels : c;
            codes[i * d + j] = (int8_t)c;
            double e = x - c * step[j];
            l1 += fabs(c);
            r2 += e * e;
        }
        if (l1 > widest) widest = l1;
        if (sqrt(r2) > residual) residual = sqrt(r2);
    }
    Py_END_ALLOW_THREADS;
    free(inverse);
    PyBuffer_Release(&rb);
    return Py_BuildValue("NNnd", codes_obj, step_obj, (Py_ssize_t)widest, residual);
}

static PyMethodDef methods[] = {
    {"top_k", top_k, METH_VARARGS,
     "top_k(terms, n_docs, k1, k, order=None, shift=0, mask=None) -> (chunk ids, scores), best first (ties by chunk id).\n"
     "terms: (docs int32, tfs int32, norms float64, idf, weight, upper bound), best bound first.\n"
     "order: optional int32 per chunk; ties rank by it and it is what is returned (a renumbering).\n"
     "shift: with range bounds (a term's optional 7th item, range_maxima's bytes), chunk ranges of 2^shift.\n"
     "mask: optional uint8 per chunk (in the ranking's numbering); chunks with 0 never rank."},
    {"range_maxima", range_maxima, METH_VARARGS,
     "range_maxima(docs, tfs, norms, k1, shift, top, n_ranges) -> bytes: per range of 2^shift chunks, the\n"
     "largest f(k1+1)/(f+norm) there in 255ths of top, rounded up (without the GIL)."},
    {"frequencies", frequencies, METH_VARARGS,
     "frequencies(postings, docs) -> bytes of int32, one row per (docs, tfs) pair: each doc's frequency or 0."},
    {"postings_by_term", postings_by_term, METH_VARARGS,
     "postings_by_term(row_ptr, word_ids, counts, map_ptr, map_ids, map_mult, first, last, at[, docs, tfs[, norms, "
     "bounds, k1]]): count, then fill at the offsets `at`, an analyzer's term-major postings from chunks\n"
     "[first, last) of the word-level forward index (without the GIL)."},
    {"trigram_word_map", trigram_word_map, METH_VARARGS,
     "trigram_word_map(words) -> (terms, ptr, ids, mult): the trigram terms of every word (\"\" for none), as\n"
     "index._trigram_word_map gives them; ptr int64, ids and mult int32, as bytes."},
    {"near_candidates", near_candidates, METH_VARARGS,
     "near_candidates(codes, query, k, margin, mask=None) -> int64 bytes: ascending ids of the rows whose integer\n"
     "score (int8 codes, n x len(query), dot the int16 query) is at least the k-th largest score minus margin\n"
     "(without the GIL); with mask (uint8 per row), only the rows it keeps are scored, ranked and returned."},
    {"near_cosines", near_cosines, METH_VARARGS,
     "near_cosines(rows, query, ids) -> float64 bytes: rows[ids] (float16, n x len(query)) dot query (float64),\n"
     "summed in float64 in the order nearest.exact_cosines sums (without the GIL)."},
    {"near_quantize", near_quantize, METH_VARARGS,
     "near_quantize(rows, dim, levels) -> (codes, step, widest, residual): float16 rows (n x dim) as int8 codes\n"
     "(bytes), step per dimension (float64 bytes: its largest |value| / levels), the largest sum of |code| over a\n"
     "row and the largest |row - step * code| (without the GIL); as nearest.NearestRows quantizes in numpy."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel",
                                    "Compiled kernels: BM25 top k, frequencies, term-major derivation (see topk.py, derive.py), nearest rows (nearest.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__kernel(void) {
    for (uint32_t h = 0; h < 65536; h++) half_to_float[h] = half_value((uint16_t)h);
    return PyModule_Create(&module);
}
