"""`python -m ragdesk` is the same as the `ragdesk` command."""

from .cli import main

if __name__ == "__main__":  # guarded: spawned worker processes import the main module
    raise SystemExit(main())
