#!/usr/bin/env bash
# A user's own TorchScript classifier, written by python3-torch here (torchscript_models.py),
# trained at np 2 behind the slim boundary: a HuggingFace-style tuple with hidden states (dropped
# and named once, the evaluation still sends (2 + C^2) x 8 bytes, --strict-slim refuses it), a dict
# output, a CNN with BatchNorm and Dropout (kill -9 + resume bit-identical), a frozen backbone
# (untouched), bool and int32 buffers, tied weights (counted and updated once, as a PyTorch loop
# does); export --torchscript reproduces slimtrain eval in Python; export --embeddings with
# and without an embed method; bad files exit 2 naming them; the same module trained by a plain
# PyTorch loop follows slimtrain's loss trajectory for 50 steps.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
"$PY" -c "import torch, h5py" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks torch or h5py"; exit 77; }
work=$(mktemp -d)
job=
trap '[ -n "$job" ] && kill_job; rm -rf "$work"' EXIT
train_data "$work" || exit 1
D=$work/data.h5
M=$work/models
mkdir -p "$M"
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/torchscript_models.py" "$M" 1 8 8 4 || exit 1
CHECK=("$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/torchscript_check.py")
MPI=(timeout 120 "$MPIEXEC" -np 2)
job_args=(--data "$D" --batch-size 16 --threads 1 --log-every 4)

R=$work/hf
check "HuggingFace-style module at np 2" expect_rc 0 "${MPI[@]}" "$S" train "${job_args[@]}" \
  --model "torchscript:$M/hf.pt" --out "$R" --max-steps 12 --eval-every 4 --checkpoint-every 4
check "  one warning naming what was dropped at the slim boundary" \
  contains "r0 WARN  forward returned 2 outputs beside the logits: \[0\] float32 \[\] (4 B), \[2\] float32 \[16,16,32\] (32.0 KiB): dropped at the slim boundary, they never reach a collective"
check "  named once" test "$(grep -c "beside the logits" <<<"$out")" -eq 1
check "  the start event records them" json_is "$(events "$R" start)" \
  'e["dropped_outputs"] == ["[0] float32 [] (4 B)", "[2] float32 [16,16,32] (32.0 KiB)"]'
check "  the evaluation sends (2 + 3*4 + 4*4) x 8 bytes, the hidden states nothing" \
  json_is "$(event_at "$R" eval 4)" 'e["bytes_sent"] == 240 and e["count"] == 203'
check "--strict-slim refuses it, exit 2" expect_rc 2 "$S" train "${job_args[@]}" \
  --model "torchscript:$M/hf.pt" --out "$work/strict" --strict-slim
check "  with the same list" contains "--strict-slim: .*hf.pt's forward returns 2 outputs beside the logits: \[0\] float32 \[\] (4 B), \[2\] float32 \[16,16,32\]"
check "  and no run directory" test ! -e "$work/strict"
check "--model-loss trains on the module's own loss" expect_rc 0 "${MPI[@]}" "$S" train \
  "${job_args[@]}" --model "torchscript:$M/hf.pt" --out "$work/hf-loss" --max-steps 4 --model-loss
check "  and only the hidden states are dropped" contains "forward returned 1 output beside the logits: \[2\] float32"

check "export --torchscript" expect_rc 0 "$S" export --torchscript --checkpoint "$R" -o "$work/trained.pt"
check "slimtrain eval of the checkpoint" expect_rc 0 "$S" eval --data "$D" --checkpoint "$R" --json
ours=$(tail -1 <<<"$out")
check "torch.jit.load of trained.pt in Python on the test split" expect_rc 0 "${CHECK[@]}" eval "$work/trained.pt" "$D" test
theirs=$(tail -1 <<<"$out")
check "  gives slimtrain's accuracy and loss" json_is "[$ours, $theirs]" \
  'e[0]["accuracy"] == e[1]["accuracy"] and abs(e[0]["loss"] - e[1]["loss"]) < 1e-5 and e[0]["count"] == e[1]["count"] == 203'
check "export --embeddings of a module with embed" expect_rc 0 "$S" export --embeddings --checkpoint "$R" --data "$D" -o "$work/emb.h5"
check "  203 rows" contains "exported 203 embeddings"

R=$work/dict
check "dict output at np 2" expect_rc 0 "${MPI[@]}" "$S" train "${job_args[@]}" \
  --model "torchscript:$M/dict.pt" --out "$R" --max-steps 8
