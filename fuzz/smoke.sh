#!/usr/bin/env bash
# CI smoke run of every fuzz target: builds fuzz/ alone with clang-14 into BUILD_DIR, writes the
# seed corpus with fuzz/seeds.sh (from real files: it needs the slimtrain binary) and runs each
# target for SECONDS_PER_TARGET (default 10). A crash fails the run and leaves its input as
# BUILD_DIR/crash-<target>-*; a target that does not run at all (a binary a killed build left
# half linked) is a build failure, said as such. Exits 77 (skipped) without clang-14 or
# libclang-rt-14-dev (which provides libFuzzer).
#   fuzz/smoke.sh BUILD_DIR [SECONDS_PER_TARGET] [SLIMTRAIN_BIN] [TARGET...]
set -u
src=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: smoke.sh BUILD_DIR [SECONDS_PER_TARGET] [SLIMTRAIN_BIN] [TARGET...]}
seconds=${2:-10}
bin=${3:-$src/../build/apps/slimtrain}
shift $(($# < 3 ? $# : 3))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(idx csv text npy hdf5 checkpoint ini safetensors tokenizer_json)
command -v clang++-14 >/dev/null || { echo "skipped: clang++-14 not installed (apt-get install clang-14)"; exit 77; }
if ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "skipped: libFuzzer missing (apt-get install libclang-rt-14-dev)"
  exit 77
fi
[ -x "$bin" ] || { echo "smoke.sh: no slimtrain binary at $bin (build it first)"; exit 1; }
mkdir -p "$build"
cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
# A run killed while linking leaves a target's binary half written and not executable, with a
# time stamp newer than its objects, so make would not link it again: such a binary is removed
# first. After the build every target must run (-help=1); one that cannot is a build failure.
runs() { [ -x "$1" ] && "$1" -help=1 >/dev/null 2>&1; }
for target in "${targets[@]}"; do
  [ ! -e "$build/fuzz_$target" ] || [ -x "$build/fuzz_$target" ] || rm -f "$build/fuzz_$target"
done
cmake --build "$build" -j2 >"$build.build.log" 2>&1 || { tail -40 "$build.build.log"; exit 1; }
for target in "${targets[@]}"; do
  runs "$build/fuzz_$target" && continue
  rm -f "$build/fuzz_$target"  # linked again from scratch, once
  cmake --build "$build" --target "fuzz_$target" >>"$build.build.log" 2>&1
  runs "$build/fuzz_$target" || {
    echo "FAIL fuzz_$target: the build left no binary that runs ($(ls -l "$build/fuzz_$target" 2>&1));" \
      "a build failure, not a crash: $build.build.log"
    exit 1
  }
done
rm -rf "$build/seeds"
"$src/seeds.sh" "$bin" "$build/seeds" || { echo "FAIL fuzz/seeds.sh could not write the seeds"; exit 1; }

# where_it_fails ARTIFACT TARGET: "hdf5" when the input's crash (or hang) happens inside the HDF5
# library (on its stack, the first frame of either HDF5 or slimtrain's code is HDF5's),
# "slimtrain" when in slimtrain's code, "none" when it does not fail when run alone. fuzz_hdf5
# runs it in its own process, without the probe's child, so that the stack is printed.
where_it_fails() {
  local frame
  frame=$(FUZZ_HDF5_NO_PROBE=1 ASAN_OPTIONS=symbolize=1 "$build/fuzz_$2" -timeout=5 -runs=1 -detect_leaks=0 "$1" 2>&1 |
    grep -E '^ +#[0-9]+ ' | grep -m1 -E 'libhdf5|/src/|/include/slimtrain/|/fuzz/')
  case "$frame" in
    *libhdf5*) echo hdf5 ;;
    '') FUZZ_HDF5_NO_PROBE=1 ASAN_OPTIONS=symbolize=1 "$build/fuzz_$2" -timeout=5 -runs=1 -detect_leaks=0 "$1" >/dev/null 2>&1 &&
          echo none || echo slimtrain ;;
    *) echo slimtrain ;;
  esac
}

status=0
for target in "${targets[@]}"; do
  corpus=$build/corpus/$target
  mkdir -p "$corpus"
  # HDF5 files and packed checkpoints are kilobytes; the text formats stay small.
  case "$target" in hdf5 | checkpoint) max_len=65536 ;; *) max_len=4096 ;; esac
  # HDF5 1.10 itself crashes and loops on damaged metadata within seconds of fuzzing (fuzz/
  # README.md). fuzz_hdf5's child takes those; fork mode keeps going past anything left (an oom-
  # input of libFuzzer's malloc limit in the child, say), and each is sorted out below.
  mode=()
  # LeakSanitizer is off there too: HDF5's own error paths leak (its allocations, not slimtrain's).
  [ "$target" != hdf5 ] || mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1
    -detect_leaks=0)
  echo "== fuzz_$target for ${seconds}s"
  before=$(ls "$build" | grep -c "^crash-$target-\|^timeout-$target-\|^oom-$target-")
  # Fork mode exits 70 after the findings it went past: those are judged one by one below.
  # Inputs whose probe child died without a stack are kept here, and judged below.
  rm -rf "$build/unjudged" && mkdir -p "$build/unjudged"
  FUZZ_HDF5_UNJUDGED_DIR=$build/unjudged "$build/fuzz_$target" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 \
    -timeout=20 "${mode[@]}" -artifact_prefix="$build/crash-$target-" "$corpus" \
    "$build/seeds/$target" >"$build/$target.log" 2>&1
  rc=$?
  # 126 and 127 are the shell's: the binary did not start (replaced under this run, say).
  if [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then
    echo "FAIL fuzz_$target could not be started (exit $rc: $(tail -1 "$build/$target.log")):" \
      "a build failure, not a crash"
    status=1
    continue
  elif [ "$rc" -eq 0 ] || [ ${#mode[@]} -gt 0 ]; then
    grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs|^#[0-9]+: cov: .* exec/s" "$build/$target.log" | tail -1
  else
    echo "FAIL fuzz_$target found a crash:"
    tail -40 "$build/$target.log"
    status=1
  fi
  # Findings of fork mode: inside HDF5 is reported (with the input kept), anything else fails.
  for artifact in "$build"/crash-"$target"-* "$build"/unjudged/*; do
    [ -e "$artifact" ] && [ ${#mode[@]} -gt 0 ] || continue
    where=$(where_it_fails "$artifact" "$target")
    if [ "$where" = slimtrain ]; then
      echo "FAIL fuzz_$target: $artifact fails in slimtrain's code:"
      FUZZ_HDF5_NO_PROBE=1 ASAN_OPTIONS=symbolize=1 "$build/fuzz_$target" -timeout=5 -runs=1 -detect_leaks=0 "$artifact" 2>&1 |
        grep -E '^ +#[0-9]+ |ERROR' | head -20
      status=1
      continue
    fi
    mkdir -p "$build/hdf5-library-findings"
    mv "$artifact" "$build/hdf5-library-findings/"
    case "$where" in
      hdf5) echo "   inside the HDF5 library (reported, not slimtrain's): hdf5-library-findings/${artifact##*/}" ;;
      none) echo "   did not fail when run alone (HDF5 state left by earlier inputs): hdf5-library-findings/${artifact##*/}" ;;
    esac
  done
done
exit $status
