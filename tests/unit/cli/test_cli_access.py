"""``--as``, ``--group`` and ``--tenant`` on ``rag search | context | ask | batch``, and batch lines
that carry their own principal."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.cli.main import main
from tests.conftest import write_config

DOCS = [
    {"id": "pub", "title": "휴가 안내", "uri": "mem://pub", "text": "연차 휴가는 15일이다. 휴가 신청은 팀장에게 한다."},
    {"id": "hr-pay", "title": "급여표", "uri": "mem://hr-pay", "access": {"groups": ["hr"], "tenant": "acme"},
     "text": "연차 휴가 수당 급여 기준표는 canaryhr 표를 따른다. 연차 휴가 수당은 통상임금으로 준다."},
    {"id": "kim-note", "title": "김 메모", "uri": "mem://kim", "access": {"users": ["kim"]},
     "text": "연차 휴가 수당 메모 canarykim 연차 휴가 수당."},
]
QUESTION = "연차 휴가 수당 급여 기준표는?"


@pytest.fixture
def cfg(tmp_path: Path) -> str:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in DOCS), encoding="utf-8")
    path = write_config(tmp_path, corpus={"paths": [str(src)], "format": "jsonl"})
    assert main(["index", "--config", str(path)]) == 0
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(list(argv))
    return rc, capsys.readouterr().out


def search_ids(capsys, cfg: str, *who: str) -> set[str]:
    rc, out = run(capsys, "search", QUESTION, "--config", cfg, "--json", *who)
    assert rc == 0
    return {c["document_id"] for c in json.loads(out)["candidates"]}


def test_search_as_user_group_and_tenant(cfg, capsys):
    assert search_ids(capsys, cfg) == {"pub"}
    assert search_ids(capsys, cfg, "--group", "hr") == {"pub"}  # the tenant must match too
    assert search_ids(capsys, cfg, "--as", "lee", "--group", "ops", "--group", "hr", "--tenant", "acme") == \
        {"pub", "hr-pay"}
    assert search_ids(capsys, cfg, "--as", "kim") == {"pub", "kim-note"}


def test_ask_and_context_as_a_principal(cfg, capsys):
    rc, out = run(capsys, "ask", QUESTION, "--config", cfg, "--json")
    assert rc == 0 and not any(s in out for s in ("hr-pay", "canaryhr", "kim-note", "canarykim", "mem://hr"))
    rc, out = run(capsys, "ask", QUESTION, "--config", cfg, "--json", "--group", "hr", "--tenant", "acme")
    assert rc == 0 and "hr-pay" in out and "kim-note" not in out
    rc, out = run(capsys, "context", QUESTION, "--config", cfg, "--json")
    assert rc == 0 and "hr-pay" not in out
    rc, out = run(capsys, "context", QUESTION, "--config", cfg, "--json", "--as", "kim")
    assert rc == 0 and "kim-note" in out and "hr-pay" not in out


def test_require_principal_refuses_an_anonymous_command(cfg, capsys):
    capsys.readouterr()
    assert main(["search", QUESTION, "--config", cfg, "--set", "security.require_principal=true"]) == 2
    assert "require_principal" in capsys.readouterr().err
    assert main(["search", QUESTION, "--config", cfg, "--set", "security.require_principal=true",
                 "--as", "kim"]) == 0
    assert main(["search", QUESTION, "--config", cfg, "--as", ""]) == 2  # an empty user is an error


def test_batch_default_principal_and_per_line_principals(cfg, tmp_path, capsys):
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in [
        {"id": "default", "question": QUESTION},
        {"id": "kim", "question": QUESTION, "principal": {"user": "kim"}},
        {"id": "anon", "question": QUESTION, "principal": None},
    ]), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    rc = main(["batch", str(q), "-o", str(out), "--config", cfg, "--group", "hr", "--tenant", "acme"])
    assert rc == 0
    rows = {r["id"]: json.dumps(r, ensure_ascii=False) for r in map(json.loads, out.read_text("utf-8").splitlines())}
    assert "hr-pay" in rows["default"] and "kim-note" not in rows["default"]
    assert "hr-pay" not in rows["kim"] and "canaryhr" not in rows["kim"]
    assert not any(s in rows["anon"] for s in ("hr-pay", "kim-note", "canary"))
    assert all("principal" not in json.loads(r)["gold"] for r in rows.values())
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "question": QUESTION, "principal": {"name": "kim"}}) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["batch", str(bad), "-o", str(tmp_path / "o2.jsonl"), "--config", cfg]) == 2
    assert "unknown key" in capsys.readouterr().err


def test_batch_lines_name_their_principal_and_a_resume_for_another_answers_again(cfg, tmp_path, capsys):
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"id": "one", "question": QUESTION}, ensure_ascii=False) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["batch", str(q), "-o", str(out), "--config", cfg, "--group", "hr", "--tenant", "acme"]) == 0
    first = json.loads(out.read_text("utf-8"))
    assert first["principal"] == {"user": None, "groups": ["hr"], "tenant": "acme"}
    assert "hr-pay" in json.dumps(first, ensure_ascii=False)
    # the same file again, as the anonymous caller: the hr answer is not kept for it
    assert main(["batch", str(q), "-o", str(out), "--config", cfg]) == 0
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(rows) == 1 and rows[0]["principal"] is None  # answered again; the finished file is compacted
    assert not any(s in json.dumps(rows[0], ensure_ascii=False) for s in ("hr-pay", "canaryhr"))
    # and once more as anonymous: nothing to do
    capsys.readouterr()
    assert main(["batch", str(q), "-o", str(out), "--config", cfg]) == 0
    assert len(out.read_text("utf-8").splitlines()) == 1
