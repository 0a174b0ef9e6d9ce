"""The C library's heap (glibc): freed pages handed back, and one heap for every thread where it
can still be had. Both are no-ops where the C library lacks them (macOS, musl)."""

from __future__ import annotations

import contextlib
import ctypes
import threading

M_ARENA_MAX = -8  # glibc's mallopt parameter: how many heaps threads may spread over
_one_heap = False


def release_freed_memory() -> None:
    """Give the memory this process has freed back to the system: glibc keeps it for reuse (after a
    scale build's batches were written, 230 of the build's 400 MB were free but kept; an e5 run's
    activations grew the heap by 50-130 MB over 200 notes). About 1 ms."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def share_one_heap() -> bool:
    """Have every thread of this process allocate from one heap, for processes that embed texts side by
    side (core/e5_onnx.py): with a heap per thread their runs kept 56-63 MB of freed activations that
    malloc_trim does not hand back; with one, 5 MB. It only holds for threads that have not allocated
    yet, so it is the first thing a process does (the CLI, the build process); True when it holds."""
    global _one_heap
    if not _one_heap and threading.active_count() == 1:
        with contextlib.suppress(OSError, AttributeError):
            _one_heap = ctypes.CDLL(None).mallopt(M_ARENA_MAX, 1) == 1
    return _one_heap


def one_heap() -> bool:
    """Whether `share_one_heap` took hold in this process."""
    return _one_heap
