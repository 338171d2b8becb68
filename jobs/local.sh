#!/usr/bin/env bash
# Runs slimtrain under mpirun on a workstation: jobs/local.sh [-n RANKS] <subcommand> [options]
#   jobs/local.sh -n 2 train --config jobs/fashion_demo.ini --data data/fashion-mnist.h5 --out runs/demo
# Extra mpirun arguments (a hostfile, say) go in MPIRUN_ARGS. The job ends a few seconds after a
# rank reports that it cannot continue, whatever mpirun does (jobs/watch.sh).
set -euo pipefail
ranks=2
if [ "${1:-}" = "-n" ]; then ranks=$2; shift 2; fi
jobs_dir=$(cd "$(dirname "$0")" && pwd)
. "$jobs_dir/env.sh"
. "$jobs_dir/watch.sh"
[ -x "${SLIMTRAIN_BIN:-}" ] || { echo "local.sh: build slimtrain first (./scripts/build.sh)" >&2; exit 2; }
# The ranks' failure reports, here (shared by the nodes of a cluster, unlike /tmp) if writable.
report_dir=$(mktemp -d "$PWD/.slimtrain-job.XXXXXX" 2>/dev/null ||
  mktemp -d "${TMPDIR:-/tmp}/slimtrain-job.XXXXXX")
trap 'rm -rf "$report_dir"' EXIT
new_failure_file "${SLIMTRAIN_REPORT_DIR:-$report_dir}"

# shellcheck disable=SC2086
mpirun -np "$ranks" --oversubscribe -x OMP_NUM_THREADS -x SLIMTRAIN_FAILURE_FILE \
  ${MPIRUN_ARGS:-} "$jobs_dir/rank.sh" "$SLIMTRAIN_BIN" "$@" &
child=$!
# Ctrl-C, TERM and USR1 (checkpoint and stop) go to mpirun, which passes them to every rank.
trap 'kill -INT $child 2>/dev/null' INT
trap 'kill -TERM $child 2>/dev/null' TERM
trap 'kill -USR1 $child 2>/dev/null' USR1
while kill -0 "$child" 2>/dev/null; do
  watch_failure "$child"
  sleep 1 &
  wait $! 2>/dev/null || true
done
rc=0
wait "$child" || rc=$?
exit "$(failure_exit_code "$rc")"
