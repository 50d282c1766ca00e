"""The public claim sets read as cited claims (rag.evaluation.claim_sets): SciFact's SUPPORT / CONTRADICT claims with
rationales, WiCE's claims with their marked sentences, a claim a citation could not carry left out, and the per-label
acceptance tally with and without the entailment check."""
from __future__ import annotations

import json

import numpy as np
import pytest

from rag.answer.validation import CitationValidator
from rag.config import ValidationConfig
from rag.errors import DatasetError
from rag.evaluation.claim_sets import accepted, scifact_claims, wice_claims

ABSTRACT = "Aspirin lowers the risk of heart attack in adults. The effect was seen in 2,000 patients."


def _write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def data(tmp_path):
    _write(tmp_path / "scifact" / "corpus.jsonl", [{"_id": "7", "text": ABSTRACT}])
    _write(tmp_path / "scifact" / "claims_dev_with_rationales.jsonl", [
        {"claim_id": 1, "doc_id": 7, "label": "SUPPORT", "claim": "Aspirin lowers the risk of heart attack.",
         "rationale_sentences": ["Aspirin lowers the risk of heart attack in adults."]},
        {"claim_id": 2, "doc_id": 7, "label": "CONTRADICT", "claim": "Aspirin raises the risk of heart attack.",
         "rationale_sentences": ["Aspirin lowers the risk of heart attack in adults."]},
        {"claim_id": 3, "doc_id": 7, "label": "NOT_ENOUGH_INFO", "claim": "Aspirin cures colds.", "rationale_sentences": []},
        {"claim_id": 4, "doc_id": 99, "label": "SUPPORT", "claim": "No such abstract.", "rationale_sentences": ["x"]},
    ])
    evidence = ["The bridge opened in 1932.", "It is 503 metres long.", "x" * 2100]
    _write(tmp_path / "wice" / "claim_dev.jsonl", [
        {"claim": "The bridge opened in 1932.", "label": "supported", "evidence": evidence, "supporting_sentences": [[0]]},
        {"claim": "The bridge is long.", "label": "partially_supported", "evidence": evidence,
         "supporting_sentences": [[2]]},  # a 2,100-character quote: no citation could carry it
        {"claim": "Nobody knows.", "label": "not_supported", "evidence": evidence, "supporting_sentences": []},
    ])
    return tmp_path


def test_scifact_keeps_labelled_claims_with_rationales_and_a_known_abstract(data):
    claims = scifact_claims(data)
    assert [(c.id, c.label) for c in claims] == [("scifact:1:7", "support"), ("scifact:2:7", "contradict")]
    assert claims[0].quote == "Aspirin lowers the risk of heart attack in adults." and claims[0].block == ABSTRACT


def test_wice_leaves_out_claims_without_marked_sentences_or_over_the_citation_limit(data, caplog):
    with caplog.at_level("INFO", logger="rag.evaluation.claim_sets"):
        claims = wice_claims(data)
    assert [(c.id, c.label, c.quote) for c in claims] == [("wice:0", "supported", "The bridge opened in 1932.")]
    assert "1 of 2 claims left out" in caplog.text


def test_missing_files_name_the_folder(tmp_path):
    with pytest.raises(DatasetError, match="scifact"):
        scifact_claims(tmp_path)
    with pytest.raises(DatasetError, match="wice"):
        wice_claims(tmp_path)


def test_accepted_tallies_per_label_and_the_entailment_check_can_only_reject(data):
    claims = scifact_claims(data)
    today = accepted(claims, CitationValidator(ValidationConfig()))
    assert today["support"] == {"n": 1, "accepted_n": 1, "accepted": 1.0}

    def contradicts_raises(pairs):  # a stand-in model: "raises" contradicts the premise, anything else entails
        return np.array([[0.05, 0.05, 0.9] if "raises" in claim else [0.9, 0.05, 0.05] for _, claim in pairs])

    on = accepted(claims, CitationValidator(ValidationConfig(check_entailment=True), entailment=contradicts_raises))
    assert on["support"]["accepted_n"] == today["support"]["accepted_n"]
    assert on["contradict"]["accepted_n"] == 0
