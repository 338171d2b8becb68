#!/usr/bin/env bash
# One-shot build-and-test of slimtrain on a GPU machine that lacks the Debian build deps.
#   bash scripts/gpu/build-and-check.sh   (on the lent machine, from the repo root, `.gpu` carried:
#                                          scripts/gpu/fetch-debs.sh fills it here; $OUT: the
#                                          folder whose files come back)
# Seen on 2026-11-26 on an H200 (PyTorch 2.11.0+cu130, NCCL 2.28.9, g++ from /opt/gcc): setup
# and configure 20 s, the slimtrain binary built in about 50 s with -j 16.
# Stages: sysinfo, extract (.gpu/debs/*.deb -> $GPUROOT, never /), mpirun check, configure
# (build-gpu, Ninja, Release, NCCL ON), build (slimtrain + gpu tests, -k 0), ctest -L gpu,
# cuda runs (--shard none/optimizer/gradients/gradients+overlap-gather at world size 1).
# Keeps going past failures; each stage's rc and seconds land in $OUT/summary.txt.
# Knobs (env): GPUROOT (/tmp/gpuroot), BUILD_DIR (build-gpu), RUN_BUDGET_S (420: the whole
# script's wall-clock budget; step timeouts shrink to fit it), RUN_STAGES (all | a list of
# setup,configure,build,ctest,runs; build alone reuses $BUILD_DIR's cache), BUILD_TARGETS (the
# build stage's targets: slimtrain), FORCE_ALL_LIBS=1
# (use every shipped library even where the system has one of the same soname), JOBS (16),
# TORCH_CMAKE_PREFIX, NCCL_DIR, RUN_DEVICE (cuda), RUN_EXTRA (more train options for the runs;
# not ones the runs already give), DIAG (a command run before the runs, with $S and $W set; to
# name where a crash happens, preload segv_report.c beside this script).
set -o pipefail
T0=$SECONDS
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
OUT=${OUT:-$REPO/.gpu/out}
mkdir -p "$OUT"
P=${GPUROOT:-/tmp/gpuroot}
B=${BUILD_DIR:-build-gpu}
BUDGET=${RUN_BUDGET_S:-420}
STAGES=${RUN_STAGES:-all}
JOBS=${JOBS:-16}
SETUP=$OUT/setup.log        # sysinfo, extraction, env, mpirun check, configure
SUMMARY=$OUT/summary.txt
: >"$SETUP"; : >"$SUMMARY"

log() { echo "[$((SECONDS - T0))s] $*" | tee -a "$SETUP"; }
want() { [ "$STAGES" = all ] || [[ ",$STAGES," == *",$1,"* ]]; }
# record STAGE RC SECONDS [note]
record() { printf '%-28s rc=%-4s %4ss  %s\n' "$1" "$2" "$3" "${4:-}" >>"$SUMMARY"; }
# budget WANT RESERVE: WANT seconds, capped so RESERVE seconds remain in the budget; at least 1
# (never 0: `timeout 0` would mean no limit).
budget() {
  local left=$((BUDGET - (SECONDS - T0) - $2))
  [ "$left" -gt "$1" ] && left=$1
  [ "$left" -lt 1 ] && left=1
  echo "$left"
}

# ---------------------------------------------------------------- sysinfo
{
  echo "== sysinfo"; date; uname -a; cat /etc/os-release 2>/dev/null | head -4
  echo "which: $(which gcc g++ c++ clang++ nvcc cmake ninja make dpkg readelf python3 2>&1 | tr '\n' ' ')"
  g++ --version 2>&1 | head -1; cmake --version 2>&1 | head -1; ninja --version 2>&1
  /usr/local/cuda/bin/nvcc --version 2>&1 | tail -2; ldd --version 2>&1 | head -1
  nvidia-smi 2>&1 | head -20; nproc; free -g 2>&1 | head -2; df -h /tmp . 2>&1 | tail -2
  echo "python3: $(command -v python3); /usr/bin/python3: $(ls -l /usr/bin/python3 2>&1)"
} >>"$SETUP" 2>&1

# ---------------------------------------------------------------- python / torch / nccl lookups
PY=python3
if ! "$PY" -c "import torch" >/dev/null 2>&1; then
  for c in /opt/torch/.venv/bin/python3 /opt/torch/.venv/bin/python; do
    [ -x "$c" ] && "$c" -c "import torch" >/dev/null 2>&1 && { PY=$c; break; }
  done
