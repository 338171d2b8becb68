#!/usr/bin/env bash
# The images row of bench/prep: Fashion-MNIST's test split as 10000 PNG and JPEG files (written
# here with python3-pil), converted to 1 x 32 x 32 by `slimtrain prep images` at 1 and 2 ranks
# and by the Python peer (PIL + h5py, 1 and 2 worker processes), alternated, medians of REPS.
# Usage: bench/prep/images.sh [build-dir] [REPS]
set -euo pipefail
build=${1:-build}
reps=${2:-3}
bin=$build/apps/slimtrain
PY=/usr/bin/python3
here=$(dirname "$0")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
"$PY" -c "import numpy, h5py, PIL" 2>/dev/null || { echo "bench/prep images: /usr/bin/python3 lacks numpy/h5py/PIL" >&2; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$PY" "$here/images.py" make "$work/img"
results=$work/results
: > "$results"
now() { date +%s.%N; }
for ((r = 1; r <= reps; r++)); do
  for np in 1 2; do
    start=$(now)
    line=$(mpirun -np $np "$bin" prep images --train "$work/img" --size 32x32 --channels 1 --force -o "$work/s.h5" 2>&1 | grep "wrote ")
    echo "slimtrain-np$np $(sed 's/.*, in \([0-9.]*\) s$/\1/' <<<"$line") $(echo "$(now) - $start" | bc)" >> "$results"
    start=$(now)
    line=$("$PY" "$here/images.py" peer "$work/img" "$work/p.h5" 32x32 $np)
    echo "peer-w$np $(sed 's/peer_s=\([0-9.]*\) .*/\1/' <<<"$line") $(echo "$(now) - $start" | bc)" >> "$results"
  done
done
"$PY" - "$results" <<'PYEND'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, inner, wall = line.split()
    rows.setdefault(name, []).append((float(inner), float(wall)))
med = {k: (statistics.median(a for a, _ in v), statistics.median(b for _, b in v)) for k, v in rows.items()}
print("prep images: 10000 Fashion-MNIST files (half PNG, half JPEG) -> 1 x 32 x 32 uint8, medians")
print(f"{'':32s}{'timed inside (s)':>18s}{'whole command (s)':>19s}")
labels = {"slimtrain-np1": "slimtrain prep images, 1 rank", "slimtrain-np2": "slimtrain prep images, 2 ranks",
          "peer-w1": "Python peer (PIL + h5py), 1 process", "peer-w2": "Python peer, Pool(2)"}
for k in ("slimtrain-np1", "slimtrain-np2", "peer-w1", "peer-w2"):
    print(f"{labels[k]:38s}{med[k][0]:12.3f}{med[k][1]:19.3f}")
best_peer = min(med["peer-w1"][0], med["peer-w2"][0])
ratio = best_peer / med["slimtrain-np2"][0]
wall_ratio = min(med["peer-w1"][1], med["peer-w2"][1]) / med["slimtrain-np2"][1]
print("(timed inside: after the imports / from the sources' listing to the renamed file; the whole")
print(" command adds Python's imports, or mpirun and loading slimtrain's one binary with LibTorch)")
print(f"RESULT prep_images ranks=2 slimtrain_s={med['slimtrain-np2'][0]:.3f} peer_s={best_peer:.3f} "
      f"ratio={ratio:.2f} target=3 ranks1_s={med['slimtrain-np1'][0]:.3f} "
      f"wall_slimtrain_s={med['slimtrain-np2'][1]:.3f} wall_ratio={wall_ratio:.2f}")
PYEND
