#!/usr/bin/env bash
# slimtrain prep images as a user runs it on folders written by python3-pil (PNG gray, RGB, RGBA,
# palette, 16-bit; JPEG gray and RGB; several sizes): every pixel against PIL's decode + resize
# for each --resize mode and both channel counts; np 2 writes the same file as np 1; a list file;
# every bad file and folder exits 2 naming it and leaves nothing; --skip-bad lists what it left
# out; the result trains.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import numpy, h5py, PIL" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks numpy/h5py/PIL (python3-pil)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
img=$work/img
dst=$work/out
mkdir -p "$img" "$dst"
files() { "$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/image_files.py" "$@"; }
files folders "$img" && files bad "$work/bad" || exit 1
S=$SLIMTRAIN_BIN
like_pil() { out=$(files check "$@" 2>&1) || { echo "$out" | tail -3 | sed 's/^/  | /'; return 1; }; echo "  $out"; }

check "folders convert, 1 channel, 28x28" expect_rc 0 "$S" prep images --train "$img/train" --test "$img/test" --size 28x28 --channels 1 -o "$dst/g.h5"
check "  every pixel as PIL decodes it (exact unresized)" like_pil "$dst/g.h5" "$img" 28x28 1 fit
for mode in fit crop pad; do
  for size in 20x24 40x33; do
    check "--resize $mode $size, 3 channels" expect_rc 0 "$S" prep images --train "$img/train" --size $size --resize $mode -o "$dst/$mode.h5" --force
    check "  every pixel within 1 of PIL" like_pil "$dst/$mode.h5" "$img" $size 3 $mode
  done
