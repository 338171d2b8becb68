"""Python's side of the TorchScript e2e checks (python3-torch, python3-h5py).

  eval MODEL.pt DATA.h5 SPLIT
      the module (torch.jit.load) on the split, normalised as slimtrain's loader does; prints
      {"accuracy", "loss", "count"} as JSON
  peer MODEL.pt DATA.h5 STEPS RANKS BATCH LR MOMENTUM SEED [WEIGHTS.h5]
      a plain PyTorch loop, one process, over the same global batches slimtrain draws at RANKS
      ranks (seed, epoch permutation, rank shards); SGD with momentum, slimtrain's cross-entropy;
      prints the loss of every step as a JSON list. With WEIGHTS.h5 (slimtrain export of the
      same run) it also prints the largest difference between those weights and the loop's,
      relative to each tensor's largest magnitude, as {"max_rel_diff", "tensors"}
"""
import json
import sys

import h5py
import numpy as np
import torch
import torch.nn.functional as F

MASK = (1 << 64) - 1


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def permutation(n, seed, epoch):
    """src/data/shard.cpp's permutation: Fisher-Yates with splitmix64 and multiply-shift."""
    order = list(range(n))
    state = ((seed * 0x2545F4914F6CDD1D) & MASK) ^ ((epoch + 0x632BE59BD9B4E019) & MASK)
    for i in range(n - 1, 0, -1):
        state, r = splitmix64(state)
        j = (r * (i + 1)) >> 64
        order[i], order[j] = order[j], order[i]
    return order


def load(path, split):
    with h5py.File(path, "r") as f:
        x = f[f"/{split}/x"][()].astype(np.float32)
        y = f[f"/{split}/y"][()].astype(np.int64)
        mean = np.asarray(f["/train/x"].attrs["mean"], dtype=np.float32)
        std = np.asarray(f["/train/x"].attrs["std"], dtype=np.float32)
    inv = np.where(std > 0, np.float32(1.0) / std, np.float32(1.0)).astype(np.float32)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    x = (x - mean.reshape(shape)) * inv.reshape(shape)
    return torch.from_numpy(x), torch.from_numpy(y)


def evaluate(model_path, data, split):
    model = torch.jit.load(model_path)
    model.eval()
    x, y = load(data, split)
    with torch.no_grad():
        out = model(x)
    logits = out if isinstance(out, torch.Tensor) else out["logits"] if isinstance(out, dict) else out[1] if out[0] is None else out[0]
    loss = F.cross_entropy(logits, y, reduction="sum").item() / len(y)
    accuracy = (logits.argmax(1) == y).double().mean().item()
    print(json.dumps({"accuracy": accuracy, "loss": loss, "count": len(y)}))


def compare(model, weights):
    state = model.state_dict()
    worst = 0.0
    with h5py.File(weights, "r") as f:
        names = [n for n in f.keys() if isinstance(f[n], h5py.Dataset)]
        for name in names:
            theirs = torch.from_numpy(f[name][()])
            ours = state[name].detach()
            scale = max(ours.abs().max().item(), 1e-12)
            worst = max(worst, (ours - theirs).abs().max().item() / scale)
    print(json.dumps({"max_rel_diff": worst, "tensors": len(names)}))


def peer(model_path, data, steps, ranks, batch, lr, momentum, seed, weights=None):
    torch.set_num_threads(1)
    model = torch.jit.load(model_path)
    model.train()
    x, y = load(data, "train")
    n = len(y)
    per_rank = n // ranks
    steps_per_epoch = (per_rank + batch - 1) // batch
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    losses = []
    step = 0
    epoch = 0
    while step < steps:
        order = permutation(n, seed, epoch)
        shards = [order[r * per_rank:(r + 1) * per_rank] for r in range(ranks)]
        for b in range(steps_per_epoch):
            if step == steps:
                break
            rows = [shard[b * batch:(b + 1) * batch] for shard in shards]
            opt.zero_grad()
            # Every rank's mean loss, averaged: what slimtrain's averaged gradients minimise.
            loss = sum(F.cross_entropy(model(x[r]), y[r]) for r in rows) / ranks
            loss.backward()
            opt.step()
            losses.append(loss.item())
            step += 1
        epoch += 1
    print(json.dumps(losses))
    if weights:
        compare(model, weights)


def main():
    if sys.argv[1] == "eval":
        evaluate(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "peer":
        model, data = sys.argv[2], sys.argv[3]
        steps, ranks, batch = (int(v) for v in sys.argv[4:7])
        lr, momentum = float(sys.argv[7]), float(sys.argv[8])
        weights = sys.argv[10] if len(sys.argv) > 10 else None
        peer(model, data, steps, ranks, batch, lr, momentum, int(sys.argv[9]), weights)
    else:
        sys.exit(f"unknown command {sys.argv[1]}")


if __name__ == "__main__":
    main()
