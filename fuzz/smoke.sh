#!/usr/bin/env bash
# CI smoke run of the parser fuzzers: builds fuzz/ alone with clang-14 into BUILD_DIR and runs
# each target for SECONDS_PER_TARGET (default 10). Exits 77 (skipped) without clang-14 or
# libclang-rt-14-dev (which provides libFuzzer).
set -u
src=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: smoke.sh BUILD_DIR [SECONDS_PER_TARGET]}
seconds=${2:-10}
command -v clang++-14 >/dev/null || { echo "skipped: clang++-14 not installed (apt-get install clang-14)"; exit 77; }
if ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "skipped: libFuzzer missing (apt-get install libclang-rt-14-dev)"
  exit 77
fi
cmake -S "$src" -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j2 >"$build.build.log" 2>&1 || { tail -40 "$build.build.log"; exit 1; }

seeds=$build/seeds
mkdir -p "$seeds/idx" "$seeds/csv" "$seeds/npy"
printf '\x00\x00\x08\x03\x00\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00\x02abcdefgh' >"$seeds/idx/small"
printf '\x00\x00\x08\x01\x00\x00\x00\x03\x01\x02\x03' >"$seeds/idx/labels"
printf '\x01a,b,label\n1.5,2,0\n-3e2,4,1\n' >"$seeds/csv/header"
printf '\x0a7;0.5\n8;nan\n9;1;2\n' >"$seeds/csv/first"
printf "\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }          \n\x00\x00\x80\x3f\x00\x00\x00\x40" >"$seeds/npy/f4"
printf "\x93NUMPY\x01\x00\x46\x00{'descr': '|u1', 'fortran_order': False, 'shape': (2, 2), }          \nabcd" >"$seeds/npy/u1"

status=0
for parser in idx csv npy; do
  corpus=$build/corpus/$parser
  mkdir -p "$corpus"
  echo "== fuzz_$parser for ${seconds}s"
  if "$build/fuzz_$parser" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=1024 \
       -artifact_prefix="$build/crash-$parser-" "$corpus" "$seeds/$parser" >"$build/$parser.log" 2>&1; then
    grep -E "^#[0-9]+.*DONE|Done [0-9]+ runs" "$build/$parser.log" | tail -1
  else
    echo "FAIL fuzz_$parser found a crash:"
    tail -40 "$build/$parser.log"
    status=1
  fi
done
exit $status
