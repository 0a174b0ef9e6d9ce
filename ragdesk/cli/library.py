"""From arguments to what the core needs: settings, query parameters, the opened (refreshed) index,
the search mode and its embedding model; errors a person can act on as CliError."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from ..core.errors import RagdeskError
from .output import say_waiting


class CliError(RagdeskError):
    """A user-facing error: printed as one line on stderr, exit status 2."""


MAX_MB = 1 << 20  # --max-mb above this (a terabyte) is no limit anyone means: refused, as inf is


def notes_folder(given: str) -> Path:
    """The notes folder given, checked: empty text (an unset variable) silently meant the current
    folder, which was then indexed; a folder that is not there is one line."""
    if not str(given).strip():
        raise CliError("the notes folder is empty text (an unset variable?): give a folder")
    folder = Path(given)
    if not folder.is_dir():
        raise CliError(f"notes folder not found: {given}")
    return folder


def index_settings(args: argparse.Namespace, built: Any = None) -> Any:
    """The settings a command indexes with: those the stored index was `built` with (the defaults for
    a folder never indexed), changed by each index option given on the command line."""
    from dataclasses import replace

    from ..core.params import IndexSettings

    base = built if built is not None else IndexSettings()
    load: dict[str, Any] = {}
    if args.extensions is not None:
        exts = tuple(e if e.startswith(".") else "." + e for e in (x.strip() for x in args.extensions.split(",")) if e)
        odd = [e for e in exts if not re.fullmatch(r"\.[^\W_][\w.+-]*", e)]
        if odd or not exts:
            shown = odd[0][1:] if odd else args.extensions
            raise CliError(f"--extensions: {shown!r} is not a file ending; give endings such as .md,.txt (no globs)")
        load["extensions"] = exts
    if args.max_mb is not None:
        if not args.max_mb > 0:  # also NaN
            raise CliError(f"--max-mb must be more than 0 (got {args.max_mb:g}): every file would be skipped")
        if not args.max_mb <= MAX_MB:  # also inf
            raise CliError(f"--max-mb must be at most {MAX_MB:,} (got {args.max_mb:g})")
        load["max_bytes"] = int(args.max_mb * 1024 * 1024)
    if args.follow_outside_links is not None:
        load["follow_outside_links"] = args.follow_outside_links
    chunk = {
        key: value
        for key, value in (
            ("chunker", args.chunker),
            ("size", args.chunk_size),
            ("overlap", args.overlap),
            ("min_fill", args.min_fill),
            ("context", args.context),
        )
        if value is not None
    }
    try:
        return IndexSettings(replace(base.load, **load), replace(base.chunk, **chunk))
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def say_setting_changes(built: Any, asked: Any, doing: str) -> None:
    """One line when the options given differ from those the stored index was built with."""
    from ..core.params import setting_changes

    changes = setting_changes(built, asked)
    if changes:
        print(f"ragdesk: the index was built with other options ({'; '.join(changes)}): {doing}", file=sys.stderr)


def check_bm25(k1: float, b: float) -> None:
    from ..core.bm25 import check_params

    try:
        check_params(k1, b)
    except ValueError:
        raise CliError(f"--k1 must be at least 0 and --b between 0 and 1, both finite (got {k1:g} and {b:g})") from None


def analyzer_config(args: argparse.Namespace) -> Any:
    from ..core.analyzers import AnalyzerConfig

    stops = tuple(s.strip() for s in args.stop_words.split(",") if s.strip())
    try:
        return AnalyzerConfig(
            args.analyzer, args.stem_length, args.fold_accents, stops, query_language=args.query_language
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def search_params(args: argparse.Namespace, mode: str = "bm25", k: int | None = None) -> Any:
    """The SearchParams of the command line, in `mode` (the one core.modes.resolve chose), ranking
    `k` results (default: -k where the command has it, else DEFAULT_K)."""
    from ..core.params import DEFAULT_K, SearchParams

    k = k if k is not None else getattr(args, "k", DEFAULT_K)
    sort = getattr(args, "sort", "relevance")  # search has --sort; prompt ranks by relevance
    return SearchParams(analyzer_config(args), args.k1, args.b, k, mode, args.fusion, args.group, sort)


def resolve_mode(args: argparse.Namespace, lib: Any, partial: bool = True) -> Any:
    """Which search --mode runs on this index, why, and its model (core.modes.resolve), after
    embedding the few chunks a refresh added (core.meaning_writer.catch_up); a clear error when dense or hybrid was
    asked for and the model is not installed. While the meaning index is unfinished (`ragdesk index`
    or the window may be computing it), auto, dense and hybrid search the chunks embedded so far, as
    the window does; `partial=False` (eval: a measurement) keeps auto on BM25 and computes the rest
    first for dense and hybrid."""
    from ..core.dense import DenseUnavailable, dense_available, load_embedder
    from ..core.meaning_writer import catch_up
    from ..core.modes import Mode, resolve

    if args.mode != Mode.BM25 and dense_available(args.embedder):
        catch_up(lib, args.embedder)
    resolved = resolve(lib, args.mode, args.embedder, partial=partial, compute_unstarted=True)
    if args.mode in (Mode.DENSE, Mode.HYBRID) and resolved.embedder is None:
        try:
            load_embedder(args.embedder)  # says what to install
        except DenseUnavailable as exc:
            raise CliError(str(exc)) from exc
    return resolved


def open_library(args: argparse.Namespace, refresh: bool = True) -> Any:
    """Open the folder's index, building or refreshing it as needed (with the indexes of the
    analyzer that `args` ask for, derived in the build's worker processes). A refresh keeps every
    meaning index's rows of unchanged notes, whatever mode this command runs in."""
    from ..core.build import build_index
    from ..core.reader import IndexReader
    from ..core.store import IndexDamaged, IndexMissing, is_storage_error

    folder = notes_folder(args.folder)
    previous = None
    try:
        previous = IndexReader.open(folder, args.index_dir)
    except IndexDamaged as exc:  # or missing: built below
        if not refresh:
            why = "none is stored" if isinstance(exc, IndexMissing) else f"the stored one is damaged ({exc})"
            raise CliError(f"no index to use as it is ({why}): --no-refresh never builds; run `ragdesk index`") from exc
    settings = index_settings(args, previous.settings if previous is not None else None)
    if not refresh:
        say_setting_changes(previous.settings, settings, "--no-refresh searches it as it is")
        return previous
    if previous is not None:
        say_setting_changes(previous.settings, settings, "rebuilding it with those given")
    try:
        lib, _ = build_index(
            folder,
            args.index_dir,
            settings,
            warm=analyzer_config(args),
            waiting=say_waiting,
            previous=previous,
        )
    except OSError as exc:
        if not is_storage_error(exc):
            raise
        # Full disk or read-only storage: answer from the index as it is, and say it is stale.
        message = storage_message(exc, folder, args.index_dir)
        try:
            lib = IndexReader.open(folder, args.index_dir)
        except IndexDamaged:
            raise CliError(message) from exc
        print(f"ragdesk: warning: index is stale: {message}", file=sys.stderr)
        return lib
    return lib


def storage_message(exc: OSError, folder: Path, index_dir: str | None) -> str:
    from ..core.store import index_dir_for

    return f"cannot write the index in {index_dir_for(folder.resolve(), index_dir)}: {exc.strerror or exc}"
