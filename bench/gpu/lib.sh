# shellcheck shell=bash disable=SC2154  # the variables run.sh sets
# Sourced by bench/gpu/run.sh: the budget, the runs and the rows. It expects REPO, OUT, REPORT,
# RESULTS, W (the work folder), T0, BUDGET, RESERVE_S, RUN_CAP_S, ROW_MIN_S, PY, BIN, DEVICE,
# GPU, THREADS, steps and warmup to be set.

say() { echo "$*" | tee -a "$REPORT"; }
# left: seconds of the budget left, less the reserve kept for the summary.
left() { echo $((BUDGET - (SECONDS - T0) - RESERVE_S)); }
# cap WANT: WANT seconds, or what the budget has left where that is less; at least 1, since
# `timeout 0` would mean no limit.
cap() {
  local l; l=$(left)
  if [ "$l" -lt "$1" ]; then echo $((l < 1 ? 1 : l)); else echo "$1"; fi
}
# limited WANT COMMAND...: COMMAND under timeout, its limit capped by the budget (exit 124 when cut;
# -k: KILL 5 s after a TERM that was ignored).
limited() {
  local s; s=$(cap "$1"); shift
  timeout -k 5 "$s" "$@"
}

# Utilisation: nvidia-smi sampled every 250 ms during each run, where there is an nvidia-smi; on a
# machine without one (a CPU rehearsal) nothing is started and utilisation is nan.
SAMPLER=
sample_start() {
  SAMPLER=
  command -v nvidia-smi >/dev/null || return 0
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 250 >"$1" 2>/dev/null &
  SAMPLER=$!
}
sample_stop() {
  [ -n "$SAMPLER" ] || return 0
  kill "$SAMPLER" 2>/dev/null
  wait "$SAMPLER" 2>/dev/null
  SAMPLER=
}
# util FILE: the mean of the samples over the middle half of a run (start-up and the end left out).
util() {
  [ -s "$1" ] || { echo nan; return; }
  awk '{ gsub(/[ \t]/, "") } /^[0-9.]+$/ { v[n++] = $1 }
    END { a = int(n / 4); b = int(3 * n / 4); if (b <= a) b = a + 1; if (b > n) b = n
          s = 0; c = 0; for (i = a; i < b; i++) { s += v[i]; c++ }
          if (c) printf "%.0f\n", s / c; else print "nan" }' "$1"
}

# log_tail FILE: its last 5 lines, less mpirun's boxed notices (between lines of dashes), which
# would hide the program's own last words; indented.
log_tail() {
  local t
  t=$(awk '/^--------------------*$/ { box = !box; next } !box' "$1" 2>/dev/null | grep -v '^ *$' | tail -n 5)
  [ -n "$t" ] || t=$(tail -n 5 "$1" 2>/dev/null)
  [ -n "$t" ] || return 0
  printf '%s\n' "$t" | sed 's/^/    | /'
}
# finish_run NAME RC LIMIT: the run's exit status kept; its log's tail (and slimtrain's metrics)
# copied to $OUT/runs/ at once, so a call cut short still brings them back; a failure said with
# the last lines of its log.
finish_run() {
  local name=$1 rc=$2 limit=$3 why
  echo "$rc" >"$W/$name.rc"
  tail -n 200 "$W/$name.log" >"$OUT/runs/$name.log" 2>/dev/null
  [ -f "$W/$name/metrics.jsonl" ] && tail -n 200 "$W/$name/metrics.jsonl" >"$OUT/runs/$name.metrics.jsonl"
  [ "$rc" = 0 ] && return 0
  why="exit $rc"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then why="cut at its ${limit} s limit"; fi
  say "  $name failed ($why); the end of its log ($OUT/runs/$name.log):"
  log_tail "$W/$name.log" | tee -a "$REPORT"
}

# begin_run NAME: whether to run NAME now: not when it has run (a run two rows share runs once),
# nor with less than 3 s of the budget left (then it says so, and its side reads nan).
begin_run() {
  [ -f "$W/$1.rc" ] && return 1
  [ "$(left)" -ge 3 ] && return 0
  echo nan >"$W/$1.sps"; echo budget >"$W/$1.rc"
  say "  $1 not started: the budget is spent"
  return 1
}
# slim NAME DATA OPTIONS...: one slimtrain run at world size 1, its steady samples/s (the done
# event's, warm-up left out) in $W/NAME.sps. SLIMTRAIN_GRAD_SINK, where the caller sets it, is
# passed to the rank.
slim() {
  local name=$1 data=$2 limit rc x=()
  shift 2
  begin_run "$name" || return 0
  [ -n "${SLIMTRAIN_GRAD_SINK:-}" ] && x=(-x SLIMTRAIN_GRAD_SINK)
  limit=$(cap "$RUN_CAP_S")
  sample_start "$W/$name.util"
  # --bind-to none: mpirun would pin its one rank to one core, where the peer has them all.
  timeout -k 5 "$limit" "${MPIEXEC:-mpirun}" -np 1 --bind-to none "${x[@]}" "$BIN" train --device "$DEVICE" \
    --data "$data" --out "$W/$name" --resume none --eval-every 0 --checkpoint-every 0 \
    --final-split none --threads "$THREADS" --max-steps $((steps + warmup)) --log-every "$warmup" \
    "$@" >"$W/$name.log" 2>&1
  rc=$?
  sample_stop
  "$PY" -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1] + "/metrics.jsonl") if "\"done\"" in l]
print(e[-1]["samples_per_s"] if e else "nan")' "$W/$name" >"$W/$name.sps" 2>/dev/null ||
    echo nan >"$W/$name.sps"
  finish_run "$name" "$rc" "$limit"
}

