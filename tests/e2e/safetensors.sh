#!/usr/bin/env bash
# safetensors against HuggingFace's own library (the venv's Python, SLIMTRAIN_TORCH_PYTHON):
# - files it writes (every dtype slimtrain reads, metadata; a checkpoint sharded through
#   model.safetensors.index.json) are listed by `slimtrain inspect`, and read whole by
#   `inspect --validate`, which refuses a NaN;
# - `slimtrain export -o W.safetensors` loads with safetensors.torch.load_file, equal to the HDF5
#   export tensor for tensor, with format=pt in its metadata;
# - damaged files (truncated, overlapping offsets, a header length past the end, an unknown
#   dtype, a header that is not JSON) are exit 2 naming the file, and the reference library
#   refuses each too; a name given twice is refused here (the reference keeps one silently).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
[ -n "$PY2" ] && "$PY2" -c "import torch, safetensors, h5py" 2>/dev/null ||
  { echo "skipped: no Python with torch, safetensors and h5py (SLIMTRAIN_TORCH_PYTHON='$PY2'; scripts/install-deps.sh --torch pip makes .torch-venv)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
files="$SLIMTRAIN_SOURCE_DIR/tests/e2e/safetensors_files.py"
"$PY2" "$files" make "$work" || exit 1

check "a file safetensors.torch.save_file wrote" expect_rc 0 "$S" inspect "$work/one.safetensors"
check "  8 tensors, every dtype" contains "safetensors, 1 file, 8 tensors: BF16 16 elements (32 bytes) BOOL 3 elements (3 bytes) F16 4 elements (8 bytes) F32 41 elements (164 bytes) F64 4 elements (32 bytes) I64 8 elements (64 bytes) U8 5 elements (5 bytes)"
check "  the metadata" contains "metadata format: pt"
check "  each tensor's dtype and shape" contains "encoder.layer.0.output.dense.weight  BF16 \[4, 4\]"
check "  a scalar" contains "scalar  F32 \[\]"
check "  --validate reads every tensor" expect_rc 0 "$S" inspect --validate "$work/one.safetensors"
check "  valid" contains "valid: every tensor read"
check "a checkpoint sharded through its index (the folder given)" expect_rc 0 "$S" inspect --validate "$work/sharded"
check "  two files, the same 8 tensors" contains "safetensors, 2 files, 8 tensors"
check "a NaN under --validate: exit 2" expect_rc 2 "$S" inspect --validate "$work/nan.safetensors"
check "  naming the tensor" contains "nan.safetensors: tensor 'w' holds NaN or Inf"

# Damaged files: refused here and by the reference.
damaged() {  # damaged NAME MESSAGE
  check "$1: exit 2" expect_rc 2 "$S" inspect "$work/bad-$1.safetensors"
  check "  names the file: $2" contains "bad-$1.safetensors: $2"
  [ "$1" = twice ] || check "  the reference refuses it too" "$PY2" "$files" refused "$work/bad-$1.safetensors"
}
damaged truncated "the tensors end at byte [0-9]* but the file has [0-9]* (truncated?)"
damaged overlap "tensor 'b': data_offsets \[4, 12\] overlap the tensor before"
damaged length "the header length says [0-9]* bytes, past the end of the file"
damaged dtype "tensor 'w': unknown dtype 'F31'"
damaged json "the header is not JSON"
damaged twice "tensor 'w' is named twice in the header"

# A trained checkpoint exported as safetensors, against its HDF5 export.
make_data "$work" || exit 1
check "a short run" expect_rc 0 "$S" train --data "$work/data.h5" --model mlp --mlp-widths 32,16 \
  --batch-size 16 --threads 1 --max-steps 5 --eval-every 0 --final-split none --out "$work/run"
check "export -o weights.safetensors" expect_rc 0 "$S" export --checkpoint "$work/run" -o "$work/w.safetensors"
check "export -o weights.h5" expect_rc 0 "$S" export --checkpoint "$work/run" -o "$work/w.h5"
check "  load_file gives the HDF5 export's tensors, format=pt" "$PY2" "$files" same "$work/w.safetensors" "$work/w.h5"
check "  slimtrain reads its own file" expect_rc 0 "$S" inspect --validate "$work/w.safetensors"
check "an existing output without --force: exit 2" expect_rc 2 "$S" export --checkpoint "$work/run" -o "$work/w.safetensors"
finish
