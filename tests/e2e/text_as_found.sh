#!/usr/bin/env bash
# Text files as people have them (issue 46), made by text_as_found.py: an unquoted TSV whose
# texts start with quotes keeps every line; byte order marks in CSV, TSV and JSONL are skipped;
# bytes that are not UTF-8 and NUL bytes are counted and named (--strict refuses them); labels
# 1..4, -2..2 and 5,000 distinct names are the classes present, and a 5,000-class run writes its
# evaluations to metrics.jsonl; macro-F1 over the classes a split holds; the default vocabulary
# on 600 short and 20,000 longer texts; 300 texts of 5 KB; a 50 MB record cut at prep, and
# refused at training and evaluation (np 1 and 2) with exit 2 when kept; an error at np 2 printed once, on its own line.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import h5py" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks h5py (python3-h5py)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
in=$work/in
dst=$work/out
mkdir -p "$in" "$dst"
files="$SLIMTRAIN_SOURCE_DIR/tests/e2e/text_as_found.py"
"$PY" "$files" inputs "$in" || exit 1
S=$SLIMTRAIN_BIN
prep() { "$S" prep text "$@"; }
nothing_behind() {  # no bad.h5, no hidden temporary file
  [ ! -e "$dst/bad.h5" ] && [ -z "$(ls -A "$dst" | grep '^\.')" ] || { echo "  left behind: $(ls -A "$dst")"; return 1; }
}
named=(--text-column text --label-column label)

# Unquoted TSV: 300 lines, 103 of them texts that open a quote they never close.
check "an unquoted TSV whose texts start with quotes" expect_rc 0 prep --train "$in/quotes.tsv" --no-header --text-column 1 --label-column 0 -o "$dst/quotes.h5"
check "  keeps every line" expect_rc 0 "$S" inspect "$dst/quotes.h5"
check "  (300 samples)" contains "/train: 300 samples"
check "  and two classes" contains "labels: ham=200 spam=100"
check "--quoting csv reads it as CSV: exit 2" expect_rc 2 prep --train "$in/quotes.tsv" --no-header --text-column 1 --label-column 0 --quoting csv -o "$dst/bad.h5"
check "  naming the line" contains "quotes.tsv: line 1, column 1: text after a closing quote"
check "  nothing left behind" nothing_behind

# Byte order marks.
for f in bom.csv bom.jsonl; do
  check "$f: a byte order mark before the first record" expect_rc 0 prep --train "$in/$f" "${named[@]}" -o "$dst/$f.h5"
  check "  is skipped and said" contains "begins with a UTF-8 byte order mark: skipped"
  check "  the header's first column is found, two classes" expect_rc 0 "$S" inspect "$dst/$f.h5"
  check "  (ham, spam)" contains "classes: 2 (ham, spam)"
done
check "bom.tsv: a mark before the first label" expect_rc 0 prep --train "$in/bom.tsv" --no-header --text-column 1 --label-column 0 -o "$dst/bom-tsv.h5"
check "  no third class" expect_rc 0 "$S" inspect "$dst/bom-tsv.h5"
check "  (ham, spam)" contains "classes: 2 (ham, spam)"

# Bytes no tokenizer reads.
check "invalid UTF-8 and a NUL byte" expect_rc 0 prep --train "$in/flaws.csv" "${named[@]}" -o "$dst/flaws.h5"
check "  counted, the first record named" contains "1 record holds bytes that are not UTF-8 (the first: .*flaws.csv: line 6)"
check "  NUL counted, named" contains "1 record holds NUL bytes (the first: .*flaws.csv: line 10)"
check "--strict refuses them: exit 2" expect_rc 2 prep --train "$in/flaws.csv" "${named[@]}" --strict -o "$dst/bad.h5"
check "  naming the record" contains "flaws.csv: line 6: 1 byte that is not UTF-8 (--strict"
check "  nothing left behind" nothing_behind

