#!/usr/bin/env bash
# Reproduce docs/results/gate-auto.md (issue 28): `rag calibrate --auto` (no labels) against the shipped
# thresholds and thresholds fitted on labels, scored with the labels after fitting.
#
#   benchmarks/gate_auto/run.sh [DATA] [STAGE ...]
#
# DATA    the shared data folder (default: $GATE_AUTO_DATA, else ../shared/data)
# STAGE   pool nomiracl-ko squad2 kolaw-dev kolaw-feedback demo timing-1k summary (default: all of them, in this order;
#         kolaw-feedback needs kolaw-dev's index and fitted config)
#
# Environment: GATE_AUTO_WORK (default /tmp/gate_auto: pooled corpora, configs, indexes, embedding caches,
# full calibration curves), GATE_AUTO_RESULTS (default results/gate-auto: rates, logs, /usr/bin/time -v),
# SQUAD2_MAX_QUESTIONS (unset: every question of each SQuAD 2.0 split; set: the first N by question id),
# GATE_AUTO_ONLY (set: the abstention sets refit and score --auto only, keeping the shipped and label-fitted results),
# RAG (default .venv/bin/rag), PY (default .venv/bin/python).
# The --auto reports go to results/calibrate-auto-<set> (rag calibrate --report).
# No label is read before the scoring: pool_corpus.py reads only the passages, --auto only the index.
set -euo pipefail
cd "$(dirname "$0")/../.."

