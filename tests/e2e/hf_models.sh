#!/usr/bin/env bash
# --model hf:DIR against transformers itself (the venv's Python, SLIMTRAIN_TORCH_PYTHON), on
# small random checkpoints save_pretrained writes (nothing downloaded):
# - `eval --model hf:DIR --predictions` gives transformers' logits within 1e-4 for BERT, RoBERTa,
#   DistilBERT, a checkpoint stored in bfloat16 and one sharded through
#   model.safetensors.index.json;
# - a base model's checkpoint (no head) and a head for 2 labels where the data has 4 load with the
#   head created and a warning naming it; a missing, misshapen or unknown tensor, a model_type
#   with no native module and a directory without config.json are exit 2 naming them;
# - fine-tuning BERT at np 2 learns the marker tokens; resumed at np 1 it goes on; `export --hf`
#   loads with from_pretrained, with the data's id2label, and predicts what eval wrote, also
#   written in shards of --max-shard-size with their index;
# - Qwen2 and Llama (grouped-query attention, rotary positions, RMSNorm, SwiGLU, the score on
#   the last real token), Llama 3.1's rotary scaling and the linear kind, hidden_act gelu, relu
#   and gelu_pytorch_tanh, Llama's attention_bias and mlp_bias: transformers' logits
#   sequence by sequence and in batches padded right and left; yarn is exit 2 naming it; Qwen2 fine-tuned at np 2 learns and its export loads in transformers;
# - RoBERTa with sequences of exactly its positions, batches padded past them: transformers'
#   logits; sequences longer than that: exit 2 naming --max-length (np 1 and 2);
# - ViT: transformers' logits on a layout-1 image file's x as pixel_values; fine-tuned at np 2
#   it learns; its export loads in transformers; a ViT on token sequences and BERT on images are
#   exit 2 naming what each reads;
# - --shard parameters equal to --shard gradients (losses within 1e-6 over 50 steps at np 2) for
#   Qwen2 (layer by layer) and BERT (gathered whole); Qwen2's evaluations at np 5 too, gathered
#   layer by layer with every rank running as many forwards; one a rank is late to skipped;
# - --activation-checkpointing layers logs the losses of none for BERT (dropout on) and Qwen2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
[ -n "$PY2" ] && "$PY2" -c "import torch, transformers, safetensors, h5py" 2>/dev/null ||
  { echo "skipped: no Python with torch, transformers, safetensors and h5py (SLIMTRAIN_TORCH_PYTHON='$PY2'; scripts/install-deps.sh --torch pip makes .torch-venv)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
models="$SLIMTRAIN_SOURCE_DIR/tests/e2e/hf_models.py"
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
py_start "$PY2"
py "$models" make "$work" > /dev/null 2>&1 || { py "$models" make "$work"; exit 1; }
np() { timeout 120 "$MPIEXEC" --oversubscribe -np "$@"; }
D=$work/text.h5

for m in bert roberta distilbert bert-bf16 bert-sharded; do
  check "eval --model hf:$m --predictions" expect_rc 0 "$S" eval --data "$D" --model "hf:$work/$m" \
    --predictions "$work/p-$m.h5" --threads 1
  check "  transformers' logits within 1e-4" py "$models" logits "$work/$m" "$D" test "$work/p-$m.h5"
done
check "  at np 2 too (RoBERTa)" expect_rc 0 np 2 "$S" eval --data "$D" --model "hf:$work/roberta" \
  --predictions "$work/p2-roberta.h5" --threads 1
check "    the same logits" py "$models" logits "$work/roberta" "$D" test "$work/p2-roberta.h5"

check "a base model's checkpoint (BertModel: no prefix, no head)" expect_rc 0 "$S" eval --data "$D" \
  --model "hf:$work/bert-base" --threads 1
check "  warns that the head is new" contains "WARN  hf:$work/bert-base: classifier.weight, classifier.bias newly initialised (in the checkpoint: missing)"
check "a head for 2 labels, data of 4 classes" expect_rc 0 "$S" eval --data "$D" \
  --model "hf:$work/bert-2labels" --threads 1
check "  warns, naming the shapes" contains "classifier.weight, classifier.bias newly initialised (in the checkpoint: \[2,32\] where the data has 4 classes)"
check "a missing tensor: exit 2" expect_rc 2 "$S" eval --data "$D" --model "hf:$work/bert-missing"
check "  naming file and tensor" contains "bert-missing/model.safetensors: has no tensor bert.encoder.layer.1.output.dense.weight (\[32,64\])"
check "a misshapen tensor: exit 2" expect_rc 2 "$S" eval --data "$D" --model "hf:$work/bert-shape"
check "  naming both shapes" contains "tensor bert.encoder.layer.0.attention.self.key.weight is \[32,16\], where hf:$work/bert-shape needs \[32,32\]"
check "an unknown tensor: exit 2" expect_rc 2 "$S" eval --data "$D" --model "hf:$work/bert-extra"
check "  naming it" contains "holds tensor bert.encoder.layer.0.adapter.weight (\[4,4\]), which no part of"
check "a model_type without a native module: exit 2" expect_rc 2 "$S" train --data "$D" \
  --model "hf:$work/gpt2" --max-steps 1 --out "$work/x"
check "  naming it" contains "gpt2/config.json: model_type \"gpt2\" has no native module in slimtrain (it has bert, roberta, xlm-roberta, camembert, distilbert, vit, qwen2, llama, qwen2_vl and qwen2_5_vl)"
check "no config.json: exit 2" expect_rc 2 "$S" eval --data "$D" --model "hf:$work/nowhere"
check "  naming the file" contains "nowhere/config.json cannot be read"
check "hf: with --checkpoint: exit 2" expect_rc 2 "$S" eval --data "$D" --model "hf:$work/bert" \
  --checkpoint "$work/x"

recipe=(--data "$D" --model "hf:$work/bert" --optimizer adamw --lr 3e-3 --batch-size 16
  --threads 1 --seed 5 --log-every 10)
check "fine-tuning BERT at np 2" expect_rc 0 np 2 "$S" train "${recipe[@]}" --epochs 12 \
  --out "$work/run"
check "  loads the checkpoint's 41 tensors" contains "hf:$work/bert: 41 tensors loaded"
check "  learns the marker tokens (majority class ~0.27)" json_is "$(events "$work/run" done)" 'e["final"]["accuracy"] > 0.8'
check "  resumed at np 1, it goes on" expect_rc 0 "$S" train "${recipe[@]}" --epochs 14 --out "$work/run"
check "    from the np-2 checkpoint" contains "resuming a 2-rank checkpoint on 1"
check "    the checkpoint's weights replace the pretrained ones, said so" \
  contains "hf:$work/bert: its weights replaced by the checkpoint of step"
check "    no warning that the head is new (it was trained)" test -z "$(grep "newly initialised" <<<"$out")"
check "eval --predictions of the run" expect_rc 0 "$S" eval --data "$D" --checkpoint "$work/run" \
  --predictions "$work/p-run.h5" --threads 1
check "export --hf" expect_rc 0 "$S" export --hf --checkpoint "$work/run" -o "$work/exported"
check "  config.json and model.safetensors, nothing else left" eval '[ "$(ls "$work/exported")" = "$(printf "config.json\nmodel.safetensors")" ] && ! ls -d "$work"/exported.tmp-* 2>/dev/null'
check "  from_pretrained predicts what eval wrote, id2label the data's" py "$models" agree "$work/exported" "$D" test "$work/p-run.h5"
check "  an existing directory: exit 2" expect_rc 2 "$S" export --hf --checkpoint "$work/run" -o "$work/exported"
check "    naming it" contains "exported exists; give --force"
check "  --force replaces it" expect_rc 0 "$S" export --hf --force --checkpoint "$work/run" -o "$work/exported"
check "  --max-shard-size 20KB: shards and their index, as save_pretrained writes them" expect_rc 0 "$S" export --hf --max-shard-size 20KB --checkpoint "$work/run" -o "$work/exported-shards"
check "    said, naming the files" contains "safetensors shards of at most 20000 bytes (--max-shard-size): model-00001-of-000[0-9]*.safetensors"
check "    each shard within the limit (one tensor larger gets its own)" py -c "
import json, os, sys
d = sys.argv[1]
index = json.load(open(os.path.join(d, 'model.safetensors.index.json')))
files = sorted(set(index['weight_map'].values()))
assert len(files) >= 2 and not os.path.exists(os.path.join(d, 'model.safetensors')), files
from safetensors import safe_open
total = 0
for f in files:
    with safe_open(os.path.join(d, f), 'pt') as t:
        sizes = [t.get_tensor(k).nbytes for k in t.keys()]
    assert sum(sizes) <= 20000 or len(sizes) == 1, (f, sizes)
    total += sum(sizes)
assert index['metadata']['total_size'] == total, (index['metadata'], total)
" "$work/exported-shards"
check "    from_pretrained loads the shards and predicts what eval wrote" py "$models" agree "$work/exported-shards" "$D" test "$work/p-run.h5"
check "  --max-shard-size without --hf: exit 2" expect_rc 2 "$S" export --max-shard-size 1GB --checkpoint "$work/run" -o "$work/w.h5"
check "    naming it" contains "--max-shard-size: only with --hf"
check "  --max-shard-size 5 parsecs: exit 2" expect_rc 2 "$S" export --hf --max-shard-size "5 parsecs" --checkpoint "$work/run" -o "$work/bad"
check "    naming the forms it takes" contains "--max-shard-size: '5 parsecs' is not a size; give bytes or a number with a unit: 5GB"
check "and slimtrain evaluates the export as it is" expect_rc 0 "$S" eval --data "$D" \
  --model "hf:$work/exported" --predictions "$work/p-exported.h5" --threads 1
check "  predicting what the run's checkpoint predicted" py "$models" agree "$work/exported" "$D" test "$work/p-exported.h5"

for m in qwen2 llama llama3 qwen2-linear qwen2-gelu llama-relu llama-bias; do
  check "$m: eval --model hf:$m --predictions" expect_rc 0 "$S" eval --data "$D" --model "hf:$work/$m" \
    --predictions "$work/p-$m.h5" --threads 1
  check "  transformers' logits within 1e-4" py "$models" logits "$work/$m" "$D" test "$work/p-$m.h5"
  check "  and in batches padded right and left" py "$models" padded "$work/$m" "$D" test "$work/p-$m.h5"
done
check "sequences of exactly the model's 37 positions (RoBERTa, batches padded past them)" expect_rc 0 \
  "$S" eval --data "$work/text37.h5" --model "hf:$work/roberta-37" --predictions "$work/p-37.h5" --threads 1
check "  transformers' logits within 1e-4" py "$models" logits "$work/roberta-37" "$work/text37.h5" test "$work/p-37.h5"
check "  at np 2 too" expect_rc 0 np 2 "$S" eval --data "$work/text37.h5" --model "hf:$work/roberta-37" --threads 1
check "sequences past its positions: exit 2, not a communication error" expect_rc 2 "$S" eval \
  --data "$D" --model "hf:$work/roberta-37" --threads 1
check "  naming the limit and --max-length" contains "past the model's 37 positions; cut them in prep (--max-length 37)"
check "  at np 2 too" expect_rc 2 np 2 "$S" eval --data "$D" --model "hf:$work/roberta-37" --threads 1
check "a rotary scaling not implemented (yarn): exit 2" expect_rc 2 "$S" eval --data "$D" \
  --model "hf:$work/qwen2-yarn"
check "  naming it and the kinds there are" contains "qwen2-yarn/config.json: rotary positions of type yarn are not implemented (default, linear and llama3)"
check "Qwen2 fine-tuned at np 2" expect_rc 0 np 2 "$S" train --data "$D" --model "hf:$work/qwen2-tune" \
  --optimizer adamw --lr 1e-2 --epochs 12 --batch-size 16 --threads 1 --seed 5 --out "$work/run-qwen2"
check "  learns the marker tokens" json_is "$(events "$work/run-qwen2" done)" 'e["final"]["accuracy"] > 0.8'
check "  eval --predictions" expect_rc 0 "$S" eval --data "$D" --checkpoint "$work/run-qwen2" \
  --predictions "$work/p-run-qwen2.h5" --threads 1
check "  export --hf" expect_rc 0 "$S" export --hf --checkpoint "$work/run-qwen2" -o "$work/exported-qwen2"
check "    Qwen2ForSequenceClassification.from_pretrained predicts what eval wrote" py "$models" agree "$work/exported-qwen2" "$D" test "$work/p-run-qwen2.h5"
# --shard parameters against --shard gradients on the same seed, 50 steps at np 2: Qwen2 gathers
# layer by layer (embeddings, each decoder layer, the norm, the score), BERT whole for each step.
for m in qwen2-tune bert; do
  for mode in gradients parameters; do
    check "$m np 2 --shard $mode, 50 steps" expect_rc 0 np 2 "$S" train --data "$D" \
      --model "hf:$work/$m" --optimizer adamw --lr 1e-3 --max-steps 50 --batch-size 8 --threads 1 \
      --seed 5 --log-every 5 --eval-every 0 --final-split none --shard "$mode" --out "$work/z-$m-$mode"
  done
  check "  losses within 1e-6 relative over the 50 steps" \
    same_losses "$work/z-$m-gradients" "$work/z-$m-parameters" 10 1e-6
done

# Evaluation under --shard parameters gathers layer by layer too, every rank running as many
# forwards: np 5, the 96 test rows in batches of 19 (rank 0 runs two, the others one and a
# stand-in), the buckets small enough that a layer is a few of them.
for mode in gradients parameters; do
  check "qwen2 np 5 --shard $mode, evaluating every 10 steps" expect_rc 0 np 5 "$S" train \
    --data "$D" --model "hf:$work/qwen2-tune" --optimizer adamw --lr 1e-3 --max-steps 20 \
    --batch-size 4 --threads 1 --seed 5 --log-every 10 --eval-every 10 --eval-batch-size 19 \
    --bucket-mb 0.004 --shard "$mode" --out "$work/e-$mode"
done
check "  the same evaluations (at step 10 and the final one)" \
  same_losses "$work/e-gradients" "$work/e-parameters" 2 1e-6 eval
check "  each holding at most a third of the weights at once" json_is \
  "$(events "$work/e-parameters" eval | tail -n 1)" 'e["gathered_peak_bytes"] * 3 <= e["weights_whole_bytes"]'

# The ranks agree that they are ready before such an evaluation's gathers: a rank late to it has it
# skipped on every rank (the trainer's promise), not the others held at a gather until its deadline.
check "a rank late to an evaluation gathered per layer: the job goes on" expect_rc 0 \
  env SLIMTRAIN_INJECT="rank=1,phase=eval,step=10,delay=3s" timeout 120 "$MPIEXEC" --oversubscribe \
  -np 2 "$S" train --data "$D" --model "hf:$work/qwen2-tune" --optimizer adamw --lr 1e-3 \
  --max-steps 20 --batch-size 8 --threads 1 --seed 5 --eval-every 5 --eval-deadline 1 \
  --bucket-mb 0.004 --final-split none --shard parameters --out "$work/late"
check "  that evaluation skipped on every rank, naming rank 1" json_is \
  "$(event_at "$work/late" eval_skipped 10)" 'e["late_ranks"] == [1]'
check "  the next one ran" json_is "$(event_at "$work/late" eval 15)" 'e["count"] == 96'

# --activation-checkpointing layers: each layer's activations made again in backward, dropout's
# random numbers replayed: BERT (dropout 0.1) and Qwen2 log the losses they log without it.
for m in bert qwen2-tune; do
  for ac in none layers; do
    check "$m np 2 --activation-checkpointing $ac, 20 steps" expect_rc 0 np 2 "$S" train \
      --data "$D" --model "hf:$work/$m" --optimizer adamw --lr 1e-3 --max-steps 20 --batch-size 8 \
      --threads 1 --seed 5 --log-every 5 --eval-every 0 --final-split none \
      --activation-checkpointing "$ac" --out "$work/ac-$m-$ac"
  done
  check "  the same losses" same_losses "$work/ac-$m-none" "$work/ac-$m-layers" 4 1e-6
done
check "  said in the log" contains "activation checkpointing: each layer keeps its input alone"
# With --shard parameters each layer is gathered for its recomputation too (tiny buckets: a layer
# in several), and the losses are those of the unsharded run.
check "qwen2 np 2 --activation-checkpointing layers --shard parameters, 20 steps" expect_rc 0 np 2 \
  "$S" train --data "$D" --model "hf:$work/qwen2-tune" --optimizer adamw --lr 1e-3 --max-steps 20 \
  --batch-size 8 --threads 1 --seed 5 --log-every 5 --eval-every 10 --final-split none \
  --activation-checkpointing layers --shard parameters --bucket-mb 0.004 --out "$work/ac-sharded"
check "  the same losses as --shard none" same_losses "$work/ac-qwen2-tune-layers" "$work/ac-sharded" 4 1e-6
check "  gathered layer by layer" contains "weights gathered as each layer runs"


check "ViT: eval --model hf:vit --predictions" expect_rc 0 "$S" eval --data "$work/images.h5" \
  --model "hf:$work/vit" --predictions "$work/p-vit.h5" --threads 1
check "  transformers' logits within 1e-4" py "$models" logits "$work/vit" "$work/images.h5" test "$work/p-vit.h5"
check "  fine-tuned at np 2" expect_rc 0 np 2 "$S" train --data "$work/images.h5" \
  --model "hf:$work/vit" --optimizer adamw --lr 2e-3 --epochs 8 --batch-size 16 --threads 1 \
  --seed 5 --out "$work/run-vit"
check "  learns the bright quadrant (majority class ~0.3)" json_is "$(events "$work/run-vit" done)" 'e["final"]["accuracy"] > 0.7'
check "  eval --predictions" expect_rc 0 "$S" eval --data "$work/images.h5" --checkpoint "$work/run-vit" \
  --predictions "$work/p-run-vit.h5" --threads 1
check "  export --hf" expect_rc 0 "$S" export --hf --checkpoint "$work/run-vit" -o "$work/exported-vit"
check "    ViTForImageClassification.from_pretrained predicts what eval wrote" py "$models" agree "$work/exported-vit" "$work/images.h5" test "$work/p-run-vit.h5"
check "prep images --preprocessor vit/preprocessor_config.json" expect_rc 0 "$S" prep images \
  --train "$work/pngs/train" --test "$work/pngs/test" --preprocessor "$work/vit/preprocessor_config.json" \
  -o "$work/processed.h5"
check "  eval --model hf:vit on it" expect_rc 0 "$S" eval --data "$work/processed.h5" \
  --model "hf:$work/vit" --predictions "$work/p-processed.h5" --threads 1
check "  transformers' logits through ViTImageProcessor" py "$models" processed "$work/vit" "$work/pngs/test" "$work/p-processed.h5"
check "  export --hf copies preprocessor_config.json" eval '[ -f "$work/exported-vit/preprocessor_config.json" ]'
check "a ViT on token sequences: exit 2" expect_rc 2 "$S" eval --data "$D" --model "hf:$work/vit"
check "  naming what it reads" contains "a ViT reads images, a layout-1 file's x"
check "BERT on images: exit 2" expect_rc 2 "$S" train --data "$work/images.h5" --model "hf:$work/bert" \
  --max-steps 1 --out "$work/x"
check "  naming what it reads" contains "reads token sequences (input_ids) of a layout-2 file from prep text"
finish
