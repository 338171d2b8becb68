#!/usr/bin/env bash
# A hung mpi test case must fail within seconds, naming the test, rather than stall CI.
set -u
mpiexec=$1
binary=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
SLIMTRAIN_WATCHDOG_SELFTEST=1 SLIMTRAIN_TEST_CASE_TIMEOUT=3 \
  "$mpiexec" -np 2 --oversubscribe "$binary" --gtest_filter='MpiHarness.WatchdogSelfTestHangs' >"$out" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
cat "$out"
if [ $rc -eq 0 ]; then echo "FAIL: a hung test exited 0"; exit 1; fi
if ! grep -q 'watchdog.*MpiHarness.WatchdogSelfTestHangs' "$out"; then
  echo "FAIL: the watchdog message does not name the hung test"; exit 1
fi
if [ $elapsed -gt 30 ]; then echo "FAIL: took ${elapsed}s to end a 3 s hang"; exit 1; fi
echo "ok: hung test ended with rc=$rc after ${elapsed}s, named in the watchdog message"
