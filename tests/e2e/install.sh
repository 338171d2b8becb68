#!/usr/bin/env bash
# `cmake --install`: the binary and its SentencePiece module land in PREFIX/bin, run from there
# on PATH (prep text opens the module beside it), and the commands a finished run suggests name
# the binary as it was run: `slimtrain` from PATH, its path when run by its path.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
: "${SLIMTRAIN_BUILD_DIR:?run through ctest, which sets SLIMTRAIN_BUILD_DIR}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

check "cmake --install into a prefix" expect_rc 0 cmake --install "$SLIMTRAIN_BUILD_DIR" --prefix "$prefix"
check "  the binary and the SentencePiece module in PREFIX/bin" \
  test -x "$prefix/bin/slimtrain" -a -f "$prefix/bin/libslimtrain_sentencepiece.so"
export PATH=$prefix/bin:$PATH
check "  on PATH, it runs" expect_rc 0 slimtrain --version
# prep text from the installed copy: the module is found beside the binary, not in the build.
for i in $(seq 1 60); do echo "$((i % 2)),text number $i about $([ $((i % 2)) = 0 ] && echo cats || echo dogs)"; done >"$work/t.csv"
sed -i '1i label,text' "$work/t.csv"
check "  prep text finds its module beside it" expect_rc 0 env -u SLIMTRAIN_SENTENCEPIECE_MODULE \
  slimtrain prep text --train "$work/t.csv" --text-column text --label-column label --vocab-size 30 -o "$work/t.h5"

train_data "$work" || exit 1
check "a short run from PATH" expect_rc 0 slimtrain train --data "$work/data.h5" --out "$work/run" "${SMALL_JOB[@]}" --max-steps 4 --eval-every 0
check "  its report suggests 'slimtrain eval ...'" expect_rc 0 slimtrain report "$work/run"
check "  (the line)" contains "^  slimtrain eval --checkpoint $work/run "
check "  which runs as printed" eval "cmd=\$(grep -A1 '^next:' <<<\"\$out\" | tail -n 1) && \$cmd >/dev/null 2>&1"
finish
