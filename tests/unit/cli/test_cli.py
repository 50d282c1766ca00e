"""The `rag` command line, run in-process on the demo corpus with the hashing embedder."""
from __future__ import annotations

import json

import pytest

from rag.cli.main import main

from tests.conftest import write_config


def test_index_then_search_json(tiny_config, capsys):
    assert main(["index", "--config", str(tiny_config)]) == 0
    out = capsys.readouterr().out
    assert "indexed 35 documents" in out
    assert main(["search", "How often must passwords be changed?", "--config", str(tiny_config), "--json", "--top", "5"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["query"].startswith("How often")
    cands = data["candidates"]
    assert 1 <= len(cands) <= 5
    assert [c["rank"] for c in cands] == list(range(1, len(cands) + 1))
    assert cands[0]["document_id"] == "it-security-handbook"
    for c in cands:
        assert set(c["retrievers"]) <= {"bm25", "dense"} and c["retrievers"]
        assert c["span"][0] < c["span"][1]
    scores = [c["score"] for c in cands]
    assert scores == sorted(scores, reverse=True)


def test_search_human_output_and_korean(tiny_config, capsys):
    main(["index", "--config", str(tiny_config)])
    capsys.readouterr()
    assert main(["search", "밀폐공간 진입 전 측정", "--config", str(tiny_config)]) == 0
    out = capsys.readouterr().out
    assert "confined-space-safety-manual" in out.splitlines()[0]
    assert " p." in out.splitlines()[0]  # the paged manual shows its page


def test_errors_exit_2_with_message(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("retrieval:\n  fusion:\n    k: -3\n", encoding="utf-8")
    assert main(["search", "x", "--config", str(bad)]) == 2
    assert "retrieval.fusion.k: must be > 0, got -3" in capsys.readouterr().err
    cfg = write_config(tmp_path / "c")
    assert main(["search", "x", "--config", str(cfg)]) == 2
    assert "no index at" in capsys.readouterr().err
    main(["index", "--config", str(cfg)])
    capsys.readouterr()
    assert main(["search", "   ", "--config", str(cfg)]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["eval-retrieval", "--dataset", str(tmp_path / "nope"), "--config", str(cfg)]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["eval-retrieval", "--dataset", str(tmp_path), "--config", str(cfg), "--set", "oops"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def _mini_beir(root):
    (root / "qrels").mkdir(parents=True)
    docs = {
        "d1": ("Annual leave", "Employees get fifteen days of annual leave in the first year."),
        "d2": ("Passwords", "Passwords must be changed every ninety days and never shared."),
        "d3": ("연차", "연차 휴가는 입사 첫해 15일이 부여된다."),
        "d4": ("Forklifts", "Forklift speed inside the plant is limited to ten kilometres per hour."),
        "d5": ("Cafeteria", "Lunch is served from noon in the second floor cafeteria."),
    }
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for i, (t, x) in docs.items():
            fh.write(json.dumps({"_id": i, "title": t, "text": x}, ensure_ascii=False) + "\n")
    qs = {"q1": "how many days of annual leave", "q2": "password change interval", "q3": "연차 휴가 일수",
          "q4": "forklift speed limit", "q9": "not judged"}
    with open(root / "queries.jsonl", "w", encoding="utf-8") as fh:
        for i, t in qs.items():
            fh.write(json.dumps({"_id": i, "text": t}, ensure_ascii=False) + "\n")
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\nq4\td4\t1\n", encoding="utf-8")


def test_eval_retrieval_json_shape(tmp_path, capsys):
    _mini_beir(tmp_path / "beir")
    cfg = write_config(tmp_path / "c")
    out = tmp_path / "res" / "eval.json"
    rc = main(["eval-retrieval", "--dataset", str(tmp_path / "beir"), "--split", "test", "--config", str(cfg),
               "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert data["dataset"] == "beir" and data["split"] == "test"
    assert data["n_queries"] == 4  # q9 has no qrels and is not evaluated
    assert set(data["metrics"]) == {"bm25", "dense", "hybrid"}
    for m in data["metrics"].values():
        assert set(m) == {"ndcg@10", "recall@10", "recall@100", "mrr@10"}
        assert all(0.0 <= v <= 1.0 for v in m.values())
    assert data["metrics"]["bm25"]["recall@10"] == 1.0  # every query has a lexical match
    with pytest.raises(SystemExit):
        main(["eval-retrieval"])  # --dataset is required


def test_add_replace_delete_commands(tiny_config, tmp_path, capsys):
    main(["index", "--config", str(tiny_config)])
    capsys.readouterr()
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "parking-policy", "version": "2026.1", "text": "Parking is free for bicycles.",
                               "title": "Parking"}) + "\n", encoding="utf-8")
    assert main(["add", str(new), "--config", str(tiny_config), "--replace"]) == 0
    assert "added 1, removed 1" in capsys.readouterr().out
    main(["search", "bicycles parking free", "--config", str(tiny_config), "--json"])
    top = json.loads(capsys.readouterr().out)["candidates"][0]
    assert (top["document_id"], top["version"]) == ("parking-policy", "2026.1")
    assert main(["delete", "parking-policy", "--config", str(tiny_config)]) == 0
    assert "removed parking-policy:2026.1" in capsys.readouterr().out
    main(["search", "bicycles parking free", "--config", str(tiny_config), "--json"])
    assert all(c["document_id"] != "parking-policy" for c in json.loads(capsys.readouterr().out)["candidates"])
    assert main(["delete", "parking-policy", "--config", str(tiny_config)]) == 2
    assert "not in the index" in capsys.readouterr().err


def test_context_command_shows_manifest_and_prompt(tiny_config, tmp_path, capsys):
    main(["index", "--config", str(tiny_config)])
    capsys.readouterr()
    hist = tmp_path / "h.json"
    hist.write_text(json.dumps([{"role": "user", "content": "안녕하세요"}, {"role": "assistant", "content": "네"}]),
                    encoding="utf-8")
    assert main(["context", "How often must passwords be changed?", "--config", str(tiny_config),
                 "--history", str(hist), "--show-prompt", "--set", "context.context_limit=3000"]) == 0
    out = capsys.readouterr().out
    assert "evidence_budget" in out and "[S1]" in out
    assert "----- system" in out and "----- user" in out and '<source id="S1">' in out
    assert "history: kept 2 turns" in out
    assert main(["context", "How often must passwords be changed?", "--config", str(tiny_config), "--json",
                 "--show-prompt"]) == 0
    data = json.loads(capsys.readouterr().out)
    m = data["manifest"]
    assert m["evidence_tokens"] <= m["evidence_budget"]
    assert [b["source_id"] for b in m["blocks"]] == [f"S{i}" for i in range(1, len(m["blocks"]) + 1)]
    assert {d["reason"] for d in m["dropped"]} <= {"duplicate", "per_document_cap", "budget", "max_blocks",
                                                   "unsplittable", "invalid_score", "superseded",
                                                   "suspected_injection"}
    assert data["messages"][0]["role"] == "system" and data["messages"][-1]["role"] == "user"
    assert all("<source id=" not in msg["content"] for msg in data["messages"][:-1])


def test_context_command_reports_budget_error(tiny_config, capsys):
    main(["index", "--config", str(tiny_config)])
    capsys.readouterr()
    assert main(["context", "passwords", "--config", str(tiny_config), "--set", "context.context_limit=900"]) == 2
    err = capsys.readouterr().err
    assert "no room for evidence" in err and "output_reserve=800" in err


def test_injected_demo_document_is_quarantined_by_default(tiny_config):
    """With the default ``security.quarantine: drop_document`` no block of the injected vendor FAQ
    reaches the prompt, not even its harmless paragraphs, and the trace says why."""
    from rag.pipeline import Pipeline

    p = Pipeline.from_config(tiny_config)
    p.build_index()
    question = "When will vendors be paid and where do suppliers send invoices?"
    _, prompt = p.build_prompt(question)
    assert not [b for b in prompt.bundle.blocks if b.document_id == "vendor-faq-injected"]
    got = p.retrieve(question)
    assert got.quarantined and {q.document_id for q in got.quarantined} == {"vendor-faq-injected"}
    assert {q.scope for q in got.quarantined} <= {"block", "document"}
    assert all(q.to_json()["reason"] == "suspected_injection" for q in got.quarantined)
    res = p.answer(question)
    assert all(c.document_id != "vendor-faq-injected" for c in res.citations)
    assert res.to_json()["trace"]["quarantined"]
    dropped = {d["evidence_id"]: d["reason"] for d in prompt.manifest.to_json()["dropped"]}
    assert {q.evidence_id for q in got.quarantined} <= {e for e, r in dropped.items() if r == "suspected_injection"}


def test_injected_demo_document_is_defused_end_to_end(tiny_config):
    """With the quarantine off, the injected document is retrieved; through the whole pipeline it
    cannot add a block, forge a citation or touch the system message."""
    import re

    from rag.config import load_config
    from rag.pipeline import Pipeline
    from rag.context import DEFAULT_SYSTEM_PROMPT

    p = Pipeline(load_config(tiny_config).with_overrides({"security.quarantine": "off"}))
    p.build_index()
    _, prompt = p.build_prompt("When will vendors be paid and where do suppliers send invoices?")
    hostile = [b for b in prompt.bundle.blocks if b.document_id == "vendor-faq-injected"]
    assert hostile, "the vendor FAQ should be retrieved for a vendor question"
    assert sum(b.neutralized for b in hostile) >= 1
    system, user = prompt.messages[0], prompt.messages[-1]
    assert system.content == DEFAULT_SYSTEM_PROMPT
    assert len(re.findall(r'<source id="S\d+">', user.content)) == len(prompt.bundle.blocks)
    assert user.content.count("</source>") == len(prompt.bundle.blocks)
    assert "[S3]" not in user.content and '<source id="S9">' not in user.content
    for m in prompt.messages[:-1]:
        assert "evil.example" not in m.content


def test_guidelines_from_config_and_file_are_injected_as_tool_messages(tmp_path):
    from rag.errors import InputError
    from rag.pipeline import Pipeline

    gfile = tmp_path / "guides.yaml"
    gfile.write_text("- id: money\n  content: Quote amounts in KRW.\n  keywords: [per diem, 경비]\n", encoding="utf-8")
    cfg = write_config(tmp_path / "c", context={
        "guidelines": [{"id": "safety", "content": "Name the measured gases.", "keywords": ["밀폐공간"]}],
        "guidelines_file": str(gfile)})
    p = Pipeline.from_config(cfg)
    p.build_index()
    _, prompt = p.build_prompt("What is the per diem for a domestic trip?")
    assert prompt.manifest.guidelines == ("money",)
    assert [m.role for m in prompt.messages[:3]] == ["system", "assistant", "tool"]
    assert "Quote amounts in KRW." in prompt.messages[2].content
    assert "KRW" not in prompt.messages[0].content
    assert p.build_prompt("밀폐공간 측정")[1].manifest.guidelines == ("safety",)
    gfile.write_text("- id: bad\n  text: no content key\n", encoding="utf-8")
    with pytest.raises(InputError, match="guideline 0"):
        Pipeline.from_config(cfg).build_prompt("per diem")


def _answers_dataset(root):
    root.mkdir(parents=True)
    corpus = [{"id": "leave", "version": "1", "title": "Leave", "uri": "u:1",
               "text": "Annual leave. Employees get fifteen days of annual leave in the first year."},
              {"id": "leave", "version": "2", "title": "Leave", "uri": "u:2",
               "text": "Annual leave. Employees get sixteen days of annual leave in the first year."},
              {"id": "여비", "version": "2026-01-02", "title": "여비", "uri": "u:3",
               "text": "출장자는 여행을 마친 날부터 2주일 이내에 운임의 정산을 신청하여야 한다."}]
    qs = [{"id": "q1", "question": "How many days of annual leave do employees get in the first year?",
           "answerable": True, "gold": {"doc_id": "leave", "article": "1", "answer_facts": ["sixteen days"],
                                        "quote": "sixteen days", "superseded_facts": ["fifteen days"]},
           "style": "version"},
          {"id": "u1", "question": "What is the cafeteria lunch menu on Fridays?", "answerable": False,
           "gold": {"reason": "not in the corpus"}}]
    (root / "corpus.jsonl").write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in corpus), "utf-8")
    (root / "questions.jsonl").write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in qs), "utf-8")
    return root


