#!/usr/bin/env bash
# The chaos campaign: random faults on a simulated cluster under the job script, judged.
#
#   tests/chaos/run.sh [--trials N] [--seed S] [--steps N] [--keep DIR] [--faults "k1 k2 ..."]
#
# Each trial brings up 2 simulated nodes (network namespaces, tests/cluster/cluster.sh) with 1 or
# 2 ranks each, runs jobs/train.sbatch on node 1 as Slurm would run it (LAUNCHER=mpirun across
# both nodes, MAX_RESTARTS=2, --resume auto), draws one or two faults and the training steps at
# which they strike from the seed it prints, fires them while the job runs, and judges the outcome
# (tests/chaos/judge.py): finished at the undisturbed run's test accuracy (within 1 point), or
# ended with the code the fault calls for (2 bad input, 75 a signal) within the deadline plus
# 30 s; no relaunch losing more than one checkpoint interval; the latest checkpoint verifying; no
# process left on any node; the rank and node at fault named in the log. A fault that did not
# fire inside the run makes the trial inconclusive, and that counts as a failure.
#
# Faults (tests/chaos/faults.sh): stop (SIGSTOP of a rank past the deadline), kill9 (a rank),
# nodekill (every process of node 2), cut (node 2's link), slow (node 2's link at 1/100 for
# 30 s), diskfull (--out on a small tmpfs filled during a checkpoint), corrupt (the newest
# checkpoint corrupted, then a rank killed, before the relaunch), usr1 and term (to the job
# script), badsample (a label out of range that one rank's stream reader meets).
#
# Prints a table (trial, ranks, faults, moments, outcome, exit code, seconds to end or recover,
# steps lost, verdict) and `RESULT chaos ...`; exits 0 when every trial passed, 1 otherwise,
# 77 when this machine cannot build the cluster (not root, no namespaces). The binary:
# SLIMTRAIN_BIN, else $BUILD_DIR/apps/slimtrain (BUILD_DIR defaults to build/).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
trials=5
seed=$(($(date +%s) % 100000))
steps=600
keep=""
only=""
while [ $# -gt 0 ]; do
  case $1 in
    --trials) trials=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --faults) only=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
    *) echo "tests/chaos/run.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
