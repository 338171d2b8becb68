# Helpers for e2e scripts: sourced, not run. SLIMTRAIN_BIN and MPIEXEC come from CTest.
set -u
: "${SLIMTRAIN_BIN:?run through ctest, which sets SLIMTRAIN_BIN}"
fails=0
passes=0
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then passes=$((passes + 1)); echo "ok   $what"; else fails=$((fails + 1)); echo "FAIL $what"; fi
}
expect_rc() {  # expect_rc CODE command... ; output kept in $out
  local want=$1; shift
  out=$("$@" 2>&1); local rc=$?
  [ "$rc" -eq "$want" ] || { echo "  exit $rc, wanted $want: $*"; echo "$out" | sed 's/^/  | /' | head -20; return 1; }
}
# json_line: the last line of $out that is a JSON object. Under mpirun a rank's stdout and stderr
# are forwarded separately, so a log line may arrive after the JSON printed later (seen in CI).
json_line() { grep '^{' <<<"$out" | tail -n 1; }
contains() { grep -q -- "$1" <<<"$out" || { echo "  output lacks '$1':"; echo "$out" | sed 's/^/  | /' | head -20; return 1; }; }
# nothing_left [DIR]: DIR (default $dst, the script's output folder) is empty.
nothing_left() {
  local d=${1:-$dst}
  [ -z "$(ls -A "$d")" ] || { echo "  left behind: $(ls -A "$d")"; return 1; }
}
finish() { echo "$passes passed, $fails failed"; [ "$fails" -eq 0 ]; }
# new_work [CLEANUP]: $work, a new temporary folder, removed when the script exits after the
# command string CLEANUP where one is given (a job to kill, a cluster to stop).
new_work() {
  work=$(mktemp -d) || exit 1
  # shellcheck disable=SC2064  # CLEANUP expanded now, $work at exit
  trap "${1:+$1; }rm -rf \"\$work\"" EXIT
}
# timed COMMAND...: runs it like expect_rc's callers expect, leaving rc, out and the wall time
# in seconds (integer) in $wall.
timed() {
  local start=$SECONDS
  out=$("$@" 2>&1)
  rc=$?
  wall=$((SECONDS - start))
}
# py_start PYTHON: one interpreter (py_worker.py) for the script's Python checks, in $work: `py
# ARGS...` then does what `PYTHON ARGS...` would (a script, -c CODE, or - with the code on stdin),
# with torch and transformers imported once instead of per check (2-4 s each on the test machines).
py_start() {
  mkfifo "$work/.py-in" "$work/.py-out" || return 1
  "$1" -u "$SLIMTRAIN_SOURCE_DIR/tests/e2e/py_worker.py" <"$work/.py-in" >"$work/.py-out" &
  exec 7>"$work/.py-in" 8<"$work/.py-out"
}
py() {
  [ "$1" = - ] && { shift; set -- -c "$(cat)" "$@"; }
  printf '%s\0' "$@" >"$work/.py-request"
  printf '%s\t%s\n' "$work/.py-request" "$work/.py-output" >&7
  local rc
  read -r -t 900 rc <&8 || { echo "  no answer from the Python checks' interpreter (py_worker.py)"; return 1; }
  cat "$work/.py-output"
  return "$rc"
}
