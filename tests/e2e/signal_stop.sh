#!/usr/bin/env bash
# SIGUSR1 or SIGTERM on one rank, or SIGUSR1 to mpirun (what train.sbatch forwards when Slurm warns
# of the time limit): every rank agrees at the next step boundary, one checkpoint of that step is
# written, and mpirun exits 75 (Open MPI passes on the first non-zero exit code of a rank). A rerun
# with --resume auto continues from that step, finishes, and ends bit-identical to a run that was
# never stopped. jobs/train.sbatch, run without Slurm, holds an early USR1 until the ranks can take
# it and passes TERM on without requeueing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
resume_work
S=$SLIMTRAIN_BIN
cfg=(--data data.h5 --threads 1 --model cnn-small --batch-size 16 --epochs 2 --lr 0.02
     --warmup-steps 4 --checkpoint-every 8 --eval-every 10 --log-every 4)
train() { "$MPIEXEC" -np 2 "$S" train "${cfg[@]}" "$@"; }

check "reference run of 32 steps" expect_rc 0 train --out R --resume none

# stopped RUN SIGNAL TARGET INJECT_RANK STEP: rank INJECT_RANK is held for 2 s before step STEP;
# while it is, SIGNAL goes to TARGET (a rank number, or "mpirun"). The job must stop after STEP.
stopped() {
  local run=$1 sig=$2 target=$3 held=$4 step=$5 pid rc
  SLIMTRAIN_INJECT="rank=$held,phase=train,step=$step,action=delay,delay=2s" \
    start_job "$run.log" -np 2 "$S" train "${cfg[@]}" --out "$run" --resume none
  if ! wait_until 60 grep -qs "fault injection" "$run.log"; then
    echo "  the injected delay never fired"; sed 's/^/  | /' "$run.log" | tail; return 1
  fi
  if [ "$target" = mpirun ]; then pid=$job; else pid=$(rank_pid "$target"); fi
  kill "-$sig" "$pid" || return 1
  wait "$job"
  rc=$?
  job=
  out=$(cat "$run.log")
  [ "$rc" -eq 75 ] || { echo "  mpirun exited $rc, wanted 75"; sed 's/^/  | /' "$run.log" | tail -20; return 1; }
}

# resumed RUN STEP: a rerun with --resume auto continues from STEP and matches the reference.
resumed() {
  local run=$1 step=$2
  check "  latest names step $step" latest_is "$run" "$step"
  check "  the stopped event records step $step and exit 75" \
    test "$(event_field "$run" stopped step) $(event_field "$run" stopped exit_code)" = "$step 75"
  check "  rerun with --resume auto" expect_rc 0 train --out "$run" --resume auto
  check "  continues from step $step" contains "resumed from .*step-$(printf %08d "$step") at step $step"
  check "  finishes all 32 steps" test "$(event_field "$run" done step)" = 32
  check "  bit-identical to the reference" same_weights R "$run" 32
}

check "SIGUSR1 to rank 1 gives exit 75" stopped U 10 1 1 11
check "  every rank agreed" contains "r0 WARN  stop requested by signal on some rank: checkpointing at step 11"
check "  rank 1 names the signal" contains "r1 WARN  stop requested by signal 10"
resumed U 11

check "SIGTERM to rank 0 gives exit 75" stopped T 15 0 0 6
check "  every rank agreed" contains "r1 WARN  stop requested by signal on some rank: checkpointing at step 6"
resumed T 6

check "SIGUSR1 to mpirun (forwarded to the ranks) gives exit 75" stopped M 10 mpirun 1 19
check "  both ranks saw it" contains "r1 WARN  stop requested by signal 10"
resumed M 19

# A stop on a checkpoint step (--checkpoint-every 8): the step is written once, not a second time
# over itself (a rename over an existing directory, which NFS or Lustre may refuse).
checkpoint_events() {  # checkpoint_events RUN STEP: how many checkpoint events name STEP
  "$PY" -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l)["event"] == "checkpoint" and json.loads(l)["step"] == int(sys.argv[2])))' "$1/metrics.jsonl" "$2"
}
check "SIGUSR1 on a checkpoint step gives exit 75" stopped C 10 1 1 8
check "  the step-8 checkpoint was written once" test "$(checkpoint_events C 8)" = 1
check "  one step-8 directory, no leftover" test "$(ls C/checkpoints | grep -c 'step-00000008')" = 1
resumed C 8

# The last step: the stop still wins (the final evaluation could outlast the time left); the rerun
# trains nothing, evaluates and records done.
check "SIGUSR1 during the last step gives exit 75" stopped L 10 1 1 32
resumed L 32
# jobs/train.sbatch run as a plain script (LAUNCHER=mpirun, no Slurm): a USR1 that comes before
# the ranks have installed their handlers is held and passed on once they have; TERM is passed on
# too, and the script says it will not requeue.
cat >job.ini <<EOF
model = cnn-small
batch-size = 16
lr = 0.02
log-every = 50
EOF
catches_usr1() {  # the script's trap is in place: bit 9 (USR1) of SigCgt
  local mask
  # Only once the subshell has become train.sbatch: before its exec it still carries this test
  # shell's handlers, and bash catches USR1 in a shell with an EXIT trap (CI, under load, sent
  # USR1 in that window and killed the subshell).
  grep -qa 'jobs/train.sbatch' "/proc/$1/cmdline" 2>/dev/null || return 1
  mask=$(awk '/^SigCgt/ {print $2}' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$mask" ] && (((16#$mask >> 9) & 1))
}
started() { grep -qs '"event":"start"' "$1/metrics.jsonl"; }
script_run() {  # script_run RUN SIGNAL early|started
  local run=$1 sig=$2 when=$3 pid rc
  (cd "$SLIMTRAIN_SOURCE_DIR" && CONFIG=$work/job.ini DATA=$work/data.h5 RUN_DIR=$work/$run \
    LAUNCHER=mpirun EXTRA_ARGS="--max-steps 3000 --checkpoint-every 1000" \
    exec bash jobs/train.sbatch) >"$run.log" 2>&1 &
  pid=$!
  wait_until 20 catches_usr1 "$pid" || { echo "  the script never trapped USR1"; return 1; }
  [ "$when" = early ] || wait_until 60 started "$run" || { echo "  the run never started"; return 1; }
  kill "-$sig" "$pid"
  wait "$pid"
  rc=$?
  out=$(cat "$run.log")
  [ "$rc" -eq 75 ] || { echo "  script exited $rc, wanted 75"; echo "$out" | sed 's/^/  | /' | tail; return 1; }
}
check "train.sbatch: USR1 before the ranks are up gives exit 75" script_run J USR1 early
check "  held until they were" contains "USR1 received before the ranks started; holding it"
check "  then passed on" contains "USR1 received: asking the ranks to checkpoint and stop"
check "  a checkpoint at the stop" test "$(event_field J stopped exit_code)" = 75
check "train.sbatch: TERM during training gives exit 75" script_run K TERM started
check "  passed on to the ranks" contains "stop requested by signal 10"
check "  and no requeue" contains "stopped by SIGTERM (cancelled or preempted): not requeueing"
finish
