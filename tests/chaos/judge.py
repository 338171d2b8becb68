"""The verdict on one chaos trial (tests/chaos/run.sh): one JSON line on stdout.

  judge.py TRIAL_DIR

TRIAL_DIR holds trial.json (what the runner drew, fired and saw: faults with their moments and
firing times, the job's exit code and end time, the baseline accuracy, the checkpoint interval,
the deadline, whether the latest checkpoint verified, processes left), job.log (the job
script's output) and run/ (the run directory, metrics.jsonl).

A trial passes when every fault fired inside the run, and the job either finished (the done
event, test accuracy within 1 point of the undisturbed run) or ended with the code its faults
call for (2 bad input, 75 a signal; 1 when a full disk outlasted --max-failed-checkpoints in
every launch MAX_RESTARTS allows), within the deadline plus 30 s of the fault; no relaunch
lost more than one checkpoint interval, plus one for each checkpoint lost on the way (the newest
corrupted, or one a full disk kept from being written, as the log says); the
latest checkpoint verified; no process was left on any node; and the log named the rank and
node at fault. A fault that never fired makes the trial inconclusive, which counts as failed.
"""
import json
import os
import re
import sys
from datetime import datetime, timezone

TERMINAL = {"badsample": 2, "usr1": 75, "term": 75}


def events(run):
    path = os.path.join(run, "metrics.jsonl")
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path, errors="replace"):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # a line cut short by a full disk
    return out


def named(fault, log):
    """Whether the job's log names what went wrong where, for this fault."""
    node, rank = fault.get("node"), fault.get("rank")
    kind = fault["kind"]
    if "left out of the job" in (fault.get("note") or ""):
        return True  # it hit a node the job no longer used: nothing of the job to name
    if kind in ("stop", "kill9", "corrupt"):
        # the stall report ("1 on node2 (no answer)") or the launcher ("rank 1 ... on node node2")
        pats = [rf"\b{rank} on node{node}\b", rf"rank {rank}\b[^\n]*node{node}\b",
                rf"node{node}[^\n]*\brank {rank}\b"]
        ok = any(re.search(p, log) for p in pats)
        if kind == "corrupt":
            ok = ok and re.search(r"skipp[^\n]*checkpoint|checkpoint[^\n]*skipp", log) is not None
        return ok
    daemon = re.search(rf"Remote daemon: [^\n]* on node node{node}\b", log) is not None
    if kind == "nodekill":
        return daemon or re.search(rf"node{node}[^\n]*(no answer|lost|died|exited|killed|closed)"
                         rf"|(no answer|lost|died|exited|killed|closed)[^\n]*node{node}\b",
                         log) is not None
    if kind == "cut":  # the ranks' deadline, or Open MPI losing the node's daemon
        return daemon or re.search(rf"on node{node} \(no answer\)", log) is not None
    if kind == "slow":
        return True  # nothing failed: nothing to name (a deadline it missed names the node)
    if kind == "diskfull":
        return re.search(r"(No space left|disk full|ENOSPC)", log, re.I) is not None
    if kind in ("usr1", "term"):
        return re.search(r"stop requested by signal", log) is not None
    if kind == "badsample":
        return re.search(rf"rank \d+ on node\d+ exit 2: [^\n]*row {fault['row']}\b", log) is not None
    return False


def failed_writes(log, since, until):
    """Steps whose checkpoint write the log says failed between two launches' starts: said by the
    writing rank at once, or at the ranks' agreement on it (which a job that died may not reach)."""
    steps = set()
    for line in log.splitlines():
        m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z", line)
        if not m:
            continue
        t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc)
        if not since < t.timestamp() < until:
            continue
        step = re.search(r"checkpoint of step (\d+): .*failed", line)
        if not step and re.search(r"(not written|could not be written|keep failing)", line):
            # The failed write's own path; not the latest checkpoint these lines also name.
            said = re.split(r"(the previous checkpoint stays|the latest checkpoint is)", line)[0]
            step = re.search(r"step-0*(\d+)", said)
        if step:
            steps.add(int(step.group(1)))
    return steps


