#!/usr/bin/env bash
# Recovery time on the simulated cluster: from a fault that kills or silences part of the job to
# the first training step of the job that jobs/train.sbatch relaunched (MAX_RESTARTS), for the
# faults that need a relaunch: kill -9 of a rank, every process of node 2 killed, a rank stopped
# (SIGSTOP) past the deadline, node 2's link cut. The trials are the chaos campaign's
# (tests/chaos/run.sh, same cluster, job script and judge) restricted to those faults, so every
# figure comes from a trial that was also judged (finished at the undisturbed accuracy, nothing
# left on any node, at most one checkpoint interval lost).
#
# The time to notice a fault is --collective-timeout (8 s in these trials) for a stopped rank or
# a cut link; the launcher notices a dead process by itself.
#
# Usage: bench/cluster/recovery.sh [build-dir]   (as root: namespaces need CAP_NET_ADMIN)
# Environment: TRIALS (12), SEED (2026).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
trials=${TRIALS:-12}
seed=${SEED:-2026}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --keep: the per-trial verdicts (results.jsonl) outlive the campaign's own clean-up.
BUILD_DIR=$build "$root/tests/chaos/run.sh" --trials "$trials" --seed "$seed" \
  --faults "kill9 nodekill stop cut" --keep "$work/chaos"
rc=$?
[ "$rc" -eq 77 ] && exit 77

python3 - "$work/chaos/results.jsonl" "$rc" "$seed" <<'EOF'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
by = {}
for r in rows:
    if r["verdict"] == "pass" and r.get("recovery") is not None:
        by.setdefault(r["faults"].split("+")[0], []).append(r["recovery"])
rec = [x for v in by.values() for x in v]
print()
print(f"{'fault':<10} {'trials':>6} {'median s':>9} {'max s':>7}")
for k, v in sorted(by.items()):
    print(f"{k:<10} {len(v):>6} {statistics.median(v):>9.1f} {max(v):>7.1f}")
passed = sum(r["verdict"] == "pass" for r in rows)
line = f"RESULT cluster recovery trials={len(rows)} passed={passed} seed={sys.argv[3]}"
if rec:
    line += f" median_s={statistics.median(rec):.1f} max_s={max(rec):.1f} target_s=15 "
    line += " ".join(f"{k}_median_s={statistics.median(v):.1f}" for k, v in sorted(by.items()))
print(line)
sys.exit(0 if sys.argv[2] == "0" and rec else 1)
EOF
