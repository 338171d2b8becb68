#!/usr/bin/env bash
# Training throughput, slimtrain against a PyTorch DDP (gloo) peer (bench/train/ddp_peer.py) with
# the same cnn-small, data, batch and threads, in one run. Every configuration runs REPS times and
# the configurations alternate within each repetition (the order reversed every other one), so
# machine noise hits all of them alike; the table shows each repetition and the medians, and the
# RESULT lines use the medians.
#   peer:    slimtrain cnn-small, mpirun -np 2 x 1 thread x batch 64, against the peer alike;
#            also with --max-pool libtorch, the pooling kernel the peer's F.max_pool2d runs
#   scaling: the same job at 1 rank (same per-rank batch); efficiency = sps2 / (2 * sps1)
#   overlap: --overlap on vs off at 2 ranks, for cnn-small and for a wide mlp with a small
#            batch, where the gradient all-reduce is a real part of the step. On CPU the buckets
#            may start during backward (the step's fingerprints are checked before it), but the
#            MPI plane's polling communication thread shares backward's core
#   torchscript: cnn-small written in Python and scripted (tests/e2e/torchscript_models.py), as
#            --model torchscript:cnn.pt, against the built-in cnn-small with --max-pool libtorch
#            (target: within 5%): the scripted model pools with LibTorch's kernel too
#   max_pool: slimtrain's own max-pool loop (model/max_pool.hpp) against LibTorch's, 2 ranks
#   torch2:  the DDP peer again on PyTorch 2.x (the venv's, with its MKL and oneDNN), and slimtrain
#            built against that LibTorch, where they exist: the ratios for both versions
#   eval:    bytes each rank sends in an evaluation of 10 classes (the eval event's bytes_sent)
#   roofline: matrix-product FLOPs per sample of each model from its layer shapes, GFLOP/s per
#            rank for slimtrain and the peer, against the fp32 GEMM peak of one core measured in
#            the same run (bench/train/gemm_peak.py: 1024-cubed sgemm through the same BLAS)
# Throughput is the steady state: WARMUP steps are left out (slimtrain's done event samples_per_s,
# which also leaves out evaluation and checkpoint time; the peer's --warmup-steps). No evaluation
# runs during the timed steps.
#   kernels, bf16, shard, text: bench/train/kernels.sh, bf16.sh, shard.sh and text.sh (their own
#   RESULT lines)
# Usage: bench/train/run.sh [build-dir]
# Environment: REPS (2), STEPS timed cnn-small steps (300), WARMUP (30), MLP_WIDTHS (2048,2048),
#   MLP_BATCH (4), MLP_STEPS (100), PEER_1RANK (1: also the peer at 1 rank, for the table),
#   KERNELS (1), BF16 (1), SHARD (1), TEXT (1).
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
  if ! mpirun -np "$np" "${SLIM_BIN:-$bin}" train --data "$data" --out "$work/$name" --resume none \
    --threads 1 --schedule constant --optimizer sgd --lr 0.05 --momentum 0.9 --eval-every 0 \
    --checkpoint-every 0 --max-steps "$total" --log-every "$warmup" "$@" \
    >"$work/$name.log" 2>&1; then
    echo "bench/train: slimtrain run $name failed:" >&2
    tail -n 20 "$work/$name.log" >&2
    exit 1
  fi
}

