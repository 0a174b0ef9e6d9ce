"""The headless commands: `index`, `search`, `prompt`, `analyze`, `eval` and `mcp`, each over the same
core as the window."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.paths import shown
from ..core.query import parse
from ..core.secrets import Scrubber
from ..core.store import is_storage_error
from .library import (
    CliError,
    analyzer_config,
    index_settings,
    notes_folder,
    open_library,
    resolve_mode,
    say_setting_changes,
    search_params,
    storage_message,
)
from .output import (
    meaning_line,
    print_hits,
    print_report,
    print_rows,
    print_why_not,
    say_meaning_waiting,
    say_waiting,
    terminal_progress,
)

# The meaning index's reason in the JSON after Ctrl+C (`ragdesk index` then exits 130).
INTERRUPTED = "interrupted: the finished batches are kept; the next run continues"
STOPPED = "stopped: "  # the meaning index could not be stored (e.g. a full disk)
REPLACED = "another process updated the index meanwhile (an edit); the meaning index goes on with it"


def cmd_index(args: argparse.Namespace) -> int:
    from ..core.analyzers import AnalyzerConfig
    from ..core.build import build_index
    from ..core.reader import IndexReader
    from ..core.store import IndexDamaged, IndexMissing

    folder = notes_folder(args.folder)
    damaged = None
    previous = None
    try:
        previous = IndexReader.open(folder, args.index_dir, verify=args.verify)
    except IndexMissing:  # first: a missing index is a kind of damaged one, but nothing to report
        pass
    except IndexDamaged as exc:
        damaged = str(exc) if args.verify else None
    settings = index_settings(args, previous.settings if previous is not None else None)
    if previous is not None:
        say_setting_changes(previous.settings, settings, "rebuilding it with those given")
    try:
        lib, report = build_index(
            folder,
            args.index_dir,
            settings,
            previous=previous,  # checked again under the build lock (another process may publish first)
            progress=terminal_progress(),
            warm=AnalyzerConfig(),
            reuse_stored=damaged is None,
            waiting=say_waiting,
        )
    except OSError as exc:
        if not is_storage_error(exc):
            raise
        kept = " (the previous index is kept)" if previous is not None or damaged else " (nothing was stored)"
        raise CliError(storage_message(exc, folder, args.index_dir) + kept) from exc
    if sys.stderr.isatty():
        print(file=sys.stderr)
    data = report.to_json()
    data["index_dir"] = str(lib.root)
    data["rebuilt_damaged"] = damaged
    data["meaning_index"] = meaning = _meaning_index(lib, args)
    if args.report:
        data["report"] = lib.report()
    status = 130 if meaning["reason"] == INTERRUPTED else 0  # Ctrl+C: the shell's exit status for SIGINT
    if (meaning["reason"] or "").startswith(STOPPED):
        print(f"ragdesk: error: {meaning['reason'][len(STOPPED) :]}", file=sys.stderr)
        status = 2
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return status
    if damaged:
        print(f"stored index was damaged ({damaged}); rebuilt it")
    verb = "built" if report.rebuilt else "already current"
    print(f"{verb}: {report.files} files, {report.chunks} chunks, {report.tokens} tokens in {report.elapsed_s:.2f} s")
    print(f"added {report.added}, changed {report.changed}, removed {report.removed}, unchanged {report.unchanged}")
    print(meaning_line(meaning))
    if args.report:
        print_report(data["report"])
    else:
        for s in report.skipped:
            print(f"  {'decoded' if s.loaded else 'skipped'}: {shown(s.path)}: {s.reason}")
    print(f"index: {lib.root}")
    return status


def _meaning_index(lib: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Compute what the index lacks of its meaning index (unless --no-dense), resumably: an
    interrupted run keeps its finished batches (and the refresh copied the rows of unchanged notes).
    Returns what the JSON reports."""
    from ..core.dense import MEANING_ENV, DenseUnavailable, embedder_name, load_embedder, meaning_index_default
    from ..core.embeddings import EmbeddingCancelled, MeaningIndexUnwritable
    from ..core.jobs import EmbeddingProgress
    from ..core.meaning_writer import MeaningRun, repair_meaning
    from ..core.reader import IndexReader

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
            for line in repair_meaning(lib, embedder, verify=args.verify):
                print(f"ragdesk: {line}", file=sys.stderr)
            t0 = run_t0 = time.monotonic()
            show = sys.stderr.isatty()
            run = MeaningRun(lib, embedder)

            def progress(done: int, total: int) -> None:
                if show:  # the window's status line; the chunks not to do were stored already
                    chunks = run.reader.n_chunks
                    msg = EmbeddingProgress(done, total, time.monotonic() - run_t0, chunks - total, chunks)
                    print(f"\r{msg.line()}  ", end="", file=sys.stderr, flush=True)

            def replaced(reader: IndexReader) -> IndexReader:  # e.g. the window refreshed an edit: go on with its index
                nonlocal run_t0
                print(f"{chr(10) if show else ''}ragdesk: {REPLACED}", file=sys.stderr)
                run_t0 = time.monotonic()
                return IndexReader.open(reader.folder, reader.root, reuse=reader)

            try:
                run.complete(progress, waiting=say_meaning_waiting, replaced=replaced)
            except (EmbeddingCancelled, KeyboardInterrupt):
                state["reason"] = INTERRUPTED
            except MeaningIndexUnwritable as exc:
                state["reason"] = f"{STOPPED}{exc}"
            lib, state["embedded_now"] = run.reader, run.embedded
            state["seconds"] = round(time.monotonic() - t0, 2)
            if show:
                print(file=sys.stderr)
    state["embedded"], state["chunks"] = lib.meaning_progress(name)  # what is stored, not what was computed
    state["complete"] = state["embedded"] == state["chunks"] and lib.has_meaning(name)
    if not state["complete"] and state["reason"] is None and lib.has_meaning(name):  # computed, kept nowhere
        state["reason"] = f"{STOPPED}cannot store the meaning index in {lib.root}: it is read-only; nothing was kept"
    return state