fi
# One interpreter start (importing torch takes seconds): torch's cmake prefix, its version,
# site-packages, the nvidia-nccl wheel's folder; a line each, empty where not found.
mapfile -t pyinfo < <("$PY" - 2>/dev/null <<'EOF'
import sysconfig
try:
    import torch
    print(torch.utils.cmake_prefix_path); print(torch.__version__, "cuda", torch.version.cuda)
except Exception:
    print(); print()
print(sysconfig.get_paths()["purelib"])
try:
    import nvidia.nccl
    print(list(nvidia.nccl.__path__)[0])
except Exception:
    print()
EOF
)
TORCH_PREFIX=${TORCH_CMAKE_PREFIX:-${pyinfo[0]:-}}
TORCH_VERSION=${pyinfo[1]:-}
SITE=${pyinfo[2]:-}
NCCL_DIR=${NCCL_DIR:-${pyinfo[3]:-}}
NCCL_LIB=; NCCL_INC=
for cand in "$NCCL_DIR/lib/libnccl.so" "$NCCL_DIR/lib/libnccl.so.2"; do
  [ -n "$NCCL_DIR" ] && [ -e "$cand" ] && { NCCL_LIB=$cand; break; }
done
[ -n "$NCCL_DIR" ] && [ -f "$NCCL_DIR/include/nccl.h" ] && NCCL_INC=$NCCL_DIR/include
if [ -z "$NCCL_LIB" ] || [ -z "$NCCL_INC" ]; then
  NCCL_LIB=$(find ${SITE:+"$SITE"} /opt/torch /usr/local/cuda/ /usr/lib/x86_64-linux-gnu /usr/local/lib \
    -name 'libnccl.so*' \( -type f -o -type l \) 2>/dev/null | sort | head -1)
  if [ -n "$NCCL_LIB" ]; then
    d=$(dirname "$NCCL_LIB")
    for i in "$d/../include" "$d/../../include" /usr/local/cuda/include /usr/include; do
      [ -f "$i/nccl.h" ] && { NCCL_INC=$(cd "$i" && pwd); break; }
    done
  fi
fi
PYN=$PY  # a python with numpy, for the data and the checkpoint comparison
"$PYN" -c "import numpy" >/dev/null 2>&1 || { [ -x /usr/bin/python3 ] && PYN=/usr/bin/python3; }
log "python $PY (numpy: $PYN); torch $TORCH_VERSION; torch cmake prefix '$TORCH_PREFIX'; NCCL lib '$NCCL_LIB' include '$NCCL_INC'"

