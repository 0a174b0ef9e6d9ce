/* Small helpers shared by the compiled kernels (_kernel.c, _text.c). */
#ifndef RAGDESK_COMMON_H
#define RAGDESK_COMMON_H

#include <Python.h>
#include <stdarg.h>
#include <stdint.h>

/* A C-contiguous buffer of `itemsize`-byte items, or -1 with TypeError (nothing held). */
static inline int get_buffer(PyObject *obj, Py_buffer *view, Py_ssize_t itemsize, const char *what) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->itemsize != itemsize || view->len % itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: expected items of %zd bytes", what, itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* Several buffers at once: `n` (<= 8) groups of (PyObject *obj, Py_buffer *view, int itemsize,
   const char *what), each as get_buffer gives it. All held and 0, or none held and -1 with the error. */
static inline int get_buffers(int n, ...) {
    Py_buffer *held[8];
    int got = 0, ok = n <= 8;
    va_list groups;
    va_start(groups, n);
    for (; ok && got < n; got++) {
        PyObject *obj = va_arg(groups, PyObject *);
        Py_buffer *view = va_arg(groups, Py_buffer *);
        int itemsize = va_arg(groups, int);
        const char *what = va_arg(groups, const char *);
        ok = get_buffer(obj, view, itemsize, what) == 0;
        held[got] = view;
    }
    va_end(groups);
    if (ok) return 0;
    if (n > 8) PyErr_SetString(PyExc_SystemError, "get_buffers: more than 8 buffers");
    for (got -= 1; got-- > 0;) PyBuffer_Release(held[got]); /* the last one tried is not held */
    return -1;
}

/* A 64-bit finalizer (MurmurHash3's): spreads a key's bits over the low ones a hash table masks. */
static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    return x ^ (x >> 33);
}

#endif
