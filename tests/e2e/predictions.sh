#!/usr/bin/env bash
# slimtrain eval --predictions OUT.h5: every sample's logits, predicted class and label in the
# split's row order, for an image model and a text model (layout 2); the same rows at np 1 and
# np 2; predicted = argmax(logits), labels = the split's, and their accuracy is the accuracy eval
# prints; an existing file is refused before any work unless --force, and nothing is left behind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
"$PY" -c "import h5py, numpy, sentencepiece" 2>/dev/null ||
  { echo "skipped: /usr/bin/python3 lacks h5py, numpy or sentencepiece"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make_data "$work" || exit 1
MPI=(timeout 120 "$MPIEXEC" -np 2)

agrees() {  # agrees PREDICTIONS DATA SPLIT JSON: the file against the data and eval's accuracy
  "$PY" - "$@" <<'EOF'
import h5py, json, sys
import numpy as np
p, d, split, printed = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
with h5py.File(p, "r") as f, h5py.File(d, "r") as data:
    logits, predicted, labels = f["logits"][()], f["predicted"][()], f["labels"][()]
    y = data[f"{split}/y"][()]
    n, c = logits.shape
    assert n == len(y) and c == int(data.attrs["num_classes"]), (logits.shape, len(y))
    assert (predicted == logits.argmax(1)).all(), "predicted is not the argmax"
    assert (labels == y).all(), "labels are not the split's, in its order"
    accuracy = float((predicted == labels).mean())
    assert abs(accuracy - printed["accuracy"]) < 1e-9, (accuracy, printed["accuracy"])
    assert f.attrs["split"] == split and int(f.attrs["step"]) == printed["step"]
    assert len(f.attrs["class_names"]) == c
print(f"{n} samples, {c} classes, accuracy {accuracy:.4f} as eval printed")
EOF
}

same_rows() {  # same_rows A B: the same predictions row for row (the files' bytes may differ)
  "$PY" - "$@" <<'EOF'
import h5py, sys
import numpy as np
with h5py.File(sys.argv[1], "r") as a, h5py.File(sys.argv[2], "r") as b:
    assert (a["predicted"][()] == b["predicted"][()]).all(), "predicted differs"
    assert (a["labels"][()] == b["labels"][()]).all(), "labels differ"
    gap = float(np.abs(a["logits"][()] - b["logits"][()]).max())
    assert gap < 1e-5, f"logits differ by {gap}"
print(f"same rows, logits within {gap:.1e}")
EOF
}

check "a short mlp run" expect_rc 0 "$S" train --data "$work/data.h5" --model mlp --mlp-widths 32,16 \
  --batch-size 16 --threads 1 --max-steps 20 --eval-every 0 --final-split none --out "$work/run"
check "eval --predictions at np 1" expect_rc 0 "$S" eval --data "$work/data.h5" --checkpoint "$work/run" \
  --split test --json --predictions "$work/p1.h5"
check "  logits, predicted and labels agree with the data and eval's accuracy" agrees "$work/p1.h5" "$work/data.h5" test "$(json_line)"
check "at np 2" expect_rc 0 "${MPI[@]}" "$S" eval --data "$work/data.h5" --checkpoint "$work/run" \
  --split test --json --predictions "$work/p2.h5"
check "  the same rows as np 1" same_rows "$work/p1.h5" "$work/p2.h5"
check "an existing file: exit 2" expect_rc 2 "$S" eval --data "$work/data.h5" --checkpoint "$work/run" \
  --split test --predictions "$work/p1.h5"
check "  naming it, before evaluating" eval 'contains "p1.h5" && ! grep -q "accuracy" <<<"$out"'
check "--force replaces it" expect_rc 0 "$S" eval --data "$work/data.h5" --checkpoint "$work/run" \
  --split train --predictions "$work/p1.h5" --force
check "  with the train split's rows" "$PY" -c "import h5py,sys; f=h5py.File(sys.argv[1]); assert f['logits'].shape[0] == 512 and f.attrs['split'] == 'train'" "$work/p1.h5"
check "  nothing else left beside it" test "$(ls -A "$work" | grep -c '^\.')" = 0

# A text model: layout 2, ragged inputs.
mkdir -p "$work/text" && "$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/text_files.py" inputs "$work/text" || exit 1
check "a text file" expect_rc 0 "$S" prep text --train "$work/text/train.csv" --test "$work/text/test.csv" \
  --text-column text --label-column topic --vocab-size 60 -o "$work/text.h5"
check "  a short text-bow run" expect_rc 0 "$S" train --data "$work/text.h5" --model text-bow \
  --batch-size 16 --threads 1 --max-steps 20 --eval-every 0 --final-split none --out "$work/text-run"
check "  eval --predictions at np 2" expect_rc 0 "${MPI[@]}" "$S" eval --data "$work/text.h5" \
  --checkpoint "$work/text-run" --split test --json --predictions "$work/text-p.h5"
check "  agrees with the data and eval's accuracy" agrees "$work/text-p.h5" "$work/text.h5" test "$(json_line)"
finish
