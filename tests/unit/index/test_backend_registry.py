"""The backend registry (rag.index.backend): a name picks one class, an unknown name is a typed
config error, both classes satisfy IndexBackend, and the local backend's write / poll
save and find versions. Nothing here connects to Milvus or loads an embedding model."""
from __future__ import annotations

import pytest

from rag.config import load_config
from rag.errors import ConfigError, IndexCorruptError, IndexMismatchError, IndexNotFoundError
from rag.index.backend import BACKENDS, IndexBackend, LocalBackend, MilvusBackend, make_backend
from rag.index.chunking import Chunker
from rag.index.layout import current_version
from rag.pipeline import Pipeline
from rag.text.analyzers import make_analyzer
from rag.types import Document
from tests.conftest import write_config

DOCS = [Document("pw", "Passwords must be changed every 90 days.", "1", "IT security"),
        Document("leave", "연차 휴가는 입사 첫해 15일이다.", "2024.1", "연차 규정")]


class UntouchedEmbedder:
    """An embedder that fails the test when anything but its id is asked (no model may load)."""

    model_id = "untouched:0"

    def __getattr__(self, name: str):
        raise AssertionError(f"the backend asked the embedder for {name!r}")


def _config(tmp_path, **index):
    return load_config(write_config(tmp_path, index=index) if index else write_config(tmp_path))


def _backend(cfg, embedder=None):
    b = cfg.bm25
    return make_backend(cfg, lambda: Chunker(cfg.chunking),
                        lambda: make_analyzer(b.analyzer, stem=b.stem, stopwords=b.stopwords),
                        embedder if embedder is not None else UntouchedEmbedder())


def test_the_name_picks_the_class(tmp_path):
    local = _backend(_config(tmp_path))
    milvus = _backend(_config(tmp_path, backend="milvus", milvus={"uri": str(tmp_path / "m.db")}))
    assert type(local) is LocalBackend and local.name == "local"
    assert type(milvus) is MilvusBackend and milvus.name == "milvus"
    assert BACKENDS == {"local": LocalBackend, "milvus": MilvusBackend}


def test_an_unknown_backend_is_a_config_error_naming_the_known_ones(tmp_path):
    cfg = _config(tmp_path)
    bad = cfg.model_copy(update={"index": cfg.index.model_copy(update={"backend": "qdrant"})})
    with pytest.raises(ConfigError, match=r"index\.backend.*'qdrant'.*local, milvus"):
        _backend(bad)


def test_both_backends_satisfy_the_protocol(tmp_path):
    members = [m for m in IndexBackend.__dict__ if not m.startswith("_")] + ["name"]
    for cfg in (_config(tmp_path), _config(tmp_path, backend="milvus", milvus={"uri": str(tmp_path / "m.db")})):
        b = _backend(cfg)
        assert isinstance(b, IndexBackend)
        assert all(hasattr(type(b), m) for m in members), members


def test_location_and_exists_load_no_model(tmp_path):
    cfg = _config(tmp_path)
    b = _backend(cfg)
    assert b.location == str(cfg.resolve(cfg.index.path))
    assert not b.exists()
    label = _backend(_config(tmp_path, backend="milvus", milvus={"uri": str(tmp_path / "m.db"),
                                                                   "collection": "c1"})).location
    assert label == f"Milvus {tmp_path / 'm.db'} collection 'c1'"


def test_an_import_target_takes_the_dimension_given(tmp_path):
    b = _backend(_config(tmp_path))
    goal = b.import_target(7)  # no index yet: an empty one, sized without asking the embedder
    assert goal.index.dim == 7 and len(goal.index) == 0
    assert goal.params == {"embedding_model": "untouched:0", "embedding_dim": 7,
                           "analyzer": goal.index.analyzer.name, "chunking": goal.index.chunking_name}


def test_a_pipeline_write_on_local_saves_a_new_version(tmp_path):
    p = Pipeline(_config(tmp_path))
    p.build_index(DOCS)
    root = p.index_path
    assert current_version(root).name == "v-000001"
    p.add_documents([Document("expense", "The team lead approves expenses.", "1", "Expenses")])
    assert current_version(root).name == "v-000002" == p.index.version_name
    assert ("expense", "1") in Pipeline(_config(tmp_path)).index.documents


def test_two_open_pipelines_lose_no_write(tmp_path):
    """The lost update: a running service and a `rag add` hold the same version open; each adds a
    document. Before one write path, the first writer's save held `a` and `c` and `b` was gone."""
    Pipeline(_config(tmp_path)).build_index([Document("a", "Document a is about apples.", "1", "A")])
    first, second = Pipeline(_config(tmp_path)), Pipeline(_config(tmp_path))
    assert first.index.version_name == second.index.version_name == "v-000001"  # both open v1
    second.add_documents([Document("b", "Document b is about bananas.", "1", "B")])
    first.add_documents([Document("c", "Document c is about cherries.", "1", "C")])
    want = {("a", "1"), ("b", "1"), ("c", "1")}
    assert set(first.index.documents) == want  # the stale writer sees the new version after its write
    assert set(Pipeline(_config(tmp_path)).index.documents) == want
    assert first.index.version_name == current_version(first.index_path).name == "v-000003"
    second.delete_document("a")  # and the other way round
    assert set(Pipeline(_config(tmp_path)).index.documents) == {("b", "1"), ("c", "1")}