def cmd_search(args: argparse.Namespace) -> int:
    if (args.query is None) == (args.queries is None):
        raise CliError("give either a QUERY or --queries FILE.jsonl")
    if args.k < 1:
        raise CliError("-k must be at least 1")
    lib = open_library(args, refresh=not args.no_refresh)
    resolved = resolve_mode(args, lib)
    params = search_params(args, resolved.mode)
    if args.queries is None:
        query = parse(args.query)  # parsed once: the search, why-not and the scrubber read this
        result = lib.search(query, params, explain=args.explain or args.json, resolved=resolved)
        why = _why_not(lib, args, params, resolved, query) if args.why_not else None
        scrub = _scrubber(args, args.query, result.hits)
        if args.json:
            data = result.to_json(with_explain=True)
            if why is not None:
                data["why_not"] = why.to_json()
            print(json.dumps(_scrubbed_json(data, scrub), ensure_ascii=False, indent=2))
        else:
            print_hits(result, args.explain, scrub)
            if why is not None:
                print_why_not(why, scrub)
            _say_redacted(scrub)
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
            try:
                item = json.loads(line)
            except RecursionError:  # ended the whole batch with a traceback
                raise ValueError("nested too deeply to read as a JSON line") from None
            if not isinstance(item, dict) or "query" not in item:
                raise ValueError('expected {"id", "query"}')
            qid, query = item.get("id"), item["query"]
            if not isinstance(query, str):
                raise ValueError(f"query must be a string, not {type(query).__name__}")
            query.encode("utf-8")  # a lone surrogate (\ud800) is not text
            out = lib.search(parse(query), params, explain=args.explain, resolved=resolved)
            data = _scrubbed_json(out.to_json(args.explain), _scrubber(args, query, out.hits))
            print(json.dumps({"id": qid, **data}, ensure_ascii=False))
        except (ValueError, UnicodeEncodeError) as exc:
            failed += 1
            error = str(exc) if not isinstance(exc, UnicodeEncodeError) else "query is not valid Unicode text"
            print(json.dumps({"id": qid, "line": n, "error": error}, ensure_ascii=True))
    if failed:
        raise CliError(f"{failed} of {total} queries failed (see their error lines)")
    return 0


