"""Secrets in excerpts: found, listed without their value, redacted unless allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragdesk.cli import main
from ragdesk.core.excerpts import Excerpt
from ragdesk.core.prompt import build_prompt
from ragdesk.core.secrets import find_secrets, redact

from ..conftest import write_notes

KEY_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"
)


# Formats the gitleaks measurement named (issue 59): a random value of each vendor's shape, bare in prose.
NEW_FORMATS = {
    "Sourcegraph token": (
        "sgp_72e04900fcf95a53_3b1a9216228923a4c02e97ac941ceb8b44f67f7d"
    ),
    "Perplexity key": (
        "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"
    ),
    "Facebook token": (
        "EAAtEVUf6Fk4ooDMh1g0VuAT7xaoh9wcoNcv1SqAvAaUKTW10TobpabsiqNZloj3gXePkNRIM9J9tdVWpkTEOUUgL9"
        "jtRQFVaDFjobnQBl6TlwAGXHEtk24VkHK"
    ),
    "1Password secret key": (
        "A3-8OAQA5-SNWGOYKZB9Z-PY4KB-QR3RP-EQ2HT"
    ),
    "AWS Bedrock key": (
        "ABSKpySEWs7gQvFk+5dF9o5Y8j02Re91FQ9yGkdgbwraF1N2qeVuVu2/5b8TqtLNY37ilYH2dcvGwwMzDV4dVCGAZN"
        "t2/ozcjPLJBpQzg+yVKgnCaHHCK38Nj9Yw9QPvlrvTG07X="
    ),
    "Fly.io token": (
        "FlyV1 fm2_+nnbZUuVoPCN8fs1ZGfrbbnsYWrzsVjHnIFyaj/l+Jz0Eg+Z3e3sPLII1v0q/+Z57TC23vnknsxVsmAz"
        "wyRCq3n1sBI7sGVp/6Q7X00jQ9w0NSE5vCwnY+Cz6aGmX53KMOhAH43CexoI"
    ),
    "Cloudflare key": (
        "v1.0-84e9b2f4203adc77a1aaf782-60d9ee7badcfba3349c11a55892bce50825b189c510b70dfca8fc7b5930d"
        "6a71776b90a048da94eda6d31d07865bdc75b18b15094aa593e75d9b20513ed1007f35f1c826735e743804"
    ),
}


@pytest.mark.parametrize("kind", sorted(NEW_FORMATS))
def test_formats_found_bare_in_prose(kind: str) -> None:
    value = NEW_FORMATS[kind]
    text = f"the one we use is {value} for now"
    (found,) = find_secrets(text)
    assert found.kind == kind and text[found.start : found.end] == value


@pytest.mark.parametrize(
    ("text", "kind", "secret"),
    [
        (f"my key:\n{KEY_BLOCK}\nend", "private key", KEY_BLOCK),
        ("aws AKIAIOSFODNN7EXAMPLE here", "AWS access key", "AKIAIOSFODNN7EXAMPLE"),
        ("token ghp_" + "a1" * 18 + " ok", "GitHub token", "ghp_" + "a1" * 18),
        ("glpat-abcdefghij0123456789 ok", "GitLab token", "glpat-abcdefghij0123456789"),
        ("xoxb-1234567890-abcdefghij ok", "Slack token", "xoxb-1234567890-abcdefghij"),
        ("Authorization: Bearer abcdef0123456789abcdef", "bearer token", "abcdef0123456789abcdef"),
        (
            "DATABASE_URL=postgres://admin:hunter2pass@db.example.com/app",
            "connection string with a password",
            "hunter2pass",
        ),
        ("password: S3cr3t!value", "password or secret", "S3cr3t!value"),
        ('"client_secret": "9f8e7d6c5b4a3f2e"', "password or secret", "9f8e7d6c5b4a3f2e"),
        ("heslo = tajneHeslo123", "password or secret", "tajneHeslo123"),
        ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "Stripe key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
        # separators of other languages: Go's :=, make's ?= and ::= (issue 59; gitleaks' cases use them)
        ('DEPLOY_TOKEN ?= "tZ7wQ1mK9xL2pR8v"', "password or secret", "tZ7wQ1mK9xL2pR8v"),
        ('dbPassword := "Xq7!bR2mP9"', "password or secret", "Xq7!bR2mP9"),
        ("API_SECRET ::= 9vLq2Wm7Xz4Rt8Kp", "password or secret", "9vLq2Wm7Xz4Rt8Kp"),
        # curl's -u: the password quoted, over a continued line, or an API key as the user name
        ("curl --user ops:'pK8#wq3Lm2vZ' https://x", "password on a command line", "pK8#wq3Lm2vZ"),
        ("curl https://x.io/v1 \\\n  -u alice:Tr9qLm2xVb4 -d x", "password on a command line", "Tr9qLm2xVb4"),
        ('curl -u "rk9fQ2mZ7xLp4W8vT1:" https://api.example.com', "password on a command line", "rk9fQ2mZ7xLp4W8vT1"),
        # a value a person would choose is no template, even when it starts with a tutorial's word
        ("DB_PASSWORD=admin-2024!", "password or secret", "admin-2024!"),
        ("password: welcome_2025", "password or secret", "welcome_2025"),
        ('<add key="ClearTextPassword" value="CleartextPassword1" />', "password or secret", "CleartextPassword1"),
    ],
)
def test_secret_kinds_found(text: str, kind: str, secret: str) -> None:
    (found,) = find_secrets(text)
    assert found.kind == kind and text[found.start : found.end] == secret
    assert secret not in redact(text) and f"[REDACTED {kind}]" in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "The password field must be at least 12 characters long.",
        'password = "<your password>"',
        "password: changeme",
        "api_key=${API_KEY}",
        "secret = os.environ['SECRET_KEY']",
        "commit 3f2a9c1d4e5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f fixed it",
        "Set the token in Settings › Tokens; the bearer token is never logged.",
        "https://user@example.com/path and ssh://git@github.com:repo.git",
        "CFLAGS += -O2 -Wall\nVERSION ?= 1.2.3\nPASSWORD_LENGTH ?= 16\nSECRET_NAME := my-app-secret",
        'curl -u "$USER:$PASS" https://x; curl -u alice: https://x; curl -u username:password https://x',
    ],
)
def test_ordinary_text_is_not_a_secret(text: str) -> None:
    assert find_secrets(text) == []


def test_prompt_lists_secrets_and_redacts_what_is_copied() -> None:
    ex = [
        Excerpt("deploy.md", "Deploy", 10, 14, "Run it.\naws key AKIAIOSFODNN7EXAMPLE\npassword: hunter2hunter2"),
        Excerpt("plain.md", "", 1, 1, "nothing to see"),
    ]
    p = build_prompt("how?", ex)
    assert [(n, s.kind, s.line) for n, s in p.secrets] == [(1, "AWS access key", 2), (1, "password or secret", 3)]
    assert p.secrets_json() == [
        {"n": 1, "kind": "AWS access key", "line": 2, "in": "text"},
        {"n": 1, "kind": "password or secret", "line": 3, "in": "text"},
    ]
    assert "AKIAIOSFODNN7EXAMPLE" in p.text and "AKIAIOSFODNN7EXAMPLE" not in p.for_copy()
    assert "> aws key [REDACTED AWS access key]\n> password: [REDACTED password or secret]" in p.for_copy()
    assert p.for_copy(allow_secrets=True) == p.text
    assert build_prompt("q", ex[1:]).for_copy() == build_prompt("q", ex[1:]).text


def test_xml_format() -> None:
    ex = [Excerpt("a & b.md", 'He said "hi"', 3, 5, "if x < 3 && y > 2:\n    pass", rank=1)]
    p = build_prompt("why?", ex, fmt="xml")
    assert (
        '<excerpts>\n\n<excerpt n="1" source="a &amp; b.md › He said &quot;hi&quot;" lines="3-5">\n'
        "if x &lt; 3 &amp;&amp; y &gt; 2:\n    pass\n</excerpt>\n\n</excerpts>\n\nQuestion: why?\n"
    ) in p.text
    assert p.format == "xml" and p.tokens > 0
    with pytest.raises(ValueError, match="unknown prompt format"):
        build_prompt("q", ex, fmt="html")


def test_cli_prompt_redacts_unless_allowed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_notes(tmp_path / "notes", {"deploy.md": "# Deploy\n\nTo deploy:\n\naws key AKIAIOSFODNN7EXAMPLE\n"})
    args = ["prompt", str(folder), "how to deploy", "--index-dir", str(tmp_path / "idx")]
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["secrets"] == [{"n": 1, "kind": "AWS access key", "line": 5, "in": "text"}]
    assert data["secrets_redacted"] is True
    assert "AKIAIOSFODNN7EXAMPLE" not in data["prompt"] and "[REDACTED AWS access key]" in data["prompt"]
    assert main(args) == 0
    out = capsys.readouterr()
    assert "AKIAIOSFODNN7EXAMPLE" not in out.out
    assert "1 secret(s) redacted (--allow-secrets keeps them): [1] line 5: AWS access key" in out.err
    assert main([*args, "--allow-secrets", "--format", "xml"]) == 0
    out = capsys.readouterr().out
    assert "AKIAIOSFODNN7EXAMPLE" in out and '<excerpt n="1" source="deploy.md › Deploy" lines="1-5">' in out


@pytest.mark.parametrize(
    "text",
    [
        "DATABASE_URL=postgres://app:RANDOM_PASSWORD@db/app",  # a name standing in for the password
        "tmutil setdestination smb://user:[password]@host/share",
        "hydra -l admin -P ^PASS^ ssh://host",
        "Password: *enter your password*",
        "password = session.get_input('Password: ')",
        "secret_key = privateKey",
    ],
)
def test_placeholders_and_code_are_not_secrets(text: str) -> None:
    """False alarms seen over ../shared/data (tests/benchmarks/flag_rates.py), kept quiet."""
    assert find_secrets(text) == []
