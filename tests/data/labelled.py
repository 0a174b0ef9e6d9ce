"""Labelled corpora of things that must be caught (secrets, instructions aimed at the model).

A corpus file holds records: a line `%% class | shape | language`, then the record's text up to the
next `%%` line (blank lines at its ends dropped); in the text, ⟦…⟧ marks what must be found (a
secret's characters, an instruction). Lines starting with `#` before the first record are comments.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
SECRETS = HERE / "secrets" / "positives.txt"
INJECTIONS = HERE / "injections" / "positives.txt"


@dataclass(frozen=True)
class Record:
    """One labelled text: its class, shape and language, the text without marks, the marked spans."""

    cls: str
    shape: str
    lang: str
    text: str
    spans: tuple[tuple[int, int], ...]

    def covered_by(self, found: list[tuple[int, int]]) -> bool:
        """Every marked character lies inside some found span (more may be found: over-redaction)."""
        return all(any(s <= i < e for s, e in found) for start, end in self.spans for i in range(start, end)
                   if not self.text[i].isspace())

    def hit_by(self, found: list[tuple[int, int]]) -> bool:
        """Some found span overlaps every marked span (a flag need not cover all of it)."""
        return all(any(s < end and start < e for s, e in found) for start, end in self.spans)


def _unmark(marked: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    start = -1
    for ch in marked:
        if ch == "⟦":
            start = at
        elif ch == "⟧":
            spans.append((start, at))
        else:
            out.append(ch)
            at += 1
    return "".join(out), tuple(spans)


def load(path: Path) -> list[Record]:
    """The records of a corpus file, in order."""
    records: list[Record] = []
    head: list[str] | None = None
    body: list[str] = []

    def close() -> None:
        if head is not None:
            text, spans = _unmark("\n".join(body).strip("\n"))
            records.append(Record(*head, text, spans))

    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("%% "):
            close()
            head = [p.strip() for p in line[3:].split("|")]
            body = []
        elif head is not None:
            body.append(line)
    close()
    return records
