#!/usr/bin/env bash
# Training throughput, slimtrain against a PyTorch DDP (gloo) peer (bench/train/ddp_peer.py) with
# the same cnn-small, data, batch and threads, in one run. Every configuration runs REPS times and
# the configurations alternate within each repetition (the order reversed every other one), so
# machine noise hits all of them alike; the table shows each repetition and the medians, and the
# RESULT lines use the medians.
#   peer:    slimtrain cnn-small, mpirun -np 2 x 1 thread x batch 64, against the peer alike
#   scaling: the same job at 1 rank (same per-rank batch); efficiency = sps2 / (2 * sps1)
#   overlap: --overlap on vs off at 2 ranks, for cnn-small and for a wide mlp with a small
#            batch, where the gradient all-reduce is a real part of the step. On CPU a step's
#            buckets run once its control decision has checked them on every rank, so on and off
#            should match: the check costs no extra collective (it is the step's one control
#            reduction)
#   torchscript: cnn-small written in Python and scripted (tests/e2e/torchscript_models.py), as
#            --model torchscript:cnn.pt, against the built-in cnn-small (target: within 5%)
#   eval:    bytes each rank sends in an evaluation of 10 classes (the eval event's bytes_sent)
# Throughput is the steady state: WARMUP steps are left out (slimtrain's done event samples_per_s,
# which also leaves out evaluation and checkpoint time; the peer's --warmup-steps). No evaluation
# runs during the timed steps.
# Usage: bench/train/run.sh [build-dir]
# Environment: REPS (2), STEPS timed cnn-small steps (300), WARMUP (30), MLP_WIDTHS (2048,2048),
#   MLP_BATCH (4), MLP_STEPS (100), PEER_1RANK (1: also the peer at 1 rank, for the table).
# Data: data/fashion-mnist.h5 if present, else prepared from /usr/share/datasets/fashion-mnist.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
reps=${REPS:-2}
steps=${STEPS:-300}
warmup=${WARMUP:-30}
mlp_widths=${MLP_WIDTHS:-2048,2048}
mlp_batch=${MLP_BATCH:-4}
mlp_steps=${MLP_STEPS:-100}
peer_1rank=${PEER_1RANK:-1}
bench_name=train
. "$root/bench/lib.sh"
positive_ints "$reps" "$steps" "$warmup" "$mlp_batch" "$mlp_steps"

have_peer=1
if ! "$PY" -c 'import torch, h5py' 2>/dev/null; then
  echo "bench/train: $PY cannot import torch and h5py (python3-torch, python3-h5py): no peer"
  have_peer=0
fi

# slim NAME NP STEPS [train options...]: one slimtrain job; its run directory is $work/NAME.
slim() {
  local name=$1 np=$2 total=$(($3 + warmup)); shift 3
  # --log-every WARMUP: the trainer's warm-up is one log window, so it matches the peer's.
  if ! mpirun -np "$np" "$bin" train --data "$data" --out "$work/$name" --resume none \
    --threads 1 --schedule constant --optimizer sgd --lr 0.05 --momentum 0.9 --eval-every 0 \
    --checkpoint-every 0 --max-steps "$total" --log-every "$warmup" "$@" \
    >"$work/$name.log" 2>&1; then
    echo "bench/train: slimtrain run $name failed:" >&2
    tail -n 20 "$work/$name.log" >&2
    exit 1
  fi
}

# peer NAME NP [heap]: the DDP peer on cnn-small, its PEER line in $work/NAME.peer. By default
# it gets the heap settings slimtrain's trainer sets for itself with mallopt (freed memory stays
# in the heap: mmap threshold 128 MiB, trim threshold 1 GiB), through glibc's environment
# variables, so the comparison is not won by the allocator (~25% for the peer here); "glibc"
# runs it with glibc's defaults, for the table only.
peer() {
  local name=$1 np=$2 heap=(MALLOC_MMAP_THRESHOLD_=134217728 MALLOC_TRIM_THRESHOLD_=1073741824)
  [ "${3:-}" = glibc ] && heap=(SLIMTRAIN_BENCH_HEAP=glibc-defaults)
  if ! env "${heap[@]}" "$PY" "$root/bench/train/ddp_peer.py" --data "$data" --nproc "$np" --threads 1 \
    --batch-size 64 --lr 0.05 --momentum 0.9 --steps $((steps + warmup)) --warmup-steps "$warmup" \
    >"$work/$name.peer" 2>&1; then
    echo "bench/train: peer run $name failed:" >&2
    tail -n 20 "$work/$name.peer" >&2
    exit 1
  fi
}

# cnn-small as a user would bring it: scripted in Python (needs python3-torch, as the peer does).
if [ "$have_peer" = 1 ]; then
  mkdir -p "$work/models"
  "$PY" "$root/tests/e2e/torchscript_models.py" "$work/models" 1 28 28 10
fi