# pyrun NAME SCRIPT OPTIONS...: one Python peer run; the samples/s of its PEER line in $W/NAME.sps.
pyrun() {
  local name=$1 limit rc
  shift
  begin_run "$name" || return 0
  limit=$(cap "$RUN_CAP_S")
  sample_start "$W/$name.util"
  timeout -k 5 "$limit" "$PY" "$@" >"$W/$name.log" 2>&1
  rc=$?
  sample_stop
  sed -n 's/.*samples_per_s=\([0-9.]*\).*/\1/p' "$W/$name.log" | tail -n 1 >"$W/$name.sps"
  [ -s "$W/$name.sps" ] || echo nan >"$W/$name.sps"
  finish_run "$name" "$rc" "$limit"
}
# peer NAME DATA OPTIONS...: bench/gpu/peer.py's run on DATA.
peer() {
  local name=$1 data=$2
  shift 2
  pyrun "$name" "$REPO/bench/gpu/peer.py" --data "$data" --device "$DEVICE" --steps "$steps" \
    --warmup-steps "$warmup" "$@"
}

# result NAME FIELDS: one RESULT line, printed, appended to bench_gpu.txt and to results.txt
# (which holds RESULT lines only); each append closes the file, so it is on disk at once.
result() {
  local line="RESULT gpu row=$1 gpu=\"$GPU\" device=$DEVICE $2"
  echo "$line"
  echo "$line" >>"$REPORT"
  echo "$line" >>"$RESULTS"
}
# row NAME SLIM PEER TARGET WHAT [EXTRA]: the RESULT line of two runs (the slimtrain side's and
# the peer side's), as soon as both have run; failed= names the side(s) that did not finish.
# Kept in $W/rows.tsv for the table at the end.
row() {
  local name=$1 a=$2 b=$3 target=$4 what=$5 extra=${6:-} sa sb ua ub r failed=
  sa=$(cat "$W/$a.sps" 2>/dev/null); sb=$(cat "$W/$b.sps" 2>/dev/null)
  [ "$(cat "$W/$a.rc" 2>/dev/null)" = 0 ] || failed=slimtrain
  [ "$(cat "$W/$b.rc" 2>/dev/null)" = 0 ] || failed=${failed:+$failed,}peer
  read -r sa sb r < <(awk -v a="$sa" -v b="$sb" 'BEGIN {
    ok_a = a ~ /^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/; ok_b = b ~ /^[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/
    printf "%s %s %s\n", ok_a ? sprintf("%.1f", a) : "nan", ok_b ? sprintf("%.1f", b) : "nan",
      (ok_a && ok_b && b + 0 > 0) ? sprintf("%.3f", a / b) : "nan" }')
  ua=$(util "$W/$a.util"); ub=$(util "$W/$b.util")
  result "$name" "slimtrain_sps=$sa peer_sps=$sb ratio=$r slimtrain_util=$ua peer_util=$ub${target:+ target=$target}$extra${failed:+ failed=$failed}"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$sa" "$sb" "$r" "$ua" "$ub" "$what" \
    "${failed:+failed: $failed}" >>"$W/rows.tsv"
  say "bench/gpu: row $name done at $((SECONDS - T0)) s"
}
# row_failed NAME WHAT LOG: a row whose data could not be made: its RESULT line says failed=data,
# the log's tail goes to $OUT/runs/.
row_failed() {
  local name=$1 what=$2 log=$3
  say "  $name: its data failed (${DATA_WHY:-?}); the end of $log:"
  log_tail "$log" | tee -a "$REPORT"
  tail -n 200 "$log" >"$OUT/runs/$name-data.log" 2>/dev/null
  result "$name" "slimtrain_sps=nan peer_sps=nan ratio=nan slimtrain_util=nan peer_util=nan failed=data"
  printf '%s\tnan\tnan\tnan\tnan\tnan\t%s\tfailed: data\n' "$name" "$what" >>"$W/rows.tsv"
}
# skip NAME REASON: a row not run: `RESULT gpu row=NAME ... skipped=REASON`.
skip() {
  result "$1" "skipped=$2"
  printf '%s\t\t\t\t\t\t\tskipped: %s\n' "$1" "$2" >>"$W/rows.tsv"
  SKIPPED+=("$1 ($2)")
}
# start_row NAME: whether the budget leaves ROW_MIN_S for the row; once it does not, no later row
# starts either (each says skipped=budget).
OUT_OF_BUDGET=0
start_row() {
  if [ "$OUT_OF_BUDGET" = 0 ] && [ "$(left)" -lt "$ROW_MIN_S" ]; then
    OUT_OF_BUDGET=1
    say "bench/gpu: the budget is spent at $((SECONDS - T0)) s of $BUDGET s: no more rows start"
  fi
  [ "$OUT_OF_BUDGET" = 0 ] && return 0
  skip "$1" budget
  return 1
}

# table: every row in the order run, from $W/rows.tsv.
table() {
  echo
  echo "bench/gpu on $GPU ($DEVICE), $steps timed steps after $warmup warm-up steps, world size 1"
  printf '  %-26s%15s%12s%8s%14s  %s\n' row "slimtrain sps" "peer sps" ratio "util %" what
  awk -F '\t' '{ u = ($5 == "" ? "" : $5 "/" $6)
    printf "  %-26s%15s%12s%8s%14s  %s%s\n", $1, $2, $3, $4, u, $7, ($8 == "" ? "" : " [" $8 "]") }' \
    "$W/rows.tsv" 2>/dev/null
}
