# Helpers for the train e2e scripts: sourced after lib.sh, not run.
PY=/usr/bin/python3
export OMP_NUM_THREADS=1
S=$SLIMTRAIN_BIN

# train_data DIR: DIR/data.h5 with 384 train and 203 test 1x8x8 uint8 images of 4 classes named
# a-d (class k: brighter rows 2k and 2k+1 under heavy noise). 203 is odd, so two ranks get
# shares of different sizes.
train_data() {
  "$PY" -c "import numpy" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks numpy"; exit 77; }
  "$PY" - "$1" <<'EOF' || return 1
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(2026)
for split, n in (("train", 384), ("test", 203)):
    y = rng.integers(0, 4, n)
    x = rng.integers(0, 200, (n, 8, 8))
    for i in range(n):
        x[i, 2 * y[i]:2 * y[i] + 2, :] += 70
    np.save(f"{d}/{split}-x.npy", x.astype(np.uint8))
    np.save(f"{d}/{split}-y.npy", y.astype(np.int64))
EOF
  "$S" prep npy --train-x "$1/train-x.npy" --train-y "$1/train-y.npy" --test-x "$1/test-x.npy" \
    --test-y "$1/test-y.npy" --class-names a,b,c,d -o "$1/data.h5" >/dev/null
}

# train_work [CLEANUP]: new_work (CLEANUP as there), holding train_data's data set, $D.
train_work() {
  new_work "$@"
  train_data "$work" || exit 1
  D=$work/data.h5
}

# cuda_or_skip: one training step on cuda:0 over $work/data.h5 (out and rc left as expect_rc
# leaves them); exits 77 with slimtrain's own reason where there is no usable GPU or no CUDA
# LibTorch.
cuda_or_skip() {
  out=$("$MPIEXEC" -np 1 "$S" train --device cuda --out "$work/probe" --data "$work/data.h5" \
    "${SMALL_JOB[@]}" --max-steps 1 2>&1)
  rc=$?
  if [ "$rc" -eq 2 ] && grep -q -e "no usable GPU" -e "built without CUDA" <<<"$out"; then
    echo "skipped: $(grep -o -e 'no usable GPU.*' -e 'this slimtrain.*built without CUDA.*' <<<"$out" | head -1)"
    exit 77
  fi
}

# The small job every script trains (with --max-steps): mlp, 2 x 16 samples per step, one thread.
SMALL_JOB=(--model mlp --mlp-widths 32,16 --batch-size 16 --threads 1 --log-every 4)

# field RUN EVENT EXPR: python EXPR over the last EVENT record `e` of RUN, printed.
field() { events "$1" "$2" | tail -n 1 | "$PY" -c "import json,sys; e=json.loads(sys.stdin.read()); print($3)"; }

# events RUN NAME: the RUN/metrics.jsonl lines whose event is NAME, one JSON object per line.
events() {
  [ -f "$1/metrics.jsonl" ] || return 0
  "$PY" - "$1/metrics.jsonl" "$2" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["event"] == sys.argv[2]:
        print(json.dumps(e, sort_keys=True))
EOF
}

# json_is JSON EXPR: the Python expression EXPR, over the parsed JSON as `e`, is true.
json_is() {
  "$PY" -c '
import json, sys
try:
    e = json.loads(sys.argv[1])
except ValueError:
    sys.exit(1)
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" || { echo "  not true: $2"; echo "  | ${1:0:400}"; return 1; }
}

# event_at RUN NAME STEP: the one NAME event at STEP (empty when there is none).
event_at() {
  events "$1" "$2" | "$PY" -c '
import json, sys
for line in sys.stdin:
    if json.loads(line).get("step") == int(sys.argv[1]):
        print(line.strip())' "$3"
}

# same_losses A B COUNT TOLERANCE [EVENT]: runs A and B logged COUNT losses each in their EVENT
# events (train), equal within TOLERANCE relative (the --shard modes against each other).
same_losses() {
  "$PY" - "$@" <<'EOF2'
import json, sys
event = sys.argv[5] if len(sys.argv) > 5 else "train"
def losses(run):
    return [e["loss"] for e in map(json.loads, open(run + "/metrics.jsonl")) if e.get("event") == event]
a, b = losses(sys.argv[1]), losses(sys.argv[2])
assert len(a) == len(b) == int(sys.argv[3]), (len(a), len(b))
worst = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b))
print(f"  {len(a)} logged losses, largest relative difference {worst:.1e}")
assert worst <= float(sys.argv[4]), worst
EOF2
}
