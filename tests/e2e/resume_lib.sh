# Helpers for the resume and signal e2e scripts: sourced after lib.sh, not run.
PY=/usr/bin/python3
export OMP_NUM_THREADS=1

# make_data DIR [SIZE [N_TRAIN]]: DIR/data.h5, N_TRAIN (512) train and 128 test 1xSIZExSIZE (8)
# uint8 images of 4 classes (a class is a brighter quadrant in noise, so the models learn),
# written with small chunks so the stream reader crosses many blocks.
make_data() {
  "$PY" -c "import numpy" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks numpy"; exit 77; }
  "$PY" - "$1" "${2:-8}" "${3:-512}" <<'EOF' || return 1
import sys
import numpy as np
d, size, n_train = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
h = size // 2
rng = np.random.default_rng(5)
for split, n in (("train", n_train), ("test", 128)):
    y = rng.integers(0, 4, n)
    x = rng.integers(0, 200, (n, 1, size, size))
    for i in range(n):
        r, c = divmod(int(y[i]), 2)
        x[i, 0, h * r:h * r + h, h * c:h * c + h] += 50
    np.save(f"{d}/{split}-x.npy", x.astype(np.uint8))
    np.save(f"{d}/{split}-y.npy", y.astype(np.int64))
EOF
  local log
  log=$("$SLIMTRAIN_BIN" prep npy --train-x "$1/train-x.npy" --train-y "$1/train-y.npy" \
    --test-x "$1/test-x.npy" --test-y "$1/test-y.npy" --chunk-bytes 2048 -o "$1/data.h5" 2>&1) ||
    { echo "$log"; return 1; }
}

# resume_work: $job empty, new_work killing the job still running at exit (kill_job), and the
# shell in $work, which holds make_data's data.h5.
resume_work() {
  job=
  new_work '[ -n "$job" ] && kill_job'
  cd "$work" || exit 1
  make_data "$work" || { echo "cannot make the test data"; exit 1; }
}

# start_job LOG mpirun-args...: starts mpirun in a session of its own (so the whole job can be
# killed as one process group) and sets $job to its pid.
start_job() {
  local log=$1; shift
  setsid "$MPIEXEC" "$@" >"$log" 2>&1 &
  job=$!
}

# wait_until SECONDS command...: polls every 0.1 s; false when the time runs out.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# rank_pid RANK: pid of that MPI rank among the children of mpirun $job.
rank_pid() {
  local p
  for p in $(pgrep -P "$job"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1"; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# kill_job: kill -9 of mpirun's whole process group (every rank), then reaps mpirun.
kill_job() {
  kill -9 -- "-$job" 2>/dev/null
  wait "$job" 2>/dev/null
  true
}

# latest_is RUN STEP: RUN/checkpoints/latest names step STEP.
latest_is() {
  grep -q "step-$(printf %08d "$2")" "$1/checkpoints/latest" 2>/dev/null
}

# killed_run RUN STEP CHECKPOINT args...: rank 1 hangs before step STEP (so the kill lands at a
# known point, after the checkpoint at CHECKPOINT is complete), then every rank gets kill -9.
killed_run() {
  local run=$1 step=$2 ckpt=$3; shift 3
  SLIMTRAIN_INJECT="rank=1,phase=train,step=$step,action=hang" \
    start_job "$run.log" -np 2 "$SLIMTRAIN_BIN" train --data data.h5 --threads 1 --out "$run" --resume none "$@"
  wait_until 60 grep -qs "fault injection" "$run.log" && wait_until 30 latest_is "$run" "$ckpt"
  local reached=$?
  kill_job
  job=
  [ "$reached" -eq 0 ] || { sed 's/^/  | /' "$run.log" | tail -20; return 1; }
}

# same_weights RUN_A RUN_B STEP: the two runs' checkpoints at STEP hold byte-identical tensors
# (every parameter and buffer). The optimiser blob is not compared byte for byte: LibTorch keys
# its state by tensor addresses, which differ between processes; a wrong momentum or Adam moment
# shows up in the parameters of the steps after the resume.
same_weights() {
  cmp "$1/checkpoints/step-$(printf %08d "$3")/tensors.bin" \
      "$2/checkpoints/step-$(printf %08d "$3")/tensors.bin"
}

# within RUN_A RUN_B STEP TOLERANCE: every weight of the two runs' checkpoints at STEP within
# TOLERANCE of the other's, relative to the largest magnitude of its tensor.
within() {
  "$PY" - "$1/checkpoints/step-$(printf %08d "$3")" "$2/checkpoints/step-$(printf %08d "$3")" "$4" <<'EOF'
import json, sys
import numpy as np
def load(d):
    m = json.load(open(d + "/manifest.json"))
    raw = open(d + "/tensors.bin", "rb").read()
    return {t["name"]: np.frombuffer(raw[t["offset"]:t["offset"] + t["nbytes"]], np.float32)
            for t in m["tensors"]}
a, b = load(sys.argv[1]), load(sys.argv[2])
assert a.keys() == b.keys() and a
worst = max(float(np.abs(a[n] - b[n]).max() / max(np.abs(a[n]).max(), 1e-12)) for n in a)
print(f"  largest relative difference over {len(a)} tensors: {worst:.2e}")
sys.exit(0 if worst <= float(sys.argv[3]) else 1)
EOF
}

# event_field RUN EVENT FIELD: FIELD of the last EVENT line in RUN/metrics.jsonl.
event_field() {
  "$PY" - "$1/metrics.jsonl" "$2" "$3" <<'EOF'
import json, sys
value = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == sys.argv[2]:
        value = e.get(sys.argv[3])
print(json.dumps(value))
EOF
}

# losses_hold RUN CHECKS: RUN's training losses by step (`loss`, from its train events), printed
# around the resumes of a 200-step chain, then the Python CHECKS (assert lines) run over them.
losses_hold() {
  "$PY" - "$1/metrics.jsonl" "$2" <<'EOF'
import json, sys
loss = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "train":
        loss[e["step"]] = e["loss"]
print("  loss at", {s: round(loss[s], 3) for s in (10, 50, 60, 100, 110, 150, 160, 200) if s in loss})
exec(sys.argv[2])
EOF
}
