#!/usr/bin/env bash
# text-data.sh SLIMTRAIN_BIN OUT.h5 [prep options...]: the text demo's data. Eight categories of
# the `fortunes` package (the largest ones with a topic of their own; the catch-alls cookie and
# miscellaneous are left out) become a CSV of "text,category" records, every fifth entry of a
# category in the test file, and `prep text` tokenizes them with a SentencePiece model trained on
# the training split. Nothing is downloaded. The CSVs stay beside OUT.h5 (OUT-train.csv,
# OUT-test.csv) for the PyTorch peer and the tokenizer benchmark.
set -euo pipefail
bin=$1 out=$2
shift 2
src=${FORTUNES_DIR:-/usr/share/games/fortunes}
categories="computers definitions people politics science songs-poems work zippy"
for c in $categories; do
  [ -f "$src/$c" ] || { echo "text-data: no $src/$c (install the fortunes package)" >&2; exit 2; }
done
base=${out%.h5}
tmp=$(mktemp -d "$(dirname "$out")/.text-data.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# An entry runs to the next line holding only %; quotes are doubled inside a quoted field, and
# the entry's own line breaks stay (RFC 4180 allows them in a quoted field).
for c in $categories; do
  awk -v category="$c" -v train="$tmp/train.csv" -v test="$tmp/test.csv" '
    function flush() {
      if (entry != "") {
        gsub(/"/, "\"\"", entry)
        print "\"" entry "\"," category >> ((n++ % 5 == 4) ? test : train)
      }
      entry = ""
    }
    /^%$/ { flush(); next }
    { sub(/\r$/, ""); entry = (entry == "" ? $0 : entry "\n" $0) }
    END { flush() }' "$src/$c"
done
{ echo "text,category"; cat "$tmp/train.csv"; } > "$tmp/train-h.csv"
{ echo "text,category"; cat "$tmp/test.csv"; } > "$tmp/test-h.csv"
mv "$tmp/train-h.csv" "$base-train.csv"
mv "$tmp/test-h.csv" "$base-test.csv"
"$bin" prep text --train "$base-train.csv" --test "$base-test.csv" --text-column text \
  --label-column category --val-fraction 0.1 -o "$out" "$@"
