#!/usr/bin/env bash
# The HuggingFace row of bench/prep: `slimtrain prep text --tokenizer tokenizer.json` at one rank
# against the tokenizers library (bench/prep/hf_text_peer.py: the CSV read, encode_batch with the
# library's parallelism off, h5py writing the same layout; the ids checked equal), on RECORDS
# records (100,000: fortunes, one in 40 a hard text in another script) with four tokenizers
# trained here: BERT's WordPiece, Llama 3's byte-level BPE, Llama 2's SentencePiece BPE (byte
# fallback) and T5's Unigram (Precompiled). Alternated, medians of REPS; each timed inside (prep
# from reading the tokenizer to the renamed file; the peer from loading the tokenizer to the
# closed file, and encode_batch alone). The target: prep's whole time at most encode_batch's
# alone, for every tokenizer.
# Usage: bench/prep/hf_text.sh [build-dir] [REPS]      Environment: RECORDS (100000)
set -euo pipefail
build=${1:-build}
reps=${2:-3}
records=${RECORDS:-100000}
bin=$build/apps/slimtrain
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
PY=${SLIMTRAIN_TORCH_PYTHON:-$root/.torch-venv/bin/python}
"$PY" -c "import tokenizers, h5py, sentencepiece, transformers" 2>/dev/null ||
  { echo "bench/prep hf_text: $PY lacks tokenizers/h5py/sentencepiece/transformers (scripts/install-deps.sh --torch pip)" >&2; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PY" "$here/hf_text_peer.py" make "$work" "$records" > /dev/null 2>&1 ||
  "$PY" "$here/hf_text_peer.py" make "$work" "$records"
kinds=(bert llama3 llama2 t5)
results=$work/results
: > "$results"
for ((r = 1; r <= reps; r++)); do
  for kind in "${kinds[@]}"; do
    line=$(mpirun -np 1 "$bin" prep text --train "$work/texts.csv" --text-column text \
      --label-column label --tokenizer "$work/$kind/tokenizer.json" --max-length 0 --force \
      -o "$work/s-$kind.h5" 2>&1 | grep "wrote ")
    peer=$("$PY" "$here/hf_text_peer.py" run "$work/$kind/tokenizer.json" "$work/texts.csv" "$work/p-$kind.h5")
    echo "$kind $(sed 's/.*, in \([0-9.]*\) s$/\1/' <<<"$line") $(sed 's/peer_s=\([0-9.]*\) encode_s=\([0-9.]*\) tokens=\([0-9]*\)/\1 \2 \3/' <<<"$peer")" >> "$results"
  done
done
for kind in "${kinds[@]}"; do "$PY" "$here/hf_text_peer.py" same "$work/s-$kind.h5" "$work/p-$kind.h5" > /dev/null; done
echo "same ids from prep text and the tokenizers library for ${kinds[*]}"
"$PY" - "$results" "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" "$records" "$("$PY" -c 'import tokenizers; print(tokenizers.__version__)')" <<'PYEND'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    kind, s, peer, encode, tokens = line.split()
    rows.setdefault(kind, []).append((float(s), float(peer), float(encode), int(tokens)))
print(f"prep text --tokenizer, {sys.argv[3]} records, 1 rank, on {sys.argv[2]}; tokenizers "
      f"{sys.argv[4]} encode_batch on 1 thread; medians of {len(next(iter(rows.values())))}")
print(f"{'tokenizer':10s}{'tokens':>10s}{'slimtrain (s)':>15s}{'peer (s)':>10s}{'encode_batch (s)':>18s}"
      f"{'peer/this':>11s}{'encode/this':>13s}")
worst = None
for kind, v in rows.items():
    s, peer, encode = (statistics.median(x[i] for x in v) for i in range(3))
    print(f"{kind:10s}{v[0][3]:10d}{s:15.3f}{peer:10.3f}{encode:18.3f}{peer / s:10.2f}x{encode / s:12.2f}x")
    worst = min(worst or encode / s, encode / s)
    print(f"RESULT prep_hf_text tokenizer={kind} ranks=1 slimtrain_s={s:.3f} peer_s={peer:.3f} "
          f"encode_batch_s={encode:.3f} ratio={peer / s:.2f} encode_ratio={encode / s:.2f} target=1.0")
print(f"RESULT prep_hf_text records={sys.argv[3]} ranks=1 min_encode_ratio={worst:.2f} target=1.0")
PYEND
