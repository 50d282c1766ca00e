"""The validator's entailment check (rag.answer.entailment) with a fake model: what it reads, when it rejects."""
from __future__ import annotations

import numpy as np
import pytest

from rag.answer import AnswerPayload, CitationItem, CitationValidator
from rag.answer.entailment import premise_of
from rag.config import ValidationConfig
from rag.context.builder import ContextBlock
from rag.errors import ConfigError, ModelLoadError

TEXT = ("① 공무원의 1주간 근무시간은 40시간으로 한다. ② 토요일은 휴무함을 원칙으로 한다. "
        "③ 공용 차량을 이용하여 여행하는 경우에는 운임을 지급하지 않는다.")


def _block(text=TEXT):
    return ContextBlock(source_id="S1", evidence_id="e1", document_id="d", document_version="", text=text,
                        start_char=0, end_char=len(text), truncated=False, tokens=0, score=1.0, rank=1,
                        locator="제9조")


class FakeNli:
    """Says contradiction when the claim says 지급한다 and its premise 지급하지 않는다; else entailment."""

    def __init__(self, neutral: bool = False):
        self.calls: list[tuple[str, str]] = []
        self.neutral = neutral

    def __call__(self, pairs):
        self.calls.extend(pairs)
        out = []
        for premise, claim in pairs:
            if "지급하지 않는다" in premise and "지급한다" in claim:
                out.append([0.05, 0.1, 0.85])
            elif self.neutral:
                out.append([0.2, 0.7, 0.1])
            else:
                out.append([0.9, 0.08, 0.02])
        return np.array(out)


def _payload(claim, quote):
    return AnswerPayload(status="answered", answer=f"{claim} [S1]",
                         citations=(CitationItem(source_id="S1", claim=claim, quote=quote),))


def test_premise_is_the_quote_widened_to_its_sentences_or_the_block():
    assert premise_of("토요일은 휴무", _block()) == "② 토요일은 휴무함을 원칙으로 한다."
    assert premise_of("", _block()).startswith("# 제9조")
    assert premise_of("없는 인용", _block()).endswith("지급하지 않는다.")


def test_a_contradicted_claim_is_rejected_and_a_stated_one_passes():
    nli = FakeNli()
    v = CitationValidator(ValidationConfig(check_entailment=True), entailment=nli)
    bad = v.validate(_payload("공용 차량을 이용하여 여행하는 경우에는 운임을 지급한다.",
                              "공용 차량을 이용하여 여행하는 경우에는 운임을 지급하지 않는다"), {"S1": _block()})
    assert "claim_contradicted" in {x.code for x in bad.violations}
    assert nli.calls[-1][0] == "③ 공용 차량을 이용하여 여행하는 경우에는 운임을 지급하지 않는다."
    good = v.validate(_payload("공무원의 1주간 근무시간은 40시간으로 한다.", "1주간 근무시간은 40시간으로 한다"),
                      {"S1": _block()})
    assert good.ok and not good.violations


def test_the_check_is_off_by_default_and_needs_a_model_when_on():
    nli = FakeNli()
    v = CitationValidator(ValidationConfig(), entailment=nli)
    v.validate(_payload("공무원의 1주간 근무시간은 40시간으로 한다.", "1주간 근무시간은 40시간으로 한다"), {"S1": _block()})
    assert nli.calls == []
    with pytest.raises(ConfigError, match="check_entailment"):
        CitationValidator(ValidationConfig(check_entailment=True))


def test_entailment_min_rejects_a_claim_the_quote_does_not_state():
    cfg = ValidationConfig(check_entailment=True, entailment_min=0.5)
    v = CitationValidator(cfg, entailment=FakeNli(neutral=True))
    rep = v.validate(_payload("공무원의 1주간 근무시간은 40시간으로 한다.", "1주간 근무시간은 40시간으로 한다"),
                     {"S1": _block()})
    assert [x.code for x in rep.violations] == ["claim_not_entailed"]
    assert "P(entailment) 0.20" in rep.violations[0].message


def test_eval_claims_counts_a_contradicted_claim_as_rejected(tmp_path):
    import json

    from rag.config import RagConfig
    from rag.evaluation.claims import eval_claims

    rows = [{"id": "n1", "label": "negated", "claim": "공용 차량을 이용하여 여행하는 경우에는 운임을 지급한다.",
             "quote": "공용 차량을 이용하여 여행하는 경우에는 운임을 지급하지 않는다"},
            {"id": "s1", "label": "supported", "claim": "공무원의 1주간 근무시간은 40시간으로 한다.",
             "quote": "1주간 근무시간은 40시간으로 한다"}]
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    cfg = RagConfig()
    on = cfg.model_copy(update={"validation": cfg.validation.model_copy(update={"check_entailment": True})})
    today = eval_claims(path, cfg)
    with_nli = eval_claims(path, on, entailment=FakeNli())
    assert today.by_label["supported"].accepted == with_nli.by_label["supported"].accepted == 1
    assert with_nli.by_label["negated"].accepted == 0
    assert "claim_contradicted" in with_nli.rows[0].codes


def test_a_configured_model_folder_is_read_relative_to_the_config(tmp_path):
    """validation.entailment_model relative to the config's folder (a str, as RagConfig.base_dir is); off: no model."""
    from rag.rerank.entailment import BUNDLED, entailment_for, model_dir

    assert model_dir(None, str(tmp_path)) == BUNDLED
    assert model_dir("models/nli", str(tmp_path)) == tmp_path / "models" / "nli"
    assert entailment_for(ValidationConfig(), str(tmp_path)) is None
    with pytest.raises(ModelLoadError, match="not an entailment model folder"):
        entailment_for(ValidationConfig(check_entailment=True, entailment_model="missing"), str(tmp_path))
