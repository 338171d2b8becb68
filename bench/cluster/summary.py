"""bench/cluster's tables and RESULT lines, from the files run.sh leaves in its work directory.

usage: summary.py WORK REPS RATE LINK_BYTES_PER_S BURST_BYTES MLP_WIDTHS MLP_BATCH CONFIG...
"""
import json
import math
import re
import statistics
import sys

work, reps, rate, link_rate, link_burst, widths, mlp_batch = sys.argv[1:8]
configs = sys.argv[8:]
# The shaped link in bytes/s and its burst in bytes, as cluster_shape set them.
link_rate, link_burst = float(link_rate), float(link_burst)
reps = int(reps)

LABELS = {
    "cnn2": "slimtrain cnn-small (overlap auto)",
    "cnn2-bf16": "slimtrain cnn-small --grad-compression bf16",
    "cnn2-on": "slimtrain cnn-small --overlap on",
    "peer-cnn2": "DDP peer cnn-small",
    "peer-cnn2-fp16": "DDP peer cnn-small, fp16_compress_hook",
    "cnn1": "slimtrain cnn-small, 1 rank on node1",
    "cnn2-node1": "slimtrain cnn-small, 2 ranks on node1 (no link)",
    "mlp2": f"slimtrain mlp {widths} b{mlp_batch} (overlap auto)",
    "mlp2-bf16": f"slimtrain mlp {widths} b{mlp_batch} --grad-compression bf16",
    "mlp2-on": f"slimtrain mlp {widths} b{mlp_batch} --overlap on",
    "mlp2-c4": f"slimtrain mlp {widths} b{mlp_batch} --chunk-mb 4",
    "peer-mlp2": f"DDP peer mlp {widths} b{mlp_batch}",
    "peer-mlp2-fp16": f"DDP peer mlp {widths} b{mlp_batch}, fp16_compress_hook",
}


def events(run):
    return [json.loads(line) for line in open(f"{work}/{run}/metrics.jsonl")]


def slim(run):
    ev = events(run)
    done = [e for e in ev if e["event"] == "done"][-1]
    final = [e for e in ev if e["event"] == "eval"]
    return (float(done["samples_per_s"]), (final[-1]["accuracy"] if final else math.nan),
            start(run).get("chunk_bytes", 0) >> 10)


def start(run):
    return [e for e in events(run) if e["event"] == "start"][-1]


def peer(run):
    text = open(f"{work}/{run}.peer").read()
    m = re.search(r"^PEER .*samples_per_s=([0-9.na]+) test_accuracy=([0-9.na]+)", text, re.M)
    if not m:
        sys.exit(f"bench/cluster: no PEER line from {run}:\n{text[-2000:]}")
    return float(m.group(1)), float(m.group(2)), 0


def allreduce(link):
    """{size: (plain_algbw, plain_busbw, chunked_algbw, chunked_busbw)} in GB/s."""
    rows = {}
    for line in open(f"{work}/ar.{link}"):
        f = line.split()
        if len(f) == 8 and re.match(r"^\d+[KMG]iB$", f[0]):
            rows[f[0]] = (float(f[2]), float(f[3]), float(f[5]), float(f[6]), float(f[1]), float(f[4]))
    return rows


runs = {c: [(peer if c.startswith("peer") else slim)(f"{c}.{r}") for r in range(1, reps + 1)]
        for c in configs}
sps = {c: [v[0] for v in runs[c]] for c in configs}
acc = {c: [v[1] for v in runs[c]] for c in configs}
chunk_kib = {c: sorted({v[2] for v in runs[c]}) for c in configs}
med = {c: statistics.median(v) for c, v in sps.items()}


def ratio(a, b):
    return a / b if b > 0 else math.nan


print(f"\ntraining throughput over the {rate} link, samples/s (1 thread per rank; final test "
      "accuracy where evaluated)")
head = "".join(f"{'rep ' + str(r):>9s}" for r in range(1, reps + 1))
print(f"  {'':58s}{head}{'median':>9s}{'accuracy':>10s}  pieces (KiB, slimtrain's choice)")
for c in configs:
    a = statistics.median(acc[c])
    pieces = "/".join(str(k) for k in chunk_kib[c] if k)
    print(f"  {LABELS[c]:58s}" + "".join(f"{v:9.1f}" for v in sps[c]) + f"{med[c]:9.1f}"
          + (f"{a:10.4f}" if not math.isnan(a) else f"{'':10s}") + f"  {pieces}")

print()
for link in ("unshaped", rate):
    rows = allreduce(link)
    big = max(rows, key=lambda s: rows[s][0] + rows[s][2])
    small = rows.get("1KiB")
    s64 = rows.get("64MiB") or rows[big]
    print(f"RESULT cluster allreduce link={link} nodes=2 size=64MiB plain_algbw_GBps={s64[0]:.3f} "
          f"plain_busbw_GBps={s64[1]:.3f} chunked_algbw_GBps={s64[2]:.3f} "
          f"chunked_busbw_GBps={s64[3]:.3f} ratio={ratio(s64[2], s64[0]):.2f}"
          + (f" latency_1KiB_us_plain={small[4]:.0f} chunked={small[5]:.0f}" if small else ""))