# The e2e scripts run /usr/bin/python3 and need numpy: borrow the venv's site-packages when the
# system python has none and is the same minor version.
if [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c "import numpy" >/dev/null 2>&1; then
  v_sys=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  v_py=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  np_site=$("$PY" -c "import numpy, os; print(os.path.dirname(os.path.dirname(numpy.__file__)))" 2>/dev/null)
  if [ "$v_sys" = "$v_py" ] && [ -n "$np_site" ]; then
    export PYTHONPATH=$np_site${PYTHONPATH:+:$PYTHONPATH}
    log "PYTHONPATH=$PYTHONPATH for /usr/bin/python3 (numpy)"
  else
    log "WARNING: /usr/bin/python3 ($v_sys) lacks numpy and differs from $PY ($v_py): e2e tests will skip"
  fi
fi

# ---------------------------------------------------------------- extract the debs
t=$SECONDS
rc=0
if want setup || want configure || want build || want ctest || want runs; then
  rm -rf "$P"; mkdir -p "$P"
  debs=("$REPO"/.gpu/debs/*.deb)
  if command -v dpkg-deb >/dev/null; then
    printf '%s\0' "${debs[@]}" | xargs -0 -P 8 -I{} dpkg-deb -x {} "$P" || rc=1
  else  # no dpkg: the data member by hand
    for d in "${debs[@]}"; do
      m=$(ar t "$d" | grep '^data.tar')
      case $m in
        *.xz) ar p "$d" "$m" | tar -xJ -C "$P" ;; *.zst) ar p "$d" "$m" | tar --zstd -x -C "$P" ;;
        *.gz) ar p "$d" "$m" | tar -xz -C "$P" ;; *) ar p "$d" "$m" | tar -x -C "$P" ;;
      esac || { rc=1; log "extract failed: $d"; }
    done
  fi
  log "extracted ${#debs[@]} debs into $P (rc $rc)"
  # Absolute symlinks (libz.so -> /lib/...) point back into the prefix.
  find "$P" -type l -lname '/*' 2>/dev/null | while read -r l; do
    tgt=$(readlink "$l"); [ -e "$P$tgt" ] && ln -sfn "$P$tgt" "$l"
  done
  # What the postinst alternatives would make.
  for b in mpirun mpiexec mpicc mpicxx mpic++ mpiCC; do
    [ -e "$P/usr/bin/$b.openmpi" ] && ln -sfn "$b.openmpi" "$P/usr/bin/$b"
  done
  # runlib: soname links, like ldconfig, to the shipped libraries. The MPI/HDF5 stack is always
  # ours; any other library only where the system has none of that soname (so cmake, python, ...
  # keep the system's libcurl, libssl, ...).
  RL=$P/runlib; mkdir -p "$RL"
  syslibs=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null) | awk 'NR>1 {print $1}' | sort -u)
  used=0; skipped=0
  while read -r f; do
    so=
    command -v readelf >/dev/null && so=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ -z "$so" ] && so=$(basename "$f" | sed -E 's/^(lib[^.]*(-[0-9.]+)?\.so\.[0-9]+).*/\1/')
    case $so in
      libmpi*|libopen-pal*|libopen-rte*|libompitrace*|libmca_common_*|liboshmem*|libhdf5*|libpmix*|\
      libevent*|libhwloc*|libsentencepiece*|libxxhash*|libboost_*|libicu*) force=1 ;;
      *) force=${FORCE_ALL_LIBS:-0} ;;
    esac
    if [ "$force" = 1 ] || ! grep -qxF "$so" <<<"$syslibs"; then
      ln -sfn "$f" "$RL/$so"; used=$((used + 1))
    else
      skipped=$((skipped + 1))
    fi
  done < <(find "$P/usr/lib/x86_64-linux-gnu" "$P/lib/x86_64-linux-gnu" "$P/usr/lib/libpsm1" \
             "$P/usr/lib/x86_64-linux-gnu/pmix2/lib" -maxdepth 1 -type f -name 'lib*.so*' 2>/dev/null)
  log "runlib: $used shipped libraries linked, $skipped left to the system's copy: $(ls "$RL" | tr '\n' ' ')"
fi
record extract "$rc" $((SECONDS - t))

# ---------------------------------------------------------------- environment
. "$REPO/scripts/gpu/env.sh"  # the prefix's MPI, HDF5 and libraries, for this shell
{
  echo "== environment"
  env | grep -E '^(PATH|LD_LIBRARY_PATH|PYTHONPATH|TORCH_CUDA_ARCH_LIST|OPAL_[A-Z_]*|OMPI_[A-Z_]*|PMIX_[A-Z_]*|HWLOC_[A-Z_]*)=' | sort
} >>"$SETUP"

# ---------------------------------------------------------------- mpirun check
t=$SECONDS
rc=skip
if want setup || want ctest || want runs; then
  {
    echo "== mpirun check: $(command -v mpirun) -> $(readlink -f "$(command -v mpirun)")"
    ompi_info --path prefix --path pkglibdir --path sysconfdir 2>&1
  } >>"$SETUP" 2>&1
  out=$(timeout 30 mpirun -np 1 hostname 2>&1); rc=$?
  echo "$out" >>"$SETUP"
  log "mpirun -np 1 hostname: rc $rc"
  # The launched process's parent is mpirun: which Open MPI libraries did it map?
  [ "$rc" = 0 ] && timeout 30 mpirun -np 1 sh -c \
    'grep -oE "/[^ ]*lib(open-pal|open-rte|pmix|hwloc|event_core)[^ ]*" /proc/$PPID/maps | sort -u' >>"$SETUP" 2>&1
fi
record mpirun_hostname "$rc" $((SECONDS - t))