for n in "$trials" "$seed" "$steps"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "tests/chaos/run.sh: '$n' is not a whole number" >&2; exit 2; }
done
[ "$steps" -ge 300 ] || { echo "tests/chaos/run.sh: --steps must be at least 300" >&2; exit 2; }
bin=${SLIMTRAIN_BIN:-${BUILD_DIR:-$root/build}/apps/slimtrain}
[ -x "$bin" ] || { echo "tests/chaos/run.sh: no slimtrain binary at $bin (set SLIMTRAIN_BIN or BUILD_DIR)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
PY=/usr/bin/python3
"$PY" -c 'import h5py' 2>/dev/null || { echo "skipped: $PY lacks h5py (python3-h5py)"; exit 77; }
source "$root/tests/cluster/cluster.sh"
why=$(cluster_can_run) || { echo "skipped: $why"; exit 77; }
source "$here/faults.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# Every node runs the same kernels: the remote ranks get a fresh environment (as over ssh).
unset OPENBLAS_CORETYPE

single=(stop kill9 nodekill cut slow diskfull corrupt usr1 term badsample)
second=(stop kill9 nodekill slow diskfull corrupt cut usr1 term)
[ -n "$only" ] && read -r -a single <<<"$only" && second=("${single[@]}")
interval=50   # checkpoint every this many steps
deadline=8    # --collective-timeout

work=${keep:-$(mktemp -d "${TMPDIR:-/tmp}/chaos.XXXXXX")}
mkdir -p "$work"
mounted=""
cleanup() {
  chaos_end_helpers
  [ -n "$mounted" ] && umount -l "$mounted" 2>/dev/null
  cluster_down 2>/dev/null
  [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "chaos: $trials trials, seed $seed (rerun: tests/chaos/run.sh --trials $trials --seed $seed)"
echo "chaos: cnn-small, batch 32 per rank, $steps steps at 2 x 1 ranks ($((steps / 2)) at 2 x 2), a checkpoint every $interval steps, --collective-timeout $deadline; work in $work"
# A subset of Fashion-MNIST: short runs still cover whole epochs, so a bad row is always read.
"$root/scripts/fashion-data.sh" "$bin" "$work/full.h5" >"$work/prep.log" 2>&1 ||
  { echo "chaos: preparing the data failed:"; tail -n 5 "$work/prep.log"; exit 1; }
"$PY" "$here/data.py" subset "$work/full.h5" "$work/data.h5" 12000 || exit 1
rm -f "$work/full.h5"

now() { date +%s.%N; }

# max_step SINCE: the highest step of a train event logged after time SINCE (0 if none).
max_step() {
  tail -n 400 "$trial_run/metrics.jsonl" 2>/dev/null | "$PY" -c 'import json, sys
best = 0
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "train" and e["time"] > float(sys.argv[1]):
        best = max(best, e["step"])
print(best)' "$1"
}

# launch DIR SLOTS DATA [ARGS...]: jobs/train.sbatch on node 1, in the background ($job_pid).
# Two ranks per node run half the steps: the same samples, twice the global batch.
launch() {
  local dir=$1 slots=$2 data=$3; shift 3
  local job_steps=$((steps / slots))
  local hostfile=$CLUSTER_DIR/hostfile.names margs i
  for ((i = 1; i <= CLUSTER_NODES; i++)); do echo "node$i slots=$slots"; done >"$hostfile"
  mapfile -t margs < <(cluster_mpirun_args)
  for i in "${!margs[@]}"; do [ "${margs[i]}" = "$CLUSTER_HOSTFILE" ] && margs[i]=$hostfile; done
  (cd "$root" && exec ip netns exec "$(cluster_ns 1)" unshare --uts -- sh -c 'hostname node1 && exec "$@"' sh \
    env MPIRUN_ARGS="${margs[*]}" JOB_NODES="node1 node2" RANKS_PER_NODE="$slots" LAUNCHER=mpirun \
    MAX_RESTARTS=2 CONFIG=/dev/null DATA="$data" RUN_DIR="$dir/run" SLIMTRAIN_BIN="$bin" \
    EXTRA_ARGS="--model cnn-small --batch-size 32 --lr 0.05 --momentum 0.9 --max-steps $job_steps \
--checkpoint-every $interval --log-every 1 --eval-every 0 --collective-timeout $deadline \
--seed $seed --final-split test $*" \
    jobs/train.sbatch >"$dir/job.log" 2>&1) &
  job_pid=$!
}

# Undisturbed runs, one per ranks-per-node: the accuracy every trial is held to.
declare -A baseline
for slots in 1 2; do
  dir=$work/baseline-$slots
  mkdir -p "$dir"
  cluster_up 2 "$slots" >/dev/null || { echo "chaos: cannot bring up the cluster"; exit 1; }
  t0=$(now)
  launch "$dir" "$slots" "$work/data.h5"
  wait "$job_pid"
  rc=$?
  cluster_down
  baseline[$slots]=$("$PY" -c 'import json, sys
d = [json.loads(l) for l in open(sys.argv[1]) if "\"done\"" in l]
print(d[-1]["final"]["accuracy"])' "$dir/run/metrics.jsonl" 2>/dev/null)
  if [ "$rc" -ne 0 ] || [ -z "${baseline[$slots]}" ]; then
    echo "chaos: the undisturbed run at 2 x $slots failed (exit $rc):"; tail -n 20 "$dir/job.log"; exit 1
  fi
  printf 'chaos: undisturbed 2 nodes x %s: test accuracy %s in %.0f s\n' "$slots" \
    "${baseline[$slots]}" "$(echo "$(now) - $t0" | bc)"
done

printf '\n%-5s %-5s %-18s %-10s %-12s %4s %8s %5s  %s\n' trial ranks faults moments outcome exit seconds lost verdict
results=$work/results.jsonl
: >"$results"
for trial in $(seq 1 "$trials"); do
  RANDOM=$((seed * 100 + trial))
  slots=$((1 + RANDOM % 2))
  kinds=("${single[RANDOM % ${#single[@]}]}")
  # A second fault follows one the job recovers from (not a cut: node 2 is gone after it).
  if [[ " stop kill9 nodekill slow diskfull corrupt " == *" ${kinds[0]} "* ]] &&
    [ $((RANDOM % 10)) -lt 3 ]; then
    next=${second[RANDOM % ${#second[@]}]}
    [ "$next" = "${kinds[0]}" ] && [ "$next" = diskfull ] && next=kill9
    kinds+=("$next")
  fi
  moments=($((steps / slots * (10 + RANDOM % 40) / 100)))
  [ ${#kinds[@]} -eq 2 ] && moments+=($((moments[0] + steps / slots * (20 + RANDOM % 15) / 100)))
  picks=($RANDOM $RANDOM)
  dir=$work/trial-$trial
  rm -rf "$dir"
  mkdir -p "$dir/run"
  trial_run=$dir/run trial_log=$dir/job.log tmpfs="" data=$work/data.h5 extra=() row=0
  if [[ " ${kinds[*]} " == *" diskfull "* ]]; then
    mount -t tmpfs -o size=24m chaos-out "$dir/run" && mounted=$dir/run && tmpfs=$dir/run
  fi
  if [ "${kinds[0]}" = badsample ]; then
    row=$(( (RANDOM * 32768 + RANDOM) % 11998 + 1 ))  # rows 0 and n-1 are read at start-up
    "$PY" "$here/data.py" bad "$work/data.h5" "$dir/bad.h5" "$row" && data=$dir/bad.h5
    extra=(--data-mode stream)
    moments=("row$row")
  fi
  cluster_up 2 "$slots" >/dev/null || { echo "chaos: cannot bring up the cluster"; exit 1; }
  t_start=$(now)
  launch "$dir" "$slots" "$data" "${extra[@]}"
  fired=() ranks=() nodes=() notes=()
  since=0 fi=0 end=""
  while kill -0 "$job_pid" 2>/dev/null; do
    if [ "$fi" -lt ${#kinds[@]} ]; then
      kind=${kinds[fi]}
      if [ "$kind" = badsample ]; then
        if grep -q "exit 2: .*row $row\b" "$dir/job.log" 2>/dev/null; then
          fired+=("$(now)") ranks+=("") nodes+=("") notes+=("row $row read")
          fi=$((fi + 1))
        fi
      elif [ "$(max_step "$since")" -ge "${moments[fi]}" ]; then
        f_rank="" f_node="" f_note=""
        f_pick=${picks[fi]}
        if "fault_$kind"; then
          fired+=("$(now)")
        else
          fired+=(""); f_note="found nothing to hit"
        fi
        ranks+=("$f_rank") nodes+=("$f_node") notes+=("$f_note")
        since=${fired[fi]:-$(now)}
        fi=$((fi + 1))
      fi
    fi
    if [ "$(echo "$(now) - $t_start > 420" | bc)" = 1 ]; then
      echo "chaos: trial $trial still running after 420 s: ending it" >&2
      pkill -KILL -P "$job_pid"; kill -KILL "$job_pid"
    fi
    sleep 0.2
  done
  wait "$job_pid"
  rc=$?
  end=$(now)
  chaos_end_helpers
  # The job script says a rank's report once its launcher has ended, which can be after the last
  # look above: the finished log is read once more, and the moment is when the rank wrote it.
  if [ "$fi" -lt ${#kinds[@]} ] && [ "${kinds[fi]}" = badsample ] &&
    grep -q "exit 2: .*row $row\b" "$dir/job.log" 2>/dev/null; then
    fired+=("$(stat -c %.9Y "$trial_run/failure-report.txt" 2>/dev/null || echo "$end")")
    ranks+=("") nodes+=("") notes+=("row $row read")
    fi=$((fi + 1))
  fi
  while [ ${#fired[@]} -lt ${#kinds[@]} ]; do fired+=("") ranks+=("") nodes+=("") notes+=("never reached"); done
  [ -z "$tmpfs" ] || rm -f "$tmpfs/filler"
  # Nothing of the job may outlive it on any node: a few seconds for the launcher's teardown, and
  # for a node cut off, until its Open MPI daemon gives up on mpirun (TCP keepalive, jobs/env.sh:
  # about 45 s after the cut), the link restored meanwhile as an operator would.
  wait_s=5
  if [[ " ${kinds[*]} " == *" cut "* ]]; then cluster_heal 2; wait_s=60; fi
  leftover=""
  for _ in $(seq $((wait_s * 5))); do
    leftover=""
    for n in 1 2; do
      for p in $(ip netns pids "$(cluster_ns "$n")" 2>/dev/null); do
        c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
        leftover+="$c@node$n "
      done
    done
    [ -z "$leftover" ] && break
    sleep 0.2
  done
  inspect=none
  if ls -d "$trial_run"/checkpoints/step-* >/dev/null 2>&1; then
    "$bin" inspect --json "$trial_run" >"$dir/inspect.json" 2>&1 && inspect=ok || inspect="exit $?"
  fi
  cluster_down
  "$PY" - "$dir/trial.json" "$trial" "$rc" "$end" "${baseline[$slots]}" "$interval" "$deadline" \
    "$inspect" "$leftover" "$slots" "$row" "${#kinds[@]}" "${kinds[@]}" "${moments[@]}" \
    "${fired[@]/#/@}" "${ranks[@]/#/@}" "${nodes[@]/#/@}" "${notes[@]/#/@}" <<'EOF'
import json, sys
a = sys.argv[1:]
path, trial, rc, end, base, interval, deadline, inspect, leftover, slots, row, n = a[:12]
n = int(n)
rest = a[12:]
kinds, moments = rest[:n], rest[n:2 * n]
cols = [[v[1:] for v in rest[2 * n + k * n: 2 * n + (k + 1) * n]] for k in range(4)]
fired, ranks, nodes, notes = cols
faults = []
for i in range(n):
    faults.append({"kind": kinds[i], "step": moments[i], "fired": float(fired[i]) if i < len(fired) and fired[i] else None,
                   "rank": ranks[i] if i < len(ranks) else "", "node": nodes[i] if i < len(nodes) else "",
                   "note": notes[i] if i < len(notes) else "", "row": int(row)})
json.dump({"trial": int(trial), "rc": int(rc), "end": float(end), "baseline_accuracy": float(base),
           "interval": int(interval), "deadline": float(deadline), "inspect": inspect,
           "leftover": leftover.strip(), "slots": int(slots), "faults": faults}, open(path, "w"))
EOF
  verdict=$("$PY" "$here/judge.py" "$dir")
  echo "$verdict" >>"$results"
  "$PY" - "$verdict" "$slots" <<'EOF'
import json, sys
v = json.loads(sys.argv[1])
outcome = {0: "done", 2: "bad input", 75: "stopped"}.get(v["rc"], "failed")
if v["rc"] == 0 and v.get("relaunches"):
    outcome = f"done, {v['relaunches']} relaunch" + ("es" if v["relaunches"] > 1 else "")
secs = "-" if v["seconds"] is None else f"{v['seconds']:.1f}"
print(f"{v['trial']:<5} 2x{sys.argv[2]:<3} {v['faults']:<18} {v['moments']:<10} {outcome:<12} {v['rc']:>4} "
      f"{secs:>8} {v['lost']:>5}  {v['verdict']}" + (f" ({v['why']})" if v["why"] else ""))
EOF
  if [ -n "$mounted" ]; then
    [ -n "$keep" ] && cp -a "$mounted" "$dir/run.kept"  # the tmpfs goes with the trial
    umount -l "$mounted" 2>/dev/null
    mounted=""
  fi
  [ -n "$keep" ] || { grep -q '"verdict": "pass"' <<<"$verdict" && rm -rf "$dir"; }
done

"$PY" - "$results" "$seed" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
passed = sum(r["verdict"] == "pass" for r in rows)
inconclusive = sum(r["verdict"] == "inconclusive" for r in rows)
rec = [r["recovery"] for r in rows if r.get("recovery") is not None]
by = {}
for r in rows:
    if r.get("recovery") is not None:
        by.setdefault(r["faults"].split("+")[0], []).append(r["recovery"])
print()
if rec:
    print("recovery, fault to the relaunched job's first step (s): " +
          ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in sorted(by.items())))
line = (f"RESULT chaos trials={len(rows)} passed={passed} failed={len(rows) - passed - inconclusive} "
        f"inconclusive={inconclusive} seed={sys.argv[2]}")
if rec:
    line += f" recovery_median_s={statistics.median(rec):.1f} recovery_max_s={max(rec):.1f} target_s=15"
print(line)
sys.exit(0 if passed == len(rows) else 1)
EOF
