#!/usr/bin/env bash
# slimtrain report, end to end: a 2-rank run with rank 1 made slow (SLIMTRAIN_INJECT
# action=slow) names the straggler once and records every rank's time; its report is one
# self-contained HTML file whose curves hold every logged point, rendered by headless Chromium
# to a PNG that is not blank and shows the curves' colours; a report over two runs overlays both;
# a run that hung shows the failure and its flight recorders, and after a resume the resume;
# bad run directories exit 2 naming them and leave no report.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
CHECK=("$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/report_check.py")
BROWSER=$(command -v chromium || command -v chromium-browser || true)
[ -n "$BROWSER" ] || { echo "skipped: no chromium to render the report (scripts/install-deps.sh installs it)"; exit 77; }
"$PY" -c "import PIL" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks PIL (python3-pil)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train_data "$work" || exit 1
D=$work/data.h5
MPI=(timeout 120 "$MPIEXEC" -np 2)
render() {  # render HTML PNG: headless Chromium's screenshot of the page
  timeout 90 "$BROWSER" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$work/chromium" --window-size=1200,2600 --screenshot="$2" "file://$1" \
    >"$work/chromium.log" 2>&1
  [ -s "$2" ] || { echo "  chromium wrote no screenshot:"; tail -5 "$work/chromium.log"; return 1; }
}

# A run whose rank 1 sleeps 30 ms in every step's data phase from step 1 on.
A=$work/run-a
check "a run with a slow rank 1 trains" expect_rc 0 env SLIMTRAIN_INJECT="rank=1,phase=train,step=1,action=slow,delay=30ms" \
  "${MPI[@]}" "$S" train --data "$D" --out "$A" "${SMALL_JOB[@]}" --max-steps 24 --eval-every 8 \
  --checkpoint-every 8 --straggler-windows 2
check "  rank 0 names the straggler once, with its host and phase" test "$(grep -c "r0 WARN  rank 1 on [^ ]* is [0-9]*% slower than the median over the last 2 windows: data [0-9.]*x" <<<"$out")" = 1
check "  a straggler event" json_is "$(events "$A" straggler)" 'e["rank"] == 1 and e["step"] == 8 and e["phase_ratios"]["data"] > 2'
check "  every train event has both ranks' compute times, rank 1 the slowest" json_is "$(events "$A" train | "$PY" -c '
import json, sys; print(json.dumps([json.loads(l)["ranks"] for l in sys.stdin]))')" \
  'len(e) == 6 and all(len(r["compute_ms"]) == 2 and r["slowest"] == 1 and r["slowest_ms"] >= 25 and r["median_ms"] < 25 for r in e)'
check "  the final evaluation keeps its 4 x 4 confusion matrix" json_is "$(events "$A" done)" \
  'len(e["final"]["confusion"]) == 4 and sum(map(sum, e["final"]["confusion"])) == e["final"]["count"] == 203'
check "  the start event keeps the configuration" json_is "$(events "$A" start)" 'e["config"]["max-steps"] == "24" and e["config"]["straggler-windows"] == "2"'

check "report of the run" expect_rc 0 "$S" report "$A"
check "  written to RUN_DIR/report.html" test -s "$A/report.html"
# The summary's "next:" commands run as printed: the binary by its path when run by its path.
next_eval=$(grep -A1 '^next:' <<<"$out" | tail -n 1 | sed 's/^ *//')
check "  its next: eval names the binary as run" test "${next_eval%% *}" = "$(readlink -f "$S")"
check "  and runs as printed" eval "out=\$($next_eval 2>&1) && grep -q 'accuracy' <<<\"\$out\""
check "  self-contained" "${CHECK[@]}" selfcontained "$A/report.html"
check "  the loss curve has the 6 logged steps" "${CHECK[@]}" points "$A/report.html" run-a 6
check "  evaluation accuracy at steps 8, 16 and the final 24" "${CHECK[@]}" points "$A/report.html" "run-a accuracy" 3
check "  the per-rank panel draws rank 0 and rank 1" "${CHECK[@]}" points "$A/report.html" "rank 1" 6
check "  (rank 0)" "${CHECK[@]}" points "$A/report.html" "rank 0" 6
check "  the straggler marked with its reason" "${CHECK[@]}" count "$A/report.html" "<title>[^<]*rank 1 on [^<]* slower than the median" ">0"
check "  five stacked step-time phases" "${CHECK[@]}" count "$A/report.html" '<polygon class="layer"' 5
check "  the confusion matrix as 16 cells" "${CHECK[@]}" count "$A/report.html" '<rect class="cell"' 16
check "  the per-class table and the configuration" "${CHECK[@]}" count "$A/report.html" '<td>straggler-windows</td>|<td>a</td>|<td>d</td>' 3
check "  rendered by headless Chromium" render "$A/report.html" "$work/a.png"
check "  not blank, the loss curve and rank 1's line drawn (#1f77b4, #d62728)" "${CHECK[@]}" png "$work/a.png" "#1f77b4" "#d62728"

