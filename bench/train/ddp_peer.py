#!/usr/bin/python3
"""PyTorch DDP (gloo) peer for slimtrain's training benchmark.

Trains the same cnn-small (or mlp) as slimtrain on the same HDF5 file (read whole into memory
with h5py, normalised with the file's per-channel mean/std), with --nproc ranks of --threads
threads each, --batch-size samples per rank per step and plain SGD with momentum. Steady-state
steps are timed (the first --warmup-steps are not), and the run ends with one line:

  PEER ddp nproc=2 threads=1 batch=64 steps=... samples_per_s=... test_accuracy=...

Across nodes (bench/cluster): run it once per node with --nnodes N --node-rank I --master-addr
ADDR (node 0's address) --master-port P; each node starts --nproc ranks and rank 0 (on node 0)
prints the line. --compress fp16 registers DDP's fp16_compress_hook (its bf16 hook needs CUDA and
NCCL in torch 1.13: "BF16 all reduce communication hook required CUDA 11+ and NCCL 2.10+").

test_accuracy is nan unless --eval is given. Exit 2 for a bad option or input file.
Run with Debian's interpreter (/usr/bin/python3: python3-torch 1.13, python3-h5py).
"""
import argparse
import math
import os
import socket
import sys
import time

import h5py
import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DistributedSampler