# ---------------------------------------------------------------- configure
t=$SECONDS
CFG=skip
if want configure; then
  gen=(-G Ninja); command -v ninja >/dev/null || gen=(-G "Unix Makefiles")
  comp=()
  if ! command -v c++ >/dev/null && ! command -v g++ >/dev/null && command -v clang++ >/dev/null; then
    comp=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
  fi
  torch=()
  if [ -n "$TORCH_PREFIX" ] && [ -d "$TORCH_PREFIX/Torch" ]; then
    torch=(-DTorch_DIR="$TORCH_PREFIX/Torch")
    prefix="$TORCH_PREFIX;$P/usr"
  else
    prefix="$P/usr"
  fi
  # CUDA's location, the architecture list and LibTorch's optional CUDA libraries are
  # cmake/TorchCompat.cmake's defaults, as in CI's 2.x build (TORCH=pip scripts/build.sh).
  nccl=(-DSLIMTRAIN_WITH_NCCL="${SLIMTRAIN_WITH_NCCL:-ON}")
  [ -n "$NCCL_LIB" ] && nccl+=(-DNCCL_LIBRARY="$NCCL_LIB")
  [ -n "$NCCL_INC" ] && nccl+=(-DNCCL_INCLUDE_DIR="$NCCL_INC")
  args=(-S . -B "$B" "${gen[@]}" "${comp[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="${CXX_FLAGS_RELEASE:--O1 -DNDEBUG}"
    -DCMAKE_PREFIX_PATH="$prefix" "${torch[@]}" "${nccl[@]}"
    -DSLIMTRAIN_BUILD_BENCH=OFF -DSLIMTRAIN_BUILD_TESTS=ON -DSLIMTRAIN_TORCH_PYTHON="$(command -v "$PY")"
    # MPI from the prefix, not from a wrapper's hard-coded /usr paths.
    -DMPI_ASSUME_NO_BUILTIN_MPI=ON -DMPI_SKIP_COMPILER_WRAPPER=ON
    -DMPI_C_LIB_NAMES=mpi -DMPI_CXX_LIB_NAMES="mpi_cxx;mpi"
    -DMPI_mpi_LIBRARY="$OMPI_LIB/libmpi.so" -DMPI_mpi_cxx_LIBRARY="$OMPI_LIB/libmpi_cxx.so"
    -DMPI_C_HEADER_DIR="$OMPI_INC" -DMPI_CXX_HEADER_DIR="$OMPI_INC"
    -DMPI_C_COMPILER_INCLUDE_DIRS="$OMPI_INC;$OMPI_INC/openmpi"
    -DMPI_CXX_COMPILER_INCLUDE_DIRS="$OMPI_INC;$OMPI_INC/openmpi"
    -DMPIEXEC_EXECUTABLE="$P/usr/bin/mpiexec"
    # Parallel HDF5 from the prefix: no config file, no h5pcc (its paths are /usr): a wrapper
    # that fails sends FindHDF5 to its search, which reads H5pubconf.h for HDF5_IS_PARALLEL.
    -DHDF5_NO_FIND_PACKAGE_CONFIG_FILE=ON -DHDF5_C_COMPILER_EXECUTABLE=/bin/false
    -DHDF5_ROOT="$H5_DIR" -DHDF5_C_INCLUDE_DIR="$P/usr/include/hdf5/openmpi"
    -DHDF5_hdf5_LIBRARY_RELEASE="$H5_DIR/libhdf5.so"
    -DBoost_DIR="$P/usr/lib/x86_64-linux-gnu/cmake/Boost-1.74.0" -DBoost_NO_SYSTEM_PATHS=ON
    -DxxHash_ROOT="$P/usr"
    -DZLIB_ROOT="$P/usr" -DICU_ROOT="$P/usr")
  {
    echo "== configure: cmake ${args[*]}"
  } >>"$SETUP"
  # No cache is removed: on a rerun the -D values above override it and objects are kept.
  timeout "$(budget 120 200)" cmake "${args[@]}" 2>&1 | tee -a "$SETUP" | tail -5
  CFG=${PIPESTATUS[0]}
  {
    echo "== configure rc $CFG; what the cache holds"
    grep -E '^(Torch_DIR|MPI_C_HEADER_DIR|MPI_mpi_LIBRARY|MPI_CXX_LIB_NAMES|MPIEXEC_EXECUTABLE|HDF5_C_INCLUDE_DIR|HDF5_hdf5_LIBRARY_RELEASE|HDF5_IS_PARALLEL|Boost_DIR|xxHash_LIBRARY|xxHash_INCLUDE_DIR|SENTENCEPIECE_[A-Z_]*|NCCL_LIBRARY|NCCL_INCLUDE_DIR|ZLIB_LIBRARY_RELEASE|ZLIB_INCLUDE_DIR|JPEG_LIBRARY_RELEASE|PNG_LIBRARY_RELEASE|GTest_DIR|nlohmann_json_DIR|CUDAToolkit_[A-Z_]*DIR|CMAKE_CXX_COMPILER|CMAKE_CUDA_COMPILER)[:=]' "$B/CMakeCache.txt" 2>/dev/null
  } >>"$SETUP"
  log "configure rc $CFG"
