"""Write detect_secrets.txt: detect-secrets' own keyword test cases (tests/plugins/keyword_test.py), the
lines it expects a secret in, with that secret marked: positives written outside this project's rules,
in the code forms detect-secrets tests (configuration, Go, C, C++, Objective-C, quoted values,
comparisons). Record heads are `%% test list | dev or held-out | keyword`; every third record of each
list is held out of rule development (issue 59).

    python tests/data/secrets/scanners/make_detect_secrets.py DETECT_SECRETS_CHECKOUT [OUT]

Only the module's constant lists are read (executed without detect-secrets' imports); duplicate lines
and the long-line case are left out. detect-secrets is Apache-2.0 licensed (LICENSE-detect-secrets
beside this file); taken from commit 5e141933554a0b74e7341841f318be21e895339c.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from labelled import held_out_thirds, write  # noqa: E402


def cases(checkout: Path) -> list[tuple[str, str, str]]:
    """(test list, "keyword", marked line) of every positive, in source order, each line once."""
    src = (checkout / "tests" / "plugins" / "keyword_test.py").read_text(encoding="utf-8")
    consts = src[: src.index("\n@pytest")]
    consts = "\n".join(line for line in consts.split("\n") if not line.startswith("from detect_secrets"))
    namespace: dict[str, object] = {}
    exec(compile(consts, "keyword_test.py", "exec"), namespace)  # noqa: S102 - the checkout's own constants
    out, seen = [], set()
    for name, value in namespace.items():
        if not name.endswith("_TEST_CASES") or not isinstance(value, list):
            continue
        for line, secret in value:
            if not secret or line in seen or len(line) > 500 or secret not in line:
                continue
            seen.add(line)
            at = line.index(secret)
            marked = f"{line[:at]}⟦{secret}⟧{line[at + len(secret) :]}"
            out.append((name.removesuffix("_TEST_CASES").lower(), "keyword", marked))
    return out


if __name__ == "__main__":
    checkout = Path(sys.argv[1])
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).with_name("detect_secrets.txt")
    write(held_out_thirds(cases(checkout)), target, "the secret detect-secrets expects", "make_detect_secrets.py")
