"""Busy threads of running processes, from /proc/PID/task: busy_threads.py SECONDS PID...

Prints one line per process: PID, the number of threads that used at least a quarter of a core
over the window, and every thread that used any CPU (name:percent of a core), busiest first.
"""
import os
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def ticks(pid):
    """{tid: (name, utime + stime)} for every thread of pid that still exists."""
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
        fields = stat[stat.rindex(")") + 2:].split()
        out[tid] = (name, int(fields[11]) + int(fields[12]))  # utime, stime: fields 14 and 15
    return out


seconds, pids = float(sys.argv[1]), sys.argv[2:]
before = {pid: ticks(pid) for pid in pids}
time.sleep(seconds)
for pid in pids:
    after = ticks(pid)
    used = []
    for tid, (name, t) in after.items():
        share = (t - before[pid].get(tid, (name, t))[1]) / TICK / seconds
        if share > 0:
            used.append((share, f"{name}/{tid}"))
    used.sort(reverse=True)
    busy = sum(1 for share, _ in used if share >= 0.25)
    print(pid, busy, " ".join(f"{n}:{100 * s:.0f}%" for s, n in used))