def _scrubber(args: argparse.Namespace, query: str, hits: Sequence[Any] = ()) -> Scrubber | None:
    """What redacts secrets in a search's output (its hits' texts read with their notes'); None with
    --allow-secrets."""
    return None if args.allow_secrets else Scrubber(query, hits)


def _scrubbed_json(data: dict[str, Any], scrub: Scrubber | None) -> dict[str, Any]:
    """A search's JSON as it may leave: secrets redacted (counted in `secrets_redacted`) unless allowed."""
    if scrub is None:
        return {**data, "secrets_redacted": 0}
    clean = scrub.json(data)
    assert isinstance(clean, dict)
    return {**clean, "secrets_redacted": scrub.count}


def _scrubbed_sources(prompt: Any, scrub: Scrubber | None) -> dict[str, Any]:
    """The prompt's excerpts and those left out, by source; secrets in file names and headings redacted."""
    data = {
        "excerpts": [
            {"n": i, "path": e.path, "heading": e.heading, "rank": e.rank, "page": e.page, "cut": e.whole_tokens}
            for i, e in enumerate(prompt.excerpts, start=1)
        ],
        "dropped_for_budget": [e.path for e in prompt.dropped_for_budget],
        "budget_note": prompt.budget_note(),
    }
    return data if scrub is None else scrub.json(data)  # type: ignore[return-value]


def _say_redacted(scrub: Scrubber | None) -> None:
    if scrub is not None and scrub.count:
        print(f"[{scrub.count} secret(s) redacted (--allow-secrets shows them)]", file=sys.stderr)


def _why_not(lib: Any, args: argparse.Namespace, params: Any, resolved: Any, query: Any) -> Any:
    from ..core.whynot import NotIndexed, why_not

    path = args.why_not
    folder = Path(args.folder).resolve()
    if Path(path).is_absolute() or Path(path).exists():  # a path as typed in a shell: make it relative
        try:
            path = Path(path).resolve().relative_to(folder).as_posix()
        except ValueError:
            raise CliError(f"--why-not {args.why_not}: not inside {folder}") from None
    try:
        return why_not(lib, query, path, params, resolved.embedder, resolved.partial)
    except NotIndexed as exc:
        raise CliError(str(exc)) from exc


