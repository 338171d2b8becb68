#!/usr/bin/env bash
# Two planes, no error lost, at np 2 and 4: a rank that issues a data-plane operation the others
# do not (injected desync) ends the job within the step, naming the ranks on each side and the
# first diverging operation; a DataError on rank 1 mid-training ends the job in seconds with that
# rank's own message; a rank hung in evaluation is named with what it is doing; a checkpoint write
# slower than --collective-timeout (a slow file system) is waited for under the I/O deadline.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
train_work
host=$(hostname)

for np in 2 4; do
  others="rank 0"
  [ "$np" -eq 4 ] && others="ranks 0, 2, 3"
  MPI=(timeout 120 "$MPIEXEC" -np "$np")

  R=$work/desync-$np
  timed env SLIMTRAIN_INJECT="rank=1,phase=train,step=6,action=desync" "${MPI[@]}" "$S" train \
    --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --checkpoint-every 4 \
    --collective-timeout 60
  echo "  (desync at np $np: exit $rc after $wall s)"
  check "np $np desync: job exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
  check "  within the step, long before the 60 s deadline" test "$wall" -le 20
  check "  naming rank 1 and the first diverging operation" \
    contains "data-plane desync at step 6 (checked before its gradient buckets): rank 1 issued all_reduce #[0-9]* of 4,194,304 bytes \[injected\] where $others issued nothing"
  check "  failed event with the diagnosis" json_is "$(events "$R" failed)" \
    '"desync" in e["reason"] and "rank 1 issued" in e["reason"] and e["step"] == 5'
  check "  the step-4 checkpoint is intact" expect_rc 0 "$S" inspect --json "$R"
  check "  and is the latest" json_is "$out" 'e["step"] == 4'

  R=$work/data-error-$np
  timed env SLIMTRAIN_INJECT="rank=1,phase=train,step=6,action=throw" "${MPI[@]}" "$S" train \
    --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --collective-timeout 120
  echo "  (DataError on rank 1 at np $np: exit $rc after $wall s)"
  check "np $np DataError on rank 1: exit 2 (its exit code, through MPI_Abort)" test "$rc" -eq 2
  check "  in under 15 s, not the 120 s deadline" test "$wall" -lt 15
  check "  with rank 1's own one-line message naming file:line" \
    contains "^slimtrain: data error on rank 1: SLIMTRAIN_INJECT: injected data error at step 6"
  check "  and why the job ends" contains "r1 ERROR ending the job (MPI_Abort, exit 2)"

  R=$work/eval-hang-$np
  timed env SLIMTRAIN_INJECT="rank=1,phase=eval,step=4,action=hang" "${MPI[@]}" "$S" train \
    --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --eval-every 4 --eval-deadline 1 \
    --collective-timeout 3
  echo "  (rank hung in evaluation at np $np: exit $rc after $wall s)"
  check "np $np rank hung in evaluation: job exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
  check "  the report says where rank 1 is and what it is doing" \
    contains "missing ranks: 1 on $host (at seq [0-9]*; now: evaluation at step 4, in no collective)"
done

# rank 0's file system takes 6 s to write the step-4 checkpoint; the others wait for it under the
# I/O deadline (--io-timeout), not the 2 s collective one, and training goes on.
R=$work/slow-fs
check "a checkpoint write slower than --collective-timeout" expect_rc 0 \
  env SLIMTRAIN_INJECT="rank=0,phase=checkpoint,step=4,delay=6s" timeout 120 "$MPIEXEC" -np 2 \
  "$S" train --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 12 --checkpoint-every 4 \
  --collective-timeout 2
check "  the slow write happened" contains "fault injection .*phase=checkpoint step=4"
check "  every checkpoint was written" json_is "$(events "$R" checkpoint | tr '\n' ' ' | sed 's/} {/}, {/g; s/^/[/; s/ *$/]/')" \
  '[c["step"] for c in e] == [4, 8, 12]'
check "  and the run finished" json_is "$(events "$R" done)" 'e["step"] == 12'
finish
