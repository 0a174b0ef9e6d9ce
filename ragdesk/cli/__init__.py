"""Command line: `ragdesk [FOLDER]` opens the window; `ragdesk index|search|prompt|analyze|eval` are headless."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .commands import cmd_analyze, cmd_eval, cmd_index, cmd_mcp, cmd_prompt, cmd_search
from .library import CliError, check_bm25
from .output import VisibleControls
from .parser import parse

SUBCOMMANDS = ("index", "search", "prompt", "analyze", "eval", "mcp")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    first = next((a for a in argv if not a.startswith("-")), None)
    if first not in SUBCOMMANDS and not any(a in ("-h", "--help", "--version") for a in argv):
        return _run_gui(argv)
    from ..core.heap import share_one_heap

    share_one_heap()  # before any thread: `index` and `search` embed texts side by side (core/e5_onnx.py)
    args = parse(argv)
    handlers = {
        "index": cmd_index,
        "search": cmd_search,
        "prompt": cmd_prompt,
        "analyze": cmd_analyze,
        "eval": cmd_eval,
        "mcp": cmd_mcp,
    }
    if args.command is None:
        return _run_gui(argv)
    from ..core.store import IndexDamaged, IndexFolderRefused
    from ..core.walk import IgnoreFileUnreadable

    out, err = sys.stdout, sys.stderr
    if args.command != "mcp":  # its stdout is the protocol's
        sys.stdout, sys.stderr = VisibleControls(out), VisibleControls(err, keep="\t\n\r")  # \r: progress lines
    try:
        if hasattr(args, "k1"):
            check_bm25(args.k1, args.b)
        return handlers[args.command](args)
    except (CliError, IgnoreFileUnreadable, IndexFolderRefused) as exc:
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
    finally:
        sys.stdout, sys.stderr = out, err


def _run_gui(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="ragdesk", description="Open the ragdesk window.")
    parser.add_argument("folder", nargs="?", help="notes folder to open (default: the last one, or the samples)")
    parser.add_argument("--index-dir", help="where the index lives")
    parser.add_argument("--smoke-test", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.index_dir is not None and not args.index_dir.strip():
        print("ragdesk: error: --index-dir is empty text (an unset variable?): give a folder or leave it out",
              file=sys.stderr)
        return 2
    missing = None
    if args.folder and not Path(args.folder).is_dir():  # said here and in the window (a launcher has no terminal)
        print(f"ragdesk: error: notes folder not found: {args.folder}", file=sys.stderr)
        missing, args.folder = args.folder, None
    try:
        from ..app.main import binding_problem, run, smoke_test
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
