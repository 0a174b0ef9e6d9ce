"""The index's OS file locks: one process builds an index at a time (LOCK), one writes its meaning
index rows at a time (LOCK-meaning); the OS releases them when a process dies."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .errors import IndexBusy
from .fileio import FILE_MODE
from .store import claim_root

LOCK = "LOCK"
MEANING_LOCK = "LOCK-meaning"
LOCK_POLL_S = 0.05


@contextlib.contextmanager
def build_lock(
    root: Path, cancelled: Callable[[], bool] | None = None, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold the index's build lock (an OS lock on root/LOCK, released by the OS if the process dies):
    builds of one index run one after the other. `waiting` is called once if another process holds
    it; `cancelled` is polled meanwhile (raises IndexBusy when it says so). Refuses a folder that is not
    an index folder (claim_root)."""
    claim_root(root)
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, FILE_MODE)
    with _holding(fd, cancelled, waiting, f"another process is building the index in {root}"):
        yield


@contextlib.contextmanager
def meaning_lock(
    root: Path, cancelled: Callable[[], bool] | None = None, waiting: Callable[[], None] | None = None
) -> Iterator[None]:
    """Hold root/LOCK-meaning while writing meaning-index rows: a second process creating the same
    partial file truncated the one the first had mapped, which killed the first with SIGBUS (a
    terminal's `ragdesk index` while the window embeds). Where the lock file cannot be made (a
    read-only cache) nothing is written to the index either, so nothing is held."""
    try:
        fd = os.open(root / MEANING_LOCK, os.O_RDWR | os.O_CREAT, FILE_MODE)
    except OSError:
        fd = -1  # not inside the handler: an error of the block must not read as raised during this one
    if fd < 0:
        yield
        return
    with _holding(fd, cancelled, waiting, f"another process is computing the meaning index in {root}"):
        yield


@contextlib.contextmanager
def _holding(
    fd: int, cancelled: Callable[[], bool] | None, waiting: Callable[[], None] | None, busy: str
) -> Iterator[None]:
    """Lock `fd` (polling; see build_lock), hold it for the block, then unlock and close it."""
    try:
        told = False
        while not _try_lock(fd):
            if not told and waiting is not None:
                waiting()
            told = True
            if cancelled is not None and cancelled():
                raise IndexBusy(busy)
            time.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    try:
        if os.name == "nt":  # pragma: no cover - Windows
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except (BlockingIOError, PermissionError):
        return False
    except OSError:
        if os.name == "nt":  # pragma: no cover - msvcrt says "deadlock avoided" for a held lock
            return False
        raise
    return True


def _unlock(fd: int) -> None:
    if os.name == "nt":  # pragma: no cover - Windows
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_UN)
