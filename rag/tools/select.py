"""Question analysis and tool selection: the few tools that matter for one question.

The tools are indexed with the project's own retrievers (BM25 with the configured analyzer and
the dense embedder, one short document per tool: its name split into words, product, tags and
description), fused by weighted min-max fusion, grouped by product, and cut by a score threshold
and a maximum count (``tools`` config section). Only the selected tools' definitions are sent to
the model; the trace keeps the scores and how many were left out."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from rag.config import RagConfig, ToolsConfig
from rag.context.sanitize import injection_signals
from rag.index.chunking import Chunker
from rag.models.embedders import Embedder
from rag.index.store import build_index
from rag.retrieval.fusion import fuse
from rag.text.analyzers import Analyzer
from rag.lang import OTHER, detect_language
from rag.tools.format import name_words
from rag.tools.registry import ToolRegistry, ToolSpec
from rag.types import Document

logger = logging.getLogger(__name__)


def _head(spec: ToolSpec) -> str:
    """The name as words, with the product: ``list redis clusters (Redis)``."""
    words = " ".join(name_words(spec.name))
    return f"{words} ({spec.product})" if spec.product else words


def tool_text(spec: ToolSpec) -> str:
    """What a tool is indexed by: name as words, product, tags, description."""
    tags = ", ".join(t for t in spec.tags if t != spec.product)
    return "\n".join(x for x in (_head(spec), tags, spec.description[:800]) if x)


def tool_summary(spec: ToolSpec) -> str:
    """A tool's short form: name as words, product and the first sentence of its description. Indexed
    beside :func:`tool_text`, so a short question can match a short text (the best of the two counts)."""
    first = re.split(r"(?<=[.!?])\s", spec.description.strip(), maxsplit=1)[0][:200]
    return f"{_head(spec)}\n{first}" if first else _head(spec)


def product_pattern(product: str) -> str:
    """A product's name as a whole-word pattern, its words joined by a space, ``-`` or ``_``
    ("secret-scanning": "secret scanning"). Singular forms are not matched: on the GitHub catalogue
    "issue", "user", "app"... then name a product in most questions, and recall fell (0.545 to 0.519)."""
    words = [w for w in re.split(r"[\s_-]+", product.lower()) if w]
    return r"[\s_-]+".join(map(re.escape, words))


def _named(product: str, question: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){product_pattern(product)}(?![a-z0-9])", question) is not None


@dataclass(frozen=True)
class ToolQuestion:
    language: str
    products_named: tuple[str, ...]  # products whose name occurs in the question
    cross_lingual: bool = False  # the question is not in the catalogue's language: dense only

    def to_json(self) -> dict:
        return {"language": self.language, "products_named": list(self.products_named),
                "cross_lingual": self.cross_lingual}


@dataclass(frozen=True)
class ScoredTool:
    name: str
    product: str
    score: float  # fused, min-max normalised within this question (1.0 = best)
    dense: float | None  # cosine of the question and the tool text
    bm25: float | None

    def to_json(self) -> dict:
        return {"name": self.name, "product": self.product, "score": round(self.score, 4),
                "dense": None if self.dense is None else round(self.dense, 4),
                "bm25": None if self.bm25 is None else round(self.bm25, 4)}


@dataclass(frozen=True)
class Selection:
    """The tools picked for one question, best first, and what was left out."""

    question: str
    analysis: ToolQuestion
    selected: tuple[ScoredTool, ...]
    products: tuple[str, ...]  # products kept
    left_out: int  # tools of the registry not sent
    reason: str = ""  # why nothing was selected, if so
    withheld: tuple[str, ...] = ()  # tools never offered: their description or hints try to instruct the model
    write_tools_off: int = 0  # write tools not considered: tools.allow_write is false

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.selected)

    def to_json(self) -> dict:
        return {"selected": [t.to_json() for t in self.selected], "left_out": self.left_out,
                "products": list(self.products), "analysis": self.analysis.to_json(), "reason": self.reason,
                "withheld": list(self.withheld), "write_tools_off": self.write_tools_off}


class ToolSelector:
    """Indexes a registry's tools once; :meth:`select` per question."""

    def __init__(self, registry: ToolRegistry, config: ToolsConfig, rag_config: RagConfig, embedder: Embedder,
                 chunker: Chunker, analyzer: Analyzer) -> None:
        self.registry = registry
        self.config = config
        self.embedder = embedder
        docs = [Document(s.name, tool_text(s), "full", s.name, f"tool:{s.name}") for s in registry]
        short = [Document(s.name, tool_summary(s), "short", s.name, f"tool:{s.name}") for s in registry]
        self.index = build_index(docs + short, rag_config, chunker, analyzer, embedder)
        self._products = sorted({s.product for s in registry if s.product})
        # A tool definition is text from outside too (an OpenAPI document): one that tries to instruct
        # the model (override, steering, exfiltration...) is never offered.
        self.withheld = tuple(s.name for s in registry
                              if injection_signals("\n".join((s.description, *s.hints))))
        if self.withheld:
            logger.warning("%d tool(s) withheld as suspected prompt injection: %s", len(self.withheld),
                           ", ".join(self.withheld[:10]))
        self.writes = frozenset(s.name for s in registry if s.writes(config.undeclared_effect))
        undeclared = registry.undeclared()
        if undeclared:
            logger.warning("%d tool(s) declare no effect and count as %s (set effect: read or write): %s",
                           len(undeclared), config.undeclared_effect, ", ".join(undeclared[:10]))
        # The catalogue's language: BM25 cannot match a question in another language (a Korean
        # question against English descriptions), so such questions are ranked by dense alone.
        langs = [detect_language(d.text) for d in docs]
        self.language = max(sorted(set(langs)), key=langs.count) if langs else OTHER

    def analyze(self, question: str) -> ToolQuestion:
        q = question.lower()
        named = tuple(p for p in self._products if len(p) >= 2 and _named(p, q))
        lang = detect_language(question)
        cross = lang != self.language and OTHER not in (lang, self.language)
        return ToolQuestion(lang, named, cross)

    def rank(self, question: str, analysis: ToolQuestion | None = None) -> list[ScoredTool]:
        """Every tool scored for ``question``, best first (before product grouping and the cut)."""
        c = self.config
        analysis = analysis or self.analyze(question)
        bm25_weight = 0.0 if analysis.cross_lingual else c.bm25_weight
        n = len(self.index)
        bm = self.index.search_bm25(question, n)
        dn = self.index.search_dense(self.embedder.embed_queries([question])[0], n)
        fused = fuse({"bm25": bm, "dense": dn}, method="weighted", normalization="minmax",
                     weights={"bm25": bm25_weight, "dense": c.dense_weight}, limit=None)
        best: dict[str, ScoredTool] = {}
        for cand in fused:  # best chunk per tool (its short form, or a chunk of its full text)
            name = cand.chunk.document_id
            if name in best:
                continue
            d, b = cand.hit("dense"), cand.hit("bm25")
            best[name] = ScoredTool(name, self.registry.get(name).product, float(cand.score),
                                    d.score if d else None, b.score if b else None)
        return sorted(best.values(), key=lambda t: (-t.score, t.name))

    def select(self, question: str, max_tools: int | None = None) -> Selection:
        c = self.config
        limit = max_tools or c.max_tools
        analysis = self.analyze(question)
        # Write tools are not even considered unless allowed (the loop checks again before offering).
        writes_off = frozenset() if c.allow_write else self.writes
        ranked = [t for t in self.rank(question, analysis) if t.name not in self.withheld and t.name not in writes_off]
        off = len(writes_off)
        if not ranked:
            return Selection(question, analysis, (), (), len(self.registry), "no tool matched", self.withheld, off)
        top_dense = max((t.dense for t in ranked if t.dense is not None), default=None)
        if top_dense is not None and top_dense < c.min_similarity and not analysis.products_named:
            return Selection(question, analysis, (), (), len(self.registry),
                             f"best tool similarity {top_dense:.3f} < tools.min_similarity {c.min_similarity:g}",
                             self.withheld, off)
        top = ranked[0].score  # 0 when min-max has nothing to tell apart (one tool): every tool is the best

        # A product named in the question decides the group ("Redis 클러스터 상태" -> Redis tools only);
        # otherwise the products of the best tools, at most max_products (0: any product).
        products: list[str] = list(analysis.products_named)
        for t in ranked if not products else ():
            if c.max_products and len(products) >= c.max_products:
                break
            if t.product not in products:
                products.append(t.product)
        passing = [t for t in ranked if top <= 0 or t.score / top >= c.min_score]
        # The head of the whole ranking stays whatever product is named: a product named in passing
        # ("the firewall of my Droplets") does not shut out the tool the question is about.
        head = passing[:min(c.keep_top, limit)]
        grouped = [t for t in passing if t.product in products and t not in head]
        picked = sorted([*head, *grouped[:limit - len(head)]], key=ranked.index)
        products = [pr for pr in products if any(t.product == pr for t in picked)]
        return Selection(question, analysis, tuple(picked), tuple(products), len(self.registry) - len(picked),
                         withheld=self.withheld, write_tools_off=off)
