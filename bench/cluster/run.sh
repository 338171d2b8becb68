#!/usr/bin/env bash
# slimtrain between two simulated nodes (tests/cluster/cluster.sh: network namespaces joined by a
# bridge, real TCP between them), in one run:
#   allreduce: plain MPI_Allreduce against slimtrain's chunked all-reduce (bench_allreduce),
#              1 KiB to AR_MAX_MIB, algbw and busbw, on the unshaped link and shaped to RATE
#   train:     2 nodes x 1 rank over the link shaped to RATE: cnn-small (batch 64) and a
#              communication-heavy mlp (MLP_WIDTHS, batch MLP_BATCH), slimtrain against the PyTorch
#              DDP (gloo) peer (bench/train/ddp_peer.py, one process per node, MASTER_ADDR on
#              node 1, GLOO_SOCKET_IFNAME=eth0), same model, batch, threads, SGD settings and heap
#              settings; slimtrain with --overlap on and off and with --grad-compression bf16, the
#              peer also with DDP's fp16_compress_hook (its bf16 hook needs NCCL in torch 1.13);
#              cnn-small on 1 rank for the scaling efficiency (2 nodes against 1), and on 2 ranks
#              of node1 (shared memory: what the same two cores scale to without any link); the
#              mlp with --chunk-mb 4, the fixed piece size before --chunk-mb 0 (the default) timed
#              4 MiB against 1 MiB pieces at start-up (over the token bucket, 1 MiB pieces keep the
#              link at its rate where 4 MiB ones fall to two thirds of it: see the all-reduce table)
#   bound:     the fastest the mlp could train over the link at all: each rank must receive as
#              many bytes as the gradients hold, every step, at the link's rate
#   accuracy:  the final test accuracy of the cnn-small runs with and without bf16 compression
#              (same seed, same steps)
# Configurations alternate within each repetition (reversed every other one); RESULT lines use
# the medians. Throughput is the steady state (WARMUP steps left out by both).
# Usage: bench/cluster/run.sh [build-dir]   (as root: namespaces need CAP_NET_ADMIN)
# Environment: REPS (2), STEPS timed cnn-small steps (200), WARMUP (20), MLP_WIDTHS (2048,2048),
#   MLP_BATCH (4), MLP_STEPS (40), RATE (1gbit, tc units), AR_MAX_MIB (64).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# Absolute: the launch agent runs the ranks inside the node namespaces from another directory.
build=$(cd "${1:-$root/build}" && pwd)
reps=${REPS:-2}
steps=${STEPS:-200}
warmup=${WARMUP:-20}
mlp_widths=${MLP_WIDTHS:-2048,2048}
mlp_batch=${MLP_BATCH:-4}
mlp_steps=${MLP_STEPS:-40}
rate=${RATE:-1gbit}
ar_max=${AR_MAX_MIB:-64}
bench_name=cluster
. "$root/bench/lib.sh"
positive_ints "$reps" "$steps" "$warmup" "$mlp_batch" "$mlp_steps" "$ar_max"
ar_bin=$build/bench/allreduce/bench_allreduce
[ -x "$ar_bin" ] || { echo "bench/cluster: no $ar_bin (build the benchmarks first)" >&2; exit 2; }
"$PY" -c 'import torch, h5py' 2>/dev/null ||
  { echo "bench/cluster: $PY cannot import torch and h5py (python3-torch, python3-h5py)" >&2; exit 2; }
. "$root/tests/cluster/cluster.sh"
why=$(cluster_can_run) || { echo "bench/cluster: cannot simulate nodes here: $why" >&2; exit 2; }
cluster_up 2 1
cd "$work"

echo "== all-reduce between node1 and node2 (one rank each, TCP over the simulated link)"
for link in unshaped "$rate"; do
  [ "$link" = unshaped ] || cluster_shape 2 "$link"
  echo "-- link $link"
  cluster_mpirun -np 2 -x OMP_NUM_THREADS "$ar_bin" "$ar_max" nosweep >"$work/ar.$link" 2>&1 ||
    { tail -n 20 "$work/ar.$link" >&2; exit 1; }
  grep -v '^RESULT' "$work/ar.$link"
done
# The training runs keep the shaped link.

# slim NAME NP STEPS [train options...]: slimtrain across the nodes (np 1: node1 alone; NP
# "2@node1": two ranks on node1, over shared memory, the same two cores without the link).
slim() {
  local name=$1 np=$2 total=$(($3 + warmup)) hosts=(); shift 3
  if [ "$np" = 2@node1 ]; then
    np=2
    hosts=(--host "$(cluster_addr 1):2")
  fi
  if ! cluster_mpirun -np "$np" "${hosts[@]}" -x OMP_NUM_THREADS "$bin" train --data "$data" \
    --out "$work/$name" --resume none --threads 1 --schedule constant --optimizer sgd --lr 0.05 \
    --momentum 0.9 --eval-every 0 --checkpoint-every 0 --max-steps "$total" --log-every "$warmup" \
    "$@" >"$work/$name.log" 2>&1; then
    echo "bench/cluster: slimtrain run $name failed:" >&2
    tail -n 20 "$work/$name.log" >&2
    exit 1
  fi
}

