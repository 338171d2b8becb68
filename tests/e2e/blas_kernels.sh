#!/usr/bin/env bash
# OpenBLAS's kernels chosen by measurement (runtime/blas_kernels.hpp): on a fresh cache the first
# run times OpenBLAS's own choice and every set the CPU's flags allow, in one run, and keeps the
# fastest; the start line and the start event name the kernels and both figures, and the loaded
# kernels are the chosen ones; the second run reads the cache; an OpenBLAS whose own choice is
# slow (SLIMTRAIN_TEST_OPENBLAS_OWN=Prescott: SSE3 kernels, OpenBLAS's generic x86-64 target;
# not Sandybridge's AVX, which on a Zen 5 EPYC runs within 10% of Haswell's, 90.9 against
# 108.4 GFLOP/s, since Zen issues a multiply and an add per FMA's cycle) is replaced and the
# process runs again with the faster set; a user's
# OPENBLAS_CORETYPE is left alone, compared with the cached figures, and a warning says when it
# is 10% slower than this CPU's best; a damaged cache file is measured anew.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
. "$(dirname "$0")/train_lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset OPENBLAS_CORETYPE SLIMTRAIN_OPENBLAS_CHOICE SLIMTRAIN_TEST_OPENBLAS_OWN
make_data "$work" 8 256 || { echo "cannot make the test data"; exit 1; }
if ! "$PY" -c 'import torch, sys
sys.exit(0 if any("openblas" in l for l in open("/proc/self/maps")) else 1)' 2>/dev/null; then
  echo "skipped: LibTorch's libblas.so.3 is not OpenBLAS here (the probe only chooses OpenBLAS kernels)"
  exit 77
fi
job=(--data "$work/data.h5" --model mlp --mlp-widths 16 --batch-size 16 --threads 1
     --eval-every 0 --checkpoint-every 0 --final-split none --max-steps 3 --resume none)
run() {  # run NAME CACHE [ENV=VALUE...]: one np 2 job; its start event in $start
  local name=$1 cache=$2; shift 2
  out=$(env SLIMTRAIN_CACHE_DIR="$cache" "$@" "$MPIEXEC" -np 2 "$S" train "${job[@]}" \
    --out "$work/$name" 2>&1)
  start=$(events "$work/$name" start)
}

run first "$work/cache"
check "a fresh cache: the start line says the kernels were measured" \
  contains "kernels kept by measurement\|kernels chosen by measurement"
check "  OpenBLAS's own choice and at least one other set timed in one run" \
  json_is "$start" 'len(e["blas_kernels"]["rates"]) >= 2 and e["blas_kernels"]["rates"][0]["requested"] == ""'
check "  the chosen kernels at least as fast as OpenBLAS's own" \
  json_is "$start" 'e["blas_kernels"]["chosen_gflops"] >= e["blas_kernels"]["own_gflops"] > 0'
check "  and the fastest measured, or within 10% of it" \
  json_is "$start" 'e["blas_kernels"]["chosen_gflops"] * 1.10 >= max(r["gflops"] for r in e["blas_kernels"]["rates"])'
check "  the process runs the chosen kernels" \
  json_is "$start" 'e["blas_kernels"]["loaded"] == e["blas_kernels"]["chosen"]'
check "  one decision cached for the machine" test "$(ls "$work/cache"/openblas-kernels-*.txt | wc -l)" = 1
echo "  $(grep -o 'BLAS: .*' <<<"$out" | sed 's/.*(OpenMP)//; s/.*(pthreads)//' | head -n 1)"

run second "$work/cache"
check "the second run reads the cache" json_is "$start" 'e["blas_kernels"]["how"].startswith("cached in")'
check "  with the same decision" json_is "$start" \
  "e['blas_kernels']['chosen'] == '$(events "$work/first" start | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["blas_kernels"]["chosen"])')'"

run slow-own "$work/cache-slow" SLIMTRAIN_TEST_OPENBLAS_OWN=Prescott
check "an OpenBLAS that chose SSE3 kernels on this AVX2 CPU: another set chosen" \
  json_is "$start" 'e["blas_kernels"]["own"] == "Prescott" and e["blas_kernels"]["chosen"] not in ("", "Prescott")'
check "  at least 10% faster than the own choice" \
  json_is "$start" 'e["blas_kernels"]["chosen_gflops"] >= 1.10 * e["blas_kernels"]["own_gflops"]'
check "  the process ran again with it loaded" \
  json_is "$start" 'e["blas_kernels"]["loaded"] == e["blas_kernels"]["chosen"]'
check "  the start line names both figures" contains "kernels chosen by measurement: [A-Za-z]* [0-9.]* GFLOP/s against OpenBLAS's own Prescott [0-9.]*"

run yours "$work/cache" OPENBLAS_CORETYPE=Haswell
check "a user's OPENBLAS_CORETYPE=Haswell stands" json_is "$start" 'e["blas_kernels"]["loaded"] == "Haswell" and e["blas_kernels"]["set_by_you"] == "Haswell"'
check "  the start line says so, with its figure" contains "OPENBLAS_CORETYPE set by you, kept: Haswell [0-9.]* GFLOP/s"
check "  compared with the figures cached for this machine (one file still)" \
  test "$(ls "$work/cache"/openblas-kernels-*.txt | wc -l)" = 1
# A warning exactly when the best set measured 10% faster than the user's (an AVX-512 CPU).
if json_is "$start" 'e["blas_kernels"]["fastest_gflops"] >= 1.10 * e["blas_kernels"]["chosen_gflops"]'; then
  check "  slower than this CPU's best: a warning names both figures and the way out" \
    contains "WARN.*OPENBLAS_CORETYPE in the environment loads OpenBLAS's Haswell kernels, [0-9.]* GFLOP/s where [A-Za-z]*'s run [0-9.]*.*unset OPENBLAS_CORETYPE"
else
  check "  within 10% of this CPU's best: no warning" bash -c '! grep -q "OPENBLAS_CORETYPE in the environment loads" <<<"$1"' _ "$out"
fi

cached=$(ls "$work/cache"/openblas-kernels-*.txt)
echo "kernels SkylakeX" >"$cached"
run damaged "$work/cache"
check "a damaged cache file is measured anew" \
  json_is "$start" 'e["blas_kernels"]["how"].startswith("measured now") or (e["blas_kernels"]["how"].startswith("cached") and len(e["blas_kernels"]["rates"]) >= 2)'
check "  and rewritten whole" grep -q '^rate - ' "$cached"

# Where the cache lives without SLIMTRAIN_CACHE_DIR: $XDG_CACHE_HOME/slimtrain, else
# ~/.cache/slimtrain; a home that cannot take it does not fail the run.
uncached() {  # uncached NAME ENV=VALUE...: one np 1 job without SLIMTRAIN_CACHE_DIR
  local name=$1; shift
  out=$(env -u SLIMTRAIN_CACHE_DIR -u XDG_CACHE_HOME "$@" "$S" train "${job[@]}" \
    --out "$work/$name" 2>&1)
}
check "XDG_CACHE_HOME is honoured" uncached xdg XDG_CACHE_HOME="$work/xdg"
check "  the decision cached in \$XDG_CACHE_HOME/slimtrain" eval 'ls "$work/xdg/slimtrain"/openblas-kernels-*.txt >/dev/null'
check "a home that cannot hold a cache (HOME=/dev/null) trains all the same" uncached ro HOME=/dev/null
check "  and the BLAS line says why nothing was measured" contains "kernels not measured (no cache directory (/dev/null/.cache/slimtrain not writable; set SLIMTRAIN_CACHE_DIR)"
finish
