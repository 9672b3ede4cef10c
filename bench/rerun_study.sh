#!/usr/bin/env bash
# The failure study re-run with the embedded default model (issue 21), through the project's own CLI,
# one step after another. Usage: bench/rerun_study.sh OUT_DIR STEP...
# Steps: answers-DS (zero-shot answers + H2G; the answers are also exported as OUT_DIR/answers-DS.jsonl
# so later steps import them whatever the response cache's key does), h2j-DS (embedded judge, graded
# UMBRELA prompt at cap $CAP, binary derived at >= 2), study-DS (every configuration's overlap with
# the imported runs and judges), study-imported-DS (the imported judges only), typology-DS-TASK,
# annotations, prefer-DS (baseline = the exported answers), bench-MODEL:PER_GRADE (bench_judge.py, its
# result copied to OUT_DIR), export-DS and wait-PID. $CAP: H2J pairs per query; $MAX_Q: --max-queries.
# Every step's wall time, peak RSS and load average go to OUT_DIR/steps.tsv; its output to OUT_DIR/STEP.*.
# Run it nice'd in the background:  nohup nice -n 10 bench/rerun_study.sh cache/run/study answers-dl19 ... &
set -u
OUT=$(realpath -m "$1"); shift
mkdir -p "$OUT"
PY=${PY:-.venv/bin/python}
export DATA=${DATA:-../shared/data/trec_dl}
LLM=${LLM:-embedded}
CAP=${CAP:-4}
# seconds per LLM call (the CLI multiplies it by the batch size); a timed-out call fails the step
export TIMEOUT=${TIMEOUT:-7200}
MAX_Q=${MAX_Q:-}
DEADLINE=${DEADLINE:-}  # epoch seconds: no step starts after it
step() {  # step NAME command...
    local name=$1; shift
    if [ -n "$DEADLINE" ] && [ "$(date +%s)" -ge "$DEADLINE" ]; then echo "$name skipped: deadline" >>"$OUT/steps.tsv"; return; fi
    local start=$(date +%s) load=$(cut -d' ' -f1 /proc/loadavg)
    echo "== $(date -u +%H:%M:%S) $name: $*" >&2
    /usr/bin/time -f "%e\t%M" -o "$OUT/$name.time" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    local rc=$?
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$rc" "$(cut -f1 "$OUT/$name.time" | tail -1)" \
        "$(cut -f2 "$OUT/$name.time" | tail -1)" "$load->$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/steps.tsv"
    echo "== $(date -u +%H:%M:%S) $name done rc=$rc" >&2
}
export_answers() {  # the generator's stored answers as {"qid", "text"} JSONL
    $PY - "$1" "$2" <<'PY'
import json, os, sys
from pipeline.study.run import study_dir
from pipeline.data.datasets import load_dataset
folder = study_dir(load_dataset(sys.argv[1], os.environ["DATA"])) / "generations"
# the answers step's generation: the newest stored one (its file is named after the resolved model)
gen = json.load(open(max(folder.glob("*.json"), key=lambda p: p.stat().st_mtime)))
with open(sys.argv[2], "w") as fh:
    for qid, text in gen["answers"].items():
        fh.write(json.dumps({"qid": qid, "text": text}) + "\n")
PY
}
for s in "$@"; do
    case $s in
    answers-*) ds=${s#answers-}
        step "$s" $PY -m pipeline h2g --dataset "$ds" --data "$DATA" --generator "$LLM" --timeout "$TIMEOUT" --json
        export_answers "$ds" "$OUT/answers-$ds.jsonl" ;;
    export-*) ds=${s#export-}  # answers of an answers-DS step that ran elsewhere
        export_answers "$ds" "$OUT/answers-$ds.jsonl" ;;
    wait-*) pid=${s#wait-}  # wait for another process (an earlier chain's step) to end
        while kill -0 "$pid" 2>/dev/null; do sleep 20; done ;;
    study-imported-*) ds=${s#study-imported-}  # the overlap with the imported judges only (no embedded judging)
        step "$s" $PY -m pipeline run --dataset "$ds" --data "$DATA" --generator "embedded=$OUT/answers-$ds.jsonl" \
            --judge llama-3.3-70b --judge flan-t5-large --out "$OUT/study-imported-$ds.json" ;;
    study-*) ds=${s#study-}  # every configuration's overlap: imported runs x embedded answers x judges
        step "$s" $PY -m pipeline run --dataset "$ds" --data "$DATA" --generator "embedded=$OUT/answers-$ds.jsonl" \
            --judge "$LLM" --judge llama-3.3-70b --judge flan-t5-large --cap "$CAP" --timeout "$TIMEOUT" --out "$OUT/study-$ds.json" ;;
    bench-*) rest=${s#bench-}; model=${rest%:*}; per=${rest##*:}  # bench-MODEL:PER_GRADE (judge benchmark)
        step "$s" $PY bench/bench_judge.py --data "$DATA" --models "$model" --per-grade "$per"
        cp "${IRDASH_CACHE_DIR:-cache}/bench/judge_agreement.json" "$OUT/bench-$model-$per.json" ;;
    h2j-*) ds=${s#h2j-}
        step "$s" $PY -m pipeline h2j --dataset "$ds" --data "$DATA" --judge "$LLM" --setup graded --setup binary \
            --cap "$CAP" --timeout "$TIMEOUT" --json ;;
    typology-*) rest=${s#typology-}; ds=${rest%%-*}; task=${rest#*-}
        # the answers step's exported answers for every task: the hard-query context of h2r and h2j
        # typologies also shows the generator's answer, and must not generate it again
        gen=(); [ -f "$OUT/answers-$ds.jsonl" ] && gen=(--generator "embedded=$OUT/answers-$ds.jsonl")
        judge=(); [ "$task" = h2j ] && judge=(--judge "$LLM" --setup graded --cap "$CAP")
        step "$s" $PY -m pipeline typology --dataset "$ds" --data "$DATA" --task "$task" --assigner "$LLM" \
            "${gen[@]}" "${judge[@]}" ${MAX_Q:+--max-queries $MAX_Q} --timeout "$TIMEOUT" --json ;;
    prefer-*) ds=${s#prefer-}
        step "$s" $PY -m pipeline prefer --dataset "$ds" --data "$DATA" --reasons typology --generator "$LLM" \
            --baseline-answers "$OUT/answers-$ds.jsonl" \
            --judge "$LLM" --assigner "$LLM" --allow-self-judging --timeout "$TIMEOUT" ${MAX_Q:+--max-queries $MAX_Q} --json ;;
    annotations) step "$s" $PY -m pipeline annotations --create-sample --size 50 --json ;;
    *) echo "unknown step $s" >&2 ;;
    esac
done
echo "== $(date -u +%H:%M:%S) all done" >&2
