"""How many threads of each process want a core at the same time: busy_threads.py SHARE SECONDS PID...

Every 10 ms for SECONDS, reads the state of every thread in /proc/PID/task and counts the
threads that are runnable (R: running, or waiting for a core). A rank that keeps more threads
runnable at once than SHARE, its share of the cores, is fighting for cores; one whose work moves
between threads (the main thread computes, then the communicator's worker waits in MPI) is not.
CPU time per thread would count both of those as busy, and on a loaded machine (CI runs tests
side by side) it shrinks below any fixed threshold; runnable states do neither.

The rule (docs/training-cpu.md, "Threads") covers the compute threads: LibTorch's intra-op pool,
OpenMP and the BLAS, which all carry the process's name. slimtrain's own threads are named st-*;
since gradients are reduced while backward runs, st-comm-data is meant to be runnable beside the
compute thread, so they are counted apart.

Prints one line per process: PID, the fraction of samples with more than SHARE compute threads
runnable, the same fraction counting every thread, the most threads runnable at once, and each
thread's runnable fraction (name/tid:percent), busiest first.
"""
import os
import sys
import time


def states(pid):
    """{tid: (name, state)} for every thread of pid that still exists."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        out[tid] = (name, stat[stat.rindex(")") + 2])
    return out


share, seconds, pids = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
samples = 0
over = {pid: 0 for pid in pids}
over_all = {pid: 0 for pid in pids}
most = {pid: 0 for pid in pids}
runnable = {pid: {} for pid in pids}
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    samples += 1
    for pid in pids:
        running = [(tid, name) for tid, (name, state) in states(pid).items() if state == "R"]
        for tid, name in running:
            key = f"{name}/{tid}"
            runnable[pid][key] = runnable[pid].get(key, 0) + 1
        compute = [tid for tid, name in running if not name.startswith("st-")]
        over[pid] += len(compute) > share
        over_all[pid] += len(running) > share
        most[pid] = max(most[pid], len(running))
    time.sleep(0.01)
for pid in pids:
    threads = sorted(runnable[pid].items(), key=lambda kv: -kv[1])
    print(pid, f"{over[pid] / samples:.2f}", f"{over_all[pid] / samples:.2f}", most[pid],
          " ".join(f"{k}:{100 * v / samples:.0f}%" for k, v in threads))
