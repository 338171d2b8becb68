#!/usr/bin/python3
"""PyTorch DDP (gloo) peer for slimtrain's text classifiers (bench/train/text.sh).

Trains text-bow or text-transformer, the same models as slimtrain's (model/text_models.cpp), on
the same `prep text` HDF5 file (/SPLIT/inputs/input_ids: values + offsets), with the same recipe:
--nproc ranks x --threads threads, --batch-size sequences per rank per step, AdamW with a cosine
schedule to 0 over the run, no weight decay, --epochs passes. Batches are what a PyTorch user
writes for text: lengths grouped like HuggingFace's group_by_length (sorted within windows of 64
global batches, the batches shuffled), each rank a slice of every global batch, and
  - text-bow: nn.EmbeddingBag(mode="mean") over the flat ids and offsets (no padding at all: the
    torchtext tutorial's fastText model, the fastest way PyTorch has);
  - text-transformer: ids padded to the longest sequence rounded up to 8 (pad_to_multiple_of=8),
    nn.TransformerEncoder (pre-norm, GELU, 4x feed-forward, no dropout) with
    src_key_padding_mask, sinusoidal positions, a final LayerNorm of the masked mean, a head.
--max-length cuts longer sequences, as slimtrain's. The first --warmup-steps steps are not timed.
Rank 0 then evaluates the whole test split and prints one line:

  PEER text model=... nproc=2 threads=1 batch=64 steps=... samples_per_s=... test_accuracy=...

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
from torch.nn.parallel import DistributedDataParallel


def load_split(path, split, max_length):
    with h5py.File(path, "r") as f:
        g = f[f"{split}/inputs/input_ids"]
        offsets = g["offsets"][()].astype(np.int64)
        values = g["values"][()].astype(np.int64)
        y = f[f"{split}/y"][()].astype(np.int64)
        vocab, classes = int(g.attrs["vocab_size"]), int(f.attrs["num_classes"])
    seqs = [torch.from_numpy(values[offsets[i]:offsets[i + 1]][:max_length or None])
            for i in range(len(y))]
    return seqs, torch.from_numpy(y), vocab, classes


def positions(length, dim):
    pos = torch.arange(length, dtype=torch.float32).unsqueeze(1)
    angle = pos * torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    out = torch.zeros(length, dim)
    out[:, 0::2] = torch.sin(angle)
    out[:, 1::2] = torch.cos(angle)[:, : dim // 2]
    return out


class TextBow(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.head = nn.Linear(dim, classes)

    def forward(self, flat, offsets):
        return self.head(self.embedding(flat, offsets))


class TextTransformer(nn.Module):
    def __init__(self, vocab, dim, depth, heads, classes):
        super().__init__()
        self.dim = dim
        self.embedding = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, ids, mask):
        x = self.embedding(ids) * math.sqrt(self.dim) + positions(ids.shape[1], self.dim)
        x = self.encoder(x, src_key_padding_mask=mask == 0)
        m = mask.unsqueeze(-1).to(x.dtype)
        return self.head(self.norm((x * m).sum(1) / m.sum(1).clamp_min(1.0)))


def batch(model, seqs, rows):
    """The model's inputs for the sequences `rows`."""
    chosen = [seqs[i] for i in rows]
    if model == "text-bow":
        lengths = torch.tensor([len(s) for s in chosen])
        offsets = torch.zeros(len(chosen), dtype=torch.int64)
        offsets[1:] = torch.cumsum(lengths, 0)[:-1]
        return torch.cat(chosen), offsets
    width = (max(len(s) for s in chosen) + 7) // 8 * 8
    ids = torch.zeros(len(chosen), width, dtype=torch.int64)
    mask = torch.zeros(len(chosen), width, dtype=torch.int64)
    for i, s in enumerate(chosen):
        ids[i, : len(s)] = s
        mask[i, : len(s)] = 1
    return ids, mask


def epoch_batches(lengths, batch_size, world, seed, epoch):
    """Global batches of row indices, lengths grouped within windows of 64 global batches."""
    g = torch.Generator().manual_seed(seed * 1000 + epoch)
    order = torch.randperm(len(lengths), generator=g).tolist()
    glob = batch_size * world
    order = order[: len(order) // glob * glob]  # whole global batches, as DistributedSampler
    window = 64 * glob
    grouped = []
    for w in range(0, len(order), window):
        part = sorted(order[w:w + window], key=lambda i: lengths[i], reverse=True)
        grouped += [part[b:b + glob] for b in range(0, len(part), glob)]
    perm = torch.randperm(len(grouped), generator=g).tolist()
    return [grouped[p] for p in perm]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, args, port):
    torch.set_num_threads(args.threads)
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=rank, world_size=args.nproc)
    seqs, y, vocab, classes = load_split(args.data, "train", args.max_length)
    torch.manual_seed(args.seed)
    net = (TextBow(vocab, args.dim, classes) if args.model == "text-bow" else
           TextTransformer(vocab, args.dim, args.depth, args.heads, classes))
    model = DistributedDataParallel(net)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    lengths = [len(s) for s in seqs]
    per_epoch = len(seqs) // (args.batch_size * args.nproc)
    total = per_epoch * args.epochs
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, total) / total)))
    loss_fn = nn.CrossEntropyLoss()
    step, timed, started = 0, 0, None
    for epoch in range(args.epochs):
        for rows in epoch_batches(lengths, args.batch_size, args.nproc, args.seed, epoch):
            if step == args.warmup_steps:
                started = time.perf_counter()
            mine = rows[rank * args.batch_size:(rank + 1) * args.batch_size]
            a, b = batch(args.model, seqs, mine)
            loss = loss_fn(model(a, b), y[mine])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            if started is not None:
                timed += 1
    elapsed = time.perf_counter() - started
    dist.barrier()
    if rank == 0:
        test, ty, _, _ = load_split(args.data, "test", args.max_length)
        net.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, len(test), 256):
                rows = list(range(i, min(i + 256, len(test))))
                a, b = batch(args.model, test, rows)
                correct += int((net(a, b).argmax(1) == ty[rows]).sum())
        sps = timed * args.batch_size * args.nproc / elapsed
        print(f"PEER text model={args.model} nproc={args.nproc} threads={args.threads} "
              f"batch={args.batch_size} steps={step} samples_per_s={sps:.1f} "
              f"test_accuracy={correct / len(test):.4f}", flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True)
    p.add_argument("--model", choices=["text-bow", "text-transformer"], default="text-bow")
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--max-length", type=int, default=0)
    p.add_argument("--warmup-steps", type=int, default=20)
    p.add_argument("--seed", type=int, default=42)
    args = p.parse_args()
    if not os.path.exists(args.data):
        print(f"text_peer: {args.data}: no such file", file=sys.stderr)
        sys.exit(2)
    mp.spawn(worker, args=(args, free_port()), nprocs=args.nproc)


if __name__ == "__main__":
    main()
