#!/bin/bash
# CTest cluster_train_nodes: slimtrain across simulated nodes (cluster.sh) as on one machine.
# 2 nodes x 2 ranks and 4 nodes x 1 rank: every rank's host, local rank and local size in the
# start record and line; the same accuracy as 4 ranks on one machine; evaluation still moves
# (2 + C^2) x 8 bytes per rank; a stall report names the late rank's host; a rank killed with
# kill -9 on node 2 ends the job and --resume auto finishes it. Skips (77) where namespaces
# cannot be made. About 60 s.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/train_lib.sh"
cluster_train_work
JOB=("${SMALL_JOB[@]}" --max-steps 48 --eval-every 12)
# remote ranks get only what -x names (a fresh login environment, as over ssh)
X=(-x OMP_NUM_THREADS)

same() { [ "$1" = "$2" ] || { echo "  got '$1', wanted '$2'"; return 1; }; }
close() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { x = a - b; if (x < 0) x = -x; exit !(x <= d) }' ||
  { echo "  $1 and $2 differ by more than $3"; return 1; }; }

# One machine, 4 ranks: the reference.
timed "$MPIEXEC" --oversubscribe -np 4 "$S" train --data "$D" --out ref "${JOB[@]}"
check "4 ranks on one machine train (reference)" test "$rc" -eq 0
ref_acc=$(field ref eval 'e["accuracy"]')

cluster_up 2 2 || { echo "FAIL cluster_up"; exit 1; }
timed cluster_mpirun "${X[@]}" -np 4 "$S" train --data "$D" --out n22 "${JOB[@]}"
check "2 nodes x 2 ranks train" test "$rc" -eq 0
check "  the start line shows the layout" contains "4 ranks (node1: ranks 0-1, node2: ranks 2-3)"
check "  hosts per rank" same "$(field n22 start '[p["host"] for p in e["placement"]]')" \
  "['node1', 'node1', 'node2', 'node2']"
check "  local rank per rank" same "$(field n22 start '[p["local_rank"] for p in e["placement"]]')" "[0, 1, 0, 1]"
check "  local size per rank" same "$(field n22 start '[p["local_size"] for p in e["placement"]]')" "[2, 2, 2, 2]"
check "  the same accuracy as one machine" close "$(field n22 eval 'e["accuracy"]')" "$ref_acc" 0.03
check "  evaluation moves (2 + 3*4 + 4^2) x 8 = 240 bytes per rank" same "$(field n22 eval 'e["bytes_sent"]')" 240
check "  the deadlines come from the measured link" contains "data plane deadlines: .*a quarter of the measured"

# A rank that stops arriving: every report names it with its host.
export SLIMTRAIN_INJECT="rank=3,phase=train,step=6,action=hang"
timed cluster_mpirun "${X[@]}" -x SLIMTRAIN_INJECT -np 4 "$S" train --data "$D" --out hang \
  "${JOB[@]}" --collective-timeout 3
unset SLIMTRAIN_INJECT
check "a hung rank on node2 ends the job" test "$rc" -ne 0
check "  the report names rank 3 on node2" contains "missing ranks: .*3 on node2 (at seq"
check "  within the deadline plus seconds" test "$wall" -le 30

# kill -9 of node 2's ranks once a checkpoint exists; --resume auto on the same 4 ranks finishes.
cluster_mpirun "${X[@]}" -np 4 "$S" train --data "$D" --out killed "${SMALL_JOB[@]}" \
  --max-steps 4000 --checkpoint-every 100 --collective-timeout 10 >killed.log 2>&1 &
job=$!
for _ in $(seq 300); do ls killed/checkpoints/step-* >/dev/null 2>&1 && break; sleep 0.1; done
for pid in $(ip netns pids "$(cluster_ns 2)"); do
  [ "$(cat /proc/$pid/comm 2>/dev/null)" = slimtrain ] && kill -9 "$pid"
done
start=$SECONDS
wait "$job"
rc=$?
out=$(cat killed.log)
check "kill -9 of node 2's ranks ends the job" test "$rc" -ne 0
check "  within seconds" test $((SECONDS - start)) -le 20
check "  a checkpoint verifies" expect_rc 0 "$S" inspect --json killed
# 40 steps past the newest checkpoint directory (written or not): the resume is what is tested,
# not 4000 steps across nodes (150 s). 'latest' may lag a checkpoint written just before the kill.
step=$("$PY" -c "import json,sys; print(json.loads(sys.argv[1])['step'])" "$out")  # inspect's
newest=$(ls -d killed/checkpoints/step-* | sort | tail -n 1 | sed 's/.*step-0*//')
timed cluster_mpirun "${X[@]}" -np 4 "$S" train --data "$D" --out killed "${SMALL_JOB[@]}" \
  --max-steps $((newest + 40)) --checkpoint-every 100 --resume auto
check "  --resume auto finishes" test "$rc" -eq 0
check "  from the checkpoint (step $step or later)" \
  same "$(field killed start "e['resumed_at_step'] >= $step")" True
check "  and trains to the end" same "$(field killed done 'e["step"]')" "$((newest + 40))"
cluster_down

cluster_up 4 1 || { echo "FAIL cluster_up"; exit 1; }
timed cluster_mpirun "${X[@]}" -np 4 "$S" train --data "$D" --out n41 "${JOB[@]}"
check "4 nodes x 1 rank train" test "$rc" -eq 0
check "  the start line shows the layout" contains "4 ranks (node1: rank 0, node2: rank 1, node3: rank 2, node4: rank 3)"
check "  local rank 0 of 1 everywhere" same \
  "$(field n41 start '[(p["local_rank"], p["local_size"]) for p in e["placement"]]')" \
  "[(0, 1), (0, 1), (0, 1), (0, 1)]"
check "  the same accuracy as one machine" close "$(field n41 eval 'e["accuracy"]')" "$ref_acc" 0.03
cluster_down
finish
