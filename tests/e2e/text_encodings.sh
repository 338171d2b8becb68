#!/usr/bin/env bash
# prep text on files in the encodings and shapes people have (issue 60): UTF-16 by its byte order
# mark, Windows-1252, GB18030 and Shift JIS by --encoding, UTF-16 without a mark named in the
# error; labels checked as texts are (NUL, bytes that are not UTF-8, --strict); the first row of a
# CSV its header, as pandas reads it, --no-header when it is a record; JSONL labels 1.0 read as
# integers; a file of one class written with a warning; column numbers counted from 0 in options
# and messages alike; a short record, a directory as --train and a binary header named plainly;
# an output that cannot be written refused before any work; errors at np 2 printed once (about
# 15 s).
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
new_work
in=$work/in
dst=$work/out
mkdir -p "$in" "$dst"
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/text_encodings.py" "$in" || exit 1
S=$SLIMTRAIN_BIN
named=(--text-column text --label-column label --vocab-size 40)
prep() { "$S" prep text "$@"; }
classes() {  # classes FILE.h5 EXPECTED: inspect's class line
  "$S" inspect "$1" | grep -q -- "classes: $2" || { echo "  $(("$S" inspect "$1" | grep classes:))"; return 1; }
}

# Encodings.
check "UTF-8" expect_rc 0 prep --train "$in/utf8.csv" "${named[@]}" -o "$dst/utf8.h5"
check "UTF-16 with a byte order mark: found by the mark" expect_rc 0 prep --train "$in/utf16.csv" "${named[@]}" -o "$dst/utf16.h5"
check "  said" contains "utf16.csv read as UTF-16LE (its byte order mark says so) and re-encoded to UTF-8"
check "  every record, the classes as in UTF-8" classes "$dst/utf16.h5" "3 (café, ham, spam)"
check "  the same file as from UTF-8" h5diff "$dst/utf8.h5" "$dst/utf16.h5" /train/inputs/input_ids/values
check "UTF-16 without a mark: exit 2" expect_rc 2 prep --train "$in/utf16le.csv" "${named[@]}" -o "$dst/bad.h5"
check "  named, with the option that reads it" contains "utf16le.csv looks like utf-16le without a byte order mark .*--encoding utf-16le"
check "  --encoding utf-16le reads it" expect_rc 0 prep --train "$in/utf16le.csv" "${named[@]}" --encoding utf-16le -o "$dst/utf16le.h5"
check "  the same file" h5diff "$dst/utf8.h5" "$dst/utf16le.h5" /train/inputs/input_ids/values
check "UTF-32 with a big-endian byte order mark: found by the mark" expect_rc 0 prep --train "$in/utf32be.csv" "${named[@]}" -o "$dst/utf32be.h5"
check "  said" contains "utf32be.csv read as UTF-32BE (its byte order mark says so)"
check "  the same file" h5diff "$dst/utf8.h5" "$dst/utf32be.h5" /train/inputs/input_ids/values
for e in cp1252:café gb18030:café shift_jis:カフェ; do
  check "--encoding ${e%:*}" expect_rc 0 prep --train "$in/${e%:*}.csv" "${named[@]}" --encoding "${e%:*}" -o "$dst/${e%:*}.h5"
  check "  re-encoded, no byte left that is not UTF-8" bash -c '! grep -q "not UTF-8" <<<"$1"' _ "$out"
  check "  the classes (${e#*:} in UTF-8)" classes "$dst/${e%:*}.h5" "3 (.*${e#*:}.*)"
done
check "Windows-1252 read as UTF-8: counted, and --encoding suggested" expect_rc 0 prep --train "$in/cp1252.csv" "${named[@]}" -o "$dst/cp.h5"
check "  (said)" contains "records hold bytes that are not UTF-8 .*--encoding names the file's encoding"
check "an encoding iconv does not know: exit 2" expect_rc 2 prep --train "$in/utf8.csv" "${named[@]}" --encoding klingon -o "$dst/bad.h5"
check "  naming --encoding" contains "--encoding: 'klingon' is no encoding"

# Labels under the texts' checks.
check "labels with a NUL and a Latin-1 byte" expect_rc 0 prep --train "$in/bad_labels.csv" "${named[@]}" -o "$dst/labels.h5"
check "  counted, the first named" contains "2 labels hold bytes that are not UTF-8 or NUL bytes (the first: .*bad_labels.csv: line 62 ('a\\\\x00x'))"
check "  five classes: a\x00x is not a, caf\xe9 is valid UTF-8" "$PY" -c "
import subprocess, sys
names = subprocess.run([sys.argv[1], 'inspect', sys.argv[2]], capture_output=True).stdout.decode('utf-8')
assert 'classes: 5 (a\ufffdx, café, caf\ufffd, ham, spam)' in names, names
" "$S" "$dst/labels.h5"
check "  --strict refuses them: exit 2" expect_rc 2 prep --train "$in/bad_labels.csv" "${named[@]}" --strict -o "$dst/bad.h5"
check "  naming the record and the label" contains "bad_labels.csv: line 62: the label 'a\\\\x00x' holds 1 NUL byte (--strict"

