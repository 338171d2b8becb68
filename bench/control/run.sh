#!/usr/bin/env bash
# The control plane at scale: np 2 to 32 on 2 simulated nodes (tests/cluster/cluster.sh; np above
# 2 oversubscribes this machine's cores), the trainer's own StepControl with an empty data plane
# (bench_control): the two control reductions of one training step (the check before backward
# and the decision), their time and the bytes each rank sends; then the last rank stops answering
# and rank 0 times how long the deadline plus the stall inquiry take to name it.
#   RESULT control np=N step_us_p50=... step_us_p99=... cpu_us_per_rank=... bytes_per_step=... named_s=... deadline_s=... message_bytes=...
#   RESULT control_scale from=8 to=32 time_growth=... cpu_growth=... bytes_growth=... named_growth=... report_growth=... log_growth=1.67 linear_growth=4.00
# Usage: bench/control/run.sh [build-dir]   (root: network namespaces)
# Environment: NPS ("2 4 8 16 32"), STEPS (300), DEADLINE (3).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
read -r -a nps <<<"${NPS:-2 4 8 16 32}"
steps=${STEPS:-300}
deadline=${DEADLINE:-3}
bin=$build/bench/control/bench_control
[ -x "$bin" ] || { echo "bench/control: no $bin (build the benchmarks first)" >&2; exit 2; }
source "$root/tests/cluster/cluster.sh"
why=$(cluster_can_run) || { echo "bench/control: cannot build the simulated cluster: $why" >&2; exit 2; }
export OMP_NUM_THREADS=1
# Up to 32 ranks share 2 cores: Open MPI must yield the core while it waits, or every collective
# waits for 31 busy-polling processes to be scheduled (np 8: 54 ms a step instead of 0.64).
export OMPI_MCA_mpi_yield_when_idle=1
out=$(mktemp)
trap 'rm -f "$out" "$out.log"' EXIT
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')

for np in "${nps[@]}"; do
  cluster_up 2 $(((np + 1) / 2)) >/dev/null
  cluster_mpirun -np "$np" "$bin" steps "$steps" >"$out.log" 2>&1 || true
  grep '^CONTROL' "$out.log" >>"$out" || { echo "bench/control: np $np steps failed:" >&2; tail "$out.log" >&2; exit 1; }
  # No rank finalizes (the stopped one never could): mpirun's complaint is expected and dropped.
  cluster_mpirun -np "$np" "$bin" stall "$deadline" >"$out.log" 2>&1 || true
  grep '^STALL' "$out.log" >>"$out" || { echo "bench/control: np $np stall failed:" >&2; tail "$out.log" >&2; exit 1; }
  cluster_down
done

/usr/bin/python3 - "$out" "$cpu" <<'EOF'
import math, re, sys
rows = {}
for line in open(sys.argv[1]):
    kind, rest = line.split(" ", 1)
    fields = dict(re.findall(r"(\w+)=(\S+)", rest.split(" message=")[0]))
    np_ = int(fields["np"])
    rows.setdefault(np_, {}).update(fields)
    if kind == "STALL":
        rows[np_]["message"] = rest.split(" message=", 1)[1].strip()
print(f"control plane on 2 simulated nodes ({sys.argv[2]}; above 2 ranks the 2 cores are shared)")
print("  step: wall time of one step's two control reductions on rank 0; cpu: a rank's CPU time")
print("  for them, mean over ranks (what the wall time would be with a core per rank); bytes: what")
print("  each rank sends; named: seconds from the stop to the report naming the stopped rank")
print(f"{'np':>4} {'step p50 us':>12} {'p99 us':>10} {'cpu us/rank':>12} {'bytes/step':>11} {'named after s':>14} {'report bytes':>13}")
for n in sorted(rows):
    r = rows[n]
    print(f"{n:>4} {float(r['step_us_p50']):>12.1f} {float(r['step_us_p99']):>10.1f} "
          f"{float(r['cpu_us_per_rank']):>12.1f} {float(r['bytes_per_step']):>11.0f} "
          f"{float(r['named_s']):>14.2f} {int(r['message_bytes']):>13}")
for n in sorted(rows):
    print(f"  np {n}: {rows[n]['message'][:300]}")
for n in sorted(rows):
    r = rows[n]
    print(f"RESULT control np={n} step_us_p50={float(r['step_us_p50']):.1f} "
          f"step_us_p99={float(r['step_us_p99']):.1f} cpu_us_per_rank={float(r['cpu_us_per_rank']):.1f} "
          f"bytes_per_step={float(r['bytes_per_step']):.0f} "
          f"named_s={float(r['named_s']):.2f} deadline_s={float(r['deadline_s']):.1f} "
          f"message_bytes={r['message_bytes']}")
if 8 in rows and 32 in rows:
    a, b = rows[8], rows[32]
    g = lambda k: float(b[k]) / float(a[k])
    print(f"RESULT control_scale from=8 to=32 time_growth={g('step_us_p50'):.2f} "
          f"cpu_growth={g('cpu_us_per_rank'):.2f} "
          f"bytes_growth={g('bytes_per_step'):.2f} named_growth={g('named_s'):.2f} "
          f"report_growth={g('message_bytes'):.2f} log_growth={math.log2(32) / math.log2(8):.2f} "
          f"linear_growth=4.00")
EOF
