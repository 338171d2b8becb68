#!/usr/bin/env bash
# --best-metric keeps the best checkpoint: the lowest loss for loss (the highest for accuracy and
# macro_f1), and every checkpoint carries the latest evaluation's value, also when no evaluation
# fell on its step. Evaluations every 3 steps, checkpoints every 5 (they meet only at 15),
# --keep-last 1: what remains is the latest checkpoint and the best one by that rule.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train_data "$work" || exit 1

run() {  # run NAME METRIC
  expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --data "$work/data.h5" --out "$work/$1" \
    "${SMALL_JOB[@]}" --lr 0.5 --max-steps 24 --eval-every 3 --checkpoint-every 5 --keep-last 1 \
    --best-metric "$2" --resume none
}

# kept RUN METRIC: checks the run's own events and the checkpoints left, printing what it found.
kept() {
  "$PY" - "$work/$1" "$2" <<'PYEOF'
import json, os, sys
run, metric = sys.argv[1], sys.argv[2]
events = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
total = next(e for e in events if e["event"] == "start")["total_steps"]
evals = [e for e in events if e["event"] == "eval" and e["step"] < total]
ckpts = [e for e in events if e["event"] == "checkpoint"]
ok = True
for c in ckpts:  # each checkpoint carries the latest evaluation at or before its step
    before = [e for e in evals if e["step"] <= c["step"]]
    want = before[-1][metric] if before else None
    if c["metric"] != want:
        print(f"  checkpoint {c['step']} carries {c['metric']}, latest evaluation says {want}")
        ok = False
lower = metric == "loss"
scored = [c for c in ckpts if c["metric"] is not None]
best = min(scored, key=lambda c: (c["metric"] if lower else -c["metric"], -c["step"]))
worst = max(scored, key=lambda c: (c["metric"] if lower else -c["metric"], c["step"]))
latest = max(c["step"] for c in ckpts)
left = sorted(int(d[5:]) for d in os.listdir(f"{run}/checkpoints") if d.startswith("step-"))
print(f"  {metric}: checkpoints {[(c['step'], round(c['metric'], 4)) for c in scored]}, "
      f"best {best['step']}, left {left}")
if left != sorted({best["step"], latest}):
    print(f"  expected steps {sorted({best['step'], latest})} to remain")
    ok = False
# The run must be able to tell a wrong rule: best and worst differ, and the best checkpoint's
# value came from an evaluation at an earlier step (it has no evaluation of its own).
if best["step"] == worst["step"] or best["step"] in {e["step"] for e in evals}:
    print("  this run cannot tell the rules apart (the data or LibTorch changed?)")
    ok = False
sys.exit(0 if ok else 1)
PYEOF
}

check "--best-metric loss" run loss loss
check "  keeps the lowest-loss checkpoint and the latest" kept loss loss
check "--best-metric accuracy" run accuracy accuracy
check "  keeps the most accurate checkpoint and the latest" kept accuracy accuracy
finish
