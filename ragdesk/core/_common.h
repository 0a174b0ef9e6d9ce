/* Small helpers shared by the compiled kernels (_kernel.c, _text.c). */
#ifndef RAGDESK_COMMON_H
#define RAGDESK_COMMON_H

#include <Python.h>
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

/* A 64-bit finalizer (MurmurHash3's): spreads a key's bits over the low ones a hash table masks. */
static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    return x ^ (x >> 33);
}

#endif
