"""`python -m ragdesk` is the same as the `ragdesk` command."""

from .cli import main

raise SystemExit(main())
