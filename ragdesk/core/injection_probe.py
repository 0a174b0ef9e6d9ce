"""Instructions aimed at the model, recognised by their meaning in any language (issue 59): a logistic
probe on the meaning model's vectors of a text's sentences. Patterns (injection_rules) know the words
people have used; the probe knows the intent (drop earlier instructions, take a new role, reveal or send
out the conversation, call a tool) however it is worded. One sentence is scored, not a whole chunk: in
80 words, one instruction is diluted below any useful threshold.

The weights (resources/injection_probe.json) are fitted by tests/benchmarks/train_injection_probe.py for
one meaning model; with any other, or without one, only the patterns run.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from typing import Any

import numpy as np

from .injection import Finding, readings

PROBE_REASON = "reads as an instruction to the model"
PROBE_HITS = 6  # the window probes its first hits: a prompt's (4 by default) and the next two
CACHE = 4096  # sentence scores kept (a search's hits come back on the next keystroke)
MIN_WORDS = 4  # shorter sentences ("Ignore it.") carry no intent of their own
MAX_WORDS = 40  # a longer sentence is scored in windows of this many words
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
_TRIM = " \t-*>#|`\"'()[]{}<>_=:;,"


@dataclass(frozen=True, eq=False)  # hashed by identity: one per process (shipped_weights)
class ProbeWeights:
    """A fitted probe: for which meaning model, its weights and bias, and the score above which a
    sentence is flagged (chosen on ordinary notes: see the training script)."""

    model: str
    weights: np.ndarray
    bias: float
    threshold: float


@lru_cache(maxsize=1)
def shipped_weights() -> ProbeWeights | None:
    """The probe shipped with ragdesk, or None when its file is missing or unreadable."""
    try:
        data = json.loads(files("ragdesk.resources").joinpath("injection_probe.json").read_text(encoding="utf-8"))
        return ProbeWeights(
            data["model"], np.asarray(data["weights"], np.float32), float(data["bias"]), float(data["threshold"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def windows(text: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each sentence of `text`'s readings (the visible text and its disguises
    undone, as the patterns read it), long ones cut into windows, once each."""
    out: list[tuple[int, int, str]] = []
    seen: set[str] = set()
    for view, where in readings(text):
        for m in _SENTENCE.finditer(view):
            words = list(re.finditer(r"\S+", m.group(0)))
            for i in range(0, len(words), MAX_WORDS):
                part = words[i : i + MAX_WORDS]
                s, e = m.start() + part[0].start(), m.start() + part[-1].end()
                sentence = view[s:e].strip(_TRIM)
                key = " ".join(sentence.lower().split())
                if key in seen or not (len(part) >= MIN_WORDS or (len(sentence) >= 8 and not sentence.isascii())):
                    continue
                seen.add(key)
                if where is not None:
                    first, last = where[s], where[max(e - 1, s)]
                    s, e = min(first, last), max(first, last) + 1
                out.append((s, e, sentence))
    return out


def _probe_over(embedder: Any, weights: ProbeWeights) -> InjectionProbe:
    """One probe per embedder, kept on it: its scores live as long as the model, and no global holds the
    model past its users (onnxruntime's objects freed at interpreter exit printed tracebacks)."""
    probe = getattr(embedder, "_injection_probe", None)
    if not isinstance(probe, InjectionProbe) or probe.weights is not weights:
        probe = InjectionProbe(embedder, weights)
        try:
            embedder._injection_probe = probe
        except AttributeError:  # an embedder with __slots__: a probe per call (its cache per call)
            pass
    return probe


def with_probe(found: list[list[Finding]], texts: list[str], probe: InjectionProbe | None) -> list[list[Finding]]:
    """Each text's pattern findings `found` and, where they do not already cover it, what `probe` adds."""
    if probe is None:
        return found
    out = []
    for have, more in zip(found, probe.findings(texts)):
        extra = [f for f in more if not any(h.start < f.end and f.start < h.end for h in have)]
        out.append(sorted(have + extra, key=lambda f: f.start) if extra else have)
    return out


class InjectionProbe:
    """Scores sentences with the shipped probe through `embedder` (a dense.Embedder of the probe's
    model), caching each sentence's score."""

    def __init__(self, embedder: Any, weights: ProbeWeights) -> None:
        self.embedder = embedder
        self.weights = weights
        self._scores: OrderedDict[str, float] = OrderedDict()

    @classmethod
    def for_embedder(cls, embedder: Any) -> InjectionProbe | None:
        """The probe over `embedder` (one per embedder, so its cache lasts), or None when none was
        fitted for its model or there is no embedder (keyword search: the patterns alone)."""
        weights = shipped_weights()
        if weights is None or getattr(embedder, "name", None) != weights.model:
            return None
        if not hasattr(embedder, "embed_sentences"):
            return None
        return _probe_over(embedder, weights)

    def scores(self, sentences: list[str]) -> list[float]:
        """The probe's score of each sentence (above weights.threshold: an instruction)."""
        missing = list(dict.fromkeys(s for s in sentences if s not in self._scores))
        if missing:
            vectors = np.asarray(self.embedder.embed_sentences(missing), np.float32)
            for s, z in zip(missing, vectors @ self.weights.weights + self.weights.bias):
                self._scores[s] = float(z)
        out = []
        for s in sentences:
            self._scores.move_to_end(s)
            out.append(self._scores[s])
        while len(self._scores) > CACHE:
            self._scores.popitem(last=False)
        return out

    def findings(self, texts: list[str]) -> list[list[Finding]]:
        """For each text, its sentences the probe reads as instructions (one batch for all texts)."""
        spans = [windows(t) for t in texts]
        scored = self.scores([w for found in spans for _, _, w in found])
        out: list[list[Finding]] = []
        at = 0
        for text, found in zip(texts, spans):
            flagged = []
            for (start, end, _), z in zip(found, scored[at : at + len(found)]):
                if z >= self.weights.threshold:
                    flagged.append(Finding(PROBE_REASON, text[start:end].strip(), start, end))
            at += len(found)
            out.append(flagged)
        return out
