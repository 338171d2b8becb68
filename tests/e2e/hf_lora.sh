#!/usr/bin/env bash
# --lora against PEFT (the venv's Python, SLIMTRAIN_TORCH_PYTHON, with peft), on small random
# checkpoints transformers writes (tests/e2e/hf_models.py make_small; nothing downloaded):
# - BERT (targets=all-linear), DistilBERT and Qwen2 (the attention projections) trained with
#   --lora at np 2 (ViT too: PEFT's count, eval, --merge-lora in transformers; its adapter export
#   is exit 2, transformers 5 having renamed its modules):
#   the trainable parameters are PEFT's count for the same LoRA (the adapters and the head), and
#   the memory plan (from the checkpoint's headers) counts gradients for those alone; checkpoints
#   hold those alone and name the base (a digest of its headers and of samples of its values: a
#   base replaced by a same-shaped fine-tune is exit 2); a plain export of them is refused;
#   `export --hf`
#   writes PEFT's adapter format, and PeftModel.from_pretrained(base, adapter) predicts what
#   `slimtrain eval --predictions` wrote, within 1e-5; `--merge-lora` writes a plain checkpoint
#   that transformers loads with the same predictions;
# - a LoRA run resumes at another world size; Qwen2 with LoRA learns the marker tokens within 5
#   points of a full fine-tune of the same steps;
# - with --precision bf16 the frozen base is held in bfloat16 (a Qwen2 stored in bf16): the plan
#   counts 2 bytes a frozen value, it learns as LoRA in float32 does, PEFT predicts what eval wrote;
#   eval --precision bf16 predicts fp32's classes, its logits within bf16's rounding;
# - bad --lora values, targets that match nothing, a model without adapters, --lora with --shard
#   parameters and --merge-lora of a run without adapters are exit 2 naming them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
[ -n "$PY2" ] && "$PY2" -c "import torch, transformers, safetensors, h5py, peft" 2>/dev/null ||
  { echo "skipped: no Python with torch, transformers, safetensors, h5py and peft (SLIMTRAIN_TORCH_PYTHON='$PY2'; scripts/install-deps.sh --torch pip makes .torch-venv)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lora="$SLIMTRAIN_SOURCE_DIR/tests/e2e/hf_lora.py"
models="$SLIMTRAIN_SOURCE_DIR/tests/e2e/hf_models.py"
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
py_start "$PY2"
py "$models" make_small "$work" >/dev/null 2>&1 || { py "$models" make_small "$work"; exit 1; }
np() { timeout 120 "$MPIEXEC" --oversubscribe -np "$@"; }
D=$work/text.h5
train() { np 2 "$S" train --data "$D" --optimizer adamw --batch-size 8 --threads 1 --seed 5 "$@"; }

for m in bert distilbert qwen2-tune; do
  targets=all-linear
  [ "$m" = distilbert ] && targets=q_lin,k_lin,v_lin,out_lin
  [ "$m" = qwen2-tune ] && targets=q_proj,k_proj,v_proj,o_proj
  check "$m --lora targets=$targets at np 2" expect_rc 0 train --model "hf:$work/$m" \
    --lora "r=4,dropout=0.1,targets=$targets" --lr 1e-2 --max-steps 30 --eval-every 0 --out "$work/run-$m"
  check "  said in the log" contains "lora r=4,alpha=8,dropout=0.1,targets=$targets"
  want=$(py "$lora" count "$work/$m" "$targets" 4 | grep -o 'trainable [0-9]*' | cut -d' ' -f2)
  check "  trains PEFT's count of parameters ($want)" json_is "$(events "$work/run-$m" start)" \
    "e['trainable_parameters'] == $want"
  check "  the memory plan, from the headers, counts gradients for those alone" \
    json_is "$(events "$work/run-$m" start)" "e['memory_plan']['gradient_bytes'] == 4 * $want"
  check "  eval --predictions" expect_rc 0 "$S" eval --data "$D" --checkpoint "$work/run-$m" \
    --predictions "$work/p-$m.h5" --threads 1
  check "  export --hf: PEFT's adapter" expect_rc 0 "$S" export --hf --checkpoint "$work/run-$m" \
    -o "$work/adapter-$m"
  check "    PeftModel.from_pretrained predicts what eval wrote" py "$lora" peft "$work/$m" \
    "$work/adapter-$m" "$D" "$work/p-$m.h5"
  check "  export --hf --merge-lora" expect_rc 0 "$S" export --hf --merge-lora \
    --checkpoint "$work/run-$m" -o "$work/merged-$m"
  check "    from_pretrained predicts what eval wrote" py "$models" agree "$work/merged-$m" "$D" test \
    "$work/p-$m.h5"
done
# ViT: adapters beside every linear layer of its encoder, the classifier trained in full. PEFT's
# adapter names follow transformers' module tree, which transformers 5 renamed for ViT: export
# --hf of the adapter is refused, --merge-lora's model loads in transformers.
check "vit --lora targets=all-linear at np 2" expect_rc 0 np 2 "$S" train --data "$work/images.h5" \
  --model "hf:$work/vit" --lora r=4,dropout=0.1 --optimizer adamw --lr 1e-2 --batch-size 8 \
  --threads 1 --seed 5 --max-steps 30 --eval-every 0 --out "$work/run-vit"
want=$(py "$lora" count "$work/vit" all-linear 4 | grep -o 'trainable [0-9]*' | cut -d' ' -f2)
check "  trains PEFT's count of parameters ($want)" json_is "$(events "$work/run-vit" start)" \
  "e['trainable_parameters'] == $want"
check "  eval --predictions" expect_rc 0 "$S" eval --data "$work/images.h5" --checkpoint "$work/run-vit" \
  --predictions "$work/p-vit.h5" --threads 1
check "  export --hf of the adapter: exit 2" expect_rc 2 "$S" export --hf --checkpoint "$work/run-vit" \
  -o "$work/adapter-vit"
check "    saying why, pointing to --merge-lora" contains "transformers 5 renamed .*--merge-lora writes the merged model"
check "    nothing written" test ! -e "$work/adapter-vit"
check "  export --hf --merge-lora" expect_rc 0 "$S" export --hf --merge-lora \
  --checkpoint "$work/run-vit" -o "$work/merged-vit"
check "    from_pretrained predicts what eval wrote" py "$models" agree "$work/merged-vit" \
  "$work/images.h5" test "$work/p-vit.h5"

# A LoRA checkpoint holds what trains; the frozen base stays in the model it names (its absolute
# directory, a digest of its headers and sampled values), which eval and export read again.
check "the checkpoint holds the adapters and the head alone" "$PY" - "$work/run-qwen2-tune" <<'EOF2'
import glob, json, sys
step = sorted(glob.glob(sys.argv[1] + "/checkpoints/step-*"))[-1]
names = [t["name"] for t in json.load(open(step + "/manifest.json"))["tensors"] if t["name"].startswith("model/")]
assert names and all(".lora_" in n or n.startswith("model/score.") for n in names), names
base = json.load(open(step + "/state.json"))["meta"]["lora_base"]
assert base["dir"].endswith("/qwen2-tune") and len(base["digest_xxh64"]) == 16, base
print(f"  {len(names)} tensors, the base {base}")
EOF2
check "  the merged export's embeddings are the base's (BERT)" py "$lora" kept "$work/bert" \
  "$work/merged-bert/model.safetensors" bert.embeddings.word_embeddings.weight
cp -r "$work/qwen2-tune" "$work/qwen2-copy"
check "a LoRA run on a copy of the base" expect_rc 0 train --model "hf:$work/qwen2-copy" --lora r=4 \
  --lr 1e-2 --max-steps 4 --eval-every 0 --final-split none --out "$work/copy"
check "  the base replaced by a fine-tune of the same shapes" py - "$work/qwen2-tune/model.safetensors" \
  "$work/qwen2-copy/model.safetensors" <<'EOF2'
import sys
from safetensors.torch import load_file, save_file
save_file({k: v + 0.01 for k, v in load_file(sys.argv[1]).items()}, sys.argv[2], metadata={"format": "pt"})
EOF2
check "  eval --checkpoint from another directory: exit 2" expect_rc 2 \
  bash -c 'cd / && "$0" eval --data "$1" --checkpoint "$2"' "$S" "$D" "$work/copy"
check "    naming the base and the checkpoint" contains "holds LoRA adapters of the base model in $work/qwen2-copy, but the safetensors there are not the ones it was trained on"
check "plain export -o W.safetensors of a LoRA checkpoint: exit 2" expect_rc 2 "$S" export \
  --checkpoint "$work/run-bert" -o "$work/w.safetensors"
check "  pointing to --hf" contains "holds LoRA adapters without their base model: export them with --hf"
cp -r "$work/bert" "$work/bert-nopooler"
check "a BERT saved without its pooler" py - "$work/bert/model.safetensors" \
  "$work/bert-nopooler/model.safetensors" <<'EOF2'
import sys
from safetensors.torch import load_file, save_file
save_file({k: v for k, v in load_file(sys.argv[1]).items() if ".pooler." not in k}, sys.argv[2],
          metadata={"format": "pt"})
EOF2
check "  --lora targets=query,value: exit 2 (the new pooler would stay random)" expect_rc 2 "$S" train \
  --data "$D" --model "hf:$work/bert-nopooler" --lora targets=query,value --out "$work/none"
check "    naming it and --lora-train" contains "has no bert.pooler.dense.weight, bert.pooler.dense.bias, which --lora would keep frozen at random values; train them with --lora-train"
check "  with --lora-train bert.pooler it trains" expect_rc 0 "$S" train --data "$D" \
  --model "hf:$work/bert-nopooler" --lora targets=query,value --lora-train bert.pooler \
  --max-steps 2 --threads 1 --final-split none --out "$work/pooler"
check "targets with a name that matches nothing: exit 2" expect_rc 2 "$S" train --data "$D" \
  --model "hf:$work/qwen2-tune" --lora targets=q_proj,v_prj --out "$work/none"
check "  naming it" contains "--lora: targets=v_prj matches no linear layer"

check "a LoRA run stopped at step 10 (np 2)" expect_rc 0 train --model "hf:$work/qwen2-tune" \
  --lora r=4 --lr 1e-2 --max-steps 10 --eval-every 0 --checkpoint-every 10 --out "$work/resumed"
check "  resumed at np 1 to step 20" expect_rc 0 timeout 120 "$MPIEXEC" -np 1 "$S" train --data "$D" \
  --model "hf:$work/qwen2-tune" --lora r=4 --optimizer adamw --lr 1e-2 --batch-size 8 --threads 1 \
  --seed 5 --max-steps 20 --eval-every 0 --resume auto --out "$work/resumed"
check "  from step 10" contains "resumed from .*step-00000010 at step 10"

# LoRA against a full fine-tune on the same data, batches and steps (12 epochs at np 2); each at
# a learning rate that suits it (AdamW at 1e-2 in full, as e2e_hf_models; 5e-3 for the adapters).
check "Qwen2 fine-tuned in full at np 2" expect_rc 0 train --model "hf:$work/qwen2-tune" \
  --lr 1e-2 --epochs 12 --log-every 1000 --out "$work/full"
check "Qwen2 with LoRA (r=8, all-linear) at np 2" expect_rc 0 train --model "hf:$work/qwen2-tune" \
  --lora r=8,targets=all-linear --lr 5e-3 --epochs 12 --log-every 1000 --out "$work/learn"
check "  learns the marker tokens within 5 points of the full fine-tune" json_is \
  "[$(events "$work/learn" done), $(events "$work/full" done)]" \
  'e[0]["final"]["accuracy"] >= e[1]["final"]["accuracy"] - 0.05 and e[0]["final"]["accuracy"] > 0.8'

# --precision bf16: the frozen base held in bfloat16 (no master: it never changes), here from a
# checkpoint stored in bf16 as the 7B ones are; the adapters and the head train in float32.
# --precision bf16 is refused on a CPU without native bf16 (train_options): checked where it runs.
if grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo; then
  check "Qwen2 stored in bf16, --lora with --precision bf16 at np 2" expect_rc 0 train \
    --model "hf:$work/qwen2-bf16" --lora r=8,targets=all-linear --lr 5e-3 --precision bf16 \
    --epochs 12 --log-every 1000 --out "$work/bf16"
  check "  the frozen base held in bfloat16" contains "frozen values held in bfloat16"
  check "  the memory plan counts it at 2 bytes a value" json_is "$(events "$work/bf16" start)" \
    'e["memory_plan"]["weights_bytes"] == 2 * (e["parameters"] - e["trainable_parameters"]) + 6 * e["trainable_parameters"]'
  check "  learns as LoRA in float32 does (within 5 points)" json_is \
    "[$(events "$work/bf16" done), $(events "$work/learn" done)]" \
    'e[0]["final"]["accuracy"] >= e[1]["final"]["accuracy"] - 0.05'
  check "  eval --predictions" expect_rc 0 "$S" eval --data "$D" --checkpoint "$work/bf16" \
    --predictions "$work/p-bf16.h5" --threads 1
  check "  export --hf: PEFT's adapter" expect_rc 0 "$S" export --hf --checkpoint "$work/bf16" \
    -o "$work/adapter-bf16"
  check "    PeftModel.from_pretrained on the bf16 base predicts what eval wrote" py "$lora" peft \
    "$work/qwen2-bf16" "$work/adapter-bf16" "$D" "$work/p-bf16.h5"
  # eval --precision bf16: every weight in bfloat16 (the base never whole in float32): the logits
  # of float32's evaluation within bf16's rounding, the same classes predicted.
  check "  eval --precision bf16" expect_rc 0 "$S" eval --data "$D" --checkpoint "$work/bf16" \
    --predictions "$work/p-bf16-16.h5" --precision bf16 --threads 1
  check "    says so" contains "with its weights in bfloat16 and the forward under bf16 autocast"
  check "    fp32's logits within bf16's rounding, the same classes" /usr/bin/python3 - \
    "$work/p-bf16.h5" "$work/p-bf16-16.h5" <<'PYEOF'
import sys
import h5py
import numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
la, lb = a["logits"][()], b["logits"][()]
worst = float(np.abs(la - lb).max() / np.abs(la).max())
same = float((a["predicted"][()] == b["predicted"][()]).mean())
print(f"  largest logit difference {worst:.1e} of the largest logit; {same:.3f} of the classes the same")
assert worst <= 0.15 and same >= 0.95, (worst, same)
PYEOF
else
  echo "  the --precision bf16 checks need a CPU with native bf16 (avx512_bf16 or amx_bf16): this one has none"
fi

check "eval --precision fp16: exit 2" expect_rc 2 "$S" eval --data "$D" --checkpoint "$work/learn" \
  --precision fp16
check "  naming it" contains "--precision: 'fp16' must be fp32 or bf16"
check "--lora r=0: exit 2" expect_rc 2 "$S" train --data "$D" --model "hf:$work/bert" --lora r=0 --out "$work/none"
check "  naming it" contains "--lora: r=0 is not a positive whole rank"
check "--lora with an unknown key: exit 2" expect_rc 2 "$S" train --data "$D" --model "hf:$work/bert" \
  --lora rank=4 --out "$work/none"
check "  naming the keys" contains "--lora: unknown key 'rank' (keys r, alpha, dropout, targets)"
check "targets that match no layer: exit 2" expect_rc 2 "$S" train --data "$D" --model "hf:$work/bert" \
  --lora targets=q_proj --out "$work/none"
check "  naming the layers there are" contains "match no linear layer of the model's body (its linear layers: query, key, value, dense)"
check "--lora on a built-in model: exit 2" expect_rc 2 "$S" train --data "$D" --model mlp --lora r=4 --out "$work/none"
check "  naming it" contains "--lora: for --model hf:DIR (mlp has no adapters yet)"
check "--lora with --shard parameters: exit 2" expect_rc 2 "$S" train --data "$D" \
  --model "hf:$work/qwen2-tune" --lora r=4 --shard parameters --out "$work/none"
check "  naming both" contains "--lora with --shard parameters: not built yet"
check "--lora-train naming no module: exit 2" expect_rc 2 "$S" train --data "$D" \
  --model "hf:$work/qwen2-tune" --lora r=4 --lora-train lm_head --out "$work/none"
check "  naming it" contains "--lora-train: 'lm_head' names no module"
check "--lora-train over a targeted layer: exit 2" expect_rc 2 "$S" train --data "$D" \
  --model "hf:$work/qwen2-tune" --lora r=4 --lora-train self_attn --out "$work/none"
check "  naming the layer" contains "--lora-train: 'self_attn' would train model.layers.0.self_attn.q_proj.weight, the base of a layer --lora targets"
check "a run without --lora" expect_rc 0 train --model "hf:$work/bert" --lr 1e-2 --max-steps 2 --eval-every 0 \
  --final-split none --out "$work/plain"
check "  export --hf --merge-lora of it: exit 2" expect_rc 2 "$S" export --hf --merge-lora \
  --checkpoint "$work/plain" -o "$work/none"
check "  naming why" contains "was not trained with --lora (it holds no adapters to merge)"
finish
