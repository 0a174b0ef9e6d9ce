"""The secret detector judged like a classifier: recall on a labelled corpus of credentials as people
write them in notes (tests/data/secrets/positives.txt), and how many ordinary chunks of ../shared/data
it flags (tests/benchmarks/secret_detectors.py prints the same figures and compares detect-secrets)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ragdesk.core.secrets import find_secrets, redact

from ..data.labelled import SCANNERS, SECRETS, load, regenerated

RECORDS = load(SECRETS)
RECALL = 0.99  # issue #36: recall >= 0.99 on the positives
FLAG_RATE = 0.0003  # ... with at most 0.03% of ../shared/data's chunks flagged (issue 59: tutorials'
# password123 and beruska92 count as the passwords people choose; placeholders must be unmistakable)


def test_the_corpus_is_what_its_generator_writes(tmp_path: Path) -> None:
    assert regenerated(SECRETS, tmp_path / "positives.txt") == SECRETS.read_text(encoding="utf-8")


def test_the_corpus_covers_every_class_shape_and_language() -> None:
    assert len(RECORDS) >= 300
    classes = Counter(r.cls for r in RECORDS)
    assert {
        "name with a prefix or suffix", "value with / + $ % ( ) ! &", "URL with a password", "token glued to text",
        "key format", "vendor token", "private key", "config file", "prose, list or table", "front matter or heading",
        "words joined by a mark", "recovery secret",
    } <= set(classes)  # fmt: skip
    assert {"en", "fr", "cs", "uk", "it"} <= {r.lang for r in RECORDS}
    assert {"prose", "code", "table", "list", "heading", "env", "yaml", "json"} <= {r.shape for r in RECORDS}
    assert all(r.spans for r in RECORDS)


def test_recall_on_the_labelled_credentials() -> None:
    """A credential counts as caught when every character of it is redacted."""
    missed = [r for r in RECORDS if not r.covered_by([(s.start, s.end) for s in find_secrets(r.text)])]
    assert 1 - len(missed) / len(RECORDS) >= RECALL, "\n".join(f"[{r.cls}] {r.text[:120]!r}" for r in missed)


# gitleaks' own true positives (tests/data/secrets/scanners/gitleaks.txt): written outside this project, their
# held-out third never looked at while writing rules. The published figures (README, docs/reliability.md):
SCANNER_HELD_OUT = 63 / 84
SCANNER_DEV = 180 / 221


def test_recall_on_gitleaks_own_true_positives() -> None:
    """As tests/benchmarks/scanner_recall.py counts: a record is found when something in it is redacted."""
    parts: dict[str, list[int]] = {"dev": [0, 0], "held-out": [0, 0]}
    for r in load(SCANNERS):
        parts[r.lang][0] += bool(find_secrets(r.text))
        parts[r.lang][1] += 1
    (dev, dev_n), (held, held_n) = parts["dev"], parts["held-out"]
    assert (dev_n, held_n) == (221, 84)
    assert held / held_n >= SCANNER_HELD_OUT and dev / dev_n >= SCANNER_DEV


# detect-secrets' own keyword test cases (tests/data/secrets/scanners/detect_secrets.txt, Apache-2.0): every
# character of the secret it expects must go. Before the rules written with its dev part: dev 2/46, held-out 0/20.
DETECT_SECRETS = SCANNERS.with_name("detect_secrets.txt")


def test_recall_on_detect_secrets_own_keyword_cases() -> None:
    parts: dict[str, list[int]] = {"dev": [0, 0], "held-out": [0, 0]}
    for r in load(DETECT_SECRETS):
        parts[r.shape][0] += r.covered_by([(s.start, s.end) for s in find_secrets(r.text)])
        parts[r.shape][1] += 1
    (dev, dev_n), (held, held_n) = parts["dev"], parts["held-out"]
    assert (dev_n, held_n) == (46, 20) and held >= 19 and dev >= 45, parts


def test_no_marked_credential_survives_redaction() -> None:
    for r in RECORDS:
        out = redact(r.text)
        for start, end in r.spans:
            secret = r.text[start:end]
            assert all(part not in out for part in secret.split() if len(part) >= 6), (r.cls, r.text[:80])


def test_flag_rate_on_every_chunk_of_the_shared_corpora(shared_chunks: list[tuple[str, str, str]]) -> None:
    assert len(shared_chunks) > 150_000
    flagged = [path for path, _, text in shared_chunks if find_secrets(text)]
    assert len(flagged) / len(shared_chunks) <= FLAG_RATE, flagged


@pytest.mark.parametrize(
    "text",
    [
        "password = input('Password: ')",
        "token = soubor.read().strip()",
        "$password = Read-Host -AsSecureString",
        "x-ratelimit-limit-tokens: 5000000",
        "The password you entered is incorrect.",
        "ssh_key: ~/.ssh/id_ed25519",
        "token_url: https://oauth2.example.com/token",
        "PublicKeyToken=31bf3856ad364e35",
        "password: {{ vault_db_password }}",
        "if [[ $(pwd) == *\"directory\"* ]]",
        "Il faut réfléchir à ce qui se passe quand nos balises sont **imbriquées**.",
        "token: github-actions-deploy-token",  # joined words name a token or secret, they are not one
        "secret: tls-cert-for-ingress",
        "password: your-password-goes-here",
        "Password: enter your email address here",
    ],
)
def test_code_placeholders_and_prose_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == []
