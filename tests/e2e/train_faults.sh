#!/usr/bin/env bash
# Faults injected into real 2-rank training jobs (SLIMTRAIN_INJECT): a late rank in evaluation
# skips that evaluation on every rank while training, checkpointing and the final evaluation go
# on; a retry recovers from a one-off delay; a rank hung in a training collective ends the job
# non-zero within the collective deadline, naming the rank, and so does a rank hung in evaluation
# (after the agreement's deadline); a dead rank ends the job promptly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
train_work
MPI=(timeout 120 "$MPIEXEC" -np 2)

# A late rank at step 8 (3 s late, deadline 1 s), evaluations every 4 steps, checkpoints too.
R=$work/late
check "late rank in eval: job finishes" expect_rc 0 env SLIMTRAIN_INJECT="rank=1,phase=eval,step=8,delay=3s" \
  "${MPI[@]}" "$S" train --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --eval-every 4 --checkpoint-every 4 \
  --eval-deadline 1
check "  the injection fired" contains "r1 WARN  fault injection .*phase=eval step=8"
check "  rank 0 skipped it" contains "r0 WARN  evaluation on 'test' at step 8 skipped on every rank"
check "  rank 1 skipped it" contains "r1 WARN  evaluation on 'test' at step 8 skipped on every rank"
e=$(event_at "$R" eval_skipped 8)
check "  eval_skipped at step 8" json_is "$e" 'e["step"] == 8'
check "  naming rank 1 late" json_is "$e" 'e["late_ranks"] == [1]'
check "  with the deadline as reason" json_is "$e" '"missed its deadline" in e["reason"] and "missing ranks: 1" in e["reason"]'
check "  no eval event at step 8" test -z "$(event_at "$R" eval 8)"
check "  the evaluation at step 4 ran" json_is "$(event_at "$R" eval 4)" 'e["count"] == 203'
check "  sending only the statistics: (2 + 3*4 + 4*4) * 8 bytes" json_is "$(event_at "$R" eval 4)" 'e["bytes_sent"] == 240'
check "  checkpoint event at step 8" json_is "$(event_at "$R" checkpoint 8)" 'e["step"] == 8'
check "  training went on to step 12" json_is "$(event_at "$R" train 12)" 'e["step"] == 12'
check "  done, with the final test metrics" json_is "$(events "$R" done)" 'e["step"] == 12 and e["test"]["count"] == 203'
check "  checkpoint step 8 verifies" expect_rc 0 "$S" inspect --json "$R/checkpoints/step-00000008"
check "  and is step 8" json_is "$out" 'e["step"] == 8'

# --eval-retries 1: a delay on the first attempt only (times=1) is recovered by the retry with
# half the batch; a delay on every attempt (the default) exhausts the retry and skips.
R=$work/retry
check "retry after a one-off late attempt" expect_rc 0 env SLIMTRAIN_INJECT="rank=1,phase=eval,step=8,delay=3s,times=1" \
  "${MPI[@]}" "$S" train --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --eval-every 4 --eval-deadline 1 \
  --eval-retries 1 --eval-batch-size 64
check "  attempt 1 failed, retrying with batch 32" contains "evaluation attempt 1 failed .*retrying with batch 32"
e=$(event_at "$R" eval 8)
check "  eval at step 8 succeeded on the second attempt" json_is "$e" 'e["attempts"] == 2 and e["eval_batch_size"] == 32'
check "  counting every test sample once" json_is "$e" 'e["count"] == 203'
check "  no eval_skipped" test -z "$(events "$R" eval_skipped)"
R=$work/retry-all
check "retry when every attempt is late" expect_rc 0 env SLIMTRAIN_INJECT="rank=1,phase=eval,step=8,delay=3s" \
  "${MPI[@]}" "$S" train --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --eval-every 4 --eval-deadline 1 \
  --eval-retries 1
e=$(event_at "$R" eval_skipped 8)
check "  skipped after 2 attempts naming rank 1" json_is "$e" 'e["attempts"] == 2 and e["late_ranks"] == [1]'
check "  the job still finished" json_is "$(events "$R" done)" 'e["test"]["count"] == 203'

# A rank that stops arriving at training collectives from step 6 on: --collective-timeout 5.
R=$work/hang
timed env SLIMTRAIN_INJECT="rank=1,phase=train,step=6,action=hang" "${MPI[@]}" "$S" train \
  --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --checkpoint-every 4 --collective-timeout 5
echo "  (hang: exit $rc after $wall s)"
check "hung rank: job exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
check "  within the deadline + 30 s" test "$wall" -le 35
check "  not before the deadline" test "$wall" -ge 5
check "  the injection fired" contains "r1 WARN  fault injection .*phase=train step=6 action=hang"
check "  naming rank 1 as missing" contains "missed its deadline of 5.* s; missing ranks: 1 "
check "  with the flight recorder" contains "flight recorder control seq .* timed_out"
check "  the log keeps the last 5 operations of each recorder" \
  test "$(grep -c 'WARN  *flight recorder control seq' <<<"$out")" -le 10
check "  and names the file with all of them" contains "flight recorder control: the last 5 of [0-9]* operations (the last [0-9]* in $R/flight_recorder/rank-0.jsonl)"
check "  rank 0's recorder file: JSON lines, the timed-out operation included" "$PY" -c "
import json, sys
lines = [json.loads(l) for l in open('$R/flight_recorder/rank-0.jsonl')]
assert len(lines) > 5, len(lines)
assert all(l['rank'] == 0 and l['communicator'] in ('control', 'eval', 'data') for l in lines)
assert any(l['status'] == 'timed_out' and l['communicator'] == 'control' for l in lines), lines[-3:]
"
check "  saying what rank 1 is doing" contains "missing ranks: 1 on [^ ]* (at seq [0-9]*; now: data at step 6, in no collective)"
check "  failed event in metrics.jsonl" json_is "$(events "$R" failed)" '"missing ranks: 1" in e["reason"] and e["step"] == 5'
check "  the step-4 checkpoint is intact" expect_rc 0 "$S" inspect --json "$R"
check "  and is the latest" json_is "$out" 'e["step"] == 4'

# A rank that never finishes its evaluation is not late but gone: the others skip nothing, they
# miss the agreement (deadline --collective-timeout + --eval-deadline) and end the job.
R=$work/eval-hang
timed env SLIMTRAIN_INJECT="rank=1,phase=eval,step=4,action=hang" "${MPI[@]}" "$S" train \
  --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --eval-every 4 --eval-deadline 1 \
  --collective-timeout 3
echo "  (hang in eval: exit $rc after $wall s)"
check "rank hung in eval: job exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
check "  within both deadlines + 30 s" test "$wall" -le 34
check "  naming rank 1 as missing from the agreement" contains "eval agree seq .* missing ranks: 1 "

# A rank that dies at step 8: mpirun tears the job down, no one waits for the deadline. With a
# checkpoint every 2 steps, step 6's may still be in flight when rank 0 is killed; step 4's was
# complete before step 6's began, so one of the two must be loadable.
R=$work/exit
timed env SLIMTRAIN_INJECT="rank=1,phase=train,step=8,action=exit" "${MPI[@]}" "$S" train \
  --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --checkpoint-every 2 --collective-timeout 60
echo "  (dead rank: exit $rc after $wall s)"
check "dead rank: job exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
check "  promptly (well before the 60 s deadline)" test "$wall" -le 30
check "  the injection fired" contains "r1 WARN  fault injection .*phase=train step=8 action=exit"
check "  mpirun reports a dead rank" contains "exited with non-zero status"
check "  naming rank 1" contains "Process name: \[\[[0-9]*,[0-9]*\],1\]"
check "  a checkpoint is intact" expect_rc 0 "$S" inspect --json "$R"
check "  at step 4 or 6" json_is "$out" 'e["step"] in (4, 6)'
finish
