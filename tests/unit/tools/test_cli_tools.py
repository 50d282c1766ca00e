"""``rag tools select`` and ``rag tools format``."""
from __future__ import annotations

import json

from rag.cli.main import main
from tests.conftest import FIXTURES, write_config

TOOLS = str(FIXTURES / "tools" / "cloud.yaml")


def test_select_json_and_text(tmp_path, capsys):
    cfg = str(write_config(tmp_path))
    assert main(["tools", "select", "Redis 클러스터 상태 알려줘", "--tools", TOOLS, "--config", cfg, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    names = [t["name"] for t in out["selected"]]
    assert names and all("redis" in n for n in names) and out["left_out"] == 25 - len(names)
    assert set(out) == {"selected", "left_out"} and set(out["selected"][0]) == {"name", "score"}
    assert main(["tools", "select", "버킷 목록", "--tools", TOOLS, "--config", cfg, "--top", "2"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("2 of 25 tools") or text.startswith("1 of 25 tools")
    assert "left out:" in text
    openapi = str(FIXTURES / "tools" / "petstore.yaml")
    assert main(["tools", "select", "list the orders of a store", "--tools", openapi, "--config", cfg, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["selected"][0]["name"] == "store/list-orders"


def test_format_prints_evidence_and_token_counts(tmp_path, capsys):
    cfg = str(write_config(tmp_path))
    resp = tmp_path / "r.json"
    resp.write_text(json.dumps({"clusters": [{"name": f"r{i}", "status": "active"} for i in range(50)]}), encoding="utf-8")
    assert main(["tools", "format", str(resp), "--config", cfg]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Schema\nclusters!: array\n  name!: string") and "minified JSON" in text
    assert main(["tools", "format", str(resp), "--config", cfg, "--json", "--max-tokens", "120"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tokens"] <= 120 and out["trims"][0].startswith("$.clusters: kept")
    assert out["untrimmed"]["pretty_json"] > out["untrimmed"]["minified_json"]


def test_bad_files_are_clear_errors(tmp_path, capsys):
    cfg = str(write_config(tmp_path))
    assert main(["tools", "format", str(tmp_path / "missing.json"), "--config", cfg]) == 2
    assert "response file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    assert main(["tools", "format", str(bad), "--config", cfg]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["tools", "select", "x", "--tools", str(bad), "--config", cfg]) == 2
    assert "error:" in capsys.readouterr().err