def test_a_write_that_changes_nothing_still_serves_the_newest_version(tmp_path):
    Pipeline(_config(tmp_path)).build_index(DOCS)
    stale, other = Pipeline(_config(tmp_path)), Pipeline(_config(tmp_path))
    assert stale.index.version_name == "v-000001"
    other.delete_document("leave")
    rep = stale.add_documents(DOCS[:1])  # already indexed: nothing to save
    assert rep.added == () and stale.index.version_name == "v-000002"
    assert ("leave", "2024.1") not in stale.index.documents


def test_local_write_forks_and_saves_only_a_change(tmp_path):
    p = Pipeline(_config(tmp_path))
    live = p.build_index(DOCS)
    b = p.components.backend
    same, report = b.write(live, lambda idx: idx.add(DOCS[:1]))
    assert same is live and report.unchanged == ("pw:1",) and current_version(p.index_path).name == "v-000001"
    fork, report = b.write(live, lambda idx: idx.delete("pw"))
    assert fork is not live and report.removed == ("pw:1",)
    assert ("pw", "1") in live.documents and ("pw", "1") not in fork.documents  # readers kept the old version
    assert fork.version_name == current_version(p.index_path).name == "v-000002"


def test_local_write_applies_to_the_newest_version_not_the_stale_one_passed(tmp_path):
    p = Pipeline(_config(tmp_path))
    stale = p.build_index(DOCS)
    b = p.components.backend
    newer, _ = b.write(stale, lambda idx: idx.delete("pw"))
    newest, _ = b.write(stale, lambda idx: idx.delete("leave"))  # `stale` still holds pw
    assert ("pw", "1") not in newest.documents and ("leave", "2024.1") not in newest.documents
    assert newest.version_name == "v-000003"


def test_a_reader_opening_while_its_version_is_removed_reads_the_new_one(tmp_path, monkeypatch):
    p = Pipeline(_config(tmp_path))
    p.build_index(DOCS)
    b = p.components.backend
    real = b._load
    calls = []

    def racing_load():
        if not calls:  # a writer moves CURRENT on and removes v-000001 just as it is read
            calls.append(1)
            Pipeline(_config(tmp_path)).delete_document("pw")
            raise IndexCorruptError("v-000001 vanished")
        return real()
    monkeypatch.setattr(b, "_load", racing_load)
    assert b.open().version_name == "v-000002"


def test_a_failed_open_with_no_writer_around_is_raised(tmp_path, monkeypatch):
    p = Pipeline(_config(tmp_path))
    p.build_index(DOCS)
    b = p.components.backend

    def broken():
        raise IndexCorruptError("unreadable")
    monkeypatch.setattr(b, "_load", broken)
    with pytest.raises(IndexCorruptError, match="unreadable"):
        b.open()


def test_local_poll_finds_the_version_another_process_saved(tmp_path):
    served = Pipeline(_config(tmp_path))
    served.build_index(DOCS)
    live = served.index
    assert not served.components.backend.stale(live) and served.components.backend.poll(live) is None
    other = Pipeline(_config(tmp_path))
    other.delete_document("leave")
    assert served.components.backend.stale(live)
    fresh = served.components.backend.poll(live)
    assert fresh is not None and fresh.version_name == "v-000002" and ("leave", "2024.1") not in fresh.documents


def test_milvus_backend_has_nothing_to_poll(tmp_path):
    b = _backend(_config(tmp_path, backend="milvus", milvus={"uri": str(tmp_path / "m.db")}))
    sentinel = object()
    assert b.stale(sentinel) is False and b.poll(sentinel) is None


def test_local_build_refuses_an_incompatible_index_unless_forced(tmp_path):
    Pipeline(_config(tmp_path)).build_index(DOCS)
    cfg = _config(tmp_path).with_overrides({"embedding.dim": 64})
    other = Pipeline(cfg)
    with pytest.raises(IndexMismatchError, match=r"refusing to overwrite it; pass force=True / --force"):
        other.components.backend.build(DOCS)
    assert other.components.backend.build(DOCS, force=True).dim == 64


def test_a_write_with_no_index_anywhere_says_how_to_build_one(tmp_path):
    p = Pipeline(_config(tmp_path))
    with pytest.raises(IndexNotFoundError, match="rag index"):
        p.add_documents(DOCS[:1])
    assert not p.index_exists()  # nothing was created by the refused write
