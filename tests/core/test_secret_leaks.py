"""No planted credential leaves through any output without being allowed: the prompt (Markdown, XML,
--json), search --json, search's text and --explain, a batch of queries; in an excerpt's text, its
file name, its heading trail and the question itself."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest

from ragdesk.cli import main
from ragdesk.core.excerpts import Excerpt
from ragdesk.core.prompt import build_prompt

from ..conftest import write_notes
from ..data.labelled import SECRETS, Record, load

RECORDS = load(SECRETS)
TOKEN = "ghp_" + "Zq8" * 12  # a GitHub token as a file name
ROUTER = "Xy7!kq2Lm#rT"  # a password in a heading trail
QUESTION_SECRET = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
# file names whose value ends in the note's extension, and one whose line break is escaped when shown
NAMED = "Tr0ub4dor&3x"
ESCAPED = "Xk29mq7Lpw"
NAMES = [f"wifi/password={NAMED}.md", f"a\npassword: {ESCAPED}.md"]


def pieces(record: Record) -> list[str]:
    """What of each marked credential must not be seen: every run of 8+ characters without spaces."""
    out = []
    for start, end in record.spans:
        out += [p for p in record.text[start:end].split() if len(p) >= 8]
    return out


def leaked(text: str, secrets: list[str]) -> list[str]:
    return [s for s in secrets if s in text]


def strings(data: object) -> str:
    """Every string in a JSON document, one a line (escapes undone)."""
    if isinstance(data, str):
        return data + "\n"
    if isinstance(data, list):
        return "".join(strings(v) for v in data)
    if isinstance(data, dict):
        return "".join(strings(v) for v in data.values())
    return ""


ALL_SECRETS = [p for r in RECORDS for p in pieces(r)] + [TOKEN, ROUTER, QUESTION_SECRET, NAMED, ESCAPED]


@pytest.mark.parametrize("fmt", ["markdown", "xml"])
def test_every_labelled_credential_is_redacted_in_the_prompt(fmt: str) -> None:
    excerpts = [Excerpt(f"notes/{i}.md", "Setup", 1, 9, r.text, rank=i + 1) for i, r in enumerate(RECORDS)]
    excerpts.append(Excerpt(f"keys/{TOKEN}.md", f"Home › Router password: {ROUTER}", 1, 2, "see the title", 999))
    excerpts += [Excerpt(name, "", 1, 2, "see the file's name", 1000 + i) for i, name in enumerate(NAMES)]
    p = build_prompt(f"is {QUESTION_SECRET} still valid?", excerpts, fmt=fmt)
    assert len(p.excerpts) == len(RECORDS) + 3
    assert leaked(html.unescape(p.for_copy()), ALL_SECRETS) == []
    assert sorted(set(leaked(html.unescape(p.for_copy(allow_secrets=True)), ALL_SECRETS))) == sorted(set(ALL_SECRETS))
    places = {(n, s.line == 0) for n, s in p.secrets}
    assert (0, False) in places and (len(RECORDS) + 1, True) in places  # the question, the source line
    assert "question: Stripe key" in p.secret_places() and f"[{len(RECORDS) + 1}] source: GitHub token" in (
        p.secret_places()
    )


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, list[str]]:
    """A folder with one note for each record (every class, shape and language), each about deploying."""
    notes = {f"n{i:03}.md": f"# Deploy {i}\n\nHow to deploy it:\n\n{r.text}\n" for i, r in enumerate(RECORDS)}
    notes[f"keys/{TOKEN}.md"] = "# Deploy keys\n\nThe deploy key is in this file's name.\n"
    notes["router.md"] = f"# Router password: {ROUTER}\n\nDeploy the router settings after a reset.\n"
    for name in NAMES:
        notes[name] = "# Deploy the wifi\n\nDeploy the access point; its password is in this file's name.\n"
    return write_notes(tmp_path / "notes", notes), ALL_SECRETS


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    assert main(args) == 0
    out = capsys.readouterr()
    return out.out, out.err


def test_no_output_of_the_command_line_carries_a_credential(planted, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder, secrets = planted
    common = ["--index-dir", str(tmp_path / "idx")]
    question = f"how do I deploy with {QUESTION_SECRET}"
    out, _ = run(["search", str(folder), question, "-k", "400", "--json", *common], capsys)
    data = json.loads(out)
    assert len(data["hits"]) == len(RECORDS) + 4 and data["secrets_redacted"] > len(RECORDS)
    assert leaked(strings(data), secrets) == []
    out, err = run(["search", str(folder), question, "-k", "400", "--explain", *common], capsys)
    assert leaked(out + err, secrets) == [] and "secret(s) redacted (--allow-secrets shows them)" in err
    for extra in ([], ["--format", "xml"], ["--json"]):
        out, err = run(["prompt", str(folder), question, "-k", "400", *extra, *common], capsys)
        assert leaked(out + err, secrets) == [], extra
    batch = tmp_path / "q.jsonl"
    batch.write_text(json.dumps({"id": 1, "query": question}) + "\n", encoding="utf-8")
    out, _ = run(["search", str(folder), "--queries", str(batch), "-k", "400", *common], capsys)
    assert leaked(strings(json.loads(out)), secrets) == []
    # Allowed, they are there: the checks above could fail.
    out, _ = run(["search", str(folder), question, "-k", "400", "--json", "--allow-secrets", *common], capsys)
    assert set(leaked(strings(json.loads(out)), secrets)) == set(secrets)


def test_a_table_s_rows_past_its_first_chunk_stay_redacted(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Redaction is decided on the note: rows of a password table or a password manager's CSV export in
    a later chunk than their header, and a value alone under a heading that names it (issue 59)."""
    table = "".join(f"| host{i} | admin{i} | Tbl-{i:02}-Heslo |\n" for i in range(40))
    rows = "".join(f'Site {i},https://s{i}.org,user{i},Csv-{i:02}-Pass,"the site of team {i}"\n' for i in range(40))
    folder = write_notes(
        tmp_path / "notes",
        {
            "hosts.md": f"# Hosts of the lab\n\n| Host | Login | PW |\n|---|---|---|\n{table}",
            "export.md": f"# Vault export\n\n```csv\nname,url,username,password,notes\n{rows}```\n",
            "wifi.md": "# Home\n\nThe router is in the hall.\n\n## Wi-Fi password\n\n```\nChodba-Router-7\n```\n",
        },
    )
    values = [f"Tbl-{i:02}-Heslo" for i in range(40)] + [f"Csv-{i:02}-Pass" for i in range(40)] + ["Chodba-Router-7"]
    common = ["--index-dir", str(tmp_path / "idx"), "--mode", "bm25", "-k", "100"]
    out, _ = run(["search", str(folder), "host admin site user wifi router", "--json", *common], capsys)
    data = json.loads(out)
    later = {h["path"] for h in data["hits"] if h["start_line"] > 12}
    assert {"hosts.md", "export.md"} <= later  # chunks far below their table's header were searched
    assert leaked(strings(data), values) == []
    for extra in ([], ["--format", "xml"], ["--json"]):
        out, _ = run(["prompt", str(folder), "host admin site user wifi router", *extra, *common], capsys)
        assert leaked(out, values) == [], extra
    question = "host admin site user wifi router"
    out, _ = run(["search", str(folder), question, "--json", "--allow-secrets", *common], capsys)
    assert len(leaked(strings(json.loads(out)), values)) > 20  # allowed, they are there: the check could fail