done
check "  class names from the folders" expect_rc 0 "$S" inspect --validate "$dst/fit.h5"
check "  (listed)" contains "classes: 10 (bag, boot, coat, dress, pullover, sandal, shirt, sneaker, trouser, tshirt)"
check "  [N, 3, H, W] uint8" contains "x uint8 \[60, 3, 40, 33\]"
rm -f "$dst"/*
check "np 2 writes the same file as np 1" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" prep images --train "$img/train" --test "$img/test" --size 20x24 --val-fraction 0.2 -o "$dst/np2.h5"
check "  (np 1)" expect_rc 0 "$S" prep images --train "$img/train" --test "$img/test" --size 20x24 --val-fraction 0.2 -o "$dst/np1.h5"
check "  identical content" h5diff "$dst/np1.h5" "$dst/np2.h5"
check "  the same bytes" cmp "$dst/np1.h5" "$dst/np2.h5"
check "a list file converts" expect_rc 0 "$S" prep images --train-list "$img/list.txt" --size 28x28 --channels 1 -o "$dst/list.h5"
check "  its 60 files" expect_rc 0 "$S" inspect "$dst/list.h5"
check "  (count)" contains "/train: 60 samples"
check "the result trains" expect_rc 0 "$S" train --data "$dst/np1.h5" --out "$work/run" --model mlp --mlp-widths 16 --batch-size 8 --epochs 1
check "  and evaluates on test" contains "final evaluation on 'test' at step 6"
rm -rf "$dst"/* "$work/run"

one_bad() {  # one_bad FILE "expected text": a copy of train with FILE in one class folder
  rm -rf "$work/one" && cp -r "$img/train" "$work/one" && cp "$work/bad/$1" "$work/one/bag/"
  check "$1 exits 2" expect_rc 2 "$S" prep images --train "$work/one" --size 28x28 -o "$dst/bad.h5"
  check "  naming it: $2" contains "one/bag/$1: $2"
  check "  leaving nothing" nothing_left
}
one_bad truncated.jpg "truncated or corrupt JPEG (libjpeg: Premature end of JPEG file)"
one_bad truncated.png "truncated or corrupt PNG (libpng: file ends early)"
one_bad corrupt.png "truncated or corrupt PNG"
one_bad anim.gif "GIF images are not supported (JPEG and PNG are)"
one_bad notes.txt "not a JPEG or PNG image"
one_bad empty.png "empty file, not an image"
rm -rf "$work/one" && cp -r "$img/train" "$work/one" && ln -s "$work/nowhere.png" "$work/one/bag/gone.png"
check "a broken link exits 2" expect_rc 2 "$S" prep images --train "$work/one" --size 28x28 -o "$dst/bad.h5"
check "  naming it" contains "one/bag/gone.png: cannot open"
rm -rf "$work/one" && cp -r "$img/train" "$work/one" && cp "$work/bad/truncated.jpg" "$work/one/tshirt/zz.jpg"
check "a bad file in rank 1's slice at np 2 exits 2" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" prep images --train "$work/one" --size 28x28 -o "$dst/bad.h5"
check "  naming it" contains "one/tshirt/zz.jpg: truncated or corrupt JPEG"
check "  leaving nothing" nothing_left

rm -rf "$work/one" && cp -r "$img/train" "$work/one" && cp "$work/bad"/* "$work/one/bag/"
check "--skip-bad converts the rest" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" prep images --train "$work/one" --size 28x28 -o "$dst/skip.h5" --skip-bad
check "  says how many it left out" contains "--skip-bad: 6 files left out, listed in .*skip.h5.skipped.txt"
check "  the report lists each with its reason" test "$(head -1 "$dst/skip.h5.skipped.txt")" = "6 files left out of $dst/skip.h5 by --skip-bad"
check "  (truncated JPEG)" grep -q "one/bag/truncated.jpg: truncated or corrupt JPEG" "$dst/skip.h5.skipped.txt"
check "  60 images kept" expect_rc 0 "$S" inspect "$dst/skip.h5"
check "  (count)" contains "/train: 60 samples"
rm -rf "$dst"/*

mkdir -p "$work/empty/a" "$work/empty/b" "$work/flat" && cp "$img/train/bag"/* "$work/empty/a/" && cp "$img/train/bag"/* "$work/flat/"
bad() {  # bad "description" "expected text" prep-args...
  local what=$1 text=$2; shift 2
  check "$what exits 2" expect_rc 2 "$S" prep images "$@" -o "$dst/bad.h5"
  check "  naming it: $text" contains "$text"
  check "  leaving nothing" nothing_left
}
bad "an empty class folder" "empty/b: empty class folder" --train "$work/empty" --size 28x28
bad "a folder of images without class folders" "flat: no class folders" --train "$work/flat" --size 28x28
bad "a missing folder" "nope: not a directory" --train "$work/nope" --size 28x28
mkdir -p "$work/test2/lamp" && cp "$img/test/bag"/* "$work/test2/lamp/"
bad "a test class not in train" "test2/lamp: class 'lamp' is not among the training folder's classes" --train "$img/train" --test "$work/test2" --size 28x28
printf 'a.png,1\nb.png\n' > "$work/bad-list.txt"
bad "a list line without a label" "bad-list.txt: line 2: expected 'path,label'" --train-list "$work/bad-list.txt" --size 28x28
printf 'a.png,x1\n' > "$work/bad-list.txt"
bad "a list label that is not a number" "bad-list.txt: line 1: label 'x1' is not an integer" --train-list "$work/bad-list.txt" --size 28x28
bad "no --size" "--size HxW is required" --train "$img/train"
bad "a bad --size" "--size: '28' is not HxW" --train "$img/train" --size 28
bad "--channels 2" "--channels: 2 must be 1 or 3" --train "$img/train" --size 28x28 --channels 2
bad "--resize squash" "--resize: 'squash' must be fit, crop or pad" --train "$img/train" --size 28x28 --resize squash
bad "--class-names with folders" "--class-names: the class folders of --train name the classes" --train "$img/train" --size 28x28 --class-names a,b
bad "--train and --train-list" "--train and --train-list: give one of them" --train "$img/train" --train-list "$img/list.txt" --size 28x28
finish
