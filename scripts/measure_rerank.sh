#!/usr/bin/env bash
# Reproduces the reranking and abstention numbers in README.md (writes results/*.json, results/calibrate-*/).
# Usage: scripts/measure_rerank.sh [DATA_DIR]   (default ../shared/data)
# Training the committed checkpoint (not repeated here; about 45 minutes on 2 cores):
#   rag train-reranker --config configs/reranker/minilm-listwise.yaml
set -euo pipefail
D=${1:-../shared/data}
R="python -m rag.cli"
G=.rag/train/reranker-minilm-listwise/groups.jsonl
mkdir -p results
# 1. Development data only: blend weight and Platt calibration on MS MARCO queries unused in training.
if [ -f "$G" ]; then
  python scripts/tune_reranker.py --model rag/_models/reranker-minilm --groups "$G" --queries 300
fi
# 2. SciFact: the 40% of train queries held out of reranker training (hybrid vs hybrid + rerank).
$R eval-retrieval --dataset $D/scifact --split train --config configs/en.yaml --holdout 40 \
   --json results/scifact_heldout_rerank.json
# 3. Korean: does the English-only reranker hurt Korean queries? (forced on; the shipped configs skip it)
$R eval-retrieval --dataset $D/korquad1 --split test --config configs/ko.yaml --max-queries 300 \
   --set 'rerank.languages=[en, ko]' --json results/korquad300_rerank_forced.json
# 4. Abstention: fit thresholds on the calib half, report on the eval half.
for P in 0.8; do
  $R calibrate --dataset $D/nomiracl/ko.test.jsonl --config configs/ko.yaml --split calib --target-precision $P \
     --out configs/ko.calibrated.yaml --report results/calibrate-nomiracl-ko
  $R eval-abstention --dataset $D/nomiracl/ko.test.jsonl --config configs/ko.calibrated.yaml --split eval \
     --compare results/calibrate-nomiracl-ko/calibration.json --json results/abstention_nomiracl_ko_eval.json
  $R calibrate --dataset $D/squad2/dev-v2.0-half.json --config configs/en.yaml --split calib --target-precision $P \
     --out configs/en.calibrated.yaml --report results/calibrate-squad2
  $R eval-abstention --dataset $D/squad2/dev-v2.0-half.json --config configs/en.calibrated.yaml --split eval \
     --compare results/calibrate-squad2/calibration.json --json results/abstention_squad2_eval.json
done
# English NoMIRACL-style set from MS MARCO dev queries unused in training (the shipped English threshold).
if [ -f "$G" ]; then
  python scripts/make_msmarco_abstention.py --groups "$G" --queries 600 --out .rag/data/msmarco_en_abstention.jsonl
  $R calibrate --dataset .rag/data/msmarco_en_abstention.jsonl --config configs/en.yaml --split calib --target-precision 0.8 \
     --out configs/en.msmarco.calibrated.yaml --report results/calibrate-msmarco-en
  $R eval-abstention --dataset .rag/data/msmarco_en_abstention.jsonl --config configs/en.msmarco.calibrated.yaml --split eval \
     --compare results/calibrate-msmarco-en/calibration.json --json results/abstention_msmarco_en_eval.json
fi
# The demo's lenient Korean operating point (configs/default.yaml; its English one is read off the same MS MARCO curve at 0.6).
$R calibrate --dataset $D/nomiracl/ko.test.jsonl --config configs/ko.yaml --split calib --target-precision 0.6 \
   --out configs/ko.p60.calibrated.yaml --report results/calibrate-nomiracl-ko-p60
# 5. The reranker forced onto Korean questions (to justify routing Korean around it).
$R eval-abstention --dataset $D/nomiracl/ko.test.jsonl --config configs/ko.yaml --split eval \
   --set 'rerank.languages=[en, ko]' --json results/abstention_nomiracl_ko_eval_reranker_forced.json
# 6. Latency.
python scripts/bench_rerank.py --repeats 10 --quality-queries 120
