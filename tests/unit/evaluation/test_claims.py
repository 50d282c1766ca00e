"""eval_claims: the validator's support check on labelled (claim, quote) pairs (rag.evaluation.claims)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.config import RagConfig
from rag.errors import DatasetError
from rag.evaluation.claims import ClaimsReport, LABELS, eval_claims, find_article

MARKDOWN_LAW = """# 여비 규정

## 제1장 총칙

##### 제8조의2 (여비의 정산)

**①** 여행자는 정부구매카드를 사용해야 한다. <개정 2011.2.9>

**②** 여행자는 여행을 마친 날의 다음 날부터 2주일 이내에 증거서류를 갖추어 정산을 신청하여야 한다.

##### 제15조 (운임 지급의 제한)

공용의 차량을 이용하여 여행하는 경우에는 운임을 지급하지 않는다.

##### 제16조 (일비)

일비는 공무용 차량을 이용하는 경우에는 2분의 1을 지급한다.

## 제2장 운임

##### 제17조 (장기체재)

같은 곳에 15일을 초과하여 체재하는 경우에는 일비의 10분의 1을 뺀다.
"""

PLAIN_LAW = """제1조(목적) 이 법은 주거생활의 안정을 보장한다.
제4조(임대차기간) 기간을 정하지 아니하거나 2년 미만으로 정한 임대차는 그 기간을 2년으로 본다.
제6조의3(계약갱신 요구) 임차인은 계약갱신요구권을 1회에 한하여 행사할 수 있다.
"""


def claim(cid, label, text, quote, article, doc="travel", version="2026"):
    return {"id": cid, "doc_id": doc, "version": version, "article": article, "quote": quote, "claim": text,
            "label": label}


CLAIMS = [
    claim("c1", "supported", "여행자는 여행을 마친 다음 날부터 2주일 안에 증거서류를 갖춰 정산을 신청해야 한다.",
          "다음 날부터 2주일 이내에 증거서류를 갖추어 정산을 신청하여야 한다", "제8조의2제2항"),
    claim("c2", "number_changed", "여행자는 여행을 마친 다음 날부터 3주일 안에 증거서류를 갖춰 정산을 신청해야 한다.",
          "다음 날부터 2주일 이내에", "제8조의2제2항"),
    claim("c3", "negated", "공용 차량을 이용해 여행한 경우에도 운임을 지급한다.",
          "운임을 지급하지 않는다", "제15조"),
    claim("c4", "other_article", "공용 차량을 이용해 여행하면 운임을 지급하지 않고 일비의 2분의 1을 지급한다.",
          "운임을 지급하지 않는다", "제15조"),
    claim("c5", "supported", "2년 미만으로 정한 임대차도 그 기간을 2년으로 본다.",
          "2년 미만으로 정한 임대차는 그 기간을 2년으로 본다", "제4조", doc="lease", version="2025"),
    claim("c6", "other_article", "2년 미만으로 정한 임대차도 2년으로 보며, 임차인은 계약갱신요구권을 1회 행사할 수 있다.",
          "2년 미만으로 정한 임대차는 그 기간을 2년으로 본다", "제4조", doc="lease", version="2025"),
    # an unknown document: the block is the quote itself
    claim("c7", "supported", "일비의 10분의 1을 뺀다.", "일비의 10분의 1을 뺀다", "제17조", doc="missing"),
]


@pytest.fixture()
def dataset(tmp_path: Path) -> Path:
    corpus = [{"id": "travel", "version": "2026", "title": "여비 규정", "uri": "https://law.example/t", "text": MARKDOWN_LAW},
              {"id": "lease", "version": "2025", "title": "임대차법", "uri": "https://law.example/l", "text": PLAIN_LAW}]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in corpus),
                                           encoding="utf-8")
    path = tmp_path / "claims.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CLAIMS), encoding="utf-8")
    return path


def test_find_article_markdown_and_plain_headings():
    art = find_article(MARKDOWN_LAW, "제8조의2제2항")
    assert art is not None and art.startswith("##### 제8조의2 (여비의 정산)") and art.endswith("신청하여야 한다.")
    assert "제15조" not in art
    last = find_article(MARKDOWN_LAW, "제16조")
    assert last is not None and "2분의 1" in last and "제2장" not in last  # stops at a chapter heading too
    assert find_article(MARKDOWN_LAW, "제17조").endswith("10분의 1을 뺀다.")
    assert find_article(PLAIN_LAW, "제4조") == ("제4조(임대차기간) 기간을 정하지 아니하거나 2년 미만으로 정한 임대차는 "
                                                "그 기간을 2년으로 본다.")
    assert find_article(PLAIN_LAW, "제6조") is None and find_article(MARKDOWN_LAW, "제8조") is None  # not 제6조의3
    assert find_article(PLAIN_LAW, "제6조의3제1항").startswith("제6조의3(계약갱신 요구)")
    assert find_article(MARKDOWN_LAW, "제99조") is None and find_article(MARKDOWN_LAW, "부칙") is None


def test_report_per_label_and_rows(dataset):
    report = eval_claims(dataset, RagConfig())
    assert isinstance(report, ClaimsReport) and report.n == len(CLAIMS)
    rows = {r.id: r for r in report.rows}
    assert rows["c1"].accepted and rows["c1"].codes == () and rows["c1"].block == "article"
    assert not rows["c2"].accepted and "number_mismatch" in rows["c2"].codes
    assert not rows["c3"].accepted and "negation_mismatch" in rows["c3"].codes
    assert not rows["c4"].accepted  # 2분의 1 is in 제16조, not in the cited 제15조
    assert rows["c5"].accepted and not rows["c6"].accepted
    assert rows["c7"].block == "quote" and rows["c7"].accepted
    assert report.by_label["supported"].n == 3 and report.by_label["supported"].accepted == 3
    assert report.by_label["negated"].accepted == 0


def test_to_json_shape(dataset):
    out = eval_claims(dataset, RagConfig()).to_json()
    assert set(out) == {"n", "by_label", "rows"} and out["n"] == len(CLAIMS)
    assert set(out["by_label"]) <= set(LABELS)
    assert out["by_label"]["supported"] == {"n": 3, "accepted": 1.0, "accepted_n": 3}
    assert out["by_label"]["other_article"] == {"n": 2, "accepted": 0.0, "accepted_n": 0}
    row = out["rows"][1]
    assert set(row) >= {"id", "label", "accepted", "codes", "support"} and row["codes"] == ["number_mismatch"]
    json.dumps(out)  # plain JSON


def test_corpus_path_and_missing_corpus(dataset, tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    moved = other / "claims.jsonl"
    moved.write_text(dataset.read_text(encoding="utf-8"), encoding="utf-8")
    without = eval_claims(moved, RagConfig())  # no corpus next to it: every block is the quote
    assert {r.block for r in without.rows} == {"quote"}
    with_path = eval_claims(moved, RagConfig(), corpus_path=tmp_path / "corpus.jsonl")
    assert [r.accepted for r in with_path.rows] == [r.accepted for r in eval_claims(dataset, RagConfig()).rows]
    with pytest.raises(DatasetError, match="corpus file not found"):
        eval_claims(moved, RagConfig(), corpus_path=tmp_path / "nope.jsonl")


@pytest.mark.parametrize("line,match", [
    ("{not json", r"claims\.jsonl:2"),
    ('{"id": "x", "label": "supported", "claim": "a"}', r"claims\.jsonl:2: claim needs a non-empty string 'quote'"),
    ('{"id": "x", "label": "maybe", "claim": "a", "quote": "b"}', r"claims\.jsonl:2: unknown label 'maybe'"),
    ('{"id": "", "label": "supported", "claim": "a", "quote": "b"}', r"claims\.jsonl:2: .*'id'"),
    ("[1, 2]", r"claims\.jsonl:2"),
])
def test_bad_input_names_file_and_line(tmp_path, line, match):
    path = tmp_path / "claims.jsonl"
    path.write_text(json.dumps(CLAIMS[0], ensure_ascii=False) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=match):
        eval_claims(path, RagConfig())


def test_missing_claims_file(tmp_path):
    with pytest.raises(DatasetError, match="claims file not found"):
        eval_claims(tmp_path / "none.jsonl", RagConfig())


def test_bad_corpus_line(tmp_path, dataset):
    (tmp_path / "corpus.jsonl").write_text('{"id": "travel"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"corpus\.jsonl:1: corpus line needs a string 'text'"):
        eval_claims(dataset, RagConfig())