# Each slimtrain configuration next to its peer, so the pairs see the same machine.
configs=(cnn2)
[ "$have_peer" = 1 ] && configs+=(cnn2-ts)
[ "$have_peer" = 1 ] && configs+=(peer2 peer2-glibc)
configs+=(cnn1)
if [ "$have_peer" = 1 ] && [ "$peer_1rank" = 1 ]; then configs+=(peer1); fi
configs+=(cnn2-off mlp2 mlp2-off)
run_config() {  # run_config CONFIG REP
  local c=$1 r=$2
  case $c in
    cnn2) slim "$c.$r" 2 "$steps" --model cnn-small --batch-size 64 ;;
    cnn2-ts) slim "$c.$r" 2 "$steps" --model "torchscript:$work/models/cnn.pt" --batch-size 64 ;;
    cnn1) slim "$c.$r" 1 "$steps" --model cnn-small --batch-size 64 ;;
    cnn2-off) slim "$c.$r" 2 "$steps" --model cnn-small --batch-size 64 --overlap off ;;
    mlp2 | mlp2-off)
      local overlap=on
      [ "$c" = mlp2-off ] && overlap=off
      slim "$c.$r" 2 "$mlp_steps" --model mlp --mlp-widths "$mlp_widths" \
        --batch-size "$mlp_batch" --overlap "$overlap"
      ;;
    peer2) peer "$c.$r" 2 ;;
    peer1) peer "$c.$r" 1 ;;
    peer2-glibc) peer "$c.$r" 2 glibc ;;
  esac
}

