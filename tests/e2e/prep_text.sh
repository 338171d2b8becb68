#!/usr/bin/env bash
# slimtrain prep text as a user runs it: CSV (quoted fields with commas, quotes and newlines, a
# header naming the columns), TSV by column index, gzipped JSONL pairs; the tokenizer trained on
# /train, stored in the file, and python3-sentencepiece encoding the same ids with it; a given
# --tokenizer; byte-identical files at np 1, 2 and 3; every bad input exits 2 naming the file and
# line and leaves nothing behind; --skip-bad; the real fortunes set; text-bow trains on it.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import h5py, sentencepiece" 2>/dev/null ||
  { echo "skipped: /usr/bin/python3 lacks h5py or sentencepiece (python3-sentencepiece)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
in=$work/in
dst=$work/out
mkdir -p "$in" "$dst"
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/text_files.py" inputs "$in" || exit 1
S=$SLIMTRAIN_BIN
files="$SLIMTRAIN_SOURCE_DIR/tests/e2e/text_files.py"
csv=(--train "$in/train.csv" --test "$in/test.csv" --text-column text --label-column topic)

check "csv converts (header names the columns, class names as labels)" expect_rc 0 "$S" prep text "${csv[@]}" --vocab-size 60 -o "$dst/csv.h5"
check "  inspect --validate checks offsets and token ids" expect_rc 0 "$S" inspect --validate "$dst/csv.h5"
check "  layout version 2, input_ids ragged" contains "input_ids: int32 ragged"
check "  the tokenizer is stored" contains "tokenizer: /tokenizer, .* bytes, kind sentencepiece, trained unigram on /train"
check "  class names in sorted order" contains "classes: 3 (food, space, sport)"
check "  python3-sentencepiece with the stored model encodes the same ids" "$PY" "$files" check-csv "$dst/csv.h5" "$in/test.csv"
for n in 2 3; do
  check "np $n writes the same bytes as np 1" expect_rc 0 "$MPIEXEC" -np $n "$S" prep text "${csv[@]}" --vocab-size 60 -o "$dst/csv-np$n.h5"
  check "  cmp" cmp "$dst/csv.h5" "$dst/csv-np$n.h5"
done
"$PY" -c "import h5py,sys; open(sys.argv[2],'wb').write(h5py.File(sys.argv[1])['tokenizer'][()].tobytes())" "$dst/csv.h5" "$work/user.model"
check "--tokenizer uses the user's model" expect_rc 0 "$S" prep text --train "$in/train.csv" --test "$in/test.csv" --text-column text --label-column topic --tokenizer "$work/user.model" -o "$dst/given.h5"
check "  the same ids as the trained one" h5diff "$dst/csv.h5" "$dst/given.h5" /test/inputs/input_ids/values
check "  marked as given" expect_rc 0 "$S" inspect "$dst/given.h5"
check "  in inspect" contains "trained given by --tokenizer"
check "bpe tokenizer, TSV by column index, integer labels" expect_rc 0 "$S" prep text --train "$in/train.tsv" --no-header --text-column 1 --label-column 0 --tokenizer-type bpe --vocab-size 60 --val-fraction 0.2 -o "$dst/tsv.h5"
check "  /train 192, /val 48" expect_rc 0 "$S" inspect "$dst/tsv.h5"
check "  counts" contains "/val: 48 samples"
check "gzipped JSONL pairs (two --text-column)" expect_rc 0 "$MPIEXEC" -np 2 "$S" prep text --train "$in/pairs.jsonl.gz" --text-column premise --text-column hypothesis --label-column label --vocab-size 60 -o "$dst/pairs.h5"
check "  joined by <sep>, integer labels" "$PY" "$files" check-pair "$dst/pairs.h5" "$in/pairs.jsonl.gz"

# Bad inputs: exit 2, naming the file and the line (or the option), nothing left behind.
# (The user's model from above tokenizes them: three records train no tokenizer.)
columns=(--text-column text --label-column topic)
no_temp_files() {
  [ ! -e "$dst/bad.h5" ] && [ -z "$(ls -A "$dst" | grep '^\.')" ] ||
    { echo "  left behind: $(ls -A "$dst")"; return 1; }
}
bad() {  # bad DESCRIPTION FILE MESSAGE [options, else "${columns[@]}"]
  local what=$1 file=$2 message=$3; shift 3
  [ $# -gt 0 ] || set -- "${columns[@]}"
  check "$what: exit 2" expect_rc 2 "$S" prep text --train "$in/$file" --tokenizer "$work/user.model" "$@" -o "$dst/bad.h5"
  check "  names it: $message" contains "$message"
  check "  nothing left behind" no_temp_files
}
bad "an unclosed quote" unclosed.csv "unclosed.csv: line 4: a quoted field opened in this record is never closed"
bad "a short or long record" fields.csv "fields.csv: line 4 has 4 fields, expected 3 (as the header)"
bad "text after a closing quote" after_quote.csv "after_quote.csv: line 4, column 1: text after a closing quote"
bad "a label that is a number but no integer" float_label.csv "float_label.csv: line 4, column 2: label '1.5' is a number but not an integer"
bad "an empty text" empty_text.csv "empty_text.csv: line 4, column 1: empty text"
bad "a line that is no JSON" bad.jsonl "bad.jsonl: line 2: not JSON" --text-column text --label-column label
bad "a JSON record without the text key" nokey.jsonl "nokey.jsonl: line 2: no key 'text' (its keys: body, label)" --text-column text --label-column label
bad "JSONL without a label key" bad.jsonl "--label-column: .*bad.jsonl holds JSON objects; name the label's key" --text-column text
bad "an unknown extension" data.txt "--train: .*data.txt: the extension says neither .csv, .tsv nor .jsonl"
bad "a column the header lacks" train.csv "--text-column: 'body' is not a column of .*train.csv (its header: id, text, topic)" --text-column body --label-column topic
bad "a column index past the last" train.tsv "--text-column: column 5 does not exist in .*train.tsv (2 columns, counted from 0)" --text-column 5 --label-column 0 --no-header
check "a vocabulary the texts cannot fill: exit 2" expect_rc 2 "$S" prep text "${csv[@]}" --vocab-size 100000 -o "$dst/bad.h5"
check "  naming --vocab-size" contains "vocab-size: 100000 is more than the training texts can fill"
check "a missing --tokenizer file: exit 2" expect_rc 2 "$S" prep text --train "$in/train.csv" --text-column text --label-column topic --tokenizer "$work/none.model" -o "$dst/bad.h5"
check "  naming it" contains "none.model"
check "a file that is no tokenizer: exit 2" expect_rc 2 "$S" prep text --train "$in/train.csv" --text-column text --label-column topic --tokenizer "$in/train.csv" -o "$dst/bad.h5"
check "  naming it" contains "--tokenizer .*train.csv: not a SentencePiece model"
check "a bad record under mpirun -np 2: exit 2 on both ranks" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" prep text --train "$in/float_label.csv" --text-column text --label-column topic --tokenizer "$work/user.model" -o "$dst/bad.h5"
check "  naming it" contains "float_label.csv: line 4, column 2"
check "  nothing left behind" no_temp_files
check "labels that mix names and integers are all class names" expect_rc 0 "$S" prep text --train "$in/mixed.csv" --text-column text --label-column topic --tokenizer "$work/user.model" -o "$dst/mixed.h5"
check "  in text order" contains "the labels mix integers and names: all are class names"
check "--skip-bad leaves bad records out" expect_rc 0 "$MPIEXEC" -np 2 "$S" prep text --train "$in/skip.csv" --text-column text --label-column topic --tokenizer "$work/user.model" --skip-bad -o "$dst/skip.h5"
check "  and lists them" grep -q "2 records left out" "$dst/skip.h5.skipped.txt"
check "  with their lines" grep -q "skip.csv: line 5, column 2: label '1.5'" "$dst/skip.h5.skipped.txt"
check "  3 records kept" expect_rc 0 "$S" inspect "$dst/skip.h5"
check "  in /train" contains "/train: 3 samples"

# The real text of the demo: fortunes' categories (scripts/text-data.sh), np 1 = np 2, and the
# demo's INI, shortened, at np 2 on it.
if [ -d /usr/share/games/fortunes ]; then
  check "fortunes: scripts/text-data.sh prepares the demo set" expect_rc 0 "$SLIMTRAIN_SOURCE_DIR/scripts/text-data.sh" "$S" "$dst/fortunes.h5"
  check "  np 2 writes the same bytes" expect_rc 0 "$MPIEXEC" -np 2 "$S" prep text --train "$dst/fortunes-train.csv" --test "$dst/fortunes-test.csv" --text-column text --label-column category --val-fraction 0.1 -o "$dst/fortunes-np2.h5"
  check "  cmp" cmp "$dst/fortunes.h5" "$dst/fortunes-np2.h5"
  check "  jobs/text_demo.ini trains text-bow on it at np 2 (4 of its 20 epochs)" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --config "$SLIMTRAIN_SOURCE_DIR/jobs/text_demo.ini" --data "$dst/fortunes.h5" --epochs 4 --out "$work/run" --resume none
  check "  and reaches 40% test accuracy" grep -qE "final evaluation on 'test' .*accuracy 0\.([4-9]|[1-9][0-9])" <<<"$out"
else
  echo "FAIL fortunes: /usr/share/games/fortunes missing (scripts/install-deps.sh installs fortunes)"
  fails=$((fails + 1))
fi
finish