# Headers, columns, labels.
check "a header and columns by index (banking77's text,category)" expect_rc 0 prep --train "$in/indexed.csv" --text-column 0 --label-column 1 --vocab-size 40 -o "$dst/indexed.h5"
check "  the header is no record: 3 classes, no 'category'" classes "$dst/indexed.h5" "3 (café, ham, spam)"
check "  said" contains "the first row of .*indexed.csv is its header (text, category), not a record"
check "--no-header reads it as a record" expect_rc 0 prep --train "$in/indexed.csv" --no-header --text-column 0 --label-column 1 --vocab-size 40 -o "$dst/no-header.h5"
check "  (4 classes)" classes "$dst/no-header.h5" "4 (café, category, ham, spam)"
check "--no-header with a column name: exit 2" expect_rc 2 prep --train "$in/indexed.csv" --no-header --text-column text --label-column 1 -o "$dst/bad.h5"
check "  saying why" contains "--text-column: 'text' names a column, but with --no-header .* has no header"
check "JSONL labels written as floats (1.0) are integers" expect_rc 0 prep --train "$in/floats.jsonl" "${named[@]}" -o "$dst/floats.h5"
check "  (classes 0 and 1)" classes "$dst/floats.h5" "2 (0, 1)"
check "a file of one class is written" expect_rc 0 prep --train "$in/one_class.csv" "${named[@]}" -o "$dst/one.h5"
check "  with a warning that training refuses it" contains "every label is 'ham': a file of one class, which training refuses"
check "a record with too few fields: exit 2" expect_rc 2 prep --train "$in/short.csv" "${named[@]}" -o "$dst/bad.h5"
check "  '2 fields', no quoting hint" contains "short.csv: line 7 has 2 fields, expected 3 (as the header) (a record cut short"
check "a column index past the last: counted from 0" expect_rc 2 prep --train "$in/utf8.csv" --text-column 2 --label-column 1 -o "$dst/bad.h5"
check "  (column 2 of 2, counted from 0)" contains "--text-column: column 2 does not exist in .*utf8.csv (2 columns, counted from 0)"
check "a binary header: exit 2" expect_rc 2 prep --train "$in/binary.csv" "${named[@]}" -o "$dst/bad.h5"
check "  its bytes escaped" contains "(its header: \\\\xff\\\\x00\\\\x01text, label)"
check "  nothing raw on the terminal" bash -c '! LC_ALL=C grep -q "$(printf "\\377")" <<<"$1"' _ "$out"

# Outputs checked before any work; errors once at np 2.
check "an output nothing can be created beside: exit 2" expect_rc 2 prep --train "$in/utf8.csv" "${named[@]}" -o /proc/slimtrain-test.h5
check "  before the tokenizer is trained" bash -c '! grep -q "training a" <<<"$1"' _ "$out"
check "  naming -o" contains "-o: cannot write /proc/slimtrain-test.h5"
check "a directory as -o: exit 2, named a directory" expect_rc 2 prep --train "$in/utf8.csv" "${named[@]}" -o "$dst"
check "  (a directory)" contains "-o: .* is a directory; name the file to write"
check "a directory as --train at np 2: exit 2" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" prep text --train "$in" "${named[@]}" -o "$dst/bad.h5"
check "  printed once, as a directory" test "$(grep -c -- "--train: .* is a directory; give the file of records" <<<"$out")" = 1
check "an unwritable output at np 2: printed once" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" prep text --train "$in/utf8.csv" "${named[@]}" -o /proc/slimtrain-test.h5
check "  (once)" test "$(grep -c -- "-o: cannot write" <<<"$out")" = 1
check "a bad option at np 2: printed once" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" prep text --train "$in/utf8.csv" "${named[@]}" --val-fraction 3 -o "$dst/bad.h5"
check "  (once)" test "$(grep -c -- "--val-fraction: 3 is outside" <<<"$out")" = 1
check "a missing --data at np 2 (train): printed once" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" train --data "$in/none.h5" --out "$work/run"
check "  (once)" test "$(grep -c "none.h5" <<<"$out")" = 1
check "  no run directory" test ! -e "$work/run"
check "a file as train's --out at np 2: exit 2" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" train --data "$dst/utf8.h5" --model text-bow --out "$in/utf8.csv"
check "  printed once, as a file" test "$(grep -c -- "--out: .*utf8.csv is a file; name a directory" <<<"$out")" = 1
check "a directory under a file as --out: exit 2" expect_rc 2 "$S" train --data "$dst/utf8.h5" --model text-bow --out "$in/utf8.csv/run"
check "  naming the file in the way" contains "--out: cannot create the directory .*utf8.csv/run: .*utf8.csv is a file"
check "no temporary file left behind" bash -c '[ -z "$(ls -A "$1" | grep "^\.")" ]' _ "$dst"
finish
