"""rag.batch: input checking, crash-safe resumable output, bounded concurrency, summary."""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag.batch import (
    BatchAbortedError,
    BatchInputError,
    BatchRecord,
    BatchRunner,
    OutputFileError,
    ResultWriter,
    RunInfo,
    read_questions,
    scan_output,
    summarize,
    text_id,
)
from rag.config import BatchConfig
from rag.errors import InputError, RagError
from tests.conftest import ROOT
from tests.fakes import FakeAnswerer, FakeBehaviour

INFO = RunInfo("cfg0000000000000", "res0000000000000", {"embedding": "fake-emb", "generator": "fake-gen"}, "abc123", False)


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def questions_file(tmp_path: Path, n: int = 6) -> Path:
    return write_jsonl(tmp_path / "q.jsonl", [{"id": f"q{i}", "question": f"question {i}?", "expected": i}
                                               for i in range(n)])


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


# --------------------------------------------------------------------------- input
def test_reads_jsonl_with_history_and_keeps_other_fields_as_gold(tmp_path):
    p = write_jsonl(tmp_path / "q.jsonl", [
        {"id": "a", "question": " 연차는 며칠? ", "history": [{"role": "user", "content": "hi"},
                                                         {"role": "assistant", "content": "hello"}],
         "expected_doc_id": "hr"},
        {"id": 7, "question": "second"},
        {"question": "no id given"},
    ])
    qs = read_questions(p)
    assert qs.format == "jsonl"
    assert [q.id for q in qs.questions] == ["a", "7", text_id("no id given")]
    assert [q.index for q in qs.questions] == [0, 1, 2]
    assert [q.line for q in qs.questions] == [1, 2, 3]
    a = qs.questions[0]
    assert a.question == "연차는 며칠?"
    assert [(t.role, t.content) for t in a.history] == [("user", "hi"), ("assistant", "hello")]
    assert dict(a.gold) == {"expected_doc_id": "hr"}


def test_reads_plain_text_one_question_a_line_with_stable_ids(tmp_path):
    p = tmp_path / "q.txt"
    p.write_text("first question?\n\n  second question?  \r\n", encoding="utf-8")
    qs = read_questions(p)
    assert qs.format == "text"
    assert [q.question for q in qs.questions] == ["first question?", "second question?"]
    assert [q.line for q in qs.questions] == [1, 3]
    # the id depends on the text only: the same question keeps its id when lines move
    p.write_text("second question?\nfirst question?\n", encoding="utf-8")
    again = {q.question: q.id for q in read_questions(p).questions}
    assert again == {q.question: q.id for q in qs.questions}


