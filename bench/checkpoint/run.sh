#!/usr/bin/env bash
# Checkpoint cost. First bench_ckpt_parts: the parts of one checkpoint (host copy and optimiser
# serialisation, which training blocks on; write, verify, load) against one step, one process.
# Then in training, mpirun -np 2 x 1 thread on Fashion-MNIST, per model:
#   step time with asynchronous checkpoints every K steps against no checkpoints (same config,
#   same run of this script, measured between the train events at steps 20 and STEPS),
#   training time blocked per checkpoint (the trainer's blocking_ms: waiting for the previous
#   write + agreement + host copy) against one step's time (target <= 1 step),
#   and resume time: launch to first step of a --resume auto run against a fresh start, plus
#   the load itself (resume_ms).
# Usage: bench/checkpoint/run.sh [build-dir] [steps] [every]
# Data: data/fashion-mnist.h5 if present, else prepared from /usr/share/datasets/fashion-mnist.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
steps=${2:-100}
every=${3:-20}
# Step times are taken from step 20 on (after warm-up), so shorter runs have nothing to time.
[[ $steps =~ ^[0-9]+$ && $steps -ge 40 ]] || { echo "bench/checkpoint: steps must be >= 40, got '$steps'" >&2; exit 2; }
[[ $every =~ ^[1-9][0-9]*$ ]] || { echo "bench/checkpoint: every must be a positive integer, got '$every'" >&2; exit 2; }
bench_name=checkpoint
. "$root/bench/lib.sh"

# run NAME args...: one training job; the launch time goes to NAME.launch for the resume figures.
run() {
  local name=$1; shift
  date +%s.%N >"$work/$name.launch"
  mpirun -np 2 "$bin" train --data "$data" --out "$work/$name" --threads 1 --batch-size 64 \
    --optimizer sgd --lr 0.05 --momentum 0.9 --schedule constant --eval-every 0 --log-every 10 \
    --keep-last 2 "$@" >"$work/$name.log" 2>&1 || { tail -n 20 "$work/$name.log"; exit 1; }
}

analyse() {  # analyse LABEL NONE ASYNC (ASYNC was resumed once at its end)
  "$PY" - "$work" "$@" "$steps" "$every" <<'EOF'
import json, os, sys
work, label, none, asyn, steps, every = sys.argv[1:7]
steps, every = int(steps), int(every)

def events(run, segment=0):
    """The events of the run's segment-th launch (0: the first, -1: the last)."""
    segments = []
    for line in open(f"{work}/{run}/metrics.jsonl"):
        e = json.loads(line)
        if e["event"] == "start":
            segments.append([])
        segments[-1].append(e)
    return segments[segment]

def step_ms(run):
    train = {e["step"]: e["time"] for e in events(run) if e["event"] == "train"}
    first, last = 20, max(train)
    return 1e3 * (train[last] - train[first]) / (last - first)

def first_step_s(run):
    """Launch (written by run() just before mpirun) to the last launch's start event."""
    launch = float(open(f"{work}/{run}.launch").read())
    start = events(run, -1)[0]
    return start["time"] - launch, start.get("resume_ms", 0.0)

def dir_mb(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)) / 1e6

t_none, t_async = step_ms(none), step_ms(asyn)
ckpts = [e for e in events(asyn) if e["event"] == "checkpoint" and e["step"] < steps]
blocking = [e["blocking_ms"] for e in ckpts]
waited = [e["waited_ms"] for e in ckpts]
size = dir_mb(f"{work}/{asyn}/checkpoints/step-{steps:08d}")
fresh_s, _ = first_step_s(none)
resume_s, resume_ms = first_step_s(asyn)
mean_blocking = sum(blocking) / len(blocking)
overhead = 100.0 * (t_async / t_none - 1.0)

print(f"\n{label}: {steps} steps, 2 ranks x batch 64, checkpoint {size:.1f} MB every {every} steps")
print(f"  {'':34s}{'value':>12s}")
print(f"  {'step time, no checkpoints':34s}{t_none:10.1f} ms")
print(f"  {'step time, async every ' + str(every):34s}{t_async:10.1f} ms   ({overhead:+.1f}%)")
print(f"  {'blocking per checkpoint (mean)':34s}{mean_blocking:10.1f} ms   "
      f"= {mean_blocking / t_none:.2f} steps (target <= 1)")
print(f"  {'blocking per checkpoint (max)':34s}{max(blocking):10.1f} ms   "
      f"= {max(blocking) / t_none:.2f} steps")
print(f"  {'  of which waiting for last write':34s}{sum(waited) / len(waited):10.1f} ms")
print(f"  {'launch -> first step, fresh':34s}{fresh_s:10.2f} s")
print(f"  {'launch -> first step, resumed':34s}{resume_s:10.2f} s   (load {resume_ms:.0f} ms)")
print(f"RESULT checkpoint model={label} ckpt_mb={size:.1f} every={every} "
      f"step_ms_none={t_none:.2f} step_ms_async={t_async:.2f} overhead_pct={overhead:.1f} "
      f"blocking_ms={mean_blocking:.2f} blocking_max_ms={max(blocking):.2f} "
      f"blocking_steps={mean_blocking / t_none:.3f} fresh_first_step_s={fresh_s:.2f} "
      f"resume_first_step_s={resume_s:.2f} resume_load_ms={resume_ms:.1f}")
EOF
}

bench_model() {  # bench_model LABEL model-args...
  local label=$1; shift
  echo "running $label: no checkpoints, then async every $every steps, then a resume of that run"
  run "$label-none" --resume none --max-steps "$steps" --checkpoint-every 0 "$@"
  run "$label-async" --resume none --max-steps "$steps" --checkpoint-every "$every" "$@"
  # Continues the async run (its metrics.jsonl gains a second start event) for the resume figures.
  run "$label-async" --resume auto --max-steps $((steps + 20)) --checkpoint-every "$every" "$@"
  analyse "$label" "$label-none" "$label-async"
}

parts=$build/bench/checkpoint/bench_ckpt_parts
if [ -x "$parts" ]; then
  "$parts" "$work" 3
else
  echo "(bench_ckpt_parts not built: cmake --build $build --target bench_ckpt_parts)"
fi

bench_model cnn-small --model cnn-small
bench_model mlp-2048x2 --model mlp --mlp-widths 2048,2048