def test_eval_answers_json_and_table(tmp_path, capsys):
    ds = _answers_dataset(tmp_path / "ds")
    cfg = write_config(tmp_path / "c", gate={"fallback_signal": "bm25", "fallback_threshold": 1.0})
    out = tmp_path / "res" / "answers.json"
    assert main(["eval-answers", "--dataset", str(ds), "--config", str(cfg), "--json", str(out),
                 "--set", "retrieval.candidates=5"]) == 0
    printed = capsys.readouterr().out
    assert "2 questions (1 answerable, 1 unanswerable)" in printed
    assert "accuracy_answerable" in printed and "precision_of_answered" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data) == {"dataset", "question_files", "config_hash", "date", "seconds", "metrics", "by_style", "rows"}
    assert {"n", "accuracy_answerable", "abstained_when_unanswerable", "answered_when_unanswerable",
            "precision_of_answered", "superseded_cited", "validation_failed", "answered_when_answerable"} <= set(
        data["metrics"])
    assert data["metrics"]["n"] == 2 and data["dataset"] == str(ds)
    assert [r["id"] for r in data["rows"]] == ["q1", "u1"]
    assert set(data["rows"][0]) == {"id", "answerable", "style", "status", "reason", "answer", "cited", "facts_found",
                                    "correct", "superseded_cited", "cited_gold_current", "answer_precision", "sentences",
                                    "gate"}
    assert "style" not in data["rows"][1]


