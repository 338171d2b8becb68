#!/usr/bin/env bash
# --best-metric keeps the best *evaluated* checkpoint: the lowest loss for loss (the highest for
# accuracy and macro_f1). Evaluations every 3 steps, checkpoints every 5 (they meet only at 15),
# --keep-last 1. A checkpoint carries a metric only when an evaluation ran at its step; an
# evaluation that sets a new best is checkpointed at its own step; what remains is the latest
# checkpoint and the best evaluation's. Then the run resumes for 12 more steps: the best value
# survives the resume, so an evaluation that does not beat the first run's best writes nothing.
# Unset, --best-metric writes no checkpoint of its own: the best is among the scheduled ones.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train_data "$work" || exit 1

run() {  # run NAME METRIC STEPS
  expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --data "$work/data.h5" --out "$work/$1" \
    "${SMALL_JOB[@]}" --lr 0.5 --max-steps "$3" --eval-every 3 --checkpoint-every 5 \
    --keep-last 1 --best-metric "$2" --resume auto
}

# kept RUN METRIC: checks the run's own events (both launches) and the checkpoints left.
kept() {
  "$PY" - "$work/$1" "$2" <<'PYEOF'
import json, os, sys
run, metric = sys.argv[1], sys.argv[2]
events = [json.loads(l) for l in open(f"{run}/metrics.jsonl")]
starts = [i for i, e in enumerate(events) if e["event"] == "start"]
lower = metric == "loss"
better = (lambda a, b: a < b) if lower else (lambda a, b: a > b)
ok = True
best = None          # (value, step) over both launches
first_eval_of = {}   # launch -> its first evaluation
for launch, begin in enumerate(starts):
    end = starts[launch + 1] if launch + 1 < len(starts) else len(events)
    part = events[begin:end]
    total = part[0]["total_steps"]
    evals = {e["step"]: e for e in part if e["event"] == "eval" and e["step"] < total}
    ckpts = {e["step"]: e for e in part if e["event"] == "checkpoint"}
    for step, c in ckpts.items():  # a metric only on the weights that were evaluated
        want = evals[step][metric] if step in evals else None
        if c["metric"] != want:
            print(f"  checkpoint {step} carries {c['metric']}, its own evaluation says {want}")
            ok = False
    for step in sorted(evals):
        value = evals[step][metric]
        if launch == 1 and not first_eval_of.get(1):
            first_eval_of[1] = (step, value, best)
        new = best is None or better(value, best[0])
        if new:
            best = (value, step)
        if (new and step not in ckpts) or (not new and step in ckpts and step % 5):
            print(f"  evaluation at {step} ({value:.4f}) {'set' if new else 'did not set'} a new "
                  f"best, checkpoints at {sorted(ckpts)}")
            ok = False
left = sorted(int(d[5:]) for d in os.listdir(f"{run}/checkpoints") if d.startswith("step-"))
latest = max(e["step"] for e in events if e["event"] == "checkpoint")
print(f"  {metric}: best {best[0]:.4f} at step {best[1]}, left {left}")
if left != sorted({best[1], latest}):
    print(f"  expected steps {sorted({best[1], latest})} to remain")
    ok = False
# The run must be able to tell a wrong rule: the best evaluation falls between checkpoint steps,
# and the second launch's first evaluation does not beat the first launch's best (a best forgotten
# at resume would checkpoint it).
if best[1] % 5 == 0:
    print("  the best evaluation fell on a checkpoint step: this run cannot tell the rules apart")
    ok = False
step, value, before = first_eval_of[1]
if step % 5 == 0 or better(value, before[0]):
    print(f"  the resumed run's first evaluation ({value:.4f} at {step}) cannot show that the "
          f"best ({before[0]:.4f}) survived the resume")
    ok = False
sys.exit(0 if ok else 1)
PYEOF
}

check "--best-metric unset: no checkpoint of its own" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" \
  train --data "$work/data.h5" --out "$work/unset" "${SMALL_JOB[@]}" --lr 0.5 --max-steps 24 \
  --eval-every 3 --checkpoint-every 5 --keep-last 1 --resume none
check "  checkpoints on the schedule only, the metric only where an evaluation fell (15)" \
  json_is "[$(events "$work/unset" checkpoint | tr '\n' ',' | sed 's/,$//')]" \
  '[c["step"] for c in e] == [5, 10, 15, 20, 24] and [c["step"] for c in e if c["metric"] is not None] == [15]'
check "  keeps the evaluated one and the latest" test "$(ls "$work/unset/checkpoints" | grep -c '^step-')" -eq 2 -a \
  -d "$work/unset/checkpoints/step-00000015"

for metric in loss accuracy; do
  check "--best-metric $metric" run "$metric" "$metric" 24
  check "  resumed for 12 more steps" run "$metric" "$metric" 36
  check "  keeps the best evaluated checkpoint and the latest" kept "$metric" "$metric"
done
finish