started=$(date +%s)
for r in $(seq 1 "$reps"); do
  order=("${configs[@]}")
  if [ $((r % 2)) = 0 ]; then  # every other repetition in reverse, against drift
    order=()
    for ((i = ${#configs[@]} - 1; i >= 0; i--)); do order+=("${configs[i]}"); done
  fi
  echo "repetition $r/$reps: ${order[*]}"
  for c in "${order[@]}"; do run_config "$c" "$r"; done
done
echo "all runs took $(($(date +%s) - started)) s"

"$PY" - "$work" "$reps" "$steps" "$warmup" "$mlp_widths" "$mlp_batch" "$mlp_steps" \
  "$have_peer" "$peer_1rank" <<'EOF'
import json, math, re, statistics, sys

work, reps, steps, warmup, widths, mlp_batch, mlp_steps, have_peer, peer_1rank = sys.argv[1:]
reps = int(reps)
have_peer = have_peer == "1"

def events(run):
    return [json.loads(line) for line in open(f"{work}/{run}/metrics.jsonl")]

def slim_sps(run):
    done = [e for e in events(run) if e["event"] == "done"][-1]
    return float(done["samples_per_s"])

def slim_steps_ms(run):
    """Rank 0's step components, averaged over the train events after the warm-up window."""
    train = [e for e in events(run) if e["event"] == "train"][1:]
    keys = ["data", "forward", "backward", "sync", "optimizer", "total"]
    return {k: statistics.fmean(e["step_ms"][k] for e in train) for k in keys}

def peer_sps(run):
    text = open(f"{work}/{run}.peer").read()
    m = re.search(r"^PEER .*samples_per_s=([0-9.]+)", text, re.M)
    if not m:
        sys.exit(f"bench/train: no PEER line from {run}:\n{text[-2000:]}")
    return float(m.group(1))

def buckets(run):
    m = re.search(r"gradient buckets: (\d+)", open(f"{work}/{run}.log").read())
    return int(m.group(1)) if m else 0

def median_run(config):
    """The run of the repetition whose throughput is the median (the lower middle for even REPS)."""
    runs = sorted(range(1, reps + 1), key=lambda r: sps[config][r - 1])
    return f"{config}.{runs[(len(runs) - 1) // 2]}"

def eval_bytes(run):
    return max(e["bytes_sent"] for e in events(run) if e["event"] == "eval")

configs = {
    "cnn2": ("slimtrain cnn-small, 2 ranks (defaults: overlap auto)", slim_sps),
    "cnn2-ts": ("slimtrain cnn-small as TorchScript, 2 ranks", slim_sps),
    "peer2": ("DDP peer cnn-small, 2 ranks", peer_sps),
    "peer2-glibc": ("DDP peer cnn-small, 2 ranks, glibc heap defaults", peer_sps),
    "cnn1": ("slimtrain cnn-small, 1 rank", slim_sps),
    "peer1": ("DDP peer cnn-small, 1 rank", peer_sps),
    "cnn2-off": ("slimtrain cnn-small, 2 ranks, overlap off", slim_sps),
    "mlp2": (f"slimtrain mlp {widths} b{mlp_batch}, 2 ranks, overlap on", slim_sps),
    "mlp2-off": (f"slimtrain mlp {widths} b{mlp_batch}, 2 ranks, overlap off", slim_sps),
}
if not have_peer:
    del configs["peer2"], configs["peer2-glibc"], configs["peer1"], configs["cnn2-ts"]
elif peer_1rank != "1":
    del configs["peer1"]

sps = {c: [f(f"{c}.{r}") for r in range(1, reps + 1)] for c, (_, f) in configs.items()}
med = {c: statistics.median(v) for c, v in sps.items()}

print(f"\ntraining throughput, samples/s (steady state: {warmup} warm-up steps left out; "
      f"cnn-small {steps} timed steps x batch 64/rank, mlp {mlp_steps} x batch {mlp_batch}/rank; "
      "1 thread per rank)")
head = "".join(f"{'rep ' + str(r):>9s}" for r in range(1, reps + 1))
print(f"  {'':54s}{head}{'median':>9s}")
for c, (label, _) in configs.items():
    print(f"  {label:54s}" + "".join(f"{v:9.0f}" for v in sps[c]) + f"{med[c]:9.0f}")

print("\nslimtrain step time by component, ms (rank 0, median repetition; sync includes waiting "
      "for the slower rank)")
keys = ["data", "forward", "backward", "sync", "optimizer", "total"]
print(f"  {'':54s}" + "".join(f"{k:>10s}" for k in keys) + f"{'buckets':>9s}")
for c, (label, f) in configs.items():
    if f is not slim_sps:
        continue
    ms = slim_steps_ms(median_run(c))
    print(f"  {label:54s}" + "".join(f"{ms[k]:10.2f}" for k in keys)
          + f"{buckets(median_run(c)):9d}")

def auto_choice(run):
    m = re.search(r"\(overlap (o[nf]+); --overlap auto: ([^)\n]*\)?[^)\n]*)\)", open(f"{work}/{run}.log").read())
    return f"{m.group(1)} ({m.group(2)})" if m else "?"

print(f"  --overlap auto chose for cnn-small at 2 ranks: {auto_choice(median_run('cnn2'))}")
if buckets(median_run("cnn2")) == 1:
    print("  cnn-small's gradients fit one bucket (--bucket-mb 4)")
print("  on CPU the buckets of a step run after its control decision (one small all-reduce on "
      "the control plane), so overlap on and off should match")
ms_off = slim_steps_ms(median_run("mlp2-off"))
print(f"  the mlp's all-reduce with overlap off: {ms_off['sync']:.1f} of {ms_off['total']:.1f} ms "
      f"({100 * ms_off['sync'] / ms_off['total']:.0f}% of the step)")

def ratio(a, b):
    return a / b if b > 0 else math.nan

print()
if have_peer:
    r = ratio(med["cnn2"], med["peer2"])
    print(f"slimtrain / peer at 2 ranks: {r:.3f} (target >= 1.10)")
if have_peer:
    print(f"cnn-small as TorchScript / built-in at 2 ranks: {ratio(med['cnn2-ts'], med['cnn2']):.3f} "
          "(target >= 0.95)")
eff = ratio(med["cnn2"], 2 * med["cnn1"])
print(f"slimtrain scaling 1 -> 2 ranks: efficiency {eff:.3f} (target >= 0.95)")
if "peer1" in configs:
    print(f"  the peer's own scaling on this machine: {ratio(med['peer2'], 2 * med['peer1']):.3f}")
eval_b = max(eval_bytes(f"cnn2.{r}") for r in range(1, reps + 1))
print(f"evaluation traffic per rank (10 classes): {eval_b} bytes (limit 1024; 8*C^2+64 = 864)")

if have_peer:
    print(f"RESULT train peer=ddp ranks=2 slimtrain_sps={med['cnn2']:.1f} peer_sps={med['peer2']:.1f} "
          f"ratio={ratio(med['cnn2'], med['peer2']):.3f} target=1.10")
else:
    print(f"RESULT train peer=ddp ranks=2 slimtrain_sps={med['cnn2']:.1f} peer_sps=nan ratio=nan "
          "target=1.10")
print(f"RESULT train scaling ranks=2 sps1={med['cnn1']:.1f} sps2={med['cnn2']:.1f} "
      f"efficiency={eff:.3f} target=0.95")
print(f"RESULT train overlap model=cnn-small batch=64 on_sps={med['cnn2']:.1f} "
      f"off_sps={med['cnn2-off']:.1f} ratio={ratio(med['cnn2'], med['cnn2-off']):.3f}")
print(f"RESULT train overlap model=mlp-{widths.replace(',', 'x')} batch={mlp_batch} "
      f"on_sps={med['mlp2']:.1f} off_sps={med['mlp2-off']:.1f} "
      f"ratio={ratio(med['mlp2'], med['mlp2-off']):.3f}")
if have_peer:
    print(f"RESULT train torchscript model=cnn-small ranks=2 builtin_sps={med['cnn2']:.1f} "
          f"script_sps={med['cnn2-ts']:.1f} ratio={ratio(med['cnn2-ts'], med['cnn2']):.3f} "
          "target=0.95")
print(f"RESULT train eval_bytes_per_rank={eval_b} limit=1024")
EOF
