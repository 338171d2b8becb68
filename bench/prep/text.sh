#!/usr/bin/env bash
# The text row of bench/prep: `slimtrain prep text` at 1 and 2 ranks against the tokenizer peer
# (bench/prep/text_peer.py: python3-sentencepiece + h5py) on the same CSV with the same
# SentencePiece model (--tokenizer: no training timed): the text demo's fortunes records
# (scripts/text-data.sh) repeated COPIES times. The peer encodes in a Python loop (the issue's
# peer; targets: slimtrain at least 1.0x at np 1 and 1.8x at np 2) and, for the table, with
# SentencePiece's own multi-threaded batch encode (num_threads 1 and 2). Alternated, medians of
# REPS; times are measured inside each program (after its imports / from reading the input to
# the renamed file) and for the whole command.
# Usage: bench/prep/text.sh [build-dir] [REPS]      Environment: COPIES (40).
set -euo pipefail
build=${1:-build}
reps=${2:-3}
copies=${COPIES:-40}
bin=$build/apps/slimtrain
PY=/usr/bin/python3
here=$(dirname "$0")
root=$(cd "$here/../.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
"$PY" -c "import h5py, sentencepiece" 2>/dev/null ||
  { echo "bench/prep text: /usr/bin/python3 lacks h5py/sentencepiece" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$root/scripts/text-data.sh" "$bin" "$work/fortunes.h5" >/dev/null 2>&1
"$PY" -c "import h5py,sys; open(sys.argv[2],'wb').write(h5py.File(sys.argv[1])['tokenizer'][()].tobytes())" \
  "$work/fortunes.h5" "$work/tok.model"
{ head -n 1 "$work/fortunes-train.csv"
  for ((c = 0; c < copies; c++)); do tail -n +2 "$work/fortunes-train.csv"; done; } > "$work/big.csv"
results=$work/results
: > "$results"
now() { date +%s.%N; }
for ((r = 1; r <= reps; r++)); do
  for np in 1 2; do
    start=$(now)
    line=$(mpirun -np $np "$bin" prep text --train "$work/big.csv" --text-column text \
      --label-column category --tokenizer "$work/tok.model" --force -o "$work/s.h5" 2>&1 | grep "wrote ")
    echo "slimtrain-np$np $(sed 's/.*, in \([0-9.]*\) s$/\1/' <<<"$line") $(echo "$(now) - $start" | bc)" >> "$results"
  done
  for peer in "loop" "batch 1" "batch 2"; do
    start=$(now)
    # shellcheck disable=SC2086 # mode and threads are two words
    line=$("$PY" "$here/text_peer.py" "$work/big.csv" "$work/tok.model" "$work/p.h5" $peer)
    echo "peer-${peer// /} $(sed 's/peer_s=\([0-9.]*\) .*/\1/' <<<"$line") $(echo "$(now) - $start" | bc)" >> "$results"
  done
done
"$PY" - "$work/p.h5" "$work/s.h5" <<'PYEND'
import h5py, sys, numpy as np
p, s = (h5py.File(f) for f in sys.argv[1:3])
for name in ("train/inputs/input_ids/values", "train/inputs/input_ids/offsets", "train/y"):
    assert np.array_equal(p[name][()], s[name][()]), f"{name} differs between the peer and slimtrain"
print(f"same ids, offsets and labels from both ({len(s['train/y'])} records, "
      f"{len(s['train/inputs/input_ids/values'])} tokens)")
PYEND
"$PY" - "$results" "$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" <<'PYEND'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, inner, wall = line.split()
    rows.setdefault(name, []).append((float(inner), float(wall)))
med = {k: (statistics.median(a for a, _ in v), statistics.median(b for _, b in v)) for k, v in rows.items()}
print(f"prep text on {sys.argv[2]}: fortunes records, SentencePiece unigram 8000, medians")
print(f"{'':46s}{'timed inside (s)':>17s}{'whole command (s)':>19s}")
labels = {"slimtrain-np1": "slimtrain prep text, 1 rank", "slimtrain-np2": "slimtrain prep text, 2 ranks",
          "peer-loop": "peer: sp.encode per record, Python loop",
          "peer-batch1": "peer: sp.encode(all, num_threads=1)",
          "peer-batch2": "peer: sp.encode(all, num_threads=2)"}
for k in labels:
    print(f"{labels[k]:46s}{med[k][0]:12.3f}{med[k][1]:19.3f}")
for np_, target in ((1, 1.0), (2, 1.8)):
    s = med[f"slimtrain-np{np_}"]
    loop, batch = med["peer-loop"], med[f"peer-batch{np_}"]
    print(f"RESULT prep_text ranks={np_} slimtrain_s={s[0]:.3f} peer_loop_s={loop[0]:.3f} "
          f"ratio={loop[0] / s[0]:.2f} target={target} peer_batch{np_}_s={batch[0]:.3f} "
          f"batch_ratio={batch[0] / s[0]:.2f} wall_ratio={loop[1] / s[1]:.2f}")
PYEND