def judge(trial_dir):
    t = json.load(open(os.path.join(trial_dir, "trial.json")))
    log = open(os.path.join(trial_dir, "job.log"), errors="replace").read()
    ev = events(os.path.join(trial_dir, "run"))
    faults, rc, end = t["faults"], t["rc"], t["end"]
    latest_step = None
    try:
        latest_step = json.load(open(os.path.join(trial_dir, "inspect.json")))["step"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    reasons = []
    row = {"trial": t["trial"], "faults": "+".join(f["kind"] for f in faults),
           "moments": "+".join(str(f["step"]) for f in faults), "rc": rc,
           "seconds": None, "lost": 0, "verdict": "pass"}

    fired = [f for f in faults if f.get("fired")]
    if len(fired) != len(faults) or any(f["fired"] >= end for f in fired):
        row["verdict"] = "inconclusive"
        reasons.append("a fault did not fire inside the run")
    terminal = [TERMINAL[f["kind"]] for f in fired if f["kind"] in TERMINAL]
    expected = terminal[0] if terminal else 0
    # A disk that stays full through --max-failed-checkpoints failed writes in each of the
    # launches MAX_RESTARTS allows is, by that option's definition, a failure past MAX_RESTARTS:
    # exit 1, the option and the disk's error named in the last launch's error.
    last_error = [l for l in log.splitlines() if " ERROR " in l][-1:] or [""]
    if (expected == 0 and rc == 1 and any(f["kind"] == "diskfull" for f in fired)
            and "restart 2 of 2" in log
            and re.search(r"(checkpoints keep failing|final checkpoint could not be written)"
                          r".*No space left", last_error[0])):
        expected = 1
    if rc != expected:
        reasons.append(f"exit {rc}, wanted {expected}")

    starts = [e for e in ev if e["event"] == "start"]
    trains = [e for e in ev if e["event"] == "train"]
    limit = t["deadline"] + 30
    # Each relaunch: the fault before it, the recovery (fault to its first step), the steps lost.
    worst = None
    for s in starts[1:]:
        before = [f["fired"] for f in fired if f["fired"] <= s["time"]]
        if not before:
            reasons.append("a relaunch with no fault before it")
            continue
        first = next((e for e in trains if e["time"] >= s["time"]), None)
        since = max([p["time"] for p in starts if p["time"] < s["time"]] or [0])
        # What the launch before this one reached (an earlier launch may have gone further).
        reached = max((e["step"] for e in trains if since <= e["time"] < s["time"]), default=0)
        lost = max(0, reached - s["resumed_at_step"])
        # One interval, and one more for each checkpoint lost on the way: corrupted before this
        # relaunch, or not written (a full disk) since the previous start.
        corrupted = any(f["kind"] == "corrupt" and f["fired"] <= s["time"] for f in fired)
        # Distinct steps, as the log says them: a final checkpoint tried again is one step.
        failed = len(failed_writes(log, since, s["time"]))
        allowed = t["interval"] * (1 + int(corrupted) + failed)
        row["lost"] = max(row["lost"], lost)
        if lost > allowed:
            reasons.append(f"a relaunch lost {lost} steps (at most {allowed})")
        if first is None:
            reasons.append("a relaunch never trained")
            continue
        recovery = first["time"] - max(before)
        worst = recovery if worst is None else max(worst, recovery)
        if recovery > limit:
            reasons.append(f"recovery took {recovery:.1f} s (limit {limit} s)")
    row["recovery"] = None if worst is None else round(worst, 1)
    row["relaunches"] = max(0, len(starts) - 1)

    last_fault = max((f["fired"] for f in fired), default=end)
    row["seconds"] = round(worst if worst is not None and expected == 0 else end - last_fault, 1)
    if expected != 0 and end - last_fault > limit:
        reasons.append(f"ended {end - last_fault:.1f} s after the fault (limit {limit} s)")

    done = [e for e in ev if e["event"] == "done"]
    if expected == 0:
        if not done or not (done[-1].get("final") or {}).get("accuracy"):
            reasons.append("no done event with a test accuracy")
        else:
            acc = done[-1]["final"]["accuracy"]
            row["accuracy"] = acc
            if abs(acc - t["baseline_accuracy"]) > 0.01:
                reasons.append(f"accuracy {acc:.4f} against {t['baseline_accuracy']:.4f} undisturbed")
    if expected == 75:
        stopped = [e for e in ev if e["event"] == "stopped"]
        ckpts = [e["step"] for e in ev if e["event"] == "checkpoint"]
        if not stopped:
            reasons.append("no stopped event")
        elif stopped[-1]["step"] not in ckpts:  # written at the stop, or just before by schedule
            reasons.append(f"stopped at {stopped[-1]['step']} with no checkpoint there")
        elif latest_step is not None and latest_step != stopped[-1]["step"]:
            # The checkpoint event is logged as the write starts: the one that landed must be it.
            reasons.append(f"stopped at {stopped[-1]['step']} but the latest checkpoint is "
                           f"step {latest_step}")
    if t["inspect"] not in ("ok", "none"):
        reasons.append(f"the latest checkpoint does not verify ({t['inspect']})")
    if t["leftover"]:
        reasons.append(f"processes left: {t['leftover']}")
    for f in fired:
        if not named(f, log):
            reasons.append(f"the log does not name the {f['kind']} fault's rank/node")

    if reasons and row["verdict"] == "pass":
        row["verdict"] = "fail"
    row["why"] = "; ".join(reasons)
    return row


if __name__ == "__main__":
    print(json.dumps(judge(sys.argv[1])))