# peer NAME NP [heap]: the DDP peer on cnn-small ($PEER_PY, default $PY), its PEER line in
# $work/NAME.peer. By default
# it gets the heap settings slimtrain's trainer sets for itself with mallopt (freed memory stays
# in the heap: mmap threshold 128 MiB, trim threshold 1 GiB), through glibc's environment
# variables, so the comparison is not won by the allocator (~25% for the peer here); "glibc"
# runs it with glibc's defaults, for the table only.
peer() {
  local name=$1 np=$2 heap=(MALLOC_MMAP_THRESHOLD_=134217728 MALLOC_TRIM_THRESHOLD_=1073741824)
  [ "${3:-}" = glibc ] && heap=(SLIMTRAIN_BENCH_HEAP=glibc-defaults)
  if ! env "${heap[@]}" "${PEER_PY:-$PY}" "$root/bench/train/ddp_peer.py" --data "$data" --nproc "$np" --threads 1 \
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

# Every program here calls the same OpenBLAS: when slimtrain chose other kernels than OpenBLAS's
# own by measuring them (runtime/blas_kernels.hpp), the peer and the GEMM peak get the same
# setting, so all three run the same kernels, and the roofline's peak is the best kernels' peak.
gemm_kernels=
if [ -z "${OPENBLAS_CORETYPE:-}" ]; then
  "$bin" train --data "$data" --out "$work/blas-probe" --resume none --threads 1 --max-steps 1 \
    --eval-every 0 --final-split none >"$work/blas-probe.log" 2>&1 || true
  read -r own gemm_kernels < <("$PY" -c 'import json, sys
try:
    e = next(json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["event"] == "start")
    k = e["blas_kernels"]
    print(k["own"] or "-", k["loaded"] or "-")
except Exception:
    print("- -")' "$work/blas-probe/metrics.jsonl") || true
  if [ -n "$gemm_kernels" ] && [ "$gemm_kernels" != - ] && [ "$own" != - ] && [ "$own" != "$gemm_kernels" ]; then
    export OPENBLAS_CORETYPE=$gemm_kernels
  fi
  grep -o 'BLAS: .*' "$work/blas-probe.log" 2>/dev/null | head -n 1 || true
else
  gemm_kernels=$OPENBLAS_CORETYPE
fi

# Each slimtrain configuration next to its peer, so the pairs see the same machine.
configs=(cnn2)
[ "$have_peer" = 1 ] && configs+=(gemm cnn2-ts)
[ "$have_peer" = 1 ] && configs+=(peer2 peer2-glibc)
configs+=(cnn2-lt cnn1)
if [ "$have_peer" = 1 ] && [ "$peer_1rank" = 1 ]; then configs+=(peer1); fi
configs+=(cnn2-off mlp2 mlp2-off)
[ -n "$PY2" ] && configs+=(peer2-t2)
[ -n "$bin2" ] && configs+=(cnn2-t2)
run_config() {  # run_config CONFIG REP
  local c=$1 r=$2
  case $c in
    cnn2) slim "$c.$r" 2 "$steps" --model cnn-small --batch-size 64 ;;
    # LibTorch's max pooling, as the peer and the scripted model get: the like-for-like ratios.
    cnn2-lt) slim "$c.$r" 2 "$steps" --model cnn-small --batch-size 64 --max-pool libtorch ;;
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
    peer2-t2) PEER_PY=$PY2 peer "$c.$r" 2 ;;
    cnn2-t2) SLIM_BIN=$bin2 slim "$c.$r" 2 "$steps" --model cnn-small --batch-size 64 ;;
    peer1) peer "$c.$r" 1 ;;
    peer2-glibc) peer "$c.$r" 2 glibc ;;
    gemm)
      "$PY" "$root/bench/train/gemm_peak.py" >"$work/$c.$r.txt" 2>&1 ||
        { echo "bench/train: the GEMM peak failed:" >&2; cat "$work/$c.$r.txt" >&2; exit 1; }
      # Two at once, sustained: what each of two busy cores gives (shared caches, memory, clock).
      "$PY" "$root/bench/train/gemm_peak.py" --seconds 5 >"$work/$c.$r.pair1.txt" 2>&1 &
      "$PY" "$root/bench/train/gemm_peak.py" --seconds 5 >"$work/$c.$r.pair2.txt" 2>&1
      wait
      "$PY" "$root/bench/train/gemm_peak.py" --seconds 5 >"$work/$c.$r.alone.txt" 2>&1
      ;;
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
  "$have_peer" "$peer_1rank" "${gemm_kernels:--}" "$(torch_version "$PY")" \
  "$([ -n "$PY2" ] && torch_version "$PY2")" "$([ -n "$bin2" ] && libtorch_version "$bin2")" <<'EOF'