# Labels as they come.
check "labels 1..4" expect_rc 0 prep --train "$in/one_to_four.csv" "${named[@]}" -o "$dst/one_to_four.h5"
check "  are four classes" expect_rc 0 "$S" inspect "$dst/one_to_four.h5"
check "  (1, 2, 3, 4)" contains "classes: 4 (1, 2, 3, 4)"
check "labels -2..2" expect_rc 0 prep --train "$in/negative.csv" "${named[@]}" -o "$dst/negative.h5"
check "  are five classes in numeric order" expect_rc 0 "$S" inspect "$dst/negative.h5"
check "  (-2, -1, 0, 1, 2)" contains "classes: 5 (-2, -1, 0, 1, 2)"
check "labels -2..2 with --class-names" expect_rc 0 prep --train "$in/negative.csv" "${named[@]}" --class-names 2,1,0,-1,-2 -o "$dst/negative-named.h5"
check "  in that order" expect_rc 0 "$S" inspect "$dst/negative-named.h5"
check "  (2, 1, 0, -1, -2)" contains "classes: 5 (2, 1, 0, -1, -2)"
check "5,000 distinct labels at np 2" expect_rc 0 "$MPIEXEC" -np 2 "$S" prep text --train "$in/many.csv" --test "$in/many_test.csv" "${named[@]}" -o "$dst/many.h5"
check "  stored as the /class_names dataset" "$PY" -c "import h5py,sys; f=h5py.File(sys.argv[1]); assert 'class_names' in f and f['class_names'].shape == (5000,)" "$dst/many.h5"
check "  inspect reads them" expect_rc 0 "$S" inspect "$dst/many.h5"
check "  (5000, the first 30 named)" contains "classes: 5000 (intent_0, intent_1, intent_10, .*, ... (4970 more))"
check "  text-bow trains on them at np 2" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --model text-bow --data "$dst/many.h5" --epochs 1 --eval-every 40 --out "$work/many-run" --resume none
check "  no event lost" bash -c '! grep -q "lost" <<<"$1"' _ "$out"
check "  metrics.jsonl holds every evaluation, the top confusions from a sample" "$PY" -c "
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
evals = [e for e in events if e['event'] == 'eval']
done = [e for e in events if e['event'] == 'done'][-1]
assert len(evals) >= 2, len(evals)
final = done['test']
assert final['count'] == 5000 and len(final['per_class']) == 5000
conf = final['confusion']
assert conf['classes'] == 5000 and conf['max_classes'] == 100 and conf['sampled'] == 5000
assert 0 < len(conf['top']) <= 20 and 'sample' in conf['note']
" "$work/many-run/metrics.jsonl"
check "  eval reads the /class_names dataset" expect_rc 0 "$S" eval --checkpoint "$work/many-run/checkpoints" --data "$dst/many.h5" --split test
check "  the table: the 20 worst and 20 best classes, not 5,000 lines" test "$(grep -c '^intent_' <<<"$out")" -le 60
check "  (said so)" contains "classes of F1 .* between (--per-class all lists every one)"
check "  --per-class all lists every class" expect_rc 0 "$S" eval --checkpoint "$work/many-run/checkpoints" --data "$dst/many.h5" --split test --per-class all
check "  (intent_999 in the table)" contains "^intent_999 "

# Macro-F1 over the classes the split holds.
check "labels 0..3 with --num-classes 6" expect_rc 0 prep --train "$in/zero_to_three.csv" "${named[@]}" --num-classes 6 --val-fraction 0.25 -o "$dst/six.h5"
check "  trains" expect_rc 0 "$S" train --model text-bow --data "$dst/six.h5" --epochs 2 --out "$work/six-run" --resume none
check "  eval: macro-F1 over the 4 classes present, and over all 6" expect_rc 0 "$S" eval --checkpoint "$work/six-run/checkpoints" --data "$dst/six.h5" --split val --json
check "  (macro_f1 = mean over present, macro_f1_all = mean over 6)" "$PY" -c "
import json, sys
m = json.loads(sys.argv[1])
present = [c['f1'] for c in m['per_class'] if c['support'] > 0]
assert m['classes_present'] == 4 == len(present)
assert abs(m['macro_f1'] - sum(present) / 4) < 1e-9
assert abs(m['macro_f1_all'] - sum(c['f1'] for c in m['per_class']) / 6) < 1e-9
" "$(json_line)"

# Vocabularies the texts can fill, and long texts.
check "the default vocabulary on 600 short texts" expect_rc 0 prep --train "$in/short.csv" "${named[@]}" -o "$dst/short.h5"
check "  says what it chose" contains "prep text: [0-9]* pieces (sized to the training texts"
check "the default vocabulary on 20,000 longer texts" expect_rc 0 prep --train "$in/long.csv" "${named[@]}" -o "$dst/long.h5"
check "  says what it chose" contains "prep text: [0-9]* pieces (sized to the training texts"
check "a --vocab-size too small for the characters: exit 2" expect_rc 2 prep --train "$in/short.csv" "${named[@]}" --vocab-size 10 -o "$dst/bad.h5"
check "  in slimtrain's words" contains "--vocab-size: 10 is too small: the training texts hold more distinct characters than that.*give at least"
check "  no SentencePiece option named" bash -c '! grep -q "character_coverage" <<<"$1"' _ "$out"
check "300 texts of 5 KB" expect_rc 0 prep --train "$in/five_kb.csv" "${named[@]}" -o "$dst/five_kb.h5"
check "  no internal assertion" bash -c '! grep -q "sentences_" <<<"$1"' _ "$out"

