#!/usr/bin/env bash
# Evaluation at 20,000 classes (issue 60), where the C x C matrix was 3.2 GB per rank (std::bad_alloc
# under 6 GB, exit 1, after the checkpoint): at np 2, each rank bounded to 3 GB of address space,
# training's final evaluation and `slimtrain eval` run, each rank's peak under 1 GB resident and
# under a megabyte reduced; the final evaluation's most frequent confusions said to come from a
# sample; eval's table the 20 worst and 20 best classes unless --per-class all; then a model of
# 100,000 classes evaluated at np 2 under 1 GB per rank (about 40 s).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import h5py" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks h5py (python3-h5py)"; exit 77; }
new_work
S=$SLIMTRAIN_BIN
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/many_classes.py" "$work/c.h5" 20000 20000 2000 || exit 1
# bounded KIB COMMAND...: COMMAND and its ranks within KIB KiB of address space each.
bounded() { bash -c 'ulimit -v "$1"; shift; exec "$@"' _ "$@"; }

check "20,000 classes: train at np 2 within 3 GB each" expect_rc 0 bounded 3000000 timeout 120 "$MPIEXEC" -np 2 "$S" train --data "$work/c.h5" --model mlp --mlp-widths 16 --epochs 1 --batch-size 512 --out "$work/run" --resume none
check "  its final evaluation ran" contains "final evaluation on 'test' at step [0-9]*: accuracy"
check "  with every class scored and the top confusions said to be sampled" "$PY" -c "
import json, sys
done = [json.loads(l) for l in open(sys.argv[1]) if '\"done\"' in l][-1]
final = done['final']
assert final['count'] == 2000 and len(final['per_class']) == 20000
conf = final['confusion']
assert conf['classes'] == 20000 and conf['max_classes'] == 100, conf.keys()
assert conf['sampled'] == 2000 and 0 < len(conf['top']) <= 20
assert 'at least' in conf['note']
" "$work/run/metrics.jsonl"

check "eval at np 2 within 3 GB each" expect_rc 0 bounded 3000000 timeout 120 "$MPIEXEC" -np 2 "$S" eval --data "$work/c.h5" --checkpoint "$work/run" --split test
check "  says its time and memory" contains "evaluated 2000 samples of 'test' (20000 classes) on 2 ranks in [0-9.]* s"
peak=$(grep -o 'peak [0-9.]* GB resident' <<<"$out" | cut -d' ' -f2)
bytes=$(grep -o '[0-9]* bytes reduced' <<<"$out" | cut -d' ' -f1)
check "  under 1 GB resident on rank 0 ($peak GB)" awk -v p="${peak:-9}" 'BEGIN { exit !(p < 1) }'
check "  under a megabyte reduced (3C + 2 numbers and the confusion records: $bytes)" test "${bytes:-999999999}" -lt 1000000
check "  the table: the 20 worst and the 20 best classes" test "$(grep -cE '^[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+$' <<<"$out")" -eq 40
check "  (the rest counted)" contains "classes of F1 .* between (--per-class all lists every one)"
check "  the most frequent confusions, from the sample" contains "most frequent confusions (true -> predicted: samples), from the first 2000 samples"
check "--per-class all: every class the split holds" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" eval --data "$work/c.h5" --checkpoint "$work/run" --split test --per-class all
check "  (20,000 rows)" test "$(grep -cE '^[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+$' <<<"$out")" -eq 20000
# 100,000 classes (the issue's scale): a model that has them (an mlp head of 16 x 100,000, a few
# steps), evaluated at np 2 within 1 GB resident per rank.
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/many_classes.py" "$work/c100k.h5" 100000 100000 4000 || exit 1
check "100,000 classes: a model that has them (5 steps at np 2)" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --data "$work/c100k.h5" --model mlp --mlp-widths 16 --max-steps 5 --batch-size 512 --final-split none --out "$work/run100k" --resume none
check "  eval at np 2 within 3 GB each" expect_rc 0 bounded 3000000 timeout 120 "$MPIEXEC" -np 2 "$S" eval --data "$work/c100k.h5" --checkpoint "$work/run100k" --split test
check "  every sample evaluated" contains "evaluated 4000 samples of 'test' (100000 classes) on 2 ranks in [0-9.]* s"
peak=$(grep -o 'peak [0-9.]* GB resident' <<<"$out" | cut -d' ' -f2)
check "  under 1 GB resident on rank 0 ($peak GB)" awk -v p="${peak:-9}" 'BEGIN { exit !(p < 1) }'
check "--confusion-max-classes above 4096: exit 2" expect_rc 2 "$S" eval --data "$work/c.h5" --checkpoint "$work/run" --confusion-max-classes 5000
check "  naming it" contains "--confusion-max-classes"
finish