import json, math, re, statistics, sys

(work, reps, steps, warmup, widths, mlp_batch, mlp_steps, have_peer, peer_1rank, kernels, torch1,
 torch2, libtorch2) = sys.argv[1:]
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

def parsed(path, pattern, what):
    """The number PATTERN's group captures in the file at PATH; exits naming WHAT without it."""
    text = open(path).read()
    m = re.search(pattern, text, re.M)
    if not m:
        sys.exit(f"bench/train: no {what} line in {path}:\n{text[-2000:]}")
    return float(m.group(1))

def peer_sps(run):
    return parsed(f"{work}/{run}.peer", r"^PEER .*samples_per_s=([0-9.]+)", "PEER")

def buckets(run):
    m = re.search(r"gradient buckets: (\d+)", open(f"{work}/{run}.log").read())
    return int(m.group(1)) if m else 0

def median_run(config):
    """The run of the repetition whose throughput is the median (the lower middle for even REPS)."""
    runs = sorted(range(1, reps + 1), key=lambda r: sps[config][r - 1])
    return f"{config}.{runs[(len(runs) - 1) // 2]}"

def eval_bytes(run):
    return max(e["bytes_sent"] for e in events(run) if e["event"] == "eval")

def gemm_gflops(run):
    return parsed(f"{work}/{run}.txt", r"^GEMM .*gflops=([0-9.]+)", "GEMM")

configs = {
    "cnn2": ("slimtrain cnn-small, 2 ranks (defaults: overlap auto)", slim_sps),
    "cnn2-ts": ("slimtrain cnn-small as TorchScript, 2 ranks", slim_sps),
    "cnn2-lt": ("slimtrain cnn-small, 2 ranks, --max-pool libtorch", slim_sps),
    "peer2": ("DDP peer cnn-small, 2 ranks", peer_sps),
    "peer2-glibc": ("DDP peer cnn-small, 2 ranks, glibc heap defaults", peer_sps),
    "cnn1": ("slimtrain cnn-small, 1 rank", slim_sps),
    "peer1": ("DDP peer cnn-small, 1 rank", peer_sps),
    "cnn2-off": ("slimtrain cnn-small, 2 ranks, overlap off", slim_sps),
    "mlp2": (f"slimtrain mlp {widths} b{mlp_batch}, 2 ranks, overlap on", slim_sps),
    "mlp2-off": (f"slimtrain mlp {widths} b{mlp_batch}, 2 ranks, overlap off", slim_sps),
    "peer2-t2": (f"DDP peer cnn-small, 2 ranks, PyTorch {torch2}", peer_sps),
    "cnn2-t2": (f"slimtrain cnn-small, 2 ranks, LibTorch {libtorch2}", slim_sps),
}
if not torch2:
    del configs["peer2-t2"]
if not libtorch2:
    del configs["cnn2-t2"]
if not have_peer:
    del configs["peer2"], configs["peer2-glibc"], configs["peer1"], configs["cnn2-ts"]
elif peer_1rank != "1":
    del configs["peer1"]
gemm = statistics.median(gemm_gflops(f"gemm.{r}") for r in range(1, reps + 1)) if have_peer else math.nan

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

# The roofline: matrix-product FLOPs per sample (convolutions and linear layers; activations and
# pooling are left out) from the layer shapes, forward (2 per multiply-add) and backward (the
# weight gradient, and the input gradient of every layer but the first, 2 per multiply-add each).
def train_flops(macs):
    return 2 * sum(macs) + 2 * sum(macs) + 2 * sum(macs[1:])