print(f"RESULT cluster train model=cnn-small link={rate} nodes=2 slimtrain_sps={med['cnn2']:.1f} "
      f"peer_sps={med['peer-cnn2']:.1f} ratio={ratio(med['cnn2'], med['peer-cnn2']):.3f} target=1.1")
print(f"RESULT cluster train model=mlp-{widths.replace(',', 'x')} link={rate} nodes=2 "
      f"slimtrain_sps={med['mlp2']:.1f} peer_sps={med['peer-mlp2']:.1f} "
      f"ratio={ratio(med['mlp2'], med['peer-mlp2']):.3f} target=1.3")
print(f"RESULT cluster chunk model=mlp-{widths.replace(',', 'x')} link={rate} "
      f"auto_KiB={'/'.join(str(k) for k in chunk_kib['mlp2'])} auto_sps={med['mlp2']:.1f} "
      f"chunk4MiB_sps={med['mlp2-c4']:.1f} speedup={ratio(med['mlp2'], med['mlp2-c4']):.3f}")
print(f"RESULT cluster compressed model=cnn-small link={rate} slimtrain_bf16_sps={med['cnn2-bf16']:.1f} "
      f"peer_fp16_sps={med['peer-cnn2-fp16']:.1f} ratio={ratio(med['cnn2-bf16'], med['peer-cnn2-fp16']):.3f} "
      f"vs_peer_plain={ratio(med['cnn2-bf16'], med['peer-cnn2']):.3f}")
print(f"RESULT cluster compressed model=mlp-{widths.replace(',', 'x')} link={rate} "
      f"slimtrain_bf16_sps={med['mlp2-bf16']:.1f} peer_fp16_sps={med['peer-mlp2-fp16']:.1f} "
      f"ratio={ratio(med['mlp2-bf16'], med['peer-mlp2-fp16']):.3f} "
      f"vs_peer_plain={ratio(med['mlp2-bf16'], med['peer-mlp2']):.3f}")
print(f"RESULT cluster bf16 model=cnn-small fp32_sps={med['cnn2']:.1f} bf16_sps={med['cnn2-bf16']:.1f} "
      f"speedup={ratio(med['cnn2-bf16'], med['cnn2']):.3f} fp32_accuracy={statistics.median(acc['cnn2']):.4f} "
      f"bf16_accuracy={statistics.median(acc['cnn2-bf16']):.4f}")
print(f"RESULT cluster bf16 model=mlp-{widths.replace(',', 'x')} fp32_sps={med['mlp2']:.1f} "
      f"bf16_sps={med['mlp2-bf16']:.1f} speedup={ratio(med['mlp2-bf16'], med['mlp2']):.3f}")
print(f"RESULT cluster overlap model=cnn-small on_sps={med['cnn2-on']:.1f} off_sps={med['cnn2']:.1f} "
      f"ratio={ratio(med['cnn2-on'], med['cnn2']):.3f}")
print(f"RESULT cluster overlap model=mlp-{widths.replace(',', 'x')} on_sps={med['mlp2-on']:.1f} "
      f"off_sps={med['mlp2']:.1f} ratio={ratio(med['mlp2-on'], med['mlp2']):.3f}")
print(f"RESULT cluster scaling model=cnn-small link={rate} sps1={med['cnn1']:.1f} sps2={med['cnn2']:.1f} "
      f"efficiency={ratio(med['cnn2'], 2 * med['cnn1']):.3f} target=0.9")
print(f"RESULT cluster scaling_without_link model=cnn-small sps1={med['cnn1']:.1f} "
      f"sps2_node1={med['cnn2-node1']:.1f} efficiency={ratio(med['cnn2-node1'], 2 * med['cnn1']):.3f}")

# The mlp's floor over the link: in an all-reduce of 2 ranks each must receive as many bytes as
# the gradients hold (its sums depend on every one of the other rank's values), through a token
# bucket at RATE that lends at most its burst at once. Headers are left out, so the true floor is
# higher still.
wire = 4 * start("mlp2.1")["trainable_parameters"]
floor_s = max(wire - link_burst, 0) / link_rate
max_sps = 2 * int(mlp_batch) / floor_s if floor_s > 0 else math.inf
print(f"RESULT cluster link_bound model=mlp-{widths.replace(',', 'x')} link={rate} "
      f"fp32_MB_per_step={wire / 1e6:.2f} floor_step_ms={floor_s * 1e3:.1f} max_sps={max_sps:.1f} "
      f"peer_sps={med['peer-mlp2']:.1f} max_ratio={ratio(max_sps, med['peer-mlp2']):.3f} target=1.3")