def test_malformed_lines_and_duplicate_ids_are_reported_with_line_numbers(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_bytes(b'{"id": "a", "question": "ok"}\n'
                  b'{"id": "b", "question": ""}\n'  # 2: empty question
                  b'not json\n'  # 3
                  b'{"id": "a", "question": "again"}\n'  # 4: duplicate of line 1
                  b'{"id": "c", "question": "q", "history": [{"role": "bot", "content": "x"}]}\n'  # 5
                  b'\xff\xfe\n'  # 6: not UTF-8
                  b'[1, 2]\n'  # 7: not an object
                  b'{"id": "d", "question": "fine"}\n')
    with pytest.raises(BatchInputError) as ei:
        read_questions(p)
    msg = str(ei.value)
    assert isinstance(ei.value, InputError) and isinstance(ei.value, RagError)
    for n in (2, 3, 4, 5, 6, 7):
        assert f"q.jsonl:{n}:" in msg
    assert "already used on line 1" in msg and "--on-invalid skip" in msg
    assert [(pr.line, pr.kind) for pr in ei.value.problems] == [
        (2, "malformed"), (3, "malformed"), (4, "duplicate_id"), (5, "malformed"), (6, "malformed"), (7, "malformed")]

    qs = read_questions(p, on_invalid="skip")
    assert [q.id for q in qs.questions] == ["a", "d"]
    assert qs.questions[0].question == "ok"  # the first line of a duplicated id is kept
    assert [pr.line for pr in qs.problems] == [2, 3, 4, 5, 6, 7]


def test_missing_and_empty_inputs_are_typed_errors(tmp_path):
    with pytest.raises(BatchInputError, match="questions file not found"):
        read_questions(tmp_path / "nope.jsonl")
    (tmp_path / "empty.txt").write_text("\n\n", encoding="utf-8")
    with pytest.raises(BatchInputError, match="no questions"):
        read_questions(tmp_path / "empty.txt")


# --------------------------------------------------------------------------- running
def test_batch_writes_one_self_identifying_line_per_question_in_input_order(tmp_path):
    qs = read_questions(questions_file(tmp_path, 6)).questions
    # question 0 is slowest, so completion order differs from input order
    beh = {f"question {i}?": FakeBehaviour(delay_s=0.05 * (6 - i)) for i in range(6)}
    beh["question 4?"] = FakeBehaviour(status="insufficient_evidence")
    fake = FakeAnswerer(beh)
    out = tmp_path / "out.jsonl"
    written: list[str] = []
    rep = BatchRunner(fake, INFO, BatchConfig(concurrency=3)).run(qs, out, progress=lambda r: written.append(r.id))
    assert written != [q.id for q in qs]  # appended as they completed …
    rows = lines(out)
    assert [r["id"] for r in rows] == [q.id for q in qs]  # … rewritten in input order at the end
    assert [r["index"] for r in rows] == list(range(6))
    for r in rows:
        assert r["config_hash"] == INFO.config_hash
        assert r["models"] == {"embedding": "fake-emb", "generator": "fake-gen"}
        assert r["git_commit"] == "abc123"
        assert r["gold"]["expected"] == r["index"]
    assert rows[4]["status"] == "insufficient_evidence" and rows[0]["result"]["status"] == "answered"
    assert rep.complete and rep.processed == 6 and rep.skipped_existing == 0
    assert (rep.summary.answered, rep.summary.insufficient_evidence, rep.summary.failed) == (5, 1, 0)


def test_concurrency_is_bounded_and_questions_start_in_input_order(tmp_path):
    qs = read_questions(questions_file(tmp_path, 10)).questions
    fake = FakeAnswerer(default=FakeBehaviour(delay_s=0.03))
    BatchRunner(fake, INFO, BatchConfig(concurrency=3)).run(qs, tmp_path / "out.jsonl")
    assert fake.max_in_flight == 3
    assert fake.started == [q.question for q in qs]


def test_threaded_retrieval_runs_one_question_at_a_time_in_input_order(tmp_path):
    # Pipeline.aanswer sends retrieval to asyncio.to_thread; run() gives it a single worker thread
    qs = read_questions(questions_file(tmp_path, 12)).questions
    beh = {f"question {i}?": FakeBehaviour(delay_s=0.01 * (i % 4)) for i in range(12)}
    fake = FakeAnswerer(beh, threaded_retrieval=True)
    BatchRunner(fake, INFO, BatchConfig(concurrency=4)).run(qs, tmp_path / "out.jsonl")
    assert fake.max_retrieval_in_flight == 1
    assert fake.retrieval_order == [q.question for q in qs]
    assert fake.max_in_flight == 4  # generation still overlaps


def test_sync_only_answerer_runs_in_a_bounded_thread_pool(tmp_path):
    qs = read_questions(questions_file(tmp_path, 8)).questions
    fake = FakeAnswerer(default=FakeBehaviour(delay_s=0.03), sync_only=True)
    rep = BatchRunner(fake, INFO, BatchConfig(concurrency=2)).run(qs, tmp_path / "out.jsonl")
    assert fake.max_in_flight == 2
    assert sorted(fake.finished) == sorted(q.question for q in qs)
    assert [r["id"] for r in lines(tmp_path / "out.jsonl")] == [q.id for q in qs]
    assert rep.summary.answered == 8


def test_a_failing_question_is_recorded_and_the_batch_goes_on(tmp_path):
    qs = read_questions(questions_file(tmp_path, 4)).questions
    fake = FakeAnswerer({"question 1?": FakeBehaviour(raises="LLM server said 500")})
    rep = BatchRunner(fake, INFO, BatchConfig(concurrency=2)).run(qs, tmp_path / "out.jsonl")
    rows = {r["id"]: r for r in lines(tmp_path / "out.jsonl")}
    assert rows["q1"]["status"] == "failed"
    assert rows["q1"]["error"] == {"type": "RuntimeError", "message": "LLM server said 500"}
    assert rows["q1"]["result"] is None
    assert all(rows[q]["status"] == "answered" for q in ("q0", "q2", "q3"))
    assert rep.summary.failed == 1 and rep.summary.reasons["failed:RuntimeError"] == 1

    # a rerun skips everything; --retry-failed reruns only the failure
    fake2 = FakeAnswerer()
    rep2 = BatchRunner(fake2, INFO).run(qs, tmp_path / "out.jsonl")
    assert fake2.started == [] and rep2.skipped_existing == 4
    fake3 = FakeAnswerer()
    rep3 = BatchRunner(fake3, INFO, retry_failed=True).run(qs, tmp_path / "out.jsonl")
    assert fake3.started == ["question 1?"]
    assert rep3.summary.failed == 0 and rep3.summary.answered == 4
    assert [r["id"] for r in lines(tmp_path / "out.jsonl")] == ["q0", "q1", "q2", "q3"]  # superseded line compacted


def test_resume_skips_ids_already_written(tmp_path):
    all_q = read_questions(questions_file(tmp_path, 5)).questions
    out = tmp_path / "out.jsonl"
    BatchRunner(FakeAnswerer(), INFO).run(all_q[:2], out)
    fake = FakeAnswerer()
    rep = BatchRunner(fake, INFO).run(all_q, out)
    assert fake.started == ["question 2?", "question 3?", "question 4?"]
    assert rep.skipped_existing == 2 and rep.processed == 3 and rep.summary.questions == 5
    assert [r["id"] for r in lines(out)] == [f"q{i}" for i in range(5)]


def test_truncated_last_line_is_repaired_with_a_warning_and_rerun(tmp_path, caplog):
    qs = read_questions(questions_file(tmp_path, 3)).questions
    out = tmp_path / "out.jsonl"
    BatchRunner(FakeAnswerer(), INFO).run(qs, out)
    data = out.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    out.write_bytes(data[:last_start + 25])  # q2's line cut mid-way, no newline: a kill while writing
    fake = FakeAnswerer()
    with caplog.at_level(logging.WARNING, logger="rag.batch"):
        rep = BatchRunner(fake, INFO).run(qs, out)
    assert "was cut short" in caplog.text
    assert rep.repaired_bytes == 25
    assert fake.started == ["question 2?"]
    assert [r["id"] for r in lines(out)] == ["q0", "q1", "q2"]  # every line parses again
    assert (tmp_path / "out.jsonl.partial").read_bytes() == data[last_start:last_start + 25] + b"\n"


def test_corrupt_complete_line_or_foreign_file_is_refused_not_overwritten(tmp_path):
    qs = read_questions(questions_file(tmp_path, 2)).questions
    out = tmp_path / "out.jsonl"
    out.write_text('{"hello": 1}\n', encoding="utf-8")
    with pytest.raises(OutputFileError, match=r"out.jsonl:1: not a rag batch result line"):
        BatchRunner(FakeAnswerer(), INFO).run(qs, out)
    assert out.read_text(encoding="utf-8") == '{"hello": 1}\n'
    BatchRunner(FakeAnswerer(), INFO, force=True).run(qs, out)
    assert [r["id"] for r in lines(out)] == ["q0", "q1"]


def test_output_from_another_config_is_refused_unless_forced(tmp_path):
    qs = read_questions(questions_file(tmp_path, 2)).questions
    out = tmp_path / "out.jsonl"
    BatchRunner(FakeAnswerer(), INFO).run(qs[:1], out)
    other = RunInfo("cfg1111111111111", "res1111111111111", {}, "abc123")
    with pytest.raises(OutputFileError, match="another configuration"):
        BatchRunner(FakeAnswerer(), other).run(qs, out)
    assert len(lines(out)) == 1
    fake = FakeAnswerer()
    BatchRunner(fake, other, force=True).run(qs, out)
    assert len(fake.started) == 2 and {r["config_hash"] for r in lines(out)} == {"cfg1111111111111"}


def test_a_second_writer_is_refused_while_the_file_is_locked(tmp_path):
    out = tmp_path / "out.jsonl"
    with ResultWriter(out):
        with pytest.raises(OutputFileError, match="another `rag batch`"):
            ResultWriter(out)


def test_many_failures_in_a_row_stop_the_batch_and_keep_what_was_written(tmp_path):
    qs = read_questions(questions_file(tmp_path, 10)).questions
    fake = FakeAnswerer(default=FakeBehaviour(raises="connection refused"))
    with pytest.raises(BatchAbortedError, match="3 questions failed in a row"):
        BatchRunner(fake, INFO, BatchConfig(concurrency=1, max_consecutive_failures=3)).run(qs, tmp_path / "o.jsonl")
    assert len(lines(tmp_path / "o.jsonl")) == 3


def test_summary_percentiles_and_tokens_are_computed_from_the_lines(tmp_path):
    qs = read_questions(questions_file(tmp_path, 5)).questions
    beh = {f"question {i}?": FakeBehaviour(retrieval_ms=float(10 * (i + 1)), prompt_tokens=100 + i, completion_tokens=i)
           for i in range(5)}
    rep = BatchRunner(FakeAnswerer(beh), INFO).run(qs, tmp_path / "o.jsonl")
    s = rep.summary
    r = s.latency_ms["retrieval"]  # 10, 20, 30, 40, 50
    assert (r.n, r.p50, r.mean, r.max) == (5, 30.0, 30.0, 50.0)
    assert r.p95 == pytest.approx(48.0)  # linear interpolation: 40 + 0.8 * 10
    assert s.prompt_tokens == 510 and s.completion_tokens == 10
    text = s.table()
    assert "answered" in text and "retrieval" in text and "p95" in text
    again = summarize(scan_output(tmp_path / "o.jsonl").records.values())
    assert again == s


def test_record_round_trips_through_json(tmp_path):
    qs = read_questions(questions_file(tmp_path, 1)).questions
    BatchRunner(FakeAnswerer(), INFO).run(qs, tmp_path / "o.jsonl")
    row = lines(tmp_path / "o.jsonl")[0]
    assert BatchRecord.from_json(row).to_json() == row


KILL_SCRIPT = r"""
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from rag.batch import BatchRunner, RunInfo, read_questions
from rag.config import BatchConfig
from tests.fakes import FakeAnswerer, FakeBehaviour
info = RunInfo("cfg0000000000000", "res0000000000000", {{}}, None)
qs = read_questions({q!r}).questions
BatchRunner(FakeAnswerer(default=FakeBehaviour(delay_s=0.02)), info, BatchConfig(concurrency=3)).run(qs, Path({o!r}))
"""


def test_kill_9_mid_run_leaves_only_whole_lines_and_resume_finishes_each_question_once(tmp_path):
    qpath = questions_file(tmp_path, 400)
    out = tmp_path / "out.jsonl"
    script = KILL_SCRIPT.format(root=str(ROOT), q=str(qpath), o=str(out))
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    deadline = time.time() + 60
    while time.time() < deadline and (not out.exists() or out.read_bytes().count(b"\n") < 20):
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    data = out.read_bytes()
    n_before = data.count(b"\n")
    assert 20 <= n_before < 400, "the batch should have been killed mid-run"
    existing = scan_output(out, repair=False) if data.endswith(b"\n") else scan_output(out)
    assert len(existing.records) >= 20
    qs = read_questions(qpath).questions
    fake = FakeAnswerer()
    rep = BatchRunner(fake, INFO.__class__("cfg0000000000000", "res0000000000000", {}, None)).run(qs, out)
    assert set(fake.started).isdisjoint(q.question for q in qs if q.id in existing.records)
    assert rep.complete and rep.summary.questions == 400
    assert [r["id"] for r in lines(out)] == [q.id for q in qs]


# --------------------------------------------------------------------------- the real pipeline, through the CLI
def test_rag_batch_cli_answers_the_demo_questions_with_the_real_pipeline_and_resumes(tmp_path, capsys):
    from rag.cli.main import main
    from tests.conftest import DEMO_QUESTIONS, write_config

    cfg = write_config(tmp_path)
    assert main(["index", "--config", str(cfg)]) == 0
    q = tmp_path / "q.jsonl"
    q.write_text("".join(DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines(keepends=True)[:5]), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    capsys.readouterr()
    rc = main(["batch", str(q), "-o", str(out), "--config", str(cfg), "--concurrency", "2",
               "--summary-json", str(tmp_path / "summary.json")])
    printed = capsys.readouterr().out
    assert rc == 0
    rows = lines(out)
    assert [r["id"] for r in rows] == ["q01", "q02", "q03", "q04", "q05"]
    from rag.config import load_config

    assert {r["config_hash"] for r in rows} == {load_config(cfg).hash}
    assert all(r["status"] in ("answered", "insufficient_evidence") for r in rows)
    assert all(r["models"]["embedding"].startswith("hashing:") for r in rows)
    for r in rows:  # the line carries the AnswerResult's own JSON and its per-stage timings
        assert r["result"]["status"] == r["status"]
        assert {"bm25", "dense", "fusion", "total"} <= set(r["timings_ms"])
    assert "answered" in printed and "latency (ms)" in printed
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["questions"] == 5 and summary["failed"] == 0
    # rerun: nothing to do; another config on the same output: refused (exit 2, file untouched)
    before = out.read_bytes()
    assert main(["batch", str(q), "-o", str(out), "--config", str(cfg)]) == 0
    assert out.read_bytes() == before
    assert main(["batch", str(q), "-o", str(out), "--config", str(cfg), "--set", "retrieval.candidates=5"]) == 2
    assert "another configuration" in capsys.readouterr().err
    assert out.read_bytes() == before
    # batch.concurrency is operational: changing it does not make the output "another configuration"
    assert main(["batch", str(q), "-o", str(out), "--config", str(cfg), "--set", "batch.concurrency=1"]) == 0


def test_rag_batch_cli_reports_bad_lines_and_stops_or_skips(tmp_path, capsys):
    from rag.cli.main import main
    from tests.conftest import write_config

    cfg = write_config(tmp_path)
    assert main(["index", "--config", str(cfg)]) == 0
    q = tmp_path / "q.jsonl"
    q.write_text('{"id": "a", "question": "연차 휴가는 며칠인가요?"}\n{"id": "a", "question": "dup"}\n{oops\n',
                 encoding="utf-8")
    out = tmp_path / "out.jsonl"
    capsys.readouterr()
    assert main(["batch", str(q), "-o", str(out), "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "q.jsonl:2: duplicate_id" in err and "q.jsonl:3: malformed" in err
    assert not out.exists()
    assert main(["batch", str(q), "-o", str(out), "--config", str(cfg), "--on-invalid", "skip"]) == 0
    assert "skipped 2 bad input line(s): 2 (duplicate_id), 3 (malformed)" in capsys.readouterr().err
    assert [r["id"] for r in lines(out)] == ["a"]


def test_rag_batch_cli_without_an_index_fails_before_writing_anything(tmp_path, capsys):
    from rag.cli.main import main
    from tests.conftest import write_config

    cfg = write_config(tmp_path)
    (tmp_path / "q.txt").write_text("hello?\n", encoding="utf-8")
    assert main(["batch", str(tmp_path / "q.txt"), "-o", str(tmp_path / "o.jsonl"), "--config", str(cfg)]) == 2
    assert "rag index" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()
