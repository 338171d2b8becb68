#!/usr/bin/env bash
# jobs/train.sbatch with MAX_RESTARTS against a real single-node Slurm: a rank killed with kill -9
# mid-training makes the script relaunch inside the same allocation with --resume auto, and the
# run finishes; the time from the kill to the relaunched job's start record (its first training
# step follows at once) is measured (target 30 s). A bad option (exit 2) is not restarted. Skips
# (77) where Slurm cannot run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
. "$(dirname "$0")/slurm_cluster.sh"
slurm_work
LAUNCHER=${SLURM_TEST_LAUNCHER:-srun}
make_data "$work" 16 1024 || { echo "cannot make the test data"; exit 1; }
cd "$SLIMTRAIN_SOURCE_DIR" || exit 1
printf '%s\n' "model = mlp" "mlp-widths = 64,32" "batch-size = 32" "log-every = 50" \
  "keep-last = 2" >"$work/job.ini"
ended() {
  case $(scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2) in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) return 0 ;;
  esac
  return 1
}
exit_code() { scontrol -o show job "$1" | grep -o ' ExitCode=[0-9]*' | cut -d= -f2; }

# A long run: the kill comes once the first checkpoint exists.
steps=20000
jobid=$(CONFIG=$work/job.ini DATA=$work/data.h5 RUN_DIR=$work/run LAUNCHER=$LAUNCHER MAX_RESTARTS=1 \
  EXTRA_ARGS="--max-steps $steps --checkpoint-every 500 --collective-timeout 20" \
  sbatch --parsable --output="$work/job.out" --job-name=slimtrain-restart jobs/train.sbatch)
check "sbatch MAX_RESTARTS=1 jobs/train.sbatch (launcher $LAUNCHER)" test -n "$jobid"
[ -n "$jobid" ] || { finish; exit 1; }
check "  a checkpoint appears" wait_until 120 sh -c "ls $work/run/checkpoints/step-* >/dev/null 2>&1"
victim=$(pgrep -f "slimtrain train --config $work/job.ini" | tail -n 1)
fault=$(date +%s.%N)
check "  a rank to kill" test -n "$victim"
kill -9 "$victim"
echo "[$SECONDS s] killed rank process $victim"
check "the job ends after its relaunch" wait_until 240 ended "$jobid"
out=$(cat "$work/job.out")
check "  state COMPLETED, exit 0" test "$(exit_code "$jobid")" = 0
check "  the script relaunched once" contains "(a rank or node failed); restart 1 of 1 with --resume auto"
check "  the relaunch resumed from a checkpoint" contains "resumed from .*step-"
check "  and trained to the end (done event)" test "$(event_field "$work/run" done step)" = "$steps"
recovery=$("$PY" -c '
import json, sys
fault = float(sys.argv[2])
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "start" and e["time"] > fault:
        print(round(e["time"] - fault, 1))
        break
' "$work/run/metrics.jsonl" "$fault")
echo "RECOVERY slurm_restart launcher=$LAUNCHER seconds=${recovery:-none} target=30"
check "  recovery within 30 s (${recovery:-none} s)" awk -v r="${recovery:-999}" 'BEGIN { exit !(r <= 30) }'
[ "$fails" -eq 0 ] || sed 's/^/  | /' "$work/job.out" | tail -n 25

# Bad input exits 2: a relaunch would fail the same way, so there is none.
bad=$(CONFIG=$work/job.ini DATA=$work/data.h5 RUN_DIR=$work/bad LAUNCHER=$LAUNCHER MAX_RESTARTS=3 \
  EXTRA_ARGS="--batch-size 0" \
  sbatch --parsable --output="$work/bad.out" --job-name=slimtrain-bad jobs/train.sbatch)
check "a bad option: the job ends" wait_until 120 ended "$bad"
out=$(cat "$work/bad.out")
check "  with exit 2" test "$(exit_code "$bad")" = 2
check "  and no restart" contains "slimtrain exited with 2"
check "  (none logged)" bash -c "! grep -q 'restart 1 of' '$work/bad.out'"
check "  the ranks said why in the failure report (exit 2)" grep -q ' exit 2: ' "$work/bad/failure-report.txt"
finish
