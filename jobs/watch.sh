# Ends a launcher (mpirun, srun) that outlives its ranks' report that the job cannot continue.
# Sourced by local.sh and train.sbatch.
#
# A rank that ends the job (a missed deadline, a desync, an error on one rank) appends one line to
# $SLIMTRAIN_FAILURE_FILE, e.g. "rank 0 on node1 exit 1: data all_reduce seq 181 ... missing
# ranks: 1 on node2 (no answer)", then calls MPI_Abort. When a node's link is down, mpirun then
# waits minutes for that node's daemon (seen on a simulated 2-node cluster: over two minutes,
# then a crash in PMIx_Finalize), and a real job would hold its nodes until the time limit. So the
# script watches the file: SLIMTRAIN_LAUNCHER_GRACE seconds (default 2) after the first line, a
# launcher still running gets SIGTERM, 2 s later SIGKILL (mpirun waits on a stopped rank or a lost
# node's daemon; a live one ends at once on SIGTERM), and the job exits with the rank's code.
# Each launch has its own report file (train.sbatch), so the ranks left on a cut-off node, which
# write theirs a few seconds after the others, cannot end a relaunch begun before then.

SLIMTRAIN_LAUNCHER_GRACE=${SLIMTRAIN_LAUNCHER_GRACE:-2}
failure_seen_at=""
launcher_ended_at=""

# new_failure_file DIR [NAME]: a fresh, empty report file DIR/NAME (default failure-report.txt),
# exported for the ranks (mpirun needs -x SLIMTRAIN_FAILURE_FILE to pass it to other nodes; srun
# passes the environment).
new_failure_file() {
  mkdir -p "$1" || return 1
  export SLIMTRAIN_FAILURE_FILE="$1/${2:-failure-report.txt}"
  rm -f "$SLIMTRAIN_FAILURE_FILE"
  failure_seen_at=""
  launcher_ended_at=""
}

# say_failure: the first report of this launch, once, naming the rank, its host and why.
say_failure() {
  [ -s "${SLIMTRAIN_FAILURE_FILE:-}" ] && [ -z "$failure_seen_at" ] || return 0
  failure_seen_at=$(date +%s)
  echo "slimtrain job: a rank reported that the job cannot continue:" \
    "$(head -n 1 "$SLIMTRAIN_FAILURE_FILE")" >&2
}

# watch_failure PID: call every second or more often while the launcher PID runs.
watch_failure() {
  local pid=$1 now
  [ -s "${SLIMTRAIN_FAILURE_FILE:-}" ] || return 0
  now=$(date +%s)
  if [ -z "$failure_seen_at" ]; then
    say_failure
  elif [ -z "$launcher_ended_at" ] && [ $((now - failure_seen_at)) -ge "$SLIMTRAIN_LAUNCHER_GRACE" ]; then
    echo "slimtrain job: the launcher is still running ${SLIMTRAIN_LAUNCHER_GRACE} s after that" \
      "report (an unreachable node?): ending it" >&2
    kill -TERM "$pid" 2>/dev/null || true
    launcher_ended_at=$now
  elif [ -n "$launcher_ended_at" ] && [ $((now - launcher_ended_at)) -ge 2 ]; then
    pkill -KILL -P "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
  fi
}

# failure_exit_code RC: the exit code of the job, given the launcher's RC: the reporting rank's
# code when the launcher had to be ended (its own code then says nothing about the job), and 2
# when a rank reported bad input (2): srun --kill-on-bad-exit returns 137 when it killed another
# rank before that one could exit 2 too, and a relaunch would only fail the same way.
failure_exit_code() {
  local rc=$1 code
  # A launcher that ended between two looks: its report is still said (the log names the rank).
  say_failure
  if [ -n "$launcher_ended_at" ]; then
    code=$(head -n 1 "$SLIMTRAIN_FAILURE_FILE" | sed -n 's/^rank .* exit \([0-9]*\): .*/\1/p')
    echo "${code:-1}"
  elif [ "$rc" -ne 0 ] && grep -q '^rank .* exit 2: ' "${SLIMTRAIN_FAILURE_FILE:-/dev/null}" 2>/dev/null; then
    echo 2
  else
    echo "$rc"
  fi
}
