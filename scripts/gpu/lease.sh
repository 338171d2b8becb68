#!/usr/bin/env bash
# Everything one lease of a GPU machine runs, in one command of the device tool (600 s at most),
# most wanted first: scripts/gpu/build-and-check.sh builds slimtrain and the gpu tier's programs
# at -O2 in one go and runs the gpu tier (ctest -L gpu); bench/gpu/run.sh runs its rows with the
# time left. The device tool brings back 8 files at most: the build's summary, the tier's log,
# the bench's report and RESULT lines come back as they are, everything else in lease.tgz.
#
#   device run: bash scripts/gpu/lease.sh      (carry: [".gpu"], filled by scripts/gpu/fetch-debs.sh)
#   then, on the machine still warm:  STAGES=bench ROWS="cnn-b64 ..." bash scripts/gpu/lease.sh
#
# Knobs (env): LEASE_S (540: the whole script, the packing included), TIER_S (360: the build and
# the tier), STAGES (tier,bench), ROWS (bench/gpu's rows; all by default), BENCH_BIN (a built
# slimtrain for the bench: build-gpu's), GPUROOT, and bench/gpu's DEVICE and SMALL (to rehearse
# on a CPU: STAGES=bench BENCH_BIN=build/apps/slimtrain DEVICE=cpu SMALL=1).
set -o pipefail
T0=$SECONDS
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
BACK=${OUT:-$REPO/.gpu/out}
HERE=$(mktemp -d /tmp/lease.XXXXXX)
LEASE=${LEASE_S:-540}
TIER=${TIER_S:-360}
STAGES=${STAGES:-tier,bench}
export GPUROOT=${GPUROOT:-/tmp/gpuroot}
mkdir -p "$BACK" "$HERE/tier" "$HERE/bench"
say() { echo "[lease $((SECONDS - T0)) s] $*" | tee -a "$HERE/lease.txt"; }

if [[ ",$STAGES," == *",tier,"* ]]; then
  say "build and gpu tier (limit $TIER s)"
  OUT=$HERE/tier RUN_BUDGET_S=$TIER RUN_STAGES=setup,configure,build,ctest \
    CXX_FLAGS_RELEASE="-O2 -DNDEBUG" BUILD_TARGETS="slimtrain gpu_devices gpu_comm gpu_step_ahead_copy" \
    timeout -k 5 "$TIER" bash scripts/gpu/build-and-check.sh >"$HERE/tier/stdout.txt" 2>&1
  say "build and gpu tier: exit $?"
  cp "$HERE/tier/summary.txt" "$BACK/summary.txt" 2>/dev/null
  cp "$HERE/tier/ctest.log" "$BACK/ctest.log" 2>/dev/null
fi

if [[ ",$STAGES," == *",bench,"* ]]; then
  bin=${BENCH_BIN:-$REPO/${BUILD_DIR:-build-gpu}/apps/slimtrain}
  P=$GPUROOT
  # shellcheck source=SCRIPTDIR/env.sh
  [ -d "$P/usr/bin" ] && . "$REPO/scripts/gpu/env.sh"  # mpirun and the prefix's libraries
  budget=$((LEASE - (SECONDS - T0) - 15))
  if [ "$budget" -lt 40 ]; then
    say "bench/gpu: not started, $budget s left"
  else
    say "bench/gpu with $bin, budget $budget s, rows: ${ROWS:-all}"
    OUT=$HERE/bench BENCH_BIN=$bin BUDGET=$budget bash bench/gpu/run.sh >"$HERE/bench/stdout.txt" 2>&1
    say "bench/gpu: exit $?"
    cp "$HERE/bench/bench_gpu.txt" "$HERE/bench/results.txt" "$BACK/" 2>/dev/null
  fi
fi

say "packing"
cp "$HERE/lease.txt" "$BACK/lease.txt"
tar -czf "$BACK/lease.tgz" -C "$HERE" . 2>/dev/null
rm -rf "$HERE"
cat "$BACK/summary.txt" 2>/dev/null
[ -f "$BACK/results.txt" ] && cat "$BACK/results.txt"
exit 0
