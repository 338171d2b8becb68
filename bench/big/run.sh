#!/usr/bin/env bash
# The seeds' model at its real size on this machine (issue 59): Qwen2.5-7B as published
# (bench/big/make_model.py: its config, random bf16 weights in 5 GB shards, 15.2 GB; nothing
# downloaded) fine-tuned as a 4-class classifier with LoRA r=16 on the attention projections plus
# the head, the frozen base held in bf16 (--precision bf16), activation checkpointing, 64-token
# samples, batch BATCH (1), STEPS (3) AdamW steps at np 1. Prints rank 0's peak resident memory in
# training and while loading beside the memory plan, the losses, the time a step takes, and the
# peak of `slimtrain eval --precision bf16` of the run's checkpoint:
# Then the same run in PyTorch + PEFT (bench/big/peer.py; PEER=0 leaves it out), one after the other:
#   RESULT big model=qwen2.5-7b steps=3 losses_finite=yes peak_gb=... loading_peak_gb=...
#          planned_gb=... step_s=... eval_bf16_peak_gb=... target_gb=20 peer_peak_gb=... peer_step_s=...
#          speed_ratio=(peer's step time / slimtrain's) cpu="..."
# MODEL=qwen2.5-vl-7b runs the seeds' model instead: Qwen2.5-VL-7B-Instruct as published
# (bench/big/make_vl.py: 8.29B parameters, 16.6 GB), each sample one 448 x 448 image and 64 text
# tokens (322 tokens), batch 1; its peer is bench/big/peer_vl.py.
# Needs ~16 GB of disk in WORK (a temporary directory by default; KEEP=1 keeps the model there
# for a second run) and ~17 GB of memory. Usage: bench/big/run.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
steps=${STEPS:-3}
batch=${BATCH:-1}
bench_name=big
. "$root/bench/lib.sh"
positive_ints "$steps" "$batch"
[ -n "$PY2" ] || { echo "bench/big: no Python with torch (scripts/install-deps.sh --torch pip makes .torch-venv)" >&2; exit 2; }
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
name=${MODEL:-qwen2.5-7b}
case $name in
  qwen2.5-7b) maker=make_model.py data_file=text.h5 peer_py=peer.py ;;
  qwen2.5-vl-7b) maker=make_vl.py data_file=vl.h5 peer_py=peer_vl.py ;;
  *) echo "bench/big: MODEL=$name: qwen2.5-7b or qwen2.5-vl-7b" >&2; exit 2 ;;
esac
[ "$name" = qwen2.5-7b ] || [ "$batch" = 1 ] || { echo "bench/big: MODEL=$name runs at BATCH=1" >&2; exit 2; }
model=${WORK:-$work}/$name
if [ ! -f "$model/model.safetensors.index.json" ]; then
  t0=$SECONDS
  "$PY2" "$root/bench/big/$maker" "$model" >"$work/make.log" 2>&1 || { cat "$work/make.log" >&2; exit 1; }
  echo "bench/big: $(tail -n 1 "$work/make.log") made in $((SECONDS - t0)) s"
fi
out=$work/run
t0=$SECONDS
timeout 3600 mpirun -np 1 --bind-to none "$bin" train --data "$model/$data_file" --model "hf:$model" \
  --lora r=16,alpha=32,dropout=0.05,targets=q_proj,k_proj,v_proj,o_proj --precision bf16 \
  --activation-checkpointing layers --optimizer adamw --lr 1e-4 --batch-size "$batch" \
  --threads "$(getconf _NPROCESSORS_ONLN)" --max-steps "$steps" --log-every 1 --eval-every 0 \
  --checkpoint-every 0 --final-split none --resume none --out "$out" >"$out.log" 2>&1 ||
  { echo "bench/big: the run failed:" >&2; tail -n 30 "$out.log" >&2; exit 1; }