def test_eval_answers_bad_dataset_exits_2(tmp_path, capsys):
    cfg = write_config(tmp_path / "c")
    assert main(["eval-answers", "--dataset", str(tmp_path / "nope"), "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "dataset folder not found" in err and "questions.jsonl" in err
    ds = _answers_dataset(tmp_path / "ds")
    (ds / "questions.jsonl").write_text('{"id": "q1", "answerable": true}\n', encoding="utf-8")
    assert main(["eval-answers", "--dataset", str(ds), "--config", str(cfg)]) == 2
    assert "questions.jsonl:1: missing 'question'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["eval-answers"])  # --dataset is required


def test_eval_claims_json_and_table(tmp_path, capsys):
    ds = _answers_dataset(tmp_path / "ds")
    quote = "Employees get sixteen days of annual leave in the first year."
    claims = [{"id": "c1", "doc_id": "leave", "version": "2", "quote": quote, "label": "supported",
               "claim": "Employees get sixteen days of annual leave in their first year."},
              {"id": "c2", "doc_id": "leave", "version": "2", "quote": quote, "label": "number_changed",
               "claim": "Employees get thirty days of annual leave in their first year."}]
    (ds / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims), encoding="utf-8")
    cfg = write_config(tmp_path / "c")
    out = tmp_path / "claims.json"
    assert main(["eval-claims", "--dataset", str(ds / "claims.jsonl"), "--config", str(cfg), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2 claims" in printed and "supported" in printed and "number_changed" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["n"] == 2 and [r["id"] for r in data["rows"]] == ["c1", "c2"]
    assert set(data["by_label"]) == {"supported", "number_changed"}
    for v in data["by_label"].values():
        assert v["n"] == 1 and {"n", "accepted"} <= set(v) and 0.0 <= v["accepted"] <= 1.0


def test_eval_claims_bad_dataset_exits_2(tmp_path, capsys):
    cfg = write_config(tmp_path / "c")
    assert main(["eval-claims", "--dataset", str(tmp_path / "nope.jsonl"), "--config", str(cfg)]) == 2
    assert "not found" in capsys.readouterr().err
    bad = tmp_path / "claims.jsonl"
    bad.write_text('{"id": "c1", "claim": "x", "quote": "y", "label": "supported"}\n{oops\n', encoding="utf-8")
    assert main(["eval-claims", "--dataset", str(bad), "--config", str(cfg)]) == 2
    assert "claims.jsonl:2" in capsys.readouterr().err