def cmd_prompt(args: argparse.Namespace) -> int:
    from ..core.prompt import prompt_from_search

    if args.k < 1:
        raise CliError("-k must be at least 1")
    if args.budget_tokens is not None and args.budget_tokens < 1:
        raise CliError("--budget-tokens must be at least 1")
    lib = open_library(args, refresh=not args.no_refresh)
    resolved = resolve_mode(args, lib)
    prompt, result = prompt_from_search(
        lib,
        args.question,
        search_params(args, resolved.mode),
        resolved,
        k=args.k,
        budget_tokens=args.budget_tokens,
        order=args.order,
        fmt=args.format,
    )
    text = prompt.for_copy(args.allow_secrets)
    if args.json:
        print(
            json.dumps(
                {
                    "prompt": text,
                    "mode": result.mode,
                    "mode_reason": resolved.reason,
                    "format": prompt.format,
                    "secrets": prompt.secrets_json(),
                    "secrets_redacted": bool(prompt.secrets) and not args.allow_secrets,
                    "tokens": prompt.tokens,
                    "estimator": prompt.estimator,
                    **_scrubbed_sources(prompt, _scrubber(args, "")),
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
        where = prompt.secret_places()
        verb = "left in (--allow-secrets)" if args.allow_secrets else "redacted (--allow-secrets keeps them)"
        note += f"; {len(prompt.secrets)} secret(s) {verb}: {where}"
    if budget := prompt.budget_note():
        note += f"; {budget.replace(' · ', '; ')} ({args.budget_tokens} tokens)"
    for n, findings in prompt.flagged:
        note += f"; excerpt [{n}] looks like instructions: {findings[0].reason}"
    print(note + "]", file=sys.stderr)
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from ..core.analyzers import Analyzer

    tokens = Analyzer(analyzer_config(args)).tokens(args.text)
    if args.json:
        print(
            json.dumps(
                {
                    "analyzer": analyzer_config(args).key,
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
    from ..core import evaluate as ev
    from ..core.analyzers import ANALYZERS

    notes_folder(args.folder)  # before the questions, which would be blamed for it
    target = Path(args.questions)
    params = search_params(args)  # BM25 until the mode is resolved on the index
    rows: list[dict[str, Any]] = []
    if target.is_dir():
        try:
            queries, qrels = ev.load_beir(target, args.split)
        except (OSError, ev.QuestionsError) as exc:
            raise CliError(f"cannot read BEIR folder {target}: {exc}") from exc
        lib = open_library(args, refresh=not args.no_refresh)
        resolved = resolve_mode(args, lib, partial=False)
        names = ANALYZERS if args.sweep == "analyzers" else [params.analyzer.name]
        for name in names:
            each = replace(params, analyzer=params.analyzer.with_name(name), mode=resolved.mode, group=None)
            m = ev.evaluate_beir(lib, queries, qrels, each, resolved.embedder)
            rows.append({"analyzer": each.analyzer.key, "mode": resolved.mode, "k1": args.k1, "b": args.b, **m})
        if not args.json:
            print(f"mode: {resolved.reason}")
        return print_rows(rows, args.json, f"BEIR {target.name} ({args.split}, {len(queries)} queries)")
    try:
        questions = ev.load_questions(target)
    except ev.QuestionsError as exc:
        raise CliError(str(exc)) from exc
    lib = open_library(args, refresh=not args.no_refresh)
    if args.sweep == "chunks":
        rows = ev.chunk_sweep(lib, questions, params, args.budget_words)
        return print_rows(rows, args.json, f"{args.budget_words}-word context budget")
    if args.sweep == "params":
        return print_rows(ev.param_grid(lib, questions, params), args.json, "MRR over k1 x b")
    resolved = resolve_mode(args, lib, partial=False)
    if args.sweep == "analyzers":
        rows = ev.compare_analyzers(lib, questions, replace(params, mode=resolved.mode, group=None), resolved.embedder)
        return print_rows(rows, args.json, f"{len(questions)} questions")
    report = ev.evaluate(lib, questions, replace(params, mode=resolved.mode), resolved.embedder)
    if args.json:
        print(json.dumps({**report.to_json(), "mode_reason": resolved.reason}, ensure_ascii=False, indent=2))
        return 0
    rows = report.table(mode=report.config["mode"], analyzer=report.config["analyzer"])
    problems = [p for p in report.results if p.error]
    for p in problems:
        print(f"warning: question {p.question.id}: {p.error}", file=sys.stderr)
    return print_rows(rows, args.json, f"{len(questions)} questions")


def cmd_mcp(args: argparse.Namespace) -> int:
    from ..core.assistant import Refused
    from .mcp_server import serve

    folders = [str(notes_folder(f)) for f in args.folders] or _last_folder()
    if not folders:
        raise CliError("give a notes folder to serve (the window has not opened one yet)")
    try:
        return serve(folders, args.index_dir, args.embedder)
    except Refused as exc:
        raise CliError(str(exc)) from exc


def _last_folder() -> list[str]:
    """The folder the window opened last (its settings file), when there is one."""
    try:
        from ..app.settings import AppSettings
    except ImportError:  # the window's binding is missing: no settings to read
        return []
    last = AppSettings().last_folder
    return [last] if last and Path(last).is_dir() else []
