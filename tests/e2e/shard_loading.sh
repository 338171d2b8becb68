#!/usr/bin/env bash
# --shard parameters reading an hf checkpoint into shards: a Qwen2 (hidden 1024, 2 layers,
# 32,000 tokens: 66M parameters) in bfloat16 save_pretrained files of at most 40 MB, made by
# bench/memory_plan/make.py. Each rank reads only its slices: losses equal to --shard gradients
# (which loads the whole model on rank 0 and broadcasts it) at np 2 and np 3 (pieces that cut
# tensors anywhere); a rank's loading peak under its shard and one tensor where --shard
# gradients' is above the whole weights; a truncated file is exit 2 naming it; a run resumes at
# another size, each rank reading its own elements of the checkpoint; export --hf of it holds
# one tensor at a time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
[ -n "$PY2" ] && "$PY2" -c "import torch, transformers, safetensors, h5py" 2>/dev/null ||
  { echo "skipped: no Python with torch, transformers, safetensors and h5py (SLIMTRAIN_TORCH_PYTHON='$PY2'; scripts/install-deps.sh --torch pip makes .torch-venv)"; exit 77; }
new_work
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
M=$work/model
"$PY2" "$SLIMTRAIN_SOURCE_DIR/bench/memory_plan/make.py" "$M" 2 32 hidden=1024 intermediate=4096 \
  heads=8 kv_heads=2 dtype=bfloat16 shard=40MB >"$work/make.log" 2>&1 || { cat "$work/make.log"; exit 1; }
np() { timeout 180 "$MPIEXEC" --oversubscribe -np "$@"; }
recipe=(train --data "$M/text.h5" --optimizer adamw --lr 1e-4 --batch-size 2 --threads 1
  --log-every 2 --seed 3 --eval-every 0 --final-split none)
memory() { field "$1" done "e['memory']['$2']"; }

check "files of at most 40 MB with an index" test -f "$M/model.safetensors.index.json"
for ranks in 2 3; do
  for mode in gradients parameters; do
    check "np $ranks --shard $mode" expect_rc 0 np "$ranks" "$S" "${recipe[@]}" --model "hf:$M" \
      --max-steps 10 --checkpoint-every 0 --shard "$mode" --out "$work/np$ranks-$mode"
  done
  check "  the same losses" same_losses "$work/np$ranks-gradients" "$work/np$ranks-parameters" 5 1e-6
done
# The loading peak (the done event's, from the start of the model to its weights in place):
# --shard gradients' rank 0 holds the model whole; a --shard parameters rank its shard and one
# tensor (the embeddings: 32,000 x 1024, made and freed while the model is built, or read).
whole=$(memory "$work/np2-gradients" weights_bytes)
tensor=$((32000 * 1024 * 4))
for ranks in 2 3; do
  echo "  np $ranks loading peaks above the baseline: gradients $(memory "$work/np$ranks-gradients" loading_peak_above_baseline_bytes), parameters $(memory "$work/np$ranks-parameters" loading_peak_above_baseline_bytes) bytes; the fp32 weights $whole"
  check "np $ranks: --shard gradients' loading peak is above the weights" \
    json_is "$(memory "$work/np$ranks-gradients" loading_peak_above_baseline_bytes)" "e > $whole"
  check "  --shard parameters' is under its shard and one tensor" \
    json_is "$(memory "$work/np$ranks-parameters" loading_peak_above_baseline_bytes)" "e < $whole / $ranks + $tensor"
done

check "np 2 --shard parameters, checkpointing" expect_rc 0 np 2 "$S" "${recipe[@]}" \
  --model "hf:$M" --shard parameters --max-steps 6 --checkpoint-every 6 --out "$work/resumed"
check "  resumed at np 3 to step 10" expect_rc 0 np 3 "$S" "${recipe[@]}" --model "hf:$M" \
  --shard parameters --max-steps 10 --checkpoint-every 0 --resume auto --out "$work/resumed"
check "    from step 6" contains "resumed from .* at step 6"
check "    to step 10" json_is "$(events "$work/resumed" done | tail -n 1)" 'e["step"] == 10'

# export --hf reads the checkpoint's weights one tensor at a time: its peak above inspect's (the
# same libraries, no weights read) stays under the weights (loaded whole, it was twice them).
peak_of() {
  "$PY" -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)' "$@"
}
exported=$(peak_of "$S" export --hf --checkpoint "$work/resumed" -o "$work/exported") || exported=
base=$(peak_of "$S" inspect "$work/resumed/checkpoints/latest") || base=
echo "  export --hf peak resident ${exported:-?} bytes, inspect's ${base:-?}; the weights $whole"
check "export --hf of it holds less than the weights beside what inspect holds" \
  test "$((${exported:-0} - ${base:-0}))" -gt 0 -a "$((${exported:-0} - ${base:-0}))" -lt "$whole"
check "  from_pretrained loads it" "$PY2" -c "from transformers import AutoModelForSequenceClassification as A; A.from_pretrained('$work/exported')"

cp -r "$M" "$work/cut"
last=$(ls "$work/cut"/model-*.safetensors | tail -n 1)
truncate -s -4096 "$last"
check "a truncated file: exit 2" expect_rc 2 np 2 "$S" "${recipe[@]}" --model "hf:$work/cut" \
  --max-steps 10 --shard parameters --out "$work/cut-run"
check "  naming it" contains "$(basename "$last")"
finish
