"""A meaning index's rows checked before they are ranked: a CRC per block of rows, recorded when the
rows are complete and checked the first time a process reads them (one pass, ~40 ms at 180,000
chunks), so a row zeroed, a bit flipped, two rows swapped or rows replaced are found before a search
ranks with them, and only the damaged blocks are embedded again."""

from __future__ import annotations

import time
import zlib
from pathlib import Path

import numpy as np

from . import fileio

BLOCK_ROWS = 1024  # rows per checksum: 768 KB at 384 dimensions; what a damaged block costs to embed again


def block_sums(rows: np.ndarray, block_rows: int | None = None) -> list[int]:
    """The CRC32 of each block of `block_rows` rows' bytes (the last one may be shorter)."""
    block_rows = block_rows or BLOCK_ROWS
    sums = []
    for start in range(0, len(rows), block_rows):
        sums.append(zlib.crc32(np.ascontiguousarray(rows[start : start + block_rows]).data))
        fileio.release_pages(rows)  # read once here: not kept resident
    return sums


def _not_finite(block: np.ndarray) -> bool:
    """Whether a float16 block holds an infinity or a NaN (exponent bits all ones), read on the bits."""
    return bool(((block.view(np.uint16) & 0x7C00) == 0x7C00).any())


def damaged_blocks(rows: np.ndarray, recorded: dict) -> list[int]:
    """The blocks of `rows` that cannot be trusted: a CRC other than the one recorded for the block,
    or a value that is not a number. Without a per-block record (an index written before them) only
    the values are checked; the whole file's CRC is `index --verify`'s."""
    sums = recorded.get("blocks")
    block_rows = block_rows_of(recorded)
    n_blocks = -(-len(rows) // block_rows)
    if sums is not None and (not isinstance(sums, list) or len(sums) != n_blocks):
        return list(range(n_blocks))  # a record that is not these rows': nothing in them can be trusted
    bad = []
    for i in range(n_blocks):
        block = np.ascontiguousarray(rows[i * block_rows : (i + 1) * block_rows])
        if (sums is not None and zlib.crc32(block.data) != sums[i]) or _not_finite(block):
            bad.append(i)
        fileio.release_pages(rows)
    return bad


_CHECKED: dict[tuple[str, int, int, int], list[int]] = {}  # (path, inode, mtime, size) -> damaged blocks


RACY_NS = 2_000_000_000  # a file changed this recently may change again within one timestamp tick


def checked_once(path: Path, rows: np.ndarray, recorded: dict) -> list[int]:
    """`damaged_blocks`, once per file and process (a file written again is checked again). As git's
    "racily clean" rule: a file modified in the last two seconds is not remembered as checked, since
    file times move in coarse ticks and a change within the same tick would keep its key."""
    st = path.stat()
    key = (str(path), st.st_ino, st.st_mtime_ns, st.st_size)
    if key in _CHECKED:
        return _CHECKED[key]
    bad = damaged_blocks(rows, recorded)
    if time.time_ns() - st.st_mtime_ns > RACY_NS:
        _CHECKED[key] = bad
    return bad


def block_rows_of(recorded: dict) -> int:
    """The rows per checksum the record was written with (a damaged record: one block of all rows)."""
    size = recorded.get("block_rows", BLOCK_ROWS)
    return size if isinstance(size, int) and size > 0 else 1 << 62


def said(bad: list[int], n_rows: int, recorded: dict) -> str:
    """The damage in a few words, for the one line a search or `ragdesk index` says."""
    n_blocks = -(-n_rows // block_rows_of(recorded))
    what = "altered (checksum)" if "blocks" in recorded else "with values that are not numbers (NaN or infinite)"
    return f"{len(bad)} of {n_blocks} blocks of rows {what}"