fi
record configure "$CFG" $((SECONDS - t))

# ---------------------------------------------------------------- build
t=$SECONDS
BLD=skip
# The gpu tests' programs are built after the runs, with the time left, unless BUILD_TARGETS
# names them here (one build of everything at -j 16 is quicker than two).
read -r -a TARGETS <<<"${BUILD_TARGETS:-slimtrain}"
# A build without this run's configure (RUN_STAGES=build,...) reuses the build dir's cache.
if want build && { [ "$CFG" = 0 ] || { [ "$CFG" = skip ] && [ -f "$B/CMakeCache.txt" ]; }; }; then
  keep=(-k 0); [ -f "$B/build.ninja" ] || keep=(-k)
  tb=$(budget 360 45)
  log "build ${TARGETS[*]} with -j $JOBS, timeout ${tb}s"
  timeout "$tb" cmake --build "$B" -j "$JOBS" --target "${TARGETS[@]}" -- "${keep[@]}" >"$OUT/build.log" 2>&1
  BLD=$?
  echo "== build rc $BLD after $((SECONDS - t))s" >>"$OUT/build.log"
  grep -E "error|Error" "$OUT/build.log" | head -200 >"$OUT/errors.txt"
  log "build rc $BLD; $(grep -c ' error' "$OUT/build.log") error lines; $(grep -c 'warning:' "$OUT/build.log") warnings"
  for x in "$B/apps/slimtrain" "$B/tests/gpu/gpu_devices" "$B/tests/gpu/gpu_comm"; do
    [ -x "$x" ] && log "built $x" || log "missing $x"
  done
  [ -x "$B/apps/slimtrain" ] && { ldd "$B/apps/slimtrain" | grep -E 'mpi|hdf5|nccl|torch|cuda|not found'; } >>"$SETUP" 2>&1
fi
record build "$BLD" $((SECONDS - t)) "$([ -f "$OUT/build.log" ] && echo "$(grep -c ' error' "$OUT/build.log") error lines")"

# ---------------------------------------------------------------- cuda runs at world size 1
S=$B/apps/slimtrain
RUNS=$OUT/cuda_runs.log
DEV=${RUN_DEVICE:-cuda}  # RUN_DEVICE=cpu: try the run stage on a machine without a GPU
if want runs && [ -x "$S" ]; then
  W=$(mktemp -d /tmp/slimtrain-gpu.XXXXXX)
  t=$SECONDS
  {
    echo "== data: 384 train / 203 test 1x8x8 images, 4 classes (tests/e2e/train_lib.sh)"
    # The e2e tests' own data, made by their helper with this machine's python and binary.
    (SLIMTRAIN_BIN=$S; . "$REPO/tests/e2e/train_lib.sh"; PY=$PYN; train_data "$W")
    echo "prep rc $?"
  } >>"$RUNS" 2>&1
  record cuda_data "$(tail -1 "$RUNS" | grep -o '[0-9]*$')" $((SECONDS - t))
  recipe=(--data "$W/data.h5" --model mlp --mlp-widths 32,16 --threads 1 --log-every 50 --batch-size 8
    --schedule constant --seed 42 --eval-every 100 --checkpoint-every 100 --final-split none
    --bucket-mb 0.002 --optimizer adamw --lr 0.01 --max-steps 300 ${RUN_EXTRA:-})
  run_one() {  # run_one NAME ARGS...
    local name=$1; shift
    local t1=$SECONDS tr
    tr=$(budget 60 5)
    if [ "$tr" -lt 10 ]; then record "cuda_$name" skip 0 "out of budget"; return; fi
    echo "== $name: mpirun -np 1 $S train --device $DEV ${recipe[*]} $* (timeout ${tr}s)" >>"$RUNS"
    timeout "$tr" mpirun -np 1 "$S" train --device "$DEV" "${recipe[@]}" "$@" --out "$W/$name" >>"$RUNS" 2>&1
    local r=$?
    echo "== $name exit $r after $((SECONDS - t1))s" >>"$RUNS"
    "$PYN" - "$W/$name/metrics.jsonl" >>"$RUNS" 2>&1 <<'EOF'
import json, sys
try:
    ev = [json.loads(l) for l in open(sys.argv[1])]
except Exception as e:
    print("  no metrics:", e); sys.exit(0)
for e in ev:
    if e.get("event") in ("start", "done"):
        s = json.dumps(e, sort_keys=True)
        n = 700 if e["event"] == "start" else 1500
        print("  " + e["event"] + ": " + (s if len(s) < n else s[:n] + " ..."))
EOF
    record "cuda_$name" "$r" $((SECONDS - t1))
  }
  if [ -n "${DIAG:-}" ]; then export S W; eval "$DIAG" >"$OUT/diag.log" 2>&1; fi
  run_one shard-none --shard none
  run_one shard-optimizer --shard optimizer
  run_one shard-gradients --shard gradients
  run_one shard-gradients-gather --shard gradients --overlap-gather on
  {
    echo "== checkpoints at step 300 against --shard none (largest relative difference per run)"
    ls -R "$W/shard-gradients/checkpoints" 2>/dev/null | head -20
    "$PYN" - "$W" <<'EOF'
import json, os, sys
import numpy as np
w = sys.argv[1]
def load(d):
    m = json.load(open(d + "/manifest.json"))
    raw = open(d + "/tensors.bin", "rb").read()
    return {t["name"]: np.frombuffer(raw[t["offset"]:t["offset"] + t["nbytes"]], np.float32)
            for t in m["tensors"]}
try:
    ref = load(f"{w}/shard-none/checkpoints/step-00000300")
except Exception as e:
    print("  no reference checkpoint:", repr(e)); sys.exit(0)
for r in ("shard-optimizer", "shard-gradients", "shard-gradients-gather"):
    try:
        a = load(f"{w}/{r}/checkpoints/step-00000300")
        worst = max(float(np.abs(a[n] - ref[n]).max() / max(np.abs(ref[n]).max(), 1e-12)) for n in ref)
        print(f"  {r}: {len(a)} tensors, largest relative difference {worst:.3e}")
    except Exception as e:
        print(f"  {r}: could not compare: {e!r}")
EOF
  } >>"$RUNS" 2>&1
  grep -E 'largest relative difference|could not compare|no reference' "$RUNS" >>"$SUMMARY"
  rm -rf "$W"
