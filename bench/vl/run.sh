#!/usr/bin/env bash
# The seeds' model at its real width: a Qwen2.5-VL at Qwen2.5-VL-7B's sizes (language model
# hidden 3584, intermediate 18944, 28 heads over 4 key-value heads, vocabulary 152,064; vision
# 1280 wide, 16 heads), DECODER_LAYERS (2) decoder and VISION_LAYERS (2) vision blocks, random
# weights (bench/vl/make.py: nothing downloaded), one 448x448 image (256 image tokens) and 64
# text tokens a sample, one sample a step. slimtrain (`train --model hf:DIR` at np 1) against
# PyTorch + transformers (bench/vl/peer.py: Qwen2_5_VLModel and a score), side by side: the same
# plain SGD step (no optimizer state on either side), STEPS steps (3) on THREADS threads (2), the
# first untimed; each side's mean step and peak RSS (/usr/bin/time's maximum resident set).
#   RESULT vl model=qwen2.5-vl-7b-width decoder_layers=2 vision_layers=2 cpu="..." threads=2
#          slim_step_s=... peer_step_s=... ratio=... slim_peak_gib=... peer_peak_gib=...
# The peer needs transformers: PyTorch 2.x from scripts/install-deps.sh --torch pip (.torch-venv).
# Usage: bench/vl/run.sh [build-dir]   Environment: STEPS, THREADS, DECODER_LAYERS, VISION_LAYERS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
steps=${STEPS:-3}
threads=${THREADS:-2}
layers=${DECODER_LAYERS:-2}
vision=${VISION_LAYERS:-2}
bench_name=vl
. "$root/bench/lib.sh"
positive_ints "$steps" "$threads" "$layers" "$vision"
[ "$steps" -gt 1 ] || { echo "bench/vl: STEPS must be above the 1 untimed step" >&2; exit 2; }
[ -n "$PY2" ] && "$PY2" -c 'import transformers' 2>/dev/null ||
  { echo "bench/vl: no Python with PyTorch 2.x and transformers (scripts/install-deps.sh --torch pip makes .torch-venv): no peer" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/vl: /usr/bin/time measures the peak RSS (apt-get install time)" >&2; exit 2; }
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
"$PY2" "$root/bench/vl/make.py" "$work/model" "$layers" "$vision" 8 >"$work/make.log" 2>&1 ||
  { cat "$work/make.log" >&2; exit 1; }
echo "bench/vl: $(tail -n 1 "$work/make.log") at Qwen2.5-VL-7B's widths, $layers decoder and $vision vision layers, on $cpu, $threads threads"

/usr/bin/time -f "%M" -o "$work/slim.rss" mpirun -np 1 --bind-to none "$bin" train \
  --data "$work/model/vl.h5" --model "hf:$work/model" --out "$work/run" --resume none \
  --optimizer sgd --momentum 0 --weight-decay 0 --lr 1e-5 --schedule constant --batch-size 1 \
  --threads "$threads" --max-steps "$steps" --log-every 1 --eval-every 0 --checkpoint-every 0 \
  --final-split none >"$work/slim.log" 2>&1 ||
  { echo "bench/vl: slimtrain failed:" >&2; tail -n 20 "$work/slim.log" >&2; exit 1; }
slim_step=$("$PY2" - "$work/run/metrics.jsonl" <<'PYEOF'
import json, sys
done = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "done"][-1]
print("%.3f" % (1.0 / done["samples_per_s"]))
PYEOF
)
/usr/bin/time -f "%M" -o "$work/peer.rss" "$PY2" "$root/bench/vl/peer.py" "$work/model" "$steps" "$threads" \
  >"$work/peer.log" 2>&1 || { echo "bench/vl: the peer failed:" >&2; tail -n 20 "$work/peer.log" >&2; exit 1; }
peer_step=$(sed -n 's/.*step_s=\([0-9.]*\).*/\1/p' "$work/peer.log")
gib() { awk '{printf "%.2f", $1 / 1048576}' "$1"; }
slim_gib=$(gib "$work/slim.rss") peer_gib=$(gib "$work/peer.rss")
ratio=$(awk -v a="$slim_step" -v b="$peer_step" 'BEGIN{printf "%.3f", b / a}')
printf '  %-10s %12s %14s\n' side "s / step" "peak RSS GiB"
printf '  %-10s %12s %14s\n' slimtrain "$slim_step" "$slim_gib" peer "$peer_step" "$peer_gib"
echo "RESULT vl model=qwen2.5-vl-7b-width decoder_layers=$layers vision_layers=$vision cpu=\"$cpu\" threads=$threads slim_step_s=$slim_step peer_step_s=$peer_step ratio=$ratio slim_peak_gib=$slim_gib peer_peak_gib=$peer_gib"