def test_a_hit_reads_2_kb_before_it_unless_its_table_runs_further_up() -> None:
    """context_of: 20 KB read only for a passage inside a table or CSV whose rows fill the first 2 KB
    (every search hit used to read 20 KB; 5 ms of a til-notes search)."""
    from ragdesk.core.secret_layout import FAR_CHARS, NEAR_CHARS, context_of

    csv = "name,login_password,url\n" + "".join(f"site{i},Xq{i:04d}pw!z,https://s{i}.example\n" for i in range(300))
    table = "| site | password |\n|---|---|\n" + "".join(f"| site{i} | Zp{i:04d}!kq |\n" for i in range(300))
    prose = "A line of prose about the weather and nothing else.\n" * 100
    for note, header in ((csv, "name,login_password,url"), (table, "| site | password |"), (prose, None)):
        cut = note.index("site250") if header else len(note) - 60
        asked: list[int] = []

        def read(n: int, note: str = note, cut: int = cut, asked: list[int] = asked) -> str:
            asked.append(n)
            return note[max(0, cut - n) : cut]

        context = context_of(read, note[cut:])
        assert asked == ([NEAR_CHARS, FAR_CHARS] if header else [NEAR_CHARS])
        assert context.startswith(header) if header else context.startswith("A line of prose")
