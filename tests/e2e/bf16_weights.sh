#!/usr/bin/env bash
# --weights bf16 (master_weights.hpp): an mlp and a cnn-small (with --grad-accum) trained at np 2 with their
# weights in bfloat16 and float32 masters in the optimizer reach the accuracy of fp32 runs of the
# same steps (within the tests' noise), a vit-tiny's loss follows fp32's, a cnn-bn trains (its
# BatchNorm weights kept float32); a run killed mid-way and resumed ends bit-identical to an
# uninterrupted one (the checkpoints hold the float32 masters, not their bf16 rounding); the
# options it cannot go with are exit 2 naming them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
if ! grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo; then
  echo "skipped: this CPU has no native bf16 (avx512_bf16 or amx_bf16): --precision bf16 is refused on it"
  exit 77
fi
resume_work
S=$SLIMTRAIN_BIN
train() { "$MPIEXEC" -np 2 "$S" train --data data.h5 --threads 1 "$@"; }
accuracy() { "$PY" -c "import json,sys; print(json.loads(sys.argv[1])['accuracy'])" "$(event_field "$1" done test)"; }

mlp=(--model mlp --batch-size 16 --epochs 4 --optimizer adamw --lr 0.003 --schedule constant
     --eval-every 0 --log-every 8 --checkpoint-every 8 --keep-last 8 --data-mode memory)
check "mlp fp32: 64 steps" expect_rc 0 train "${mlp[@]}" --out F --resume none
check "mlp --weights bf16: 64 steps" expect_rc 0 train "${mlp[@]}" --precision bf16 --weights bf16 --out A --resume none
check "  says what it holds where" contains "weights bf16: [0-9]* trained values held in bfloat16, their float32 masters"
fp32=$(accuracy F) bf16=$(accuracy A)
echo "  test accuracy: fp32 $fp32, --weights bf16 $bf16"
check "  learns (accuracy above 0.8)" "$PY" -c "assert $bf16 > 0.8"
check "  as fp32 does (within 5 points)" "$PY" -c "assert abs($bf16 - $fp32) <= 0.05"

# The checkpoint holds float32 values that bf16 cannot (the masters), not the weights' rounding.
check "  export of its checkpoint" expect_rc 0 "$S" export --checkpoint A -o A.safetensors
check "  the exported weights are float32 masters, finer than bf16" "$PY" - A.safetensors <<'PYEOF'
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
finer = 0
for name, t in head.items():
    if name == "__metadata__":
        continue
    assert t["dtype"] == "F32", (name, t["dtype"])
    a, b = t["data_offsets"]
    bits = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.uint32)
    finer += int(np.count_nonzero(bits & 0xFFFF))
assert finer > 0, "every value is a bf16 value: the checkpoint holds the weights, not the masters"
print(f"  {finer} values below bf16's resolution")
PYEOF

check "mlp --weights bf16: killed run (-9 at step 21)" killed_run B 21 16 "${mlp[@]}" --precision bf16 --weights bf16
check "  resume auto to 64" expect_rc 0 train "${mlp[@]}" --precision bf16 --weights bf16 --out B --resume auto
check "    from step 16" contains "resumed from .*step-00000016 at step 16"
check "  final weights bit-identical to the uninterrupted run" same_weights A B 64
# Negative control: resuming into bf16 weights from the rounding would differ.
differs() { ! same_weights "$@"; }
check "  (and a run in fp32 weights ends elsewhere)" differs A F 64

cnn=(--model cnn-small --batch-size 16 --epochs 8 --optimizer sgd --lr 0.02 --momentum 0.9
     --grad-accum 2 --eval-every 0 --log-every 16 --checkpoint-every 0 --data-mode memory)
check "cnn-small --weights bf16, --grad-accum 2 (micro-batches add up in float32)" expect_rc 0 \
  train "${cnn[@]}" --precision bf16 --weights bf16 --out C16 --resume none
check "cnn-small fp32" expect_rc 0 train "${cnn[@]}" --out C32 --resume none
c16=$(accuracy C16) c32=$(accuracy C32)
echo "  test accuracy: fp32 $c32, --weights bf16 $c16"
check "  learns (accuracy above 0.8)" "$PY" -c "assert $c16 > 0.8"
check "  as fp32 does (within 5 points)" "$PY" -c "assert abs($c16 - $c32) <= 0.05"

# BatchNorm's weights stay float32 (LibTorch's batch_norm does not mix bf16 weights with its
# float32 running statistics); the convolutions' are bf16. Its checkpoint evaluates in bf16 too.
check "cnn-bn --weights bf16, 8 steps" expect_rc 0 train --model cnn-bn --batch-size 16 \
  --max-steps 8 --eval-every 0 --checkpoint-every 0 --precision bf16 --weights bf16 --out BN --resume none
check "  says what stays float32" contains "of BatchNorm layers stay float32"
check "  eval --precision bf16 of its checkpoint" expect_rc 0 "$S" eval --data data.h5 --checkpoint BN \
  --precision bf16 --threads 1

# A transformer's layer norms and attention with bf16 weights: vit-tiny's training loss follows
# fp32's (it does not generalise from these 512 samples in either precision).
vit=(--model vit-tiny --vit-patch 4 --batch-size 16 --epochs 4 --optimizer adamw --lr 0.001
     --eval-every 0 --log-every 64 --checkpoint-every 0 --final-split none --data-mode memory)
check "vit-tiny --weights bf16" expect_rc 0 train "${vit[@]}" --precision bf16 --weights bf16 --out V16 --resume none
check "vit-tiny fp32" expect_rc 0 train "${vit[@]}" --out V32 --resume none
v16=$(event_field V16 train loss) v32=$(event_field V32 train loss)
echo "  last training loss: fp32 $v32, --weights bf16 $v16"
check "  within 0.05 of fp32's" "$PY" -c "assert abs($v16 - $v32) <= 0.05"

check "--weights bf16 with --precision fp32 is exit 2" expect_rc 2 train "${mlp[@]}" --weights bf16 --out X
check "  naming both" contains "weights bf16 needs --precision bf16"
check "--weights bf16 with --shard optimizer is exit 2" expect_rc 2 train "${mlp[@]}" --precision bf16 --weights bf16 --shard optimizer --out X
check "  naming --shard" contains "weights bf16 with --shard optimizer"
check "  nothing written" test ! -e X
check "--weights fp16 is exit 2" expect_rc 2 train "${mlp[@]}" --weights fp16 --out X
finish
