# The chaos campaign's faults (sourced by tests/chaos/run.sh, after tests/cluster/cluster.sh).
# Each fault_KIND fires one fault into the running trial and records what it hit in the globals
# f_rank, f_node and f_note; a fault that finds nothing to hit returns 1 (the trial is then
# inconclusive). Faults that end on their own (a stopped rank continued, a slowed link restored,
# a full disk emptied) leave a background helper that the trial's cleanup ends.
#
# Globals read: trial_run (the run directory), trial_log (the job script's output), job_pid (the
# job script), deadline (s), f_pick (a random number), tmpfs (the run's small file system,
# diskfull trials only).

chaos_helpers=()

# rank_pids NODE: "RANK PID" for each slimtrain rank running on NODE.
rank_pids() {
  local p r
  for p in $(ip netns pids "$(cluster_ns "$1")" 2>/dev/null); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slimtrain ] || continue
    r=$(tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    [ -n "$r" ] && echo "$r $p"
  done
}

# pick_rank: the running rank f_pick (a random number the runner drew) picks, as "RANK PID NODE";
# 1 when none runs. (A subshell reseeds $RANDOM: the draw comes from the runner.)
pick_rank() {
  local all=() n line
  for n in $(seq 1 "$CLUSTER_NODES"); do
    while read -r line; do [ -n "$line" ] && all+=("$line $n"); done < <(rank_pids "$n")
  done
  [ ${#all[@]} -gt 0 ] || return 1
  echo "${all[f_pick % ${#all[@]}]}"
}

# later SECONDS COMMAND...: COMMAND after SECONDS, in the background, ended with the trial.
later() {
  local s=$1; shift
  (sleep "$s"; "$@") >/dev/null 2>&1 &
  chaos_helpers+=($!)
}

fault_stop() {  # SIGSTOP of a rank for longer than the deadline, then SIGCONT
  local r p n
  read -r r p n < <(pick_rank) || return 1
  kill -STOP "$p" || return 1
  f_rank=$r f_node=$n f_note="SIGSTOP pid $p for $((deadline + 10)) s"
  later $((deadline + 10)) kill -CONT "$p"
}

fault_kill9() {  # kill -9 of a rank
  local r p n
  read -r r p n < <(pick_rank) || return 1
  kill -9 "$p" || return 1
  f_rank=$r f_node=$n f_note="kill -9 pid $p"
}

# out_of_job: node 2 runs none of the job's ranks since a relaunch left it out. A second fault
# aimed at it still happens (a node's failure does not wait for the job to use it); the job must
# not notice.
out_of_job() { [ -z "$(rank_pids 2)" ] && grep -q 'launching on .*(excluded: node2)' "$trial_log" 2>/dev/null; }

# aim_node2: true when a link fault on node 2 has something to hit: ranks there, or a node the job
# left out (then $away says so for the note).
aim_node2() {
  away=""
  if out_of_job; then away=" (node 2 left out of the job)"; else [ -n "$(rank_pids 2)" ]; fi
}

fault_nodekill() {  # every process of node 2 (its ranks and Open MPI's daemon) killed
  local pids
  pids=$(ip netns pids "$(cluster_ns 2)")
  if [ -z "$pids" ] && out_of_job; then
    f_node=2 f_note="node 2 left out of the job: no process there to kill"
    return 0
  fi
  [ -n "$pids" ] || return 1
  # shellcheck disable=SC2086
  kill -9 $pids
  f_node=2 f_note="kill -9 of $(echo $pids | wc -w) processes"
}

fault_cut() {  # node 2's link down for the rest of the trial
  local away
  aim_node2 || return 1
  cluster_cut 2 || return 1
  f_node=2 f_note="link down$away"
}

fault_slow() {  # node 2's link at 1/100 of the bandwidth measured at start-up, for 30 s
  local mbps rate away
  aim_node2 || return 1
  mbps=$("$PY" -c 'import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"start\"" in l][-1]
print(s.get("measured_bandwidth_mbps") or 100)' "$trial_run/metrics.jsonl") || return 1  # 1 rank: none
  # MB/s -> kbit/s, a hundredth of it
  rate=$(awk -v m="$mbps" 'BEGIN { r = int(m * 8000 / 100); if (r < 1000) r = 1000; print r }')kbit
  cluster_shape 2 "$rate" || return 1
  f_node=2 f_note="link at $rate for 30 s (measured ${mbps%.*} MB/s)$away"
  later 30 cluster_unshape 2
}

fault_diskfull() {  # --out's file system filled during a checkpoint, emptied 12 s later
  [ -n "$tmpfs" ] || return 1
  dd if=/dev/zero of="$tmpfs/filler" bs=1M 2>/dev/null
  f_note="$(df -h --output=size "$tmpfs" | tail -n 1 | tr -d ' ') tmpfs full for 12 s"
  later 12 rm -f "$tmpfs/filler"
}

# A rank killed, and the newest checkpoint corrupted before the relaunch: the job script is held
# (SIGSTOP) from just before the kill until its ranks are gone and the checkpoint damaged, so the
# relaunch meets it (one still being written at the kill is the newest too, once it lands).
fault_corrupt() {
  local newest r p n
  read -r r p n < <(pick_rank) || return 1
  kill -STOP "$job_pid"
  kill -9 "$p"
  for _ in $(seq 100); do
    [ -z "$(rank_pids 1)$(rank_pids 2)" ] && break
    sleep 0.1
  done
  newest=$(ls -d "$trial_run"/checkpoints/step-* 2>/dev/null | sort | tail -n 1)
  if [ -n "$newest" ] && [ -f "$newest/tensors.bin" ]; then
    printf 'chaos' | dd of="$newest/tensors.bin" bs=1 seek=100 conv=notrunc 2>/dev/null
  fi
  kill -CONT "$job_pid"
  [ -n "$newest" ] || return 1
  f_rank=$r f_node=$n f_note="kill -9 pid $p, then ${newest##*/} corrupted"
}

fault_usr1() {  # Slurm's warning before the time limit, to the job script
  kill -USR1 "$job_pid" && f_note="SIGUSR1 to the job script"
}

fault_term() {  # scancel, preemption: SIGTERM to the job script
  kill -TERM "$job_pid" && f_note="SIGTERM to the job script"
}

# badsample is armed before the job starts (a data file with one bad label); it fires when the
# rank whose stream holds the row reads it: the runner sees that in the job's log.

chaos_end_helpers() {
  local p
  for p in "${chaos_helpers[@]}"; do
    pkill -P "$p" 2>/dev/null
    kill "$p" 2>/dev/null
  done
  chaos_helpers=()
}