wall=$((SECONDS - t0))
grep -E 'memory plan|frozen values|hf:.*tensors loaded|done at' "$out.log" | cut -c 26-400
# The checkpoint evaluated with its weights in bf16 (eval --precision bf16: the base read into
# bf16, never whole in float32): rank 0's peak resident memory from eval's own line.
eval_peak=none
if timeout 1800 mpirun -np 1 --bind-to none "$bin" eval --data "$model/$data_file" --checkpoint "$out" \
  --precision bf16 --threads "$(getconf _NPROCESSORS_ONLN)" >"$out.eval.log" 2>&1; then
  eval_peak=$(sed -n 's/.*samples\/s); peak \([0-9.]*\) GB resident.*/\1/p' "$out.eval.log" | tail -n 1)
  grep -E 'evaluated [0-9]' "$out.eval.log" | cut -c 26-400
else
  echo "bench/big: eval --precision bf16 failed:"; tail -n 5 "$out.eval.log"
fi
# The PyTorch + PEFT peer of the same run (PEER=0 leaves it out), after slimtrain's has ended:
# both hold the 15 GB base, and this machine has room for one at a time.
peer=
if [ "${PEER:-1}" = 1 ]; then
  if "$PY2" -c "import peft, transformers" 2>/dev/null; then
    if [ "$name" = qwen2.5-7b ]; then
      peer_args=("$steps" "$batch" "$(getconf _NPROCESSORS_ONLN)")
    else
      peer_args=("$steps" "$(getconf _NPROCESSORS_ONLN)")
    fi
    peer=$(timeout 3600 "$PY2" "$root/bench/big/$peer_py" "$model" "${peer_args[@]}" \
      2>"$work/peer.log" | grep '^PEER big' || true)
    [ -n "$peer" ] || { echo "bench/big: the PEFT peer failed:"; tail -n 5 "$work/peer.log"; }
  else
    echo "bench/big: no peft in $PY2: the peer is left out"
  fi
fi
"$PY2" - "$out/metrics.jsonl" "$steps" "$wall" "$cpu" "$name" "$eval_peak" "$peer" <<'PYEOF'
import json, math, sys
events = [json.loads(l) for l in open(sys.argv[1])]
steps, wall, cpu, name, eval_peak = int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
losses = [e["loss"] for e in events if e.get("event") == "train"]
done = [e for e in events if e.get("event") == "done"][-1]
m = done["memory"]
peak = m["peak_resident_bytes"] / 1e9
loading = (m["baseline_resident_bytes"] + m["loading_peak_above_baseline_bytes"]) / 1e9
# The steps after the first (warm-up) when there are any, else every step's train events' time.
step_s = done["steady_seconds"] / done["steady_steps"] if done.get("steady_steps") else float("nan")
finite = "yes" if len(losses) == steps and all(math.isfinite(x) for x in losses) else "no"
print(f"  losses {', '.join(f'{x:.4f}' for x in losses)}; the run {wall} s in all")
peer = dict(kv.split("=", 1) for kv in sys.argv[7].split()[2:]) if len(sys.argv) > 7 and sys.argv[7] else {}
if peer:
    print(f"  the PyTorch + PEFT peer: peak {peer['peak_gb']} GB, {peer['step_s']} s a step, losses {peer['losses']}")
extra = (f" peer_peak_gb={peer['peak_gb']} peer_step_s={peer['step_s']}"
         f" speed_ratio={float(peer['step_s']) / step_s:.2f}") if peer else " peer=none"
print(f"RESULT big model={name} steps={steps} losses_finite={finite} peak_gb={peak:.2f} "
      f"loading_peak_gb={loading:.2f} planned_gb={m['planned_bytes'] / 1e9:.2f} "
      f"step_s={step_s:.1f} eval_bf16_peak_gb={eval_peak} target_gb=20{extra} cpu=\"{cpu}\"")
PYEOF
if [ "${KEEP:-0}" = 1 ] && [ -z "${WORK:-}" ]; then
  echo "bench/big: KEEP=1 needs WORK (the model is made in a temporary directory otherwise)"
fi
