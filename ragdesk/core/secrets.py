"""Secrets in excerpts: found before a prompt leaves the machine, redacted unless allowed.

Notes hold API keys, passwords and private keys, and the prompt goes to a cloud chat tool. The
patterns are ragdesk's own: Yelp's detect-secrets was the candidate library, but its value lies in
entropy detectors, which flag every hash, UUID and commit id in technical notes, and its keyword
plugin is what the assignments below do; a false alarm on every third note would teach people to
click it away. Each pattern is a known token format (with its fixed prefix) or a credential in an
unmistakable place (a private key block, user:password@ in a URL, an assignment to a password or
secret whose value is not a placeholder). Findings never carry the secret itself out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REDACTED = "[REDACTED {kind}]"
REDACTION_MARK = re.compile(r"\[REDACTED [^\]]+\]")


@dataclass(frozen=True)
class Secret:
    """One secret in a text: what kind, where (character span, 1-based line), never its value."""

    kind: str
    start: int
    end: int
    line: int


_PLACEHOLDER = re.compile(
    r"^([*^].*|x+|\.+|<[^>]*>|\{\{?[^}]*\}?\}|\$\{?[\w.]+\}?|%\(?\w+\)?s?|\[[^\]]*\]|"
    r"(your|my|the|some|example|sample|dummy|changeme|change_me|placeholder|redacted|secret|password|"
    r"passw0rd|pass|token|xxx+|none|null|true|false|todo|tbd|env|os\.environ.*|process\.env.*|getenv.*)"
    r"[\w-]*)$",
    re.IGNORECASE,
)

# (kind, pattern, group holding the secret (0: the whole match))
_PATTERNS: list[tuple[str, str, int]] = [
    ("private key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*-----|\Z)", 0),
    ("AWS access key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA)[0-9A-Z]{16}\b", 0),
    ("GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b", 0),
    ("GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}\b", 0),
    ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b", 0),
    ("Slack webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}", 0),
    ("Stripe key", r"\b(?:sk|rk)_live_[A-Za-z0-9]{16,}\b", 0),
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}\b", 0),
    ("OpenAI key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}\b", 0),
    ("Anthropic key", r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{80,}\b", 0),
    ("API key", r"\bsk-(?:proj-)?[A-Za-z0-9]{32,}\b", 0),
    ("JSON web token", r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b", 0),
    ("bearer token", r"\b[Aa]uthorization:\s*(?:Bearer|Basic|Token)\s+([A-Za-z0-9._~+/=-]{16,})", 1),
    ("connection string with a password", r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]{1,64}:([^\s:@/]{3,128})@[^\s/]+", 1),
    (
        "password or secret",
        r"(?i)\b(?:password|passwd|pwd|secret|client_secret|secret_key|api_?key|access_?token|auth_?token|"
        r"private_?key|aws_secret_access_key|heslo|пароль|mot_de_passe)\b[\"']?[ \t]*[:=][ \t]*[\"']?([^\s\"'`,;]{6,})",
        1,
    ),
]
_COMPILED = [(kind, re.compile(pattern), group) for kind, pattern, group in _PATTERNS]


_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")  # RANDOM_PASSWORD, API_KEY: a name standing in for one
_CODE = re.compile(r"[(){}<>\[\]$%/\\`]")  # a call, a template, a path, a variable: code, not a password


def _looks_like_a_password(value: str) -> bool:
    """An assigned value that reads as a credential: not a placeholder, not code, and not a plain word
    (a password has a digit, a symbol or mixed case somewhere; "privateKey" is an identifier)."""
    value = value.strip("\"'")
    if _PLACEHOLDER.match(value) or _CODE.search(value):
        return False
    if value.isalpha() and (value.islower() or value.isupper() or value[0].islower()):
        return False
    return not value.replace("_", "").replace("-", "").replace(".", "").isalpha()


def find_secrets(text: str) -> list[Secret]:
    """Secrets in `text`, in order; overlapping findings keep the first pattern's (most specific)."""
    found: list[Secret] = []
    for kind, pattern, group in _COMPILED:
        for m in pattern.finditer(text):
            start, end = m.span(group)
            value = m.group(group)
            if kind == "password or secret" and not _looks_like_a_password(value):
                continue
            if kind.startswith("connection string") and _CODE.search(value):  # e.g. user:[password]@host
                continue
            if group and (_PLACEHOLDER.match(value.strip("\"'")) or _ENV_NAME.match(value.strip("\"'"))):
                continue
            if any(s.start < end and start < s.end for s in found):
                continue
            found.append(Secret(kind, start, end, text.count("\n", 0, start) + 1))
    return sorted(found, key=lambda s: s.start)


def redact(text: str, secrets: list[Secret] | None = None) -> str:
    """`text` with each secret replaced by [REDACTED kind]."""
    secrets = find_secrets(text) if secrets is None else secrets
    out: list[str] = []
    at = 0
    for s in sorted(secrets, key=lambda s: s.start):
        out.append(text[at : s.start])
        out.append(REDACTED.format(kind=s.kind))
        at = s.end
    out.append(text[at:])
    return "".join(out)