check "  'features' dropped, named" contains "forward returned 1 output beside the logits: 'features' float32 \[16,24\]"
check "export --embeddings of a module without embed exits 2" expect_rc 2 "$S" export --embeddings --checkpoint "$R" --data "$D" -o "$work/none.h5"
check "  saying what to add" contains "has no embed method; add \`def embed(self, x) -> Tensor\`"
check "--logits-output naming a wrong output exits 2" expect_rc 2 "$S" train "${job_args[@]}" \
  --model "torchscript:$M/dict.pt" --out "$work/wrong" --logits-output features
check "  naming its shape" contains "logits (output 'features') of shape \[16,24\] for a batch of 16 and 4 classes; expected \[16,4\]"

printf 'model = torchscript:%s\nlogits-output = logits\n' "$M/dict.pt" >"$work/dict.ini"
check "an INI file names the module too" expect_rc 0 "$S" train "${job_args[@]}" \
  --config "$work/dict.ini" --out "$work/dict-ini" --max-steps 2
check "  and it is the one trained" contains "model torchscript:$M/dict.pt input \[1,8,8\] classes 4"

R=$work/frozen
check "a frozen backbone at np 2" expect_rc 0 "${MPI[@]}" "$S" train "${job_args[@]}" \
  --model "torchscript:$M/frozen.pt" --out "$R" --max-steps 8
check "  the parameter count says how many train" contains "2212 parameters (132 trainable)"
check "  weights export" expect_rc 0 "$S" export --checkpoint "$R" -o "$work/frozen.h5"
check "  the backbone did not move, the head did" "$PY" - "$M/frozen.pt" "$work/frozen.h5" <<'EOF'
import sys, h5py, torch
module = torch.jit.load(sys.argv[1])
with h5py.File(sys.argv[2]) as f:
    assert torch.equal(torch.from_numpy(f["backbone.weight"][()]), module.backbone.weight), "moved"
    assert not torch.equal(torch.from_numpy(f["head.weight"][()]), module.head.weight), "head still"
EOF

# Buffers that are neither float nor int64 (DDP broadcasts every buffer; so does slimtrain, as
# bytes): a bool causal mask and int32 position ids.
R=$work/buffers
check "bool and int32 buffers at np 2" expect_rc 0 "${MPI[@]}" "$S" train "${job_args[@]}" \
  --model "torchscript:$M/buffers.pt" --out "$R" --max-steps 8 --eval-every 4
check "  trained and evaluated every sample" json_is "$(events "$R" done)" 'e["final"]["count"] == 203'
check "  export --torchscript" expect_rc 0 "$S" export --torchscript --checkpoint "$R" -o "$work/buffers-trained.pt"
check "  keeps both buffers as they were" "$PY" - "$M/buffers.pt" "$work/buffers-trained.pt" <<'EOF'
import sys, torch
before, after = torch.jit.load(sys.argv[1]), torch.jit.load(sys.argv[2])
for name in ("causal", "positions"):
    a, b = getattr(before, name), getattr(after, name)
    assert a.dtype == b.dtype and torch.equal(a, b), name
EOF

# Tied weights: one tensor under two names is counted, reduced and updated once; the PyTorch
# loop (which updates it once) ends at the same weights.
R=$work/tied
check "tied weights at np 2, 50 steps" expect_rc 0 "${MPI[@]}" "$S" train --data "$D" \
  --batch-size 16 --threads 1 --log-every 10 --model "torchscript:$M/tied.pt" --out "$R" \
  --max-steps 50 --schedule constant --lr 0.05 --momentum 0.9 --seed 42
check "  counts the shared weight once" contains "1380 parameters"
check "  weights export" expect_rc 0 "$S" export --checkpoint "$R" -o "$work/tied.h5"
check "  the same 50 steps in one Python process" expect_rc 0 \
  "${CHECK[@]}" peer "$M/tied.pt" "$D" 50 2 16 0.05 0.9 42 "$work/tied.h5"
check "  end at the same weights within 1e-5 (6 tensors: the tied one once)" \
  json_is "$(tail -1 <<<"$out")" 'e["max_rel_diff"] < 1e-5 and e["tensors"] == 6'

# BatchNorm and Dropout: killed with -9 after the step-8 checkpoint, resumed, bit-identical.
bn=(--model "torchscript:$M/bn.pt" --max-steps 24 --checkpoint-every 4 --eval-every 8)
check "BatchNorm + Dropout reference run, 24 steps" expect_rc 0 "${MPI[@]}" "$S" train "${job_args[@]}" \
  "${bn[@]}" --out "$work/bn-ref" --resume none
SLIMTRAIN_INJECT="rank=1,phase=train,step=11,action=hang" \
  start_job "$work/bn-kill.log" -np 2 "$S" train "${job_args[@]}" "${bn[@]}" --out "$work/bn" --resume none
