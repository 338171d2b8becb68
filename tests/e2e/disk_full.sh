#!/usr/bin/env bash
# A checkpoint write that fails (a full disk, injected under rank 0's writer) is a warning, not the
# end of the job: training goes on, the previous checkpoint stays the latest, the next one lands
# once space is back; --max-failed-checkpoints N failures in a row end the job with exit 1 naming
# the file system's error, and so does a final checkpoint that cannot be written. A write that
# hangs is given up after --io-timeout, at np 1 too, and so is a read that stalls. metrics.jsonl
# on a full disk keeps its events in memory and writes them, in order, once space is back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
train_work
MPI=(timeout 120 "$MPIEXEC" -np 2)
recipe=(--data "$D" "${SMALL_JOB[@]}" --eval-every 0 --final-split none --checkpoint-every 10
  --max-steps 60)
failed_events() {
  "$PY" -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["event"] == "checkpoint_failed"))' "$1/metrics.jsonl"
}

check "the disk fills at step 20's checkpoint and frees after two failures" expect_rc 0 env \
  SLIMTRAIN_INJECT="rank=0,phase=checkpoint,step=20,action=full,times=2" "${MPI[@]}" "$S" train \
  "${recipe[@]}" --out "$work/full"
check "  a warning names the error and says training goes on" \
  contains "checkpoint not written: writing the checkpoint failed on rank 0: No space left on device"
check "  the previous checkpoint named as the latest" contains "training goes on, the previous checkpoint stays the latest (.*step-00000010)"
check "  two checkpoint_failed events" test "$(failed_events "$work/full")" = 2
check "  no directory of step 20 or 30" test ! -e "$work/full/checkpoints/step-00000020" -a \
  ! -e "$work/full/checkpoints/step-00000030"
check "  step 40 landed once space was back" test -e "$work/full/checkpoints/step-00000040/manifest.json"
check "  the run finished at step 60" json_is "$(events "$work/full" done)" 'e["step"] == 60'
check "  and step 60 is the latest" latest_is "$work/full" 60

check "a disk that stays full ends the job at --max-failed-checkpoints 2" expect_rc 1 env \
  SLIMTRAIN_INJECT="rank=0,phase=checkpoint,step=20,action=full" "${MPI[@]}" "$S" train "${recipe[@]}" \
  --max-failed-checkpoints 2 --out "$work/stays"
check "  naming the count, the error and the latest checkpoint" \
  contains "checkpoints keep failing (2 failed in a row; --max-failed-checkpoints 2): writing the checkpoint failed on rank 0: No space left on device.*the latest checkpoint is .*step-00000010"
check "  a failed event, no done event" json_is "$(events "$work/stays" failed)" '"keep failing" in e["reason"]'
check "  step 10 stays the latest" latest_is "$work/stays" 10
check "  it resumes from there" expect_rc 0 "${MPI[@]}" "$S" train "${recipe[@]}" --out "$work/stays"
check "  at step 10" contains "resumed from .*step-00000010 at step 10"

# The final checkpoint is tried again every 5 s until the I/O deadline (here 11 s: 3 tries).
check "a final checkpoint that cannot be written ends the job with exit 1" expect_rc 1 env \
  SLIMTRAIN_INJECT="rank=0,phase=checkpoint,step=60,action=full" "${MPI[@]}" "$S" train "${recipe[@]}" \
  --io-timeout 11 --out "$work/final"
check "  after trying again" contains "the final checkpoint could not be written: .*No space left on device.*; trying again every 5 s (2 tries left, until --io-timeout)"
check "  saying so" contains "the final checkpoint could not be written: writing the checkpoint failed on rank 0: No space left on device"
check "  no done event" test -z "$(events "$work/final" done)"
check "a final checkpoint whose disk frees up after two tries lands" expect_rc 0 env \
  SLIMTRAIN_INJECT="rank=0,phase=checkpoint,step=60,action=full,times=2" "${MPI[@]}" "$S" train \
  "${recipe[@]}" --io-timeout 60 --out "$work/final-late"
check "  saying it tries again" contains "the final checkpoint could not be written: .*trying again every 5 s"
check "  step 60 is the latest" latest_is "$work/final-late" 60
check "  and the run is done" json_is "$(events "$work/final-late" done)" 'e["step"] == 60'

# metrics.jsonl on a full disk: events kept in memory, written in order once space is back.
train_steps() {
  "$PY" -c 'import json, sys
print(" ".join(str(e["step"]) for e in map(json.loads, open(sys.argv[1])) if e["event"] == "train"))' "$1/metrics.jsonl"
}
check "metrics.jsonl's disk fills at step 20 for 5 writes" expect_rc 0 env \
  SLIMTRAIN_INJECT="rank=0,phase=log,step=20,action=full,times=5" "${MPI[@]}" "$S" train \
  "${recipe[@]}" --out "$work/log"
check "  a warning says events are kept and training goes on" \
  contains "metrics.jsonl: cannot write (No space left on device): events are kept in memory"
