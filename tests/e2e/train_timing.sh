#!/usr/bin/env bash
# The throughput figures bench/train reads: every train event splits rank 0's step time into
# data/forward/backward/sync/optimizer, and the done event's steady-state samples_per_s leaves out
# the warm-up window and the time of evaluations (here one made 2 s late on rank 0 by injection).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train_data "$work" || exit 1
R=$work/run

check "a 40-step job with an evaluation delayed 2 s at step 20" expect_rc 0 timeout 120 \
  env SLIMTRAIN_INJECT="rank=0,phase=eval,step=20,delay=2s" \
  "$MPIEXEC" -np 2 "$S" train --data "$work/data.h5" --out "$R" "${SMALL_JOB[@]}" \
  --max-steps 40 --eval-every 20 --resume none
check "  the delay fired" contains "SLIMTRAIN_INJECT"
check "  the evaluation at step 20 ran" test -n "$(event_at "$R" eval 20)"

train=$(events "$R" train | tr '\n' ' ')
check "every train event has step_ms with its components, none negative, within the total" \
  json_is "[$(echo "$train" | sed 's/} {/}, {/g')]" \
  'len(e) == 10 and all(set(t["step_ms"]) == {"data", "forward", "backward", "sync", "optimizer", "total"} and min(t["step_ms"].values()) >= 0 and sum(v for k, v in t["step_ms"].items() if k != "total") <= t["step_ms"]["total"] * 1.001 for t in e)'

done_event=$(events "$R" done)
check "done: warm-up is one log window (4 steps), 36 steady steps" \
  json_is "$done_event" 'e["warmup_steps"] == 4 and e["steady_steps"] == 36'
check "done: samples_per_s = 36 steps x 2 ranks x 16 / steady_seconds" \
  json_is "$done_event" 'e["steady_seconds"] > 0 and abs(e["samples_per_s"] - 36 * 32 / e["steady_seconds"]) < 1e-6 * e["samples_per_s"]'
# Rank 0's wall time from the end of step 4 to the end of step 40 includes the 2 s evaluation;
# the steady time must not.
t4=$(event_at "$R" train 4)
t40=$(event_at "$R" train 40)
check "done: steady_seconds leaves the 2 s evaluation out" \
  json_is "[$t4, $t40, $done_event]" 'e[2]["steady_seconds"] < e[1]["time"] - e[0]["time"] - 1.5'
finish