# A 50 MB record (the tokenizer of quotes.h5, to spare the test SentencePiece's training).
"$PY" -c "import h5py,sys; open(sys.argv[2],'wb').write(h5py.File(sys.argv[1])['tokenizer'][()].tobytes())" "$dst/quotes.h5" "$work/tok.model"
check "a 50 MB record" expect_rc 0 prep --train "$in/huge.csv" "${named[@]}" --tokenizer "$work/tok.model" -o "$dst/huge.h5"
check "  is cut to --max-length 4096 with a note" contains "1 sample was cut to 4096 tokens (--max-length; the longest had [0-9]*: .*huge.csv: line 103)"
check "  (4096 tokens stored)" test "$("$PY" "$files" longest "$dst/huge.h5")" = 4096
check "kept whole with --max-length 0" expect_rc 0 prep --train "$in/huge.csv" "${named[@]}" --tokenizer "$work/tok.model" --max-length 0 -o "$dst/huge-whole.h5"
# Address space bounded, so that the failure does not depend on this machine's memory: 3 GB
# fails padding the batch in the loader, 8 GB in the model's forward.
for limit in 3000000 8000000; do
  check "training on it within ${limit} KiB: exit 2" expect_rc 2 bash -c 'ulimit -v "$1"; shift; exec "$@"' _ "$limit" "$S" train --model text-bow --data "$dst/huge-whole.h5" --epochs 1 --batch-size 16 --out "$work/huge-run" --resume none
  check "  naming the sample and its length" contains "does not fit in memory (allocating .* GB failed): its longest sample, row 101, is [0-9]* elements long. Prep with --max-length"
  check "  no stack trace" bash -c '! grep -qE "frame #|alloc_cpu.cpp" <<<"$1"' _ "$out"
done

# The same sample in an evaluation (issue 60: train exited 0 with the final evaluation "skipped"
# and 31 LibTorch frames, eval 1 with "communication error ... can't allocate memory"): exit 2
# naming its row and the evaluation's batch option, in train's evaluation and in eval.
check "the 50 MB record in /test only, kept whole" expect_rc 0 prep --train "$in/short.csv" --test "$in/huge.csv" "${named[@]}" --tokenizer "$work/tok.model" --max-length 0 -o "$dst/huge-test.h5"
check "  train's final evaluation of it within 3 GB: exit 2" expect_rc 2 bash -c 'ulimit -v 3000000; exec "$@"' _ "$S" train --model text-bow --data "$dst/huge-test.h5" --epochs 1 --batch-size 16 --eval-batch-size 16 --out "$work/huge-eval-run" --resume none
check "  naming the sample and --eval-batch-size" contains "final evaluation on 'test' at step [0-9]*: .*does not fit in memory (allocating .* GB failed): its longest sample, row 101, is [0-9]* elements long. Prep with --max-length .*--eval-batch-size"
check "  no stack trace" bash -c '! grep -qE "frame #|alloc_cpu.cpp" <<<"$1"' _ "$out"
for limit in 3000000 8000000; do
  check "eval of it within ${limit} KiB: exit 2" expect_rc 2 bash -c 'ulimit -v "$1"; shift; exec "$@"' _ "$limit" "$S" eval --data "$dst/huge-test.h5" --checkpoint "$work/huge-eval-run" --split test --batch-size 16
  check "  naming the sample and --batch-size" contains "batch .*of 16 samples of /test does not fit in memory (allocating .* GB failed): its longest sample, row 101, .*evaluate with a smaller --batch-size"
  check "  no stack trace" bash -c '! grep -qE "frame #|alloc_cpu.cpp|communication error" <<<"$1"' _ "$out"
done
check "eval of it at np 2, each rank within 8000000 KiB: exit 2" expect_rc 2 bash -c 'ulimit -v 8000000; exec "$@"' _ timeout 120 "$MPIEXEC" -np 2 "$S" eval --data "$dst/huge-test.h5" --checkpoint "$work/huge-eval-run" --split test --batch-size 16
check "  printed once, by the rank holding the sample" test "$(grep -c "its longest sample, row 101, .*evaluate with a smaller --batch-size" <<<"$out")" = 1
check "  no stack trace" bash -c '! grep -qE "frame #|alloc_cpu.cpp|communication error" <<<"$1"' _ "$out"

# An error every rank sees, at np 2: once, on its own line.
check "a label outside --class-names at np 2: exit 2" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" prep text --train "$in/outside.csv" "${named[@]}" --class-names ham,spam -o "$dst/bad.h5"
check "  printed once" test "$(grep -c "label 'eggs' is not one of the 2 classes" <<<"$out")" = 1
check "  on its own line" bash -c '! grep -qE ".slimtrain: |[a-z]slimtrain:" <<<"$1"' _ "$out"
check "  nothing left behind" nothing_behind
finish
