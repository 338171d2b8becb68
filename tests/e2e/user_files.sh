#!/usr/bin/env bash
# Files users write themselves with h5py: mean/std on /train/x only trains; a file with none
# trains with a one-line note and the statistics prep would have written (same final loss);
# `slimtrain eval` at np 2 of such a file computes the same; a file with only /train trains with
# --eval-every 0 and skips the final evaluation with a note, while --eval-every N or a missing
# --eval-split/--final-split exits 2 naming the option and leaves no run directory.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import numpy, h5py" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks numpy/h5py"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
S=$SLIMTRAIN_BIN
write() { "$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/data_files.py" write-h5py "$work/$1.h5" "${@:2}"; }
write all --stats all && write train --stats train && write none --stats none &&
  write only-train --stats none --splits train || exit 1
JOB=(--model mlp --mlp-widths 8 --epochs 2 --seed 3 --resume none)
done_field() {  # done_field RUN EXPR: EXPR of the done event, e.g. e["final"]["loss"]
  "$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == "done":
        print(eval(sys.argv[2]))' "$1/metrics.jsonl" "$2"
}
same_loss() {  # same_loss RUN_A RUN_B: both finished with the same final loss
  local a b
  a=$(done_field "$1" 'e["final"]["loss"]') && b=$(done_field "$2" 'e["final"]["loss"]') &&
    [ -n "$a" ] && [ "$a" = "$b" ] || { echo "  final losses '$a' and '$b'"; return 1; }
}

check "mean/std on every split trains" expect_rc 0 "$S" train --data "$work/all.h5" --out "$work/r-all" "${JOB[@]}" --batch-size 2
check "mean/std on /train/x only trains" expect_rc 0 "$S" train --data "$work/train.h5" --out "$work/r-train" "${JOB[@]}" --batch-size 2
check "  with no note about them" eval '! grep -q "no mean/std" <<<"$out"'
check "  and the same final loss" same_loss "$work/r-train" "$work/r-all"
check "no mean/std at all trains at np 2" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --data "$work/none.h5" --out "$work/r-none" "${JOB[@]}" --batch-size 1
check "  with one note, from rank 0" test "$(grep -c "has no mean/std attributes: computed them from its 8 samples" <<<"$out")" = 1
check "  holding the statistics prep writes" contains "mean/std 75.1667/86.1131, 108.5/25.8441, 192.5/25.8441"
check "  the same final loss as with them" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --data "$work/all.h5" --out "$work/r-all2" "${JOB[@]}" --batch-size 1
check "  (compared)" same_loss "$work/r-none" "$work/r-all2"
check "  inspect says they are computed" expect_rc 0 "$S" inspect "$work/none.h5"
check "  (line)" contains "mean/std (train, per channel): none in the file"
check "slimtrain eval of it at np 2" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" eval --checkpoint "$work/r-none" --data "$work/none.h5" --split test
check "  computes them too" contains "computed them from its 8 samples"
check "  and reports the trainer's loss" contains "mean loss $(done_field "$work/r-none" '"%.4f" % e["final"]["loss"]')"

check "only /train: --eval-every 0 trains" expect_rc 0 "$S" train --data "$work/only-train.h5" --out "$work/r-only" "${JOB[@]}" --batch-size 2
check "  the start line and the end say why" test "$(grep -c "no final evaluation: .*only-train.h5 has no split for it (it has train)" <<<"$out")" = 2
check "  done event without final metrics" test "$(done_field "$work/r-only" '(e["final_split"], e["final"], e["step"])')" = "(None, None, 8)"
check "only /train: --eval-every 2 exits 2" expect_rc 2 "$S" train --data "$work/only-train.h5" --out "$work/r-bad" "${JOB[@]}" --batch-size 2 --eval-every 2
check "  naming the option and the splits" contains "--eval-every 2: .*only-train.h5 has no split to evaluate on (it has train)"
check "  leaving no run directory" test ! -e "$work/r-bad"
check "a missing --eval-split exits 2" expect_rc 2 "$S" train --data "$work/all.h5" --out "$work/r-bad" "${JOB[@]}" --batch-size 2 --eval-split val
check "  naming it" contains "--eval-split: .*all.h5 has no split 'val' (it has train, test)"
check "a missing --final-split exits 2" expect_rc 2 "$S" train --data "$work/all.h5" --out "$work/r-bad" "${JOB[@]}" --batch-size 2 --final-split val
check "  naming it" contains "--final-split: .*all.h5 has no split 'val'"
check "--final-split train evaluates the training split" expect_rc 0 "$S" train --data "$work/only-train.h5" --out "$work/r-ft" "${JOB[@]}" --batch-size 2 --final-split train
check "  (count 8)" test "$(done_field "$work/r-ft" '(e["final_split"], e["final"]["count"])')" = "('train', 8)"
check "--final-split none skips it" expect_rc 0 "$S" train --data "$work/all.h5" --out "$work/r-fn" "${JOB[@]}" --batch-size 2 --final-split none
check "  with the note" contains "no final evaluation (--final-split none)"
check "  that names no missing split" test "$(grep -c "has no split for it" <<<"$out")" = 0
finish
