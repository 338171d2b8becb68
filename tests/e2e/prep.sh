#!/usr/bin/env bash
# slimtrain prep and inspect as a user runs them: each input format converts, every bad input
# exits 2 naming the file and position and leaves nothing behind, the output is atomic, two
# ranks write the same file as one, and the real Fashion-MNIST converts and validates.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import numpy, h5py" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks numpy/h5py"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
in=$work/in
dst=$work/out
mkdir -p "$in" "$dst"
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/data_files.py" inputs "$in" || exit 1
S=$SLIMTRAIN_BIN
idx_ok=(--train-images "$in/train-images.gz" --train-labels "$in/train-labels.gz"
        --test-images "$in/test-images" --test-labels "$in/test-labels")

check "idx converts" expect_rc 0 "$S" prep idx "${idx_ok[@]}" --class-names a,b,c,d -o "$dst/idx.h5"
check "  h5py reads it back exactly" "$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/data_files.py" check-prep "$dst/idx.h5" "$in"
check "  inspect --validate" expect_rc 0 "$S" inspect --validate "$dst/idx.h5"
check "  reports splits and histogram" contains "/test: 7 samples, x uint8"
check "  and labels" contains "labels: a=13 b=12 c=12 d=13"
check "existing output refused" expect_rc 2 "$S" prep idx "${idx_ok[@]}" -o "$dst/idx.h5"
check "  naming --force" contains "pass --force"
check "--force replaces" expect_rc 0 "$S" prep idx "${idx_ok[@]}" --val-fraction 0.2 --compress 4 --force -o "$dst/idx.h5"
check "  val split and compression" expect_rc 0 "$S" inspect "$dst/idx.h5"
check "  /val holds 10" contains "/val: 10 samples"
check "  compressed" contains "compressed"
check "two ranks write the same file" expect_rc 0 "$MPIEXEC" -np 2 "$S" prep idx "${idx_ok[@]}" --val-fraction 0.2 --compress 4 -o "$dst/idx2.h5"
check "  identical content" h5diff "$dst/idx.h5" "$dst/idx2.h5"
check "  the same bytes" cmp "$dst/idx.h5" "$dst/idx2.h5"
head -c 300 "$in/train-images.gz" > "$in/cut.gz"
check "a truncated gzip input under mpirun -np 2 exits 2" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" prep idx --train-images "$in/cut.gz" --train-labels "$in/train-labels.gz" -o "$dst/cut.h5"
check "  naming it (rank 0 read it for both)" contains "data error on rank 0: .*cut.gz: corrupt or truncated gzip stream"
check "  leaving no output" test ! -e "$dst/cut.h5"
check "csv converts (gzip, header)" expect_rc 0 "$S" prep csv --train "$in/train.csv.gz" --header -o "$dst/csv.h5"
check "  4 classes, 3 features" expect_rc 0 "$S" inspect --validate "$dst/csv.h5"
check "  as features" contains "x float32 \[50, 3\]"
check "npy converts" expect_rc 0 "$S" prep npy --train-x "$in/x.npy" --train-y "$in/y.npy" -o "$dst/npy.h5"
check "  as [N, C, H, W]" expect_rc 0 "$S" inspect "$dst/npy.h5"
check "  shape" contains "model input 1 x 3 x 4"
check "npy f8 converts" expect_rc 0 "$S" prep npy --train-x "$in/x-f8.npy" --train-y "$in/y.npy" -o "$dst/f8.h5"
rm -f "$dst"/*

# Under mpirun, a failure inside the collective HDF5 write cannot be agreed on (the peers wait in
# MPI-IO): the failing rank prints its error and ends the job within seconds; a rank that stalls
# there is ended by --io-timeout. Nothing is left behind, not even the temporary file.
timed env SLIMTRAIN_INJECT="rank=1,phase=prep,step=0,action=throw" timeout 60 "$MPIEXEC" -np 2 \
  "$S" prep idx "${idx_ok[@]}" -o "$dst/fail.h5"
echo "  (rank 1 failing in the write: exit $rc after $wall s)"
check "a rank failing inside the parallel write: exit 2" test "$rc" -eq 2
check "  within seconds" test "$wall" -lt 15
check "  with that rank's message" contains "^slimtrain: data error on rank 1: SLIMTRAIN_INJECT"
check "  and nothing left behind" nothing_left
timed env SLIMTRAIN_INJECT="rank=1,phase=prep,step=0,action=hang" timeout 60 "$MPIEXEC" -np 2 \
  "$S" prep idx "${idx_ok[@]}" -o "$dst/stall.h5" --io-timeout 3
echo "  (rank 1 stalled in the write: exit $rc after $wall s)"
check "a rank stalled inside the parallel write: the job ends" test "$rc" -ne 0 -a "$rc" -ne 124
check "  after --io-timeout, not never" test "$wall" -lt 20
check "  naming the phase" contains "prep: the collective HDF5 write of .* did not finish within 3 s"
check "  and nothing left behind" nothing_left

# Class names as labels (iris's species): sorted into class_names, test's names among train's.
printf 'sepal,petal,species\n5.1,1.4,setosa\n7.0,4.7,versicolor\n6.3,6.0,virginica\n4.9,1.4,setosa\n6.4,4.5,versicolor\n' > "$in/iris.csv"
printf 'sepal,petal,species\n5.8,5.1,virginica\n5.0,1.6,setosa\n' > "$in/iris-test.csv"
check "string labels convert" expect_rc 0 "$S" prep csv --train "$in/iris.csv" --test "$in/iris-test.csv" --header -o "$dst/iris.h5"
check "  into sorted class names and their indices" "$PY" - "$dst/iris.h5" <<'EOF'
import sys, h5py
with h5py.File(sys.argv[1]) as f:
    names = [n.decode() if isinstance(n, bytes) else n for n in f.attrs["class_names"]]
    assert names == ["setosa", "versicolor", "virginica"], names
    assert list(f["train/y"][()]) == [0, 1, 2, 0, 1], list(f["train/y"][()])
    assert list(f["test/y"][()]) == [2, 0], list(f["test/y"][()])
EOF
check "--class-names fixes another order" expect_rc 0 "$S" prep csv --train "$in/iris.csv" --header --class-names virginica,versicolor,setosa -o "$dst/iris2.h5"
check "  the labels follow it" "$PY" -c 'import sys, h5py; f = h5py.File(sys.argv[1]); sys.exit(0 if list(f["train/y"][()]) == [2, 1, 0, 2, 1] else 1)' "$dst/iris2.h5"
check "two ranks write the same file" expect_rc 0 "$MPIEXEC" -np 2 "$S" prep csv --train "$in/iris.csv" --test "$in/iris-test.csv" --header -o "$dst/iris-np2.h5"
check "  identical content" h5diff "$dst/iris.h5" "$dst/iris-np2.h5"
check "  the same bytes" cmp "$dst/iris.h5" "$dst/iris-np2.h5"
rm -f "$dst"/iris*.h5
printf 'a,label\n1.0,0\n2.0,cat\n3.0,1\n' > "$in/mixed.csv"
printf 'a,label\n1.0,0\n2.0,1\n' > "$in/ints.csv"

bad() {  # bad "description" "expected text" prep-args...
  local what=$1 text=$2; shift 2
  check "$what exits 2" expect_rc 2 "$S" prep "$@" -o "$dst/bad.h5"
  check "  names it: $text" contains "$text"
  check "  leaves nothing" nothing_left
}
bad "wrong IDX magic" "bad-magic: not an IDX file: wrong magic" idx --train-images "$in/bad-magic" --train-labels "$in/train-labels.gz"
bad "truncated IDX" "truncated-images: truncated IDX file" idx --train-images "$in/truncated-images" --train-labels "$in/train-labels.gz"
bad "count mismatch" "holds 50 images but .*short-labels holds 49 labels" idx --train-images "$in/train-images.gz" --train-labels "$in/short-labels"
bad "float IDX" "unsupported IDX element type 0xd" idx --train-images "$in/float-images" --train-labels "$in/train-labels.gz"
bad "label out of range" "train-images.gz: record 1 has label 3, outside \[0, 3)" idx "${idx_ok[@]}" --num-classes 3
bad "ragged CSV" "ragged.csv: line 10 has 3 fields, expected 4" csv --train "$in/ragged.csv"
bad "non-numeric CSV" "word.csv: line 5, column 1: 'abc' is not a number" csv --train "$in/word.csv"
bad "NaN feature" "nan.csv: line 7, column 1: feature 'nan' is NaN" csv --train "$in/nan.csv"
bad "labels mixing integers and names" "mixed.csv: the label column (column 1) mixes integers and class names: line 2 has '0', line 3 has 'cat'" csv --train "$in/mixed.csv" --header
bad "a name not in --class-names" "iris.csv: line 4, column 2: label 'virginica' is not one of the class names (2 given by --class-names)" csv --train "$in/iris.csv" --header --class-names setosa,versicolor
bad "names in train, integers in test" "iris.csv labels its classes by name but .*ints.csv by integer" csv --train "$in/iris.csv" --test "$in/ints.csv" --header
bad "NPY float16" "x-f2.npy: unsupported .npy dtype '<f2'" npy --train-x "$in/x-f2.npy" --train-y "$in/y.npy"
bad "NPY Fortran order" "x-fortran.npy: Fortran-order" npy --train-x "$in/x-fortran.npy" --train-y "$in/y.npy"
bad "missing input" "nope.gz: cannot open" idx --train-images "$in/nope.gz" --train-labels "$in/train-labels.gz"
bad "missing option" "--train-labels is required" idx --train-images "$in/train-images.gz"
bad "bad --compress" "--compress: 12 is outside" idx "${idx_ok[@]}" --compress 12
bad "class-name count" "--class-names: 2 names" idx "${idx_ok[@]}" --class-names a,b --num-classes 4
bad "labels past the class names" "label 3, outside \[0, 2)" idx "${idx_ok[@]}" --class-names a,b
check "bad input under mpirun -np 2 ends both ranks" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" prep csv --train "$in/ragged.csv" -o "$dst/bad.h5"
check "  naming the line" contains "ragged.csv: line 10"
check "  leaves nothing" nothing_left

check "inspect of a non-HDF5 file exits 2" expect_rc 2 "$S" inspect "$in/x.npy"
check "  naming it" contains "x.npy: not an HDF5 file"
check "inspect of a directory dispatches to checkpoints" expect_rc 2 "$S" inspect "$in"
check "  and says so" contains "is a directory"

for variant in "" --fixed-strings; do
  "$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/data_files.py" write-h5py "$dst/user.h5" $variant
  check "h5py-written file ${variant:-(vlen strings)} validates" expect_rc 0 "$S" inspect --validate "$dst/user.h5"
  check "  [N, C, H, W] images" contains "model input 3 x 3 x 4"
  check "  class names" contains "classes: 3 (cat, dog, eel)"
  rm -f "$dst/user.h5"
done
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/data_files.py" write-h5py "$dst/user.h5" --bad-label
check "label out of range fails --validate" expect_rc 2 "$S" inspect --validate "$dst/user.h5"
check "  naming dataset and row" contains "user.h5: /train/y row 3: label 7 is outside \[0, 3)"
rm -f "$dst/user.h5"
# Found by fuzz_hdf5: 2^40 classes without class_names ran out of memory naming them.
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/data_files.py" write-h5py "$dst/user.h5" --num-classes 1099511627776
check "num_classes 2^40 fails (within 20 s, no memory run-out)" expect_rc 2 timeout 20 "$S" inspect "$dst/user.h5"
check "  naming file and attribute" contains "user.h5: /: attribute num_classes is 1099511627776, outside \[1, 1048576\]"
rm -f "$dst/user.h5"
# A sample of 2^32 elements (an unwritten, chunked dataset: no space on disk) is refused before
# any size is computed from it.
"$PY" - "$dst/huge.h5" <<'PY'
import sys
import h5py
with h5py.File(sys.argv[1], "w") as f:
    f.attrs["format"], f.attrs["format_version"], f.attrs["num_classes"] = "slimtrain", 1, 2
    f.create_dataset("train/x", shape=(2, 65536, 65536), dtype="u1", chunks=(1, 64, 64))
    f.create_dataset("train/y", shape=(2,), dtype="i8")
PY
check "a sample of 2^32 elements fails" expect_rc 2 timeout 20 "$S" inspect "$dst/huge.h5"
check "  naming file and dataset" contains "huge.h5: /train/x: shape \[2, 65536, 65536\] has more than 2147483648 elements per sample"
rm -f "$dst/huge.h5"

fm=/usr/share/datasets/fashion-mnist
if [ -f "$fm/train-images-idx3-ubyte.gz" ]; then
  check "Fashion-MNIST converts" expect_rc 0 "$S" prep idx --train-images "$fm/train-images-idx3-ubyte.gz" \
    --train-labels "$fm/train-labels-idx1-ubyte.gz" --test-images "$fm/t10k-images-idx3-ubyte.gz" \
    --test-labels "$fm/t10k-labels-idx1-ubyte.gz" --val-fraction 0.1 -o "$dst/fashion.h5" \
    --class-names "T-shirt/top,Trouser,Pullover,Dress,Coat,Sandal,Shirt,Sneaker,Bag,Ankle boot"
  check "  validates" expect_rc 0 "$S" inspect --validate "$dst/fashion.h5"
  check "  54000 train" contains "/train: 54000 samples, x uint8"
  check "  10000 test, balanced" contains "Ankle boot=1000"
  check "  mean 72.94" contains "mean/std (train, per channel): 72.9"
else
  echo "note: dataset-fashion-mnist not installed; real-data case not run"
fi
finish
