"""On-disk index storage: versioned generations of .npy arrays, swapped in atomically.

Layout of an index folder (one per notes folder):
    CURRENT              name of the active generation (replaced atomically)
    gen-<n>/manifest.json, *.npy, *.blob, terms-<analyzer key>/...
A crash while writing leaves CURRENT pointing at the previous, complete generation.
Arrays are memory-mapped on load, so reopening reads only what queries touch.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

FORMAT_VERSION = 6  # 4: markdown chunks end at the best break near `size` words; 5: delta segments; 6: min_fill
MANIFEST = "manifest.json"
CURRENT = "CURRENT"


class IndexDamaged(Exception):
    """The stored index is missing, damaged or of another format; it must be rebuilt."""


def default_index_root() -> Path:
    import appdirs

    return Path(appdirs.user_cache_dir("ragdesk", appauthor=False)) / "indexes"


def index_dir_for(folder: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> Path:
    """The index folder of a notes folder: readable name plus a hash of its absolute path."""
    absolute = os.path.realpath(folder)
    digest = hashlib.sha1(absolute.encode("utf-8")).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in Path(absolute).name)[:40] or "root"
    return Path(root) if root is not None else default_index_root() / f"{name}-{digest}"


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while block := fh.read(1 << 22):
            crc = zlib.crc32(block, crc)
    return crc


def file_info(path: Path) -> dict[str, int]:
    """A written file's size and CRC, as the manifest records them."""
    return {"size": path.stat().st_size, "crc32": _crc(path)}


def write_arrays(folder: Path, arrays: dict[str, np.ndarray], blobs: dict[str, bytes]) -> dict[str, dict[str, int]]:
    """Write arrays and blobs into `folder`; returns their sizes and CRCs for the manifest."""
    files: dict[str, dict[str, int]] = {}
    for name, arr in arrays.items():
        path = folder / f"{name}.npy"
        np.save(path, np.ascontiguousarray(arr), allow_pickle=False)
        files[path.name] = file_info(path)
    for name, data in blobs.items():
        files[f"{name}.blob"] = write_blob(folder / f"{name}.blob", data)
    return files


def write_byte_array(path: Path, pieces: list[Any], total: int) -> dict[str, int]:
    """Write byte pieces as one uint8 .npy (so it memory-maps like the arrays); returns size and CRC."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "|u1", "fortran_order": False, "shape": (total,)})
    crc = zlib.crc32(header.getvalue())
    with open(path, "wb") as out:
        out.write(header.getvalue())
        for piece in pieces:
            data = memoryview(piece).cast("B") if not isinstance(piece, bytes) else piece
            out.write(data)
            crc = zlib.crc32(data, crc)
    return {"size": path.stat().st_size, "crc32": crc}


def write_blob(path: Path, data: bytes) -> dict[str, int]:
    path.write_bytes(data)
    return {"size": len(data), "crc32": zlib.crc32(data)}


def discard(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")))  # C encoder; json.dump is not
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> dict[str, int]:
    """One JSON object per line. Encoding record by record lets other threads run in between
    (one json.dumps of a large list holds the GIL for its whole run and stalls the window)."""
    crc = 0
    size = 0
    with open(path, "wb") as fh:
        for record in records:
            line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
            fh.write(line)
            crc = zlib.crc32(line, crc)
            size += len(line)
    return {"size": size, "crc32": crc}


def read_jsonl(path: Path) -> list[Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh]
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"cannot read {path.name}: {exc}") from exc


def read_manifest(folder: Path) -> dict[str, Any]:
    try:
        with open(folder / MANIFEST, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError as exc:
        raise IndexDamaged(f"no manifest in {folder}") from exc
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"damaged manifest in {folder}: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_VERSION:
        raise IndexDamaged(
            f"index format {manifest.get('format') if isinstance(manifest, dict) else '?'} "
            f"is not {FORMAT_VERSION}: rebuild needed"
        )
    return manifest


def check_files(folder: Path, files: dict[str, dict[str, int]], verify_crc: bool = False) -> None:
    """Raise IndexDamaged when a listed file is missing, truncated or (with verify_crc) altered."""
    for name, info in files.items():
        path = folder / name
        try:
            size = path.stat().st_size
        except OSError as exc:
            raise IndexDamaged(f"index file missing: {name}") from exc
        if size != info["size"]:
            raise IndexDamaged(f"index file {name} has {size} bytes, expected {info['size']} (truncated?)")
        if verify_crc and _crc(path) != info["crc32"]:
            raise IndexDamaged(f"index file {name} fails its checksum")


def load_array(folder: Path, name: str) -> np.ndarray:
    """A stored array, memory-mapped read-only; a plain ndarray view of the map, since np.memmap's
    Python-level indexing costs microseconds per access on the query path."""
    try:
        return np.asarray(np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False))
    except (OSError, ValueError) as exc:
        raise IndexDamaged(f"cannot read {name}.npy: {exc}") from exc


def load_blob(folder: Path, name: str) -> bytes:
    try:
        return (folder / f"{name}.blob").read_bytes()
    except OSError as exc:
        raise IndexDamaged(f"cannot read {name}.blob: {exc}") from exc


def new_generation(root: Path) -> Path:
    """A fresh, empty generation folder (not yet current)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"gen-{time.time_ns():x}-{os.getpid()}"
    path.mkdir()
    return path


def current_generation(root: Path) -> Path | None:
    try:
        name = (root / CURRENT).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    path = root / name
    return path if name and path.is_dir() else None


def publish(root: Path, generation: Path, also_keep: Path | None = None) -> None:
    """Make `generation` current atomically, then remove older generations (but `also_keep`,
    the base a delta generation builds on)."""
    tmp = root / (CURRENT + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(generation.name)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, root / CURRENT)
    prune(root, keep=[generation] + ([also_keep] if also_keep is not None else []))


def prune(root: Path, keep: list[Path]) -> None:
    """Delete generations other than those in `keep` (open memory maps stay valid on POSIX)."""
    names = {k.name for k in keep}
    for path in root.glob("gen-*"):
        if path.name not in names:
            shutil.rmtree(path, ignore_errors=True)


def publish_subdir(parent: Path, name: str, build: Any) -> Path:
    """Write a sub-folder through a temporary name and rename it into place (atomic)."""
    final = parent / name
    tmp = parent / f".tmp-{name}-{os.getpid()}-{time.time_ns():x}"
    tmp.mkdir()
    try:
        build(tmp)
        try:
            os.rename(tmp, final)
        except OSError:  # another writer won the race: theirs is as good as ours
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final