DATA=${GATE_AUTO_DATA:-../shared/data}
if [ $# -gt 0 ] && [ -d "$1" ]; then DATA=$1; shift; fi
DATA=$(cd "$DATA" && pwd)
WORK=${GATE_AUTO_WORK:-/tmp/gate_auto}
RES=${GATE_AUTO_RESULTS:-results/gate-auto}
RAG=${RAG:-.venv/bin/rag}
PY=${PY:-.venv/bin/python}
HERE=benchmarks/gate_auto
STAGES=("$@")
[ ${#STAGES[@]} -gt 0 ] || STAGES=(pool nomiracl-ko squad2 kolaw-dev kolaw-feedback demo timing-1k summary)
NOMIRACL=$DATA/nomiracl/ko.test.jsonl
SQUAD2=$DATA/squad2/dev-v2.0-half.json
KOLAW=$DATA/kolaw-dev
mkdir -p "$WORK" "$RES"

log() { echo "[gate_auto $(date -u +%H:%M:%S)] $*" >&2; }

# timed OUT_PREFIX CMD...: run CMD under /usr/bin/time -v; stdout+stderr in OUT_PREFIX.log, the timing in .time
timed() {
  local out=$1; shift
  mkdir -p "$(dirname "$out")"
  log "$* > $out.log"
  /usr/bin/time -v -o "$out.time" "$@" > "$out.log" 2>&1 || { tail -20 "$out.log" >&2; exit 1; }
}

# index NAME: rag index, timed; an index already under $WORK/NAME is kept (rm -rf it to rebuild and re-time)
index() {
  if [ -d "$WORK/$1/index" ]; then log "$WORK/$1/index exists: kept"; return; fi
  timed "$RES/$1/index" "$RAG" index --config "$WORK/$1/$1.yaml"
}

# make_config NAME CORPUS: configs/default.yaml with this corpus, an index and an embedding cache under $WORK/NAME
make_config() {
  "$PY" $HERE/pool_corpus.py config configs/default.yaml "$WORK/$1/$1.yaml" \
    --corpus "$2" --index "$WORK/$1/index" --cache "$WORK/$1/cache" >/dev/null
}

run_info() {
  { echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "dirty files: $(git status --short --untracked-files=no 2>/dev/null | wc -l)"; echo "cpus: $(nproc)"
    echo "data: $DATA"; } > "$RES/run-info-$1.txt"
}

stage_pool() {
  "$PY" $HERE/pool_corpus.py corpus "$NOMIRACL" "$WORK/nomiracl-ko/corpus.jsonl"
  "$PY" $HERE/pool_corpus.py corpus "$SQUAD2" "$WORK/squad2/corpus.jsonl"
  "$PY" $HERE/pool_corpus.py corpus "$NOMIRACL" "$WORK/nomiracl-ko-1k/corpus.jsonl" --limit 1000
  make_config nomiracl-ko "$WORK/nomiracl-ko/corpus.jsonl"
  make_config squad2 "$WORK/squad2/corpus.jsonl"
  make_config nomiracl-ko-1k "$WORK/nomiracl-ko-1k/corpus.jsonl"
  make_config kolaw-dev "$KOLAW/corpus.jsonl"
}

# abstention_set NAME DATASET [--max-questions N]
abstention_set() {
  local name=$1 ds=$2; shift 2
  local w=$WORK/$name r=$RES/$name cfg=$WORK/$name/$name.yaml
  run_info "$name"
  index "$name"
  timed "$r/auto" "$RAG" calibrate --auto --config "$cfg" --out "$w/$name.auto.yaml" \
    --report "results/calibrate-auto-$name"
  cp "$w/$name.auto.yaml" "$r/"
  local variants="shipped auto labels"
  if [ -n "${GATE_AUTO_ONLY:-}" ]; then
    variants=auto  # refit and score --auto only; the shipped and label-fitted rows stay
  else
    # the label-fitted side-by-side: fitted on the calib half only
    timed "$r/calibrate-labels" "$RAG" calibrate --dataset "$ds" --split calib --target-precision 0.9 \
      --config "$cfg" --out "$w/$name.labels.yaml" --report "$w/calibrate-labels" "$@"
    "$PY" $HERE/tables.py strip "$w/calibrate-labels/calibration.json" "$r/calibrate-labels.json"
    cp "$cfg" "$r/$name.shipped.yaml"; cp "$w/$name.labels.yaml" "$r/"
  fi
  for v in $variants; do
    local c=$cfg; [ $v = shipped ] || c=$w/$name.$v.yaml
    timed "$r/eval-$v" "$RAG" eval-abstention --dataset "$ds" --config "$c" --split eval \
      --json "$r/eval-$v.json" "$@"
  done
  [ -z "${GATE_AUTO_ONLY:-}" ] || return 0
  # when --auto chose another signal: also the thresholds it fitted for the configured one
  local sets
  sets=$("$PY" $HERE/tables.py configured-fit "results/calibrate-auto-$name/auto_calibration.json" "$cfg")
  if [ -n "$sets" ]; then
    # shellcheck disable=SC2086
    timed "$r/eval-auto-configured" "$RAG" eval-abstention --dataset "$ds" --config "$cfg" --split eval $sets \
      --json "$r/eval-auto-configured.json" "$@"
  fi
}

stage_nomiracl-ko() { abstention_set nomiracl-ko "$NOMIRACL"; }
stage_squad2() {
  if [ -n "${SQUAD2_MAX_QUESTIONS:-}" ]; then abstention_set squad2 "$SQUAD2" --max-questions "$SQUAD2_MAX_QUESTIONS"
  else abstention_set squad2 "$SQUAD2"; fi
}

stage_kolaw-dev() {
  local name=kolaw-dev w=$WORK/kolaw-dev r=$RES/kolaw-dev cfg=$WORK/kolaw-dev/kolaw-dev.yaml
  run_info kolaw-dev
  index "$name"
  timed "$r/auto" "$RAG" calibrate --auto --config "$cfg" --out "$w/$name.auto.yaml" \
    --report "results/calibrate-auto-$name"
  cp "$cfg" "$r/$name.shipped.yaml"; cp "$w/$name.auto.yaml" "$r/"
  timed "$r/answers-shipped" "$RAG" eval-answers --dataset "$KOLAW" --config "$cfg" --json "$r/answers-shipped.json"
  timed "$r/answers-auto" "$RAG" eval-answers --dataset "$KOLAW" --config "$w/$name.auto.yaml" \
    --json "$r/answers-auto.json"
  # rag calibrate --dataset cannot read kolaw-dev (no passages per question): fit on the shipped run's gate scores
  "$PY" $HERE/tables.py fit-answers "$r/answers-shipped.json" "$KOLAW/questions.jsonl" "$cfg" \
    "$w/$name.labels.yaml" --target-precision 0.9 --json "$r/label-fit.json"
  cp "$w/$name.labels.yaml" "$r/"
  timed "$r/answers-labels" "$RAG" eval-answers --dataset "$KOLAW" --config "$w/$name.labels.yaml" \
    --json "$r/answers-labels.json"
}

stage_kolaw-feedback() {
  # --from-batch on a labelled batch run: the calib half asked with the --auto config, each line labelled from the
  # gold (feedback.py label: what a person checking the answers would mark), the gate refitted on probes + labels,
  # then every variant scored on the eval half only (no question is both fitted on and scored)
  local name=kolaw-dev w=$WORK/kolaw-dev r=$RES/kolaw-dev cfg=$WORK/kolaw-dev/kolaw-dev.yaml
  "$PY" $HERE/feedback.py split "$KOLAW/questions.jsonl" "$w/halves"
  rm -f "$w/batch-calib.jsonl"
  timed "$r/batch-calib" "$RAG" batch "$w/halves/calib.jsonl" -o "$w/batch-calib.jsonl" --config "$w/$name.auto.yaml"
  "$PY" $HERE/feedback.py label "$KOLAW" "$w/batch-calib.jsonl" "$r/batch-calib-labelled.jsonl" \
    2> "$r/batch-calib-labels.txt"
  timed "$r/feedback" "$RAG" calibrate --from-batch "$r/batch-calib-labelled.jsonl" --config "$w/$name.auto.yaml" \
    --out "$w/$name.feedback.yaml" --report "results/calibrate-feedback-$name"
  cp "$w/$name.feedback.yaml" "$r/"
  for v in shipped auto feedback; do
    local c=$w/$name.$v.yaml; [ $v = shipped ] && c=$cfg
    timed "$r/eval-half-$v" "$RAG" eval-answers --dataset "$KOLAW" --config "$c" --only-questions \
      --questions "$w/halves/eval.jsonl" --json "$r/eval-half-$v.json"
  done
}

stage_demo() {
  # the bundled demo corpus: configs/default.yaml with its own index under $WORK/demo, shipped and --auto thresholds,
  # each scored by `rag demo` on data/demo/questions.jsonl (answered with the expected document, abstained, checks)
  local name=demo w=$WORK/demo r=$RES/demo
  "$PY" $HERE/pool_corpus.py config configs/default.yaml "$w/$name.yaml" --index "$w/index" --cache "$w/cache" >/dev/null
  run_info "$name"
  index "$name"
  timed "$r/auto" "$RAG" calibrate --auto --config "$w/$name.yaml" --out "$w/$name.auto.yaml" \
    --report "results/calibrate-auto-$name"
  cp "$w/$name.auto.yaml" "$r/"
  for v in shipped auto; do
    local c=$w/$name.$v.yaml; [ $v = shipped ] && c=$w/$name.yaml
    timed "$r/demo-$v" "$RAG" demo --config "$c" --questions data/demo/questions.jsonl
  done
}

stage_timing-1k() {
  # the first 1,000 documents (by id) of the pooled NoMIRACL-ko corpus, from an empty index and cache
  local name=nomiracl-ko-1k w=$WORK/nomiracl-ko-1k r=$RES/nomiracl-ko-1k
  run_info "$name"
  rm -rf "$w/index" "$w/cache"
  index "$name"
  timed "$r/auto" "$RAG" calibrate --auto --config "$w/$name.yaml" --out "$w/$name.auto.yaml" \
    --report "results/calibrate-auto-$name"
  cp "$w/$name.auto.yaml" "$r/"
}

stage_summary() { "$PY" $HERE/tables.py summary "$RES" | tee "$RES/summary.md"; }

for s in "${STAGES[@]}"; do
  declare -F "stage_$s" >/dev/null || { echo "unknown stage $s" >&2; exit 2; }
  log "stage $s"
  "stage_$s"
done
