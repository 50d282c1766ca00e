"""Every default is declared once, in rag/config/.

A stage component takes its config section as ``config`` and, built without one, holds exactly
the section's defaults (the parametrised test below). And no public callable of a stage package
declares its own default for a name that is also a config key (the signature scan), so a
default cannot drift from the config's.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import pytest

from rag import answer, batch, context, index, models, rerank, retrieval, text
from rag.config import RagConfig
from rag.errors import ConfigError, ConfigValueError
from rag.text import WhitespaceCounter

DEFAULTS = RagConfig()


def _scorer() -> Any:
    return rerank.CrossEncoderScorer()


# (what, build the component with no config, read its config, the section it must equal)
COMPONENTS: list[tuple[str, Callable[[], Any], Callable[[Any], Any], Any]] = [
    ("ContextBuilder", lambda: context.ContextBuilder(WhitespaceCounter()), lambda c: c.config, DEFAULTS.context),
    ("PromptBuilder", lambda: context.PromptBuilder(WhitespaceCounter()), lambda c: c.config, DEFAULTS.context),
    ("GuidelineSelector", lambda: context.GuidelineSelector(()), lambda c: (c.mode, c.threshold),
     (DEFAULTS.context.guideline_match, DEFAULTS.context.guideline_threshold)),
    ("Chunker", lambda: index.Chunker(), lambda c: (c.config, c.max_tokens, c.overlap_tokens, c.counter.name),
     (DEFAULTS.chunking, DEFAULTS.chunking.max_tokens, DEFAULTS.chunking.overlap_tokens,
      f"tiktoken:{DEFAULTS.chunking.encoding}")),
    ("BM25Index", lambda: index.BM25Index(), lambda c: (c.config, c.backend, c.k1, c.b),
     (DEFAULTS.bm25, DEFAULTS.bm25.backend, DEFAULTS.bm25.k1, DEFAULTS.bm25.b)),
    ("CrossEncoderScorer", _scorer, lambda c: (c.config, c.model, c.max_length, c.batch_size, c.quantize),
     (DEFAULTS.rerank, DEFAULTS.rerank.model, DEFAULTS.rerank.max_length, DEFAULTS.rerank.batch_size,
      DEFAULTS.rerank.quantize)),
    ("CrossEncoderReranker", lambda: rerank.CrossEncoderReranker(_scorer()),
     lambda c: (c.config, c.top_n, c.blend_weight, c.languages),
     (DEFAULTS.rerank, DEFAULTS.rerank.top_n, DEFAULTS.rerank.blend_weight, DEFAULTS.rerank.languages)),
    ("CitationValidator", lambda: answer.CitationValidator(), lambda c: c.config, DEFAULTS.validation),
    ("make_embedder", lambda: models.make_embedder(), lambda e: (e.model_id, e.batch_size, e.query_prefix),
     ("st:all-MiniLM-L6-v2", DEFAULTS.embedding.batch_size, DEFAULTS.embedding.query_prefix)),
    ("make_analyzer", lambda: text.make_analyzer(DEFAULTS.bm25.analyzer), lambda a: a.name,
     text.make_analyzer(DEFAULTS.bm25.analyzer, DEFAULTS.bm25.stem, DEFAULTS.bm25.stopwords).name),
    ("TiktokenCounter", lambda: text.TiktokenCounter(), lambda c: c.encoding, DEFAULTS.chunking.encoding),
    ("BatchRunner", lambda: batch.BatchRunner(object(), batch.RunInfo("c", "r", {}, None)), lambda r: r.config,
     DEFAULTS.batch),
    ("ExtractiveGenerator", lambda: answer.ExtractiveGenerator(), lambda c: (c.config, c.validation),
     (DEFAULTS.generation, DEFAULTS.validation)),
    ("LlamaCppGenerator", lambda: answer.LlamaCppGenerator(), lambda c: c.config, DEFAULTS.generation),
]


@pytest.mark.parametrize(("make", "read", "expected"), [c[1:] for c in COMPONENTS], ids=[c[0] for c in COMPONENTS])
def test_stage_defaults_equal_config_defaults(make, read, expected):
    assert read(make()) == expected


def _config_keys() -> dict[str, set[str]]:
    """Every config key name -> the dotted paths it appears at."""
    out: dict[str, set[str]] = {}

    def walk(model: Any, prefix: str) -> None:
        for name, field in type(model).model_fields.items():
            value = getattr(model, name)
            path = f"{prefix}{name}"
            if hasattr(type(value), "model_fields"):
                walk(value, path + ".")
            else:
                out.setdefault(name, set()).add(path)

    walk(DEFAULTS, "")
    return out


# Parameters that share a name with a config key but mean something else: (callable, parameter).
NOT_CONFIG = {
    ("HashingEmbedder.__init__", "dim"),  # a test/offline embedder's own size, not embedding.dim of a real model
    ("make_counter", "tokenizer"), ("make_counter", "model"),  # given explicitly by every caller (context.*)
    ("Calibration.__init__", "b"),  # Platt scaling's intercept, not bm25.b
    # the reranker calibration's own fitting set (a dataset name), not gate.fitted_on (a corpus fingerprint)
    ("Calibration.__init__", "fitted_on"), ("fit_platt", "fitted_on"),
    ("GenerationOutput.__init__", "model"),  # the model a server reports it used
    ("Locator.__init__", "path"), ("Segment.__init__", "path"),  # a heading path in a text, not index.path
    ("ContextBlock.__init__", "uri"), ("Evidence.__init__", "uri"),  # a document's own address, not index.milvus.uri
}


def _public_callables():
    for pkg in (text, models, index, retrieval, rerank, context, answer):
        for name in sorted(pkg.__all__):
            obj = getattr(pkg, name)
            if inspect.isclass(obj):
                if "__init__" in vars(obj):
                    yield f"{name}.__init__", obj.__init__
                for meth_name, meth in sorted(vars(obj).items()):
                    if inspect.isfunction(meth) and not meth_name.startswith("_"):
                        yield f"{name}.{meth_name}", meth
            elif inspect.isfunction(obj):
                yield name, obj


def test_no_component_redeclares_a_config_default():
    keys = _config_keys()
    clashes = []
    for qual, fn in _public_callables():
        for p in inspect.signature(fn).parameters.values():
            if p.name in keys and p.default is not inspect.Parameter.empty and p.default is not None \
                    and (qual, p.name) not in NOT_CONFIG:
                clashes.append(f"{qual}({p.name}={p.default!r}) shadows config key {sorted(keys[p.name])}")
    assert clashes == []


def test_a_section_built_in_python_reports_the_dotted_path():
    with pytest.raises(ConfigError, match=r"context\.max_blocks: must be >= 1, got 0") as exc:
        context.ContextBuilder(WhitespaceCounter(), RagConfig().context.__class__(max_blocks=0))
    assert isinstance(exc.value, ConfigValueError) and isinstance(exc.value, ValueError)
    from rag.config import FusionConfig

    with pytest.raises(ConfigError, match=r"retrieval\.fusion: bm25_weight \+ dense_weight must be > 0"):
        FusionConfig(bm25_weight=0, dense_weight=0)
