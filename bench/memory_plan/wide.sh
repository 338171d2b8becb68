# Sourced by bench/memory_plan/run.sh and bench/zero3/run.sh after bench/lib.sh, with steps,
# layers and bench_name set: the 7B-width Qwen2 classifier of make.py in $work/model ($cpu names
# the CPU), and wide_train NP SHARD OUT [options...], a run of it ($STEPS AdamW steps of batch 2,
# no evaluation) that exits the bench with its log's tail when it fails.
positive_ints "$steps" "$layers"
[ -n "$PY2" ] && "$PY2" -c 'import transformers' 2>/dev/null ||
  { echo "bench/$bench_name: no Python with transformers (scripts/install-deps.sh --torch pip makes .torch-venv)" >&2; exit 2; }
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
"$PY2" "$root/bench/memory_plan/make.py" "$work/model" "$layers" >"$work/make.log" 2>&1 ||
  { cat "$work/make.log" >&2; exit 1; }

wide_train() {
  local np=$1 shard=$2 out=$3
  shift 3
  positive_ints "$np"
  timeout 3600 mpirun -np "$np" --oversubscribe --bind-to none "$bin" train --data "$work/model/text.h5" \
    --model "hf:$work/model" --out "$out" --resume none --optim adamw --lr 1e-5 --batch-size 2 \
    --threads $((np > 1 ? 1 : 2)) --max-steps "$steps" --eval-every 0 --checkpoint-every 0 \
    --final-split none --shard "$shard" "$@" >"$out.log" 2>&1 ||
    { echo "bench/$bench_name: np $np --shard $shard failed:" >&2; tail -n 20 "$out.log" >&2; exit 1; }
  rm -rf "$out/checkpoints"  # 6.5 GB a run: the weights and AdamW's state
}