wait_until 60 grep -qs "fault injection" "$work/bn-kill.log" && wait_until 30 latest_is "$work/bn" 8
reached=$?
kill_job
job=
check "kill -9 of every rank after the step-8 checkpoint" test "$reached" -eq 0
check "  resumed with --resume auto" expect_rc 0 "${MPI[@]}" "$S" train "${job_args[@]}" "${bn[@]}" --out "$work/bn"
check "  from step 8" contains "resumed from .*step-00000008 at step 8"
check "  bit-identical parameters and BatchNorm statistics at step 24" same_weights "$work/bn-ref" "$work/bn" 24

# The module file moved: the checkpoint still names the old path; --model says where it is.
mv "$M/hf.pt" "$M/hf-moved.pt"
check "eval after the module file moved exits 2" expect_rc 2 "$S" eval --data "$D" --checkpoint "$work/hf"
check "  naming the file" contains "torchscript:$M/hf.pt: no such file"
check "  --model torchscript:NEW says where it is" expect_rc 0 "$S" eval --data "$D" --checkpoint "$work/hf" --model "torchscript:$M/hf-moved.pt" --json
mv "$M/hf-moved.pt" "$M/hf.pt"

check "a missing module file exits 2" expect_rc 2 "$S" train "${job_args[@]}" --model "torchscript:$M/none.pt" --out "$work/x"
check "  naming it" contains "torchscript:$M/none.pt: no such file"
echo "not a module" >"$M/text.pt"
check "a file that is not TorchScript exits 2" expect_rc 2 "$S" train "${job_args[@]}" --model "torchscript:$M/text.pt" --out "$work/x"
check "  naming it and why" contains "torchscript:$M/text.pt: not a TorchScript module"
"$PY" - "$M/plain.pt" "$M/newer.pt" <<'EOF'
import sys, zipfile
# A module as a newer PyTorch saves it: the same archive declaring file format version 99.
with zipfile.ZipFile(sys.argv[1]) as src, zipfile.ZipFile(sys.argv[2], "w") as dst:
    for info in src.infolist():
        data = src.read(info.filename)
        dst.writestr(info, b"99\n" if info.filename.endswith("/version") and "/.data/" not in info.filename else data)
EOF
check "a module saved by a newer PyTorch exits 2" expect_rc 2 "$S" train "${job_args[@]}" --model "torchscript:$M/newer.pt" --out "$work/x"
check "  saying so, with both versions" contains "torchscript:$M/newer.pt: saved by a newer PyTorch than this LibTorch .*: file format version 99, this LibTorch reads versions up to [0-9]*; save the module with PyTorch"
mkdir -p "$M/rgb"
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/torchscript_models.py" "$M/rgb" 3 8 8 4
check "a module built for another input shape exits 2" expect_rc 2 "$S" train "${job_args[@]}" --model "torchscript:$M/rgb/bn.pt" --out "$work/x"
check "  naming the file, the batch and the problem" contains "rgb/bn.pt: forward failed on a batch of shape \[16,1,8,8\]: RuntimeError: .*expected input\[16, 1, 8, 8\] to have 3 channels"
check "resuming with another module exits 2" expect_rc 2 "$S" train "${job_args[@]}" --model "torchscript:$M/wide.pt" --out "$work/hf" --max-steps 20
check "  naming the first difference" contains "first difference: 'encoder.weight' has shape \[32, 64\] in the checkpoint and \[40, 64\] in the model"
check "  and nothing was left behind" test ! -e "$work/x"

# The peer: the same module, weights, data order and SGD in a plain PyTorch loop.
R=$work/peer
check "50 steps at np 2, logging every step" expect_rc 0 "${MPI[@]}" "$S" train --data "$D" \
  --batch-size 16 --threads 1 --log-every 1 --model "torchscript:$M/plain.pt" --out "$R" \
  --max-steps 50 --schedule constant --lr 0.05 --momentum 0.9 --seed 42
check "the same 50 steps in one Python process (the 2-rank global batch)" expect_rc 0 \
  "${CHECK[@]}" peer "$M/plain.pt" "$D" 50 2 16 0.05 0.9 42
peer_losses=$(tail -1 <<<"$out")
slim_losses=$(events "$R" train | "$PY" -c 'import json, sys; print(json.dumps([json.loads(l)["loss"] for l in sys.stdin]))')
check "  the same loss trajectory within float tolerance" json_is "[$peer_losses, $slim_losses]" \
  'len(e[0]) == len(e[1]) == 50 and max(abs(a - b) / abs(a) for a, b in zip(*e)) < 1e-4 and e[1][-1] < e[1][0]'
finish