class CnnSmall(nn.Module):
    """slimtrain's cnn-small: conv3x3 C->32 + ReLU + pool2, conv3x3 32->64 + ReLU + pool2,
    fc 64*(H/4)*(W/4) -> 128 + ReLU, fc 128 -> classes."""

    def __init__(self, channels, height, width, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * (height // 4) * (width // 4), 128)
        self.fc2 = nn.Linear(128, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


class InputError(Exception):
    pass


def load_split(path, split):
    """Returns (x float32 [N,C,H,W] normalised, y int64 [N], num_classes)."""
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise InputError(f"{path}: cannot open as HDF5 ({e})")
    with f:
        for name in (f"{split}/x", f"{split}/y"):
            if name not in f:
                raise InputError(f"{path}: dataset /{name} is missing")
        xd, yd = f[f"{split}/x"], f[f"{split}/y"]
        if xd.ndim not in (3, 4):
            raise InputError(f"{path}: /{split}/x has shape {xd.shape}; cnn-small needs images "
                             "[N,H,W] or [N,C,H,W]")
        if yd.shape != (xd.shape[0],):
            raise InputError(f"{path}: /{split}/y has shape {yd.shape}, expected ({xd.shape[0]},)")
        if "num_classes" not in f.attrs:
            raise InputError(f"{path}: root attribute num_classes is missing")
        classes = int(f.attrs["num_classes"])
        stats = xd if "mean" in xd.attrs else f["train/x"]
        if "mean" not in stats.attrs or "std" not in stats.attrs:
            raise InputError(f"{path}: /{split}/x has no mean/std attributes")
        x = xd[()]
        y = yd[()].astype(np.int64)
        mean = np.asarray(stats.attrs["mean"], dtype=np.float32).reshape(-1)
        std = np.asarray(stats.attrs["std"], dtype=np.float32).reshape(-1)
    if x.ndim == 3:
        x = x[:, None]
    channels = x.shape[1]
    if mean.size != channels or std.size != channels:
        raise InputError(f"{path}: /{split}/x mean/std have {mean.size}/{std.size} entries for "
                         f"{channels} channels")
    if y.size and (y.min() < 0 or y.max() >= classes):
        bad = int(np.argmax((y < 0) | (y >= classes)))
        raise InputError(f"{path}: /{split}/y row {bad}: label {y[bad]} outside [0, {classes})")
    std = np.where(std > 0, std, 1.0).astype(np.float32)
    x = (x.astype(np.float32) - mean[None, :, None, None]) / std[None, :, None, None]
    return torch.from_numpy(x), torch.from_numpy(y), classes


class Mlp(nn.Module):
    """slimtrain's mlp: flatten, Linear + ReLU per width, Linear to the classes."""

    def __init__(self, features, widths, classes):
        super().__init__()
        layers, width = [], features
        for w in widths:
            layers += [nn.Linear(width, w), nn.ReLU()]
            width = w
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        return self.head(self.body(x.flatten(1)))


def make_net(args, x, classes):
    if args.model == "mlp":
        return Mlp(int(np.prod(x.shape[1:])), args.mlp_widths, classes)
    return CnnSmall(x.shape[1], x.shape[2], x.shape[3], classes)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(local_rank, args, port):
    torch.set_num_threads(args.threads)
    os.environ["MASTER_ADDR"] = args.master_addr
    os.environ["MASTER_PORT"] = str(port)
    world = args.nproc * args.nnodes
    rank = args.node_rank * args.nproc + local_rank
    dist.init_process_group("gloo", rank=rank, world_size=world)

    x, y, classes = load_split(args.data, "train")
    torch.manual_seed(args.seed)
    net = make_net(args, x, classes)
    model = DistributedDataParallel(net)  # broadcasts rank 0's weights
    if args.compress != "none":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        model.register_comm_hook(None, default_hooks.fp16_compress_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    sampler = DistributedSampler(range(x.shape[0]), num_replicas=world, rank=rank,
                                 shuffle=True, seed=args.seed, drop_last=True)
    per_epoch = len(sampler) // args.batch_size  # full batches only: equal on every rank
    if per_epoch == 0:
        raise InputError(f"{args.data}: /train has too few samples for {world} x "
                         f"--batch-size {args.batch_size}")
    total = args.steps if args.steps else args.epochs * per_epoch
    warmup = min(args.warmup_steps, max(total - 1, 0))

    model.train()
    step, epoch, start, loss = 0, 0, None, torch.zeros(())
    while step < total:
        sampler.set_epoch(epoch)
        order = torch.tensor(list(iter(sampler)), dtype=torch.long)
        for b in range(per_epoch):
            if step == warmup:
                dist.barrier()
                start = time.perf_counter()
            idx = order[b * args.batch_size:(b + 1) * args.batch_size]
            optimizer.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            optimizer.step()
            step += 1
            if step == total:
                break
        epoch += 1
    dist.barrier()
    elapsed = time.perf_counter() - start
    timed = total - warmup
    samples_per_s = timed * args.batch_size * world / elapsed if timed else float("nan")
    dist.destroy_process_group()
    if rank != 0:
        return

    accuracy = float("nan")
    if args.eval:
        tx, ty, _ = load_split(args.data, "test")
        net.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, tx.shape[0], 1000):
                correct += int((net(tx[i:i + 1000]).argmax(1) == ty[i:i + 1000]).sum())
        accuracy = correct / max(tx.shape[0], 1)
    print(f"PEER ddp model={args.model} compress={args.compress} nnodes={args.nnodes} "
          f"nproc={args.nproc} threads={args.threads} batch={args.batch_size} "
          f"steps={total} timed_steps={timed} epochs={total / per_epoch:.2f} "
          f"final_loss={loss.item():.4f} seconds={elapsed:.2f} "
          f"samples_per_s={samples_per_s:.1f} test_accuracy={accuracy:.4f}", flush=True)


def positive(text):
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive integer")
    return value


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="slimtrain HDF5 file (/train, /test)")
    p.add_argument("--nproc", type=positive, default=2, help="DDP ranks per node (default 2)")
    p.add_argument("--model", choices=["cnn-small", "mlp"], default="cnn-small")
    p.add_argument("--mlp-widths", default="2048,2048", help="mlp hidden widths (default 2048,2048)")
    p.add_argument("--compress", choices=["none", "fp16"], default="none",
                   help="DDP gradient compression hook (default none)")
    p.add_argument("--nnodes", type=positive, default=1, help="nodes, each running this script")
    p.add_argument("--node-rank", type=int, default=0, help="this node's index (0: the master)")
    p.add_argument("--master-addr", default="127.0.0.1", help="node 0's address")
    p.add_argument("--master-port", type=int, default=0, help="rendezvous port (0: a free one)")
    p.add_argument("--threads", type=positive, default=1, help="torch threads per rank (default 1)")
    p.add_argument("--batch-size", type=positive, default=64, help="per rank (default 64)")
    p.add_argument("--lr", type=float, default=0.05, help="SGD learning rate (default 0.05)")
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum (default 0.9)")
    group = p.add_mutually_exclusive_group()
    group.add_argument("--steps", type=positive, help="optimizer steps (default 200)")
    group.add_argument("--epochs", type=positive, help="whole epochs instead of --steps")
    p.add_argument("--warmup-steps", type=int, default=10,
                   help="first steps left out of the timing (default 10)")
    p.add_argument("--seed", type=int, default=0, help="init and sampler seed (default 0)")
    p.add_argument("--eval", action="store_true", help="report test accuracy (rank 0)")
    args = p.parse_args()  # exits 2 on a bad option
    if not args.steps and not args.epochs:
        args.steps = 200
    if not (args.lr > 0 and math.isfinite(args.lr)):
        p.error(f"--lr: {args.lr} must be positive")
    if not 0 <= args.momentum < 1:
        p.error(f"--momentum: {args.momentum} is outside [0, 1)")
    if args.warmup_steps < 0:
        p.error("--warmup-steps must be >= 0")
    try:
        args.mlp_widths = [int(w) for w in args.mlp_widths.split(",")]
        if any(w <= 0 for w in args.mlp_widths):
            raise ValueError
    except ValueError:
        p.error(f"--mlp-widths: '{args.mlp_widths}' is not a list of positive integers")
    if not 0 <= args.node_rank < args.nnodes:
        p.error(f"--node-rank {args.node_rank} is outside [0, --nnodes {args.nnodes})")
    if args.nnodes > 1 and not args.master_port:
        p.error("--master-port is required with --nnodes > 1")
    try:
        load_split(args.data, "train")  # fail here, cleanly, before any rank starts
        if args.eval:
            load_split(args.data, "test")
    except InputError as e:
        print(f"ddp_peer: {e}", file=sys.stderr)
        return 2
    try:
        port = args.master_port or free_port()
        mp.spawn(worker, args=(args, port), nprocs=args.nproc, join=True)
    except Exception as e:  # a rank failed: mp.spawn already tore the others down
        print(f"ddp_peer: a rank failed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
