"""Shared by the pipeline tests: one demo index built per module (hashing embedder, an open gate),
and pipelines derived from it that share its embedder and index."""
from __future__ import annotations

import pytest

from rag.config import load_config
from rag.pipeline import Pipeline
from tests.conftest import write_config


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pipeline")
    p = Pipeline(load_config(write_config(tmp, gate={"fallback_threshold": -1.0})))
    p.build_index()
    return p


@pytest.fixture
def derived():
    """``derived(p, generator=None, **overrides)``: a pipeline on ``p``'s config with ``overrides``,
    sharing its embedder and index (nothing is built again)."""
    def make(p: Pipeline, generator=None, **overrides) -> Pipeline:
        return Pipeline(p.config.with_overrides(overrides), embedder=p.components.embedder, index=p.index, generator=generator)

    return make
