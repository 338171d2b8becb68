#!/usr/bin/env bash
# OpenBLAS's kernels chosen by measurement (runtime/blas_kernels.hpp), and what they are worth in
# training. First slimtrain decides on a fresh cache (every kernel set this CPU's flags allow,
# timed with a 1024-cubed sgemm on one core, OpenBLAS's own choice first); then the mlp 2048x2048
# at batch 256, np 2 x 1 thread, trains with the chosen kernels, with OpenBLAS's own choice
# (OPENBLAS_CORETYPE set to it, which slimtrain leaves alone), and with the kernels the
# environment's OPENBLAS_CORETYPE named when the script started (bench/lib.sh unsets it; the AVX2
# Haswell kernels when none was set: issue 33's AVX-512 EPYC ran them because its environment set
# OPENBLAS_CORETYPE=Haswell), alternating REPS times.
# Usage: bench/train/kernels.sh [build-dir]
# Environment: REPS (3), STEPS timed steps (150), WARMUP (20).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
reps=${REPS:-3}
steps=${STEPS:-150}
warmup=${WARMUP:-20}
bench_name=train
. "$root/bench/lib.sh"
positive_ints "$reps" "$steps" "$warmup"
if [ -n "${OPENBLAS_CORETYPE:-}" ]; then
  echo "bench/train kernels: OPENBLAS_CORETYPE is kept ($OPENBLAS_CORETYPE): unset BENCH_KEEP_OPENBLAS_CORETYPE to measure the choice" >&2
  exit 2
fi
# What the environment the script started in would have run (the Haswell row when unset).
env_kernels=${bench_env_coretype:-Haswell}
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')

# start_field RUN KEY: a field of the start event's blas_kernels.
start_field() {
  "$PY" -c 'import json, sys
e = next(json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["event"] == "start")
print(e["blas_kernels"][sys.argv[2]])' "$work/$1/metrics.jsonl" "$2"
}

# shellcheck disable=SC2054 # --mlp-widths takes a comma-separated list
mlp=(--model mlp --mlp-widths 2048,2048 --batch-size 256 --threads 1 --optimizer sgd --lr 0.05
     --momentum 0.9 --schedule constant --eval-every 0 --checkpoint-every 0 --final-split none
     --resume none --log-every "$warmup")
slim() {  # slim NAME STEPS [ENV=VALUE...]
  local name=$1 total=$(($2 + warmup)); shift 2
  if ! env "$@" mpirun -np 2 "$bin" train --data "$data" --out "$work/$name" --max-steps "$total" \
    "${mlp[@]}" >"$work/$name.log" 2>&1; then
    echo "bench/train kernels: run $name failed:" >&2
    tail -n 20 "$work/$name.log" >&2
    exit 1
  fi
}

# The decision, measured now on a cache of its own (a cached one could be another day's).
slim decide 1 SLIMTRAIN_CACHE_DIR="$work/cache"
own=$(start_field decide own)
chosen=$(start_field decide chosen)
grep -o 'BLAS: .*' "$work/decide.log" | head -n 1 | sed 's/(\/usr[^)]*)//'
configs=(chosen own)
[ "$chosen" != "$env_kernels" ] && [ "$own" != "$env_kernels" ] && configs+=(environment)
for r in $(seq 1 "$reps"); do
  order=("${configs[@]}")
  [ $((r % 2)) = 0 ] && mapfile -t order < <(printf '%s\n' "${configs[@]}" | tac)
  for c in "${order[@]}"; do
    case $c in
      chosen) slim "$c.$r" "$steps" SLIMTRAIN_CACHE_DIR="$work/cache" ;;
      own) slim "$c.$r" "$steps" OPENBLAS_CORETYPE="$own" ;;
      environment) slim "$c.$r" "$steps" OPENBLAS_CORETYPE="$env_kernels" ;;
    esac
  done
done

"$PY" - "$work" "$reps" "$cpu" "${bench_env_coretype:--}" "${configs[@]}" <<'PYEOF'
import json, statistics, sys
work, reps, cpu, env_coretype = sys.argv[1:5]
configs = sys.argv[5:]
reps = int(reps)

def events(run):
    return [json.loads(l) for l in open(f"{work}/{run}/metrics.jsonl")]

def sps(run):
    return float([e for e in events(run) if e["event"] == "done"][-1]["samples_per_s"])

def loaded(run):
    return [e for e in events(run) if e["event"] == "start"][0]["blas_kernels"]["loaded"]

k = [e for e in events("decide") if e["event"] == "start"][0]["blas_kernels"]
print(f"\nOpenBLAS kernels on {cpu}: 1024-cubed sgemm on one core, GFLOP/s, measured by slimtrain "
      f"at start-up ({k['how'].split(',')[0]})")
for r in k["rates"]:
    tag = " (OpenBLAS's own choice)" if r["requested"] == "" else ""
    tag += " <- chosen" if r["kernels"] == k["chosen"] else ""
    print(f"  {r['kernels']:12s}{r['gflops']:8.1f}{tag}")
rates = " ".join(f"{r['kernels'].lower()}_gflops={r['gflops']:.1f}" for r in k["rates"][1:])
print(f"\nmlp 2048x2048, batch 256 per rank, 2 ranks x 1 thread, samples/s (steady state)")
med = {}
for c in configs:
    values = [sps(f"{c}.{r}") for r in range(1, reps + 1)]
    med[c] = statistics.median(values)
    print(f"  {c:11s} ({loaded(f'{c}.1'):10s})" + "".join(f"{v:9.0f}" for v in values)
          + f"   median {med[c]:.0f}")
if env_coretype != "-":
    print(f"  (the environment this ran in set OPENBLAS_CORETYPE={env_coretype}: the environment "
          "row is what slimtrain runs there, and it says so in a warning)")
print(f"RESULT train kernels chosen={k['chosen']} chosen_gflops={k['chosen_gflops']:.1f} "
      f"own={k['own']} own_gflops={k['own_gflops']:.1f} "
      f"ratio={k['chosen_gflops'] / k['own_gflops']:.3f} {rates}")
line = (f"RESULT train kernels_mlp model=mlp-2048x2048 batch=256 ranks=2 chosen={k['chosen']} "
        f"chosen_sps={med['chosen']:.1f} own={k['own']} own_sps={med['own']:.1f} "
        f"ratio={med['chosen'] / med['own']:.3f} target=1.30")
if "environment" in med:
    env = loaded("environment.1")
    line += (f" env_coretype={env_coretype} env_kernels={env} env_sps={med['environment']:.1f} "
             f"env_ratio={med['chosen'] / med['environment']:.3f}")
print(line)
PYEOF
