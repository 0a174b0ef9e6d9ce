"""Entry point of the frozen (PyInstaller) build: the same `ragdesk` command."""

from multiprocessing import freeze_support

if __name__ == "__main__":
    freeze_support()  # worker processes of a frozen app re-enter here
    from ragdesk.cli import main

    raise SystemExit(main())