else
  record cuda_runs skip 0 "no binary or not wanted"
fi

# ---------------------------------------------------------------- ctest -L gpu
t=$SECONDS
CT=skip
# After a failed build, still run what got built (missing test programs show as Not Run).
if want ctest && { [ "$BLD" = 0 ] || [ -x "$B/tests/gpu/gpu_devices" ] || [ -x "$B/tests/gpu/gpu_comm" ]; }; then
  tg=$(budget 150 40)
  log "build gpu_devices gpu_comm gpu_step_ahead_copy, timeout ${tg}s"
  timeout "$tg" cmake --build "$B" -j "$JOBS" --target gpu_devices gpu_comm gpu_step_ahead_copy -- -k 0 >>"$OUT/build.log" 2>&1
  log "gpu test build rc $?"
  tc=$(budget 240 5)
  : >"$OUT/ctest.log"
  [ "$BLD" = 0 ] || echo "== NOTE: the build failed (rc $BLD); running the gpu tests that were built" >>"$OUT/ctest.log"
  (cd "$B" && timeout "$tc" ctest -L gpu --output-on-failure --timeout 300) >>"$OUT/ctest.log" 2>&1
  CT=$?
  echo "== ctest rc $CT after $((SECONDS - t))s (timeout ${tc}s)" >>"$OUT/ctest.log"
  log "ctest rc $CT: $(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1)"
fi
record ctest_gpu "$CT" $((SECONDS - t)) "$(grep -E 'tests passed|tests failed' "$OUT/ctest.log" 2>/dev/null | tail -1)"

# ---------------------------------------------------------------- summary
# Files come back only up to 16 MiB each: keep the head and the tail of anything larger.
for f in "$OUT"/*; do
  if [ -f "$f" ] && [ "$(stat -c %s "$f")" -gt 15000000 ]; then
    { head -c 4000000 "$f"; printf '\n... [cut to fit] ...\n'; tail -c 10000000 "$f"; } >"$f.cut" && mv "$f.cut" "$f"
  fi
done
{
  echo "---"
  echo "total ${BUDGET}s budget, used $((SECONDS - T0))s; prefix $P; build dir $B; stages '$STAGES'"
  echo "torch: $TORCH_VERSION ($TORCH_PREFIX); nccl: $NCCL_LIB"
  echo "device: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
  echo "files: $(cd "$OUT" && ls | tr '\n' ' ')"
} >>"$SUMMARY"
cat "$SUMMARY"