# peer NAME STEPS [ddp_peer options...]: the DDP peer, one process per node; rank 0 on node1
# writes the PEER line to $work/NAME.peer. Heap settings as slimtrain sets its own (bench/train).
peer_port=29500
peer() {
  local name=$1 total=$(($2 + warmup)) node pids=() rc=0; shift 2
  peer_port=$((peer_port + 1))
  for node in 2 1; do
    cluster_exec "$node" env GLOO_SOCKET_IFNAME=eth0 MALLOC_MMAP_THRESHOLD_=134217728 \
      MALLOC_TRIM_THRESHOLD_=1073741824 timeout 900 "$PY" "$root/bench/train/ddp_peer.py" \
      --data "$data" --nproc 1 --nnodes 2 --node-rank $((node - 1)) \
      --master-addr "$(cluster_addr 1)" --master-port "$peer_port" --threads 1 --lr 0.05 \
      --momentum 0.9 --steps "$total" --warmup-steps "$warmup" "$@" \
      >"$work/$name.peer$node" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=$?; done
  cp "$work/$name.peer1" "$work/$name.peer"
  if [ "$rc" -ne 0 ]; then
    echo "bench/cluster: peer run $name failed:" >&2
    tail -n 20 "$work/$name.peer1" "$work/$name.peer2" >&2
    exit 1
  fi
}

mlp=(--model mlp --mlp-widths "$mlp_widths" --batch-size "$mlp_batch")
configs=(cnn2 cnn2-bf16 cnn2-on peer-cnn2 peer-cnn2-fp16 cnn1 cnn2-node1 mlp2 mlp2-bf16 mlp2-on
  mlp2-c4 peer-mlp2 peer-mlp2-fp16)
run_config() {  # run_config CONFIG REP
  local c=$1 r=$2
  case $c in
    cnn2) slim "$c.$r" 2 "$steps" --model cnn-small --batch-size 64 ;;
    cnn2-bf16) slim "$c.$r" 2 "$steps" --model cnn-small --batch-size 64 --grad-compression bf16 ;;
    cnn2-on) slim "$c.$r" 2 "$steps" --model cnn-small --batch-size 64 --overlap on ;;
    cnn1) slim "$c.$r" 1 "$steps" --model cnn-small --batch-size 64 ;;
    cnn2-node1) slim "$c.$r" 2@node1 "$steps" --model cnn-small --batch-size 64 ;;
    mlp2) slim "$c.$r" 2 "$mlp_steps" "${mlp[@]}" ;;
    mlp2-bf16) slim "$c.$r" 2 "$mlp_steps" "${mlp[@]}" --grad-compression bf16 ;;
    mlp2-on) slim "$c.$r" 2 "$mlp_steps" "${mlp[@]}" --overlap on ;;
    mlp2-c4) slim "$c.$r" 2 "$mlp_steps" "${mlp[@]}" --chunk-mb 4 ;;
    peer-cnn2) peer "$c.$r" "$steps" --model cnn-small --batch-size 64 --eval ;;
    peer-cnn2-fp16) peer "$c.$r" "$steps" --model cnn-small --batch-size 64 --eval --compress fp16 ;;
    peer-mlp2) peer "$c.$r" "$mlp_steps" "${mlp[@]}" ;;
    peer-mlp2-fp16) peer "$c.$r" "$mlp_steps" "${mlp[@]}" --compress fp16 ;;
  esac
}

echo
echo "== training, 2 nodes x 1 rank, node2's link at $rate"
started=$(date +%s)
for r in $(seq 1 "$reps"); do
  order=("${configs[@]}")
  if [ $((r % 2)) = 0 ]; then
    order=()
    for ((i = ${#configs[@]} - 1; i >= 0; i--)); do order+=("${configs[i]}"); done
  fi
  echo "repetition $r/$reps: ${order[*]}"
  for c in "${order[@]}"; do run_config "$c" "$r"; done
done
echo "all runs took $(($(date +%s) - started)) s"

link_bytes=$(_cluster_rate_bytes "$rate")
"$PY" "$root/bench/cluster/summary.py" "$work" "$reps" "$rate" "$link_bytes" \
  "$(cluster_burst_bytes "$link_bytes")" "$mlp_widths" "$mlp_batch" "${configs[@]}"