# A second run with another learning rate: one report overlays both.
B=$work/run-b
check "a second run" expect_rc 0 "${MPI[@]}" "$S" train --data "$D" --out "$B" "${SMALL_JOB[@]}" --max-steps 24 --eval-every 8 --lr 0.01
check "report over both runs" expect_rc 0 "$S" report "$A" "$B" -o "$work/both.html"
check "  run-a's loss curve" "${CHECK[@]}" points "$work/both.html" run-a 6
check "  and run-b's" "${CHECK[@]}" points "$work/both.html" run-b 6
check "  rendered: both colours drawn" render "$work/both.html" "$work/both.png"
check "  (pixels)" "${CHECK[@]}" png "$work/both.png" "#1f77b4" "#d62728"

# A run that hangs: rank 1 stops arriving at step 6; the job ends on the deadline.
F=$work/run-f
timed env SLIMTRAIN_INJECT="rank=1,phase=train,step=6,action=hang" "${MPI[@]}" "$S" train \
  --data "$D" --out "$F" "${SMALL_JOB[@]}" --max-steps 16 --checkpoint-every 4 --collective-timeout 3
check "a hung run fails" test "$rc" -ne 0 -a "$rc" -ne 124
check "report of the failed run" expect_rc 0 "$S" report "$F"
check "  its state is failed" "${CHECK[@]}" count "$F/report.html" '<td class="state-failed">failed</td>' 1
check "  the failure marked on the timeline with its reason" "${CHECK[@]}" count "$F/report.html" "<title>failed at step 5: [^<]*missing ranks: 1" ">0"
check "  the flight recorders of both ranks, the timed-out operation flagged" "${CHECK[@]}" count "$F/report.html" '<tr class="bad"><td class="n">0</td><td>[^<]*</td><td>control</td>' ">0"
check "  rendered, not blank" render "$F/report.html" "$work/f.png"
check "  (pixels)" "${CHECK[@]}" png "$work/f.png" "#1f77b4"
check "the failed run resumes and finishes" expect_rc 0 "${MPI[@]}" "$S" train --data "$D" --out "$F" "${SMALL_JOB[@]}" --max-steps 16 --checkpoint-every 4
check "  its report shows the resume" expect_rc 0 "$S" report "$F"
check "  (marker)" "${CHECK[@]}" count "$F/report.html" "<title>resume at step 4: resumed from the checkpoint of step 4" ">0"
check "  done after two launches" "${CHECK[@]}" count "$F/report.html" '<td class="state-done">done</td>.*<td class="n">2</td></tr>' 1
check "  the loss curve has every step once" "${CHECK[@]}" points "$F/report.html" run-f 4

# A run still being written: a half line at the end is left out, the rest is reported.
R=$work/running
mkdir -p "$R" && head -n 3 "$A/metrics.jsonl" >"$R/metrics.jsonl" && printf '{"event":"train","st' >>"$R/metrics.jsonl"
check "report of a run still going" expect_rc 0 "$S" report "$R"
check "  says it is running and that the last line is left out" "${CHECK[@]}" count "$R/report.html" 'running \(or ended without a record\)|still being written' 2

# Bad input: exit 2 naming the directory, file or line; no report left behind.
check "missing run directory: exit 2" expect_rc 2 "$S" report "$work/nope" -o "$work/nope.html"
check "  naming it" contains "run directory '$work/nope' does not exist"
check "  no report" test ! -e "$work/nope.html"
mkdir -p "$work/empty"
check "no metrics.jsonl: exit 2 naming it" expect_rc 2 "$S" report "$work/empty"
check "  (message)" contains "$work/empty/metrics.jsonl not found"
mkdir -p "$work/bad" && { head -n 2 "$A/metrics.jsonl"; echo '{"event": oops'; tail -n 1 "$A/metrics.jsonl"; } >"$work/bad/metrics.jsonl"
check "a bad line inside metrics.jsonl: exit 2 naming file and line" expect_rc 2 "$S" report "$work/bad"
check "  (message)" contains "$work/bad/metrics.jsonl:3: not a JSON object"
check "  no report" test ! -e "$work/bad/report.html"
check "-o into a missing directory: exit 2 naming -o" expect_rc 2 "$S" report "$A" -o "$work/no/such/r.html"
check "  (message)" contains "-o $work/no/such/r.html: the directory"
finish
