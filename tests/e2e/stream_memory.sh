#!/usr/bin/env bash
# Stream mode's memory does not grow with the file: training on 2^20 and on 2^28 rows of one byte
# each (files whose chunks are never written: HDF5 reads them as the fill value, so 2^28 rows take
# a few KiB on disk) reaches the same peak resident memory within 16 MiB; a file too large for any
# mode (2^50 rows) is refused with exit 2 before training (about 20 s).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
"$PY" -c "import h5py" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks h5py"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
job=(--data-mode stream --model mlp --mlp-widths 8 --batch-size 64 --threads 1 --max-steps 200
  --eval-every 0 --final-split none --checkpoint-every 0 --log-every 100)
# peak RUN: the most resident bytes of the run's rank 0, start-up and training alike (done event)
peak() {
  field "$1" done 'max(e["memory"]["baseline_resident_bytes"] + e["memory"]["startup_peak_above_baseline_bytes"], e["memory"]["peak_resident_bytes"])'
}
for bits in 20 28; do
  "$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/wild_files.py" rows "$work/rows$bits.h5" $((1 << bits)) || exit 1
  check "stream mode over 2^$bits rows of one byte trains" expect_rc 0 timeout 120 "$S" train \
    --data "$work/rows$bits.h5" --out "$work/r$bits" "${job[@]}"
  check "  in stream mode" contains "stream"
done
p20=$(peak "$work/r20") p28=$(peak "$work/r28")
echo "  peak resident memory: 2^20 rows $((p20 >> 20)) MiB, 2^28 rows $((p28 >> 20)) MiB"
check "  the same within 16 MiB at 256x the rows" test $((p28 - p20)) -lt $((16 << 20))
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/wild_files.py" rows "$work/rows50.h5" $((1 << 50)) || exit 1
check "2^50 rows are refused, exit 2" expect_rc 2 timeout 60 "$S" train --data "$work/rows50.h5" \
  --out "$work/r50" "${job[@]}"
check "  saying why, with the memory each mode needs" contains "rows50.h5: /train has 1125899906842624 rows: too large for any data mode"
check "  before training: no run directory" test ! -e "$work/r50"
finish