check "  and that the file is written again" contains "metrics.jsonl: written again, the kept events included"
check "  every train event is in the file, in order" test "$(train_steps "$work/log")" = \
  "$(seq -s ' ' 4 4 60)"
check "  and the done event" json_is "$(events "$work/log" done)" 'e["step"] == 60'
check "a disk that stays full: the run still finishes" expect_rc 0 env \
  SLIMTRAIN_INJECT="rank=0,phase=log,step=20,action=full" "${MPI[@]}" "$S" train "${recipe[@]}" \
  --out "$work/log-full"
check "  naming the events it could not write" contains "metrics.jsonl: [0-9]* event(s) could not be written"
check "  the file holds what came before" test "$(train_steps "$work/log-full")" = "4 8 12 16"

# A write that hangs (a file system that stops answering) is a failed write once --io-timeout has
# passed, at np 1 too, where no peer's deadline would end the wait: the job never hangs on it.
hang=(--data "$D" "${SMALL_JOB[@]}" --eval-every 0 --final-split none --checkpoint-every 10
  --max-steps 40 --io-timeout 2)
started=$SECONDS
check "a hung checkpoint write at np 1 is a failed write, not a hung job" expect_rc 1 env \
  SLIMTRAIN_INJECT="rank=0,phase=checkpoint,step=20,action=hang" timeout 120 "$S" train \
  "${hang[@]}" --max-failed-checkpoints 2 --out "$work/hung"
check "  within the two writes' deadlines (2 x ~2 s), not timeout's 120 s" test $((SECONDS - started)) -lt 40
check "  each named as abandoned after --io-timeout (the optimizer file's write first)" \
  contains "checkpoint not written: writing its optimizer shard has not finished on rank 0 after .* s (--io-timeout); that write is abandoned"
check "  then the end, naming the latest checkpoint" \
  contains "checkpoints keep failing (2 failed in a row; --max-failed-checkpoints 2).*the latest checkpoint is .*step-00000010"
started=$SECONDS
check "a write hung once at np 2: a warning, and training goes on" expect_rc 0 env \
  SLIMTRAIN_INJECT="rank=0,phase=checkpoint,step=20,action=hang,times=1" "${MPI[@]}" "$S" train \
  "${hang[@]}" --out "$work/hung2"
check "  the warning" contains "checkpoint not written: writing its optimizer shard has not finished on rank 0"
check "  step 40 landed" latest_is "$work/hung2" 40
check "  in well under the timeout" test $((SECONDS - started)) -lt 60

# A read that stalls (the prefetch thread stuck in a hung file system): the trainer waits for its
# batch no longer than --io-timeout, at np 1 too, and ends naming the file; the checkpoint before
# it stays the latest.
started=$SECONDS
check "a stalled read at np 1 ends the job with exit 1" expect_rc 1 env \
  SLIMTRAIN_INJECT="rank=0,phase=read,step=25,action=hang" timeout 120 "$S" train "${hang[@]}" \
  --out "$work/stalled"
check "  within --io-timeout (2 s) and start-up, not timeout's 120 s" test $((SECONDS - started)) -lt 40
check "  naming the file" contains "the training data reader has not produced a batch in 2 s (--io-timeout): reading .*data.h5 is stalled"
check "  step 20's checkpoint is the latest" latest_is "$work/stalled" 20
check "phase=read takes hang or delay only: exit 2" expect_rc 2 env \
  SLIMTRAIN_INJECT="rank=0,phase=read,step=3,action=full" "$S" train "${recipe[@]}" --out "$work/x"
check "  naming it" contains "action=full needs phase=checkpoint or phase=log"

# Rank 0's host copy of a checkpoint (a large model) that takes longer than a collective
# deadline: the peers wait for it under the I/O deadline, not in the next step's reduction (which
# ended the job: "missing ranks: 0 ... now: checkpoint copy at step 20").
check "a host copy longer than --collective-timeout: the peers wait for it" expect_rc 0 env \
  SLIMTRAIN_INJECT="rank=0,phase=copy,step=20,delay=5s" "${MPI[@]}" "$S" train \
  --data "$D" "${SMALL_JOB[@]}" --eval-every 0 --final-split none --checkpoint-every 10 \
  --max-steps 30 --collective-timeout 2 --io-timeout 30 --out "$work/copy"
check "  the copy was slow" contains "fault injection .*phase=copy step=20 action=delay delay=5s"
check "  and the run finished, step 30 the latest" latest_is "$work/copy" 30

check "action=full outside the checkpoint phase exits 2" expect_rc 2 env \
  SLIMTRAIN_INJECT="rank=0,phase=train,step=3,action=full" "$S" train "${recipe[@]}" --out "$work/x"
check "  naming it" contains "action=full needs phase=checkpoint or phase=log"
check "--max-failed-checkpoints 0 exits 2" expect_rc 2 "$S" train "${recipe[@]}" \
  --max-failed-checkpoints 0 --out "$work/x"
check "  naming the option" contains "--max-failed-checkpoints"
finish