def cnn_small_macs(c=1, h=28, w=28, classes=10):
    return [h * w * 32 * 9 * c, (h // 2) * (w // 2) * 64 * 9 * 32,
            64 * (h // 4) * (w // 4) * 128, 128 * classes]

def mlp_macs(widths, inputs=784, classes=10):
    sizes = [inputs] + [int(x) for x in widths.split(",")] + [classes]
    return [a * b for a, b in zip(sizes, sizes[1:])]

flops = {"cnn-small": train_flops(cnn_small_macs()), "mlp": train_flops(mlp_macs(widths))}
print(f"\nroofline: fp32 GEMM peak {gemm:.1f} GFLOP/s on one core (1024-cubed torch.mm, one "
      f"thread, median repetition, same BLAS and the kernels slimtrain chose: {kernels}); matrix-product FLOPs per sample, forward and "
      f"backward: cnn-small {flops['cnn-small'] / 1e6:.1f} M, mlp {flops['mlp'] / 1e6:.1f} M")
print(f"  {'':54s}{'sps/rank':>10s}{'GFLOP/s/rank':>14s}{'of peak':>9s}")
if have_peer:
    alone = statistics.median(gemm_gflops(f"gemm.{r}.alone") for r in range(1, reps + 1))
    pair = statistics.median(statistics.fmean([gemm_gflops(f"gemm.{r}.pair1"), gemm_gflops(f"gemm.{r}.pair2")])
                             for r in range(1, reps + 1))
else:
    alone = pair = math.nan
gemm_scaling = ratio(pair, alone)
print(f"  the same GEMM sustained over 5 s: {alone:.1f} GFLOP/s alone, {pair:.1f} each when two run "
      f"at once: this machine's own 1 -> 2 core scaling for dense fp32 work is {gemm_scaling:.3f}")
roof = {}
for c, (label, _) in configs.items():
    model = "mlp" if c.startswith("mlp") else "cnn-small"
    ranks = 1 if c.endswith("1") else 2
    per_rank = med[c] / ranks
    roof[c] = per_rank * flops[model] / 1e9
    print(f"  {label:54s}{per_rank:10.0f}{roof[c]:14.1f}{100 * ratio(roof[c], gemm):8.0f}%")

print()
if have_peer:
    r = ratio(med["cnn2"], med["peer2"])
    print(f"slimtrain / peer at 2 ranks: {r:.3f} (target >= 1.10); both pooling with LibTorch's "
          f"kernel: {ratio(med['cnn2-lt'], med['peer2']):.3f}")
if have_peer:
    print(f"cnn-small as TorchScript / built-in at 2 ranks, both pooling with LibTorch's kernel: "
          f"{ratio(med['cnn2-ts'], med['cnn2-lt']):.3f} (target >= 0.95); against the built-in's "
          f"own loop: {ratio(med['cnn2-ts'], med['cnn2']):.3f}")
print(f"slimtrain's own max-pool loop / LibTorch's at 2 ranks: {ratio(med['cnn2'], med['cnn2-lt']):.3f}")
eff = ratio(med["cnn2"], 2 * med["cnn1"])
print(f"slimtrain scaling 1 -> 2 ranks: efficiency {eff:.3f} (target >= 0.95; two concurrent "
      f"GEMMs scale {gemm_scaling:.3f} here)")
if "peer1" in configs:
    print(f"  the peer's own scaling on this machine: {ratio(med['peer2'], 2 * med['peer1']):.3f}")
eval_b = max(eval_bytes(f"cnn2.{r}") for r in range(1, reps + 1))
print(f"evaluation traffic per rank (10 classes): {eval_b} bytes (limit 1536; "
      f"8*(2+3C+C^2) = 1056: per-class counts and the matrix up to 100 classes)")

if have_peer:
    print(f"RESULT train peer=ddp ranks=2 torch={torch1} slimtrain_sps={med['cnn2']:.1f} peer_sps={med['peer2']:.1f} "
          f"ratio={ratio(med['cnn2'], med['peer2']):.3f} target=1.10 "
          f"libtorch_pool_sps={med['cnn2-lt']:.1f} libtorch_pool_ratio={ratio(med['cnn2-lt'], med['peer2']):.3f}")
else:
    print(f"RESULT train peer=ddp ranks=2 slimtrain_sps={med['cnn2']:.1f} peer_sps=nan ratio=nan "
          "target=1.10")
if torch2:
    # The peer on PyTorch 2.x against slimtrain built with Debian's 1.13 (what the demo builds) and,
    # where built, against LibTorch 2.x: each user compares with the PyTorch they have.
    s2 = med.get("cnn2-t2", math.nan)
    print(f"RESULT train peer=ddp ranks=2 torch={torch2} slimtrain_sps={med['cnn2']:.1f} "
          f"peer_sps={med['peer2-t2']:.1f} ratio={ratio(med['cnn2'], med['peer2-t2']):.3f} "
          f"target=1.10 slimtrain_libtorch2_sps={s2:.1f} "
          f"libtorch2_ratio={ratio(s2, med['peer2-t2']):.3f}")
print(f"RESULT train scaling ranks=2 sps1={med['cnn1']:.1f} sps2={med['cnn2']:.1f} "
      f"efficiency={eff:.3f} target=0.95")
print(f"RESULT train overlap model=cnn-small batch=64 on_sps={med['cnn2']:.1f} "
      f"off_sps={med['cnn2-off']:.1f} ratio={ratio(med['cnn2'], med['cnn2-off']):.3f}")
print(f"RESULT train overlap model=mlp-{widths.replace(',', 'x')} batch={mlp_batch} "
      f"on_sps={med['mlp2']:.1f} off_sps={med['mlp2-off']:.1f} "
      f"ratio={ratio(med['mlp2'], med['mlp2-off']):.3f}")
if have_peer:
    # Like for like: the scripted model pools with LibTorch's kernel, so the built-in does too.
    print(f"RESULT train torchscript model=cnn-small ranks=2 builtin_sps={med['cnn2-lt']:.1f} "
          f"script_sps={med['cnn2-ts']:.1f} ratio={ratio(med['cnn2-ts'], med['cnn2-lt']):.3f} "
          f"target=0.95 builtin_own_pool_sps={med['cnn2']:.1f}")
print(f"RESULT train max_pool model=cnn-small ranks=2 own_sps={med['cnn2']:.1f} "
      f"libtorch_sps={med['cnn2-lt']:.1f} speedup={ratio(med['cnn2'], med['cnn2-lt']):.3f}")
print(f"RESULT train eval_bytes_per_rank={eval_b} limit=1536")
print(f"RESULT train throughput model=cnn-small ranks=2 threads=1 sps={med['cnn2']:.1f} target=4000")
peer_roof = roof.get("peer2", math.nan)
print(f"RESULT train roofline model=cnn-small ranks=2 gemm_peak_gflops={gemm:.1f} "
      f"flops_per_sample={flops['cnn-small']:.0f} slimtrain_gflops_per_rank={roof['cnn2']:.1f} "
      f"slimtrain_fraction={ratio(roof['cnn2'], gemm):.3f} peer_gflops_per_rank={peer_roof:.1f} "
      f"peer_fraction={ratio(peer_roof, gemm):.3f} target=0.60 gemm_kernels={kernels}")
print(f"RESULT train gemm_scaling alone_gflops={alone:.1f} pair_gflops_each={pair:.1f} "
      f"efficiency={gemm_scaling:.3f}")
EOF

# The kernels slimtrain chose and what they are worth (kernels.sh), and bf16 against fp32 per
# model on a CPU with native bf16 (bf16.sh); KERNELS=0 or BF16=0 leaves either out.
if [ "${KERNELS:-1}" != 0 ]; then (unset OPENBLAS_CORETYPE; "$root/bench/train/kernels.sh" "$build"); fi
if [ "${BF16:-1}" != 0 ]; then "$root/bench/train/bf16.sh" "$build"; fi
if [ "${SHARD:-1}" != 0 ]; then "$root/bench/train/shard.sh" "$build"; fi
if [ "${TEXT:-1}" != 0 ]; then "$root/bench/train/text.sh" "$build"; fi
