"""The command line on the Milvus backend (milvus-lite in a file): index, search, add/delete with
--set, and `rag migrate` both ways without embedding again."""
from __future__ import annotations

import json

import pytest

from rag.cli.main import main
from tests.conftest import write_config

pytest.importorskip("milvus_lite", reason="milvus-lite is not installed (pip install 'rag[milvus]')")


def test_index_search_add_delete_on_milvus(tiny_config, tmp_path, capsys):
    on = ["--set", "index.backend=milvus", "--set", f"index.milvus.uri={tmp_path / 'rag.db'}"]
    assert main(["index", "--config", str(tiny_config), *on]) == 0
    out = capsys.readouterr().out
    assert "indexed 35 documents" in out and "Milvus" in out and "rag.db" in out
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"id": "parking-policy", "version": "2026.1", "text": "Parking is free for bicycles.",
                               "title": "Parking"}) + "\n", encoding="utf-8")
    assert main(["add", str(new), "--config", str(tiny_config), *on]) == 0
    assert "added 1, removed 0" in capsys.readouterr().out
    cfg = write_config(tmp_path / "milvus", index={"backend": "milvus", "milvus": {"uri": str(tmp_path / "rag.db")}})
    assert main(["search", "bicycles parking free", "--config", str(cfg), "--json"]) == 0
    top = json.loads(capsys.readouterr().out)["candidates"][0]
    assert (top["document_id"], top["version"]) == ("parking-policy", "2026.1")
    assert main(["delete", "parking-policy", "--config", str(cfg)]) == 0  # every version of the id
    assert "removed parking-policy:2024.1, parking-policy:2026.1" in capsys.readouterr().out
    assert main(["delete", "parking-policy", "--config", str(cfg)]) == 2
    assert "not in the index" in capsys.readouterr().err


def test_migrate_local_to_milvus_and_back(tiny_config, tmp_path, capsys):
    assert main(["index", "--config", str(tiny_config)]) == 0
    milvus = write_config(tmp_path / "m", index={"backend": "milvus", "milvus": {"uri": str(tmp_path / "m.db")}})
    back = write_config(tmp_path / "back")
    capsys.readouterr()
    assert main(["migrate", "--from", str(tiny_config), "--to", str(milvus), "--batch-documents", "10"]) == 0
    assert "35 documents copied, 0 already there, 35 in the source" in capsys.readouterr().out
    assert main(["migrate", "--from", str(tiny_config), "--to", str(milvus)]) == 0  # resumable: nothing left
    assert "0 documents copied, 35 already there" in capsys.readouterr().out
    assert main(["migrate", "--from", str(milvus), "--to", str(back)]) == 0
    capsys.readouterr()
    q = "How often must passwords be changed?"
    results = []
    for cfg in (tiny_config, milvus, back):
        main(["search", q, "--config", str(cfg), "--json", "--top", "5"])
        results.append([c["evidence_id"] for c in json.loads(capsys.readouterr().out)["candidates"]])
    assert results[0] == results[2] and results[0][0] == results[1][0]
    other = write_config(tmp_path / "o", index={"backend": "milvus", "milvus": {"uri": str(tmp_path / "o.db")}},
                         embedding={"backend": "hashing", "dim": 64})
    assert main(["migrate", "--from", str(tiny_config), "--to", str(other)]) == 2
    assert "without embedding or chunking again" in capsys.readouterr().err
