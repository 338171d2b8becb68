#!/bin/bash
# CTest cluster_link_faults: the seeds' slow link and a cut link, on 2 simulated nodes x 1 rank.
#  - slow: node 2's link shaped to 100 Mbit/s. The bandwidth slimtrain measures at start-up drops
#    with it and its deadlines grow to match; moving the seeds' hidden states (scaled down 100x)
#    over that link takes seconds, while an evaluation, which moves (2 + C^2) x 8 bytes, takes
#    milliseconds.
#  - cut: node 2's link goes down mid-training under jobs/local.sh. The job ends within the
#    collective deadline plus a few seconds, naming the rank and host that stopped answering,
#    although mpirun itself would wait minutes for node 2's daemon; the last checkpoint verifies;
#    --resume auto on node 1 alone finishes.
# Skips (77) where namespaces cannot be made. About 60 s.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/train_lib.sh"
cluster_train_work
root=$(cd "$here/../.." && pwd)
X=(-x OMP_NUM_THREADS)
at_most() { awk -v x="$1" -v hi="$2" 'BEGIN { exit !(x <= hi) }' || { echo "  $1 > $2"; return 1; }; }
at_least() { awk -v x="$1" -v lo="$2" 'BEGIN { exit !(x >= lo) }' || { echo "  $1 < $2"; return 1; }; }

cluster_up 2 1 || { echo "FAIL cluster_up"; exit 1; }
JOB=("${SMALL_JOB[@]}" --max-steps 24 --eval-every 12)

timed cluster_mpirun "${X[@]}" -np 2 "$S" train --data "$D" --out fast "${JOB[@]}"
check "2 nodes, unshaped link: trains" test "$rc" -eq 0
fast=$(field fast start 'e["measured_bandwidth_mbps"]')

cluster_shape 2 100mbit
timed cluster_mpirun "${X[@]}" -np 2 "$S" train --data "$D" --out slow "${JOB[@]}"
check "node 2 at 100 Mbit/s: trains" test "$rc" -eq 0
slow=$(field slow start 'e["measured_bandwidth_mbps"]')
echo "  measured all-reduce bandwidth: unshaped $fast MB/s, shaped $slow MB/s"
# The token bucket passes its burst at line rate, so a probe of B bytes can measure up to
# rate x B / (B - burst) (measured once: 13.49 MB/s for a 1 MiB probe at 12.5 MB/s).
probe_bytes=$(field slow start 'e["measured_bandwidth_bytes"]')
rate=$(_cluster_rate_bytes 100mbit)
slow_max=$(awk -v r="$rate" -v b="$probe_bytes" -v u="$(cluster_burst_bytes "$rate")" \
  'BEGIN { print (b > u ? r * b / (b - u) / 1e6 : 1e9) }')
check "  the measured bandwidth is the shaped link's (12.5 MB/s; <= $slow_max with the burst)" \
  at_most "$slow" "$slow_max"
check "  and far below the unshaped one" at_least "$fast" "$(awk -v s="$slow" 'BEGIN { print 3 * s }')"
check "  deadlines assume a quarter of it" at_most \
  "$(field slow start 'abs(e["floor_bandwidth_mbps"] - e["measured_bandwidth_mbps"] / 4)')" 0.01
eval_s=$(field slow eval 'e["seconds"]')
check "  an evaluation moves 240 bytes per rank" test "$(field slow eval 'e["bytes_sent"]')" = 240
check "  and takes milliseconds ($eval_s s)" at_most "$eval_s" 0.5
# The seeds' evaluation gathered hidden states: 1,868,076,012 bytes where the statistics are 816.
# Scaled down 100x, those bytes over the same link (a lower bound for an all-reduce of them):
cluster_exec 2 "$PY" "$here/netprobe.py" sink 5001 >/dev/null 2>&1 &
sink=$!
sleep 0.3
moved=$(cluster_exec 1 "$PY" "$here/netprobe.py" send "$(cluster_addr 2)" 5001 18680760)
kill "$sink" 2>/dev/null
echo "  hidden states / 100 over node 2's link: $moved (bytes, seconds, MB/s)"
check "  the hidden states would take seconds" at_least "$(awk '{ print $2 }' <<<"$moved")" 1
cluster_unshape 2

# The cut, under the launcher users run: jobs/local.sh on node 1, mpirun across both nodes.
mapfile -t margs < <(cluster_mpirun_args)
export MPIRUN_ARGS="${margs[*]}" SLIMTRAIN_REPORT_DIR=$work/report
cluster_exec 1 "$root/jobs/local.sh" -n 2 train --data "$D" --out cut "${SMALL_JOB[@]}" \
  --max-steps 100000 --checkpoint-every 200 --collective-timeout 10 >cut.log 2>&1 &
job=$!
for _ in $(seq 300); do ls cut/checkpoints/step-* >/dev/null 2>&1 && break; sleep 0.1; done
cluster_cut 2
start=$SECONDS
for _ in $(seq 90); do kill -0 "$job" 2>/dev/null || break; sleep 1; done
wall=$((SECONDS - start))
kill -0 "$job" 2>/dev/null && { echo "  still running after $wall s: ending it"; kill -9 "$job"; }
wait "$job"
rc=$?
out=$(cat cut.log)
echo "  (cut link: exit $rc after $wall s)"
check "cut link: the job exits 1" test "$rc" -eq 1
check "  within the 10 s deadline + the 5 s launcher grace + a few seconds" test "$wall" -le 25
check "  the report names the rank and host that stopped answering" \
  contains "missing ranks: 1 on node2 (no answer)"
check "  the launcher was told by the rank" contains "a rank reported that the job cannot continue: rank 0 on node1 exit 1"
check "  the last checkpoint verifies" expect_rc 0 "$S" inspect --json cut
step=$("$PY" -c "import json,sys; print(json.loads(sys.argv[1])['step'])" "$out")
unset MPIRUN_ARGS
timed cluster_exec 1 "$root/jobs/local.sh" -n 1 train --data "$D" --out cut "${SMALL_JOB[@]}" \
  --max-steps $((step + 40)) --checkpoint-every 200 --resume auto
check "  --resume auto on node 1 alone (1 rank) finishes" test "$rc" -eq 0
check "  from step $step" contains "resumed from .* at step $step"
cluster_down
finish
