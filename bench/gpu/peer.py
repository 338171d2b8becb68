"""PyTorch peer of bench/gpu: the same models on the same HDF5 files, written as a careful user
writes a GPU training loop.

  peer.py --data F.h5 --model cnn-small|vit --batch-size B --steps N --warmup-steps W
          [--precision fp32|bf16] [--attention manual|sdpa] [--optimizer sgd|adamw] [--lr LR]
          [--vit-dim 768 --vit-depth 12 --vit-heads 12 --vit-patch 16] [--device cuda|cpu]
          [--script OUT.pt]

What a careful user does: DDP (NCCL on a GPU, gloo on a CPU; world size 1 here, as slimtrain's
runs), the split held as stored (uint8) in pinned host memory and sampled by index, each batch
copied with non_blocking and converted and normalised on the GPU, cuDNN benchmark on and TF32
for float32 products (as slimtrain's defaults), bf16 autocast around the forward pass, PyTorch's
default optimizers (multi-tensor kernels on CUDA), the loss read only at log steps. Steady steps
are timed after the warm-up, the device synchronised around them. One line at the end:

  PEER gpu model=vit ... steps=N samples_per_s=S

--script OUT.pt writes the model (its forward(x) returning logits) as TorchScript instead of
training it: bench/gpu trains that file with slimtrain (the torchscript row).
"""
import argparse
import os
import socket
import sys
import time
import warnings

import h5py
import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel


class CnnSmall(nn.Module):
    """slimtrain's cnn-small, layer for layer."""

    def __init__(self, c, h, w, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(c, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * (h // 4) * (w // 4), 128)
        self.fc2 = nn.Linear(128, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


class Attention(nn.Module):
    def __init__(self, dim, heads, fused):
        super().__init__()
        self.heads, self.fused = heads, fused
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        if self.fused:
            mixed = F.scaled_dot_product_attention(q, k, v)
        else:
            scores = (q * (q.shape[-1] ** -0.5)) @ k.transpose(-2, -1)
            mixed = scores.softmax(-1) @ v
        return self.proj(mixed.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads, fused):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, fused)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class Vit(nn.Module):
    """slimtrain's vit-tiny at any size: patch conv, learned positions, pre-norm blocks, mean
    pooling, LayerNorm, head."""

    def __init__(self, c, h, w, classes, patch, dim, depth, heads, fused):
        super().__init__()
        self.patch_embed = nn.Conv2d(c, dim, patch, stride=patch)
        self.position = nn.Parameter(torch.randn(1, (h // patch) * (w // patch), dim) * 0.02)
        self.blocks = nn.ModuleList([Block(dim, heads, fused) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        t = self.patch_embed(x).flatten(2).transpose(1, 2) + self.position
        for block in self.blocks:
            t = block(t)
        return self.head(self.norm(t.mean(1)))


def load(path, device):
    with h5py.File(path, "r") as f:
        x = torch.from_numpy(f["train/x"][()])
        y = torch.from_numpy(f["train/y"][()].astype(np.int64))
        mean = torch.tensor(np.asarray(f["train/x"].attrs["mean"], np.float32))
        std = torch.tensor(np.asarray(f["train/x"].attrs["std"], np.float32))
        classes = int(f.attrs["num_classes"])
    if device.type == "cuda":
        x, y = x.pin_memory(), y.pin_memory()
    shape = (1, -1, 1, 1)
    return x, y, mean.view(shape).to(device), (1 / std).view(shape).to(device), classes


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True)
    p.add_argument("--model", choices=["cnn-small", "vit"], required=True)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--warmup-steps", type=int, default=30)
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--attention", choices=["manual", "sdpa"], default="sdpa")
    p.add_argument("--optimizer", choices=["sgd", "adamw"], default="sgd")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--vit-dim", type=int, default=768)
    p.add_argument("--vit-depth", type=int, default=12)
    p.add_argument("--vit-heads", type=int, default=12)
    p.add_argument("--vit-patch", type=int, default=16)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--log-every", type=int, default=1000)
    p.add_argument("--script", help="write the model as TorchScript to this file and stop")
    a = p.parse_args()

    device = torch.device(a.device)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True  # slimtrain's --tf32 on, its default
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(0)
    x_all, y_all, mean, inv_std, classes = load(a.data, device)
    _, c, h, w = x_all.shape
    if a.model == "cnn-small":
        model = CnnSmall(c, h, w, classes)
    else:
        model = Vit(c, h, w, classes, a.vit_patch, a.vit_dim, a.vit_depth, a.vit_heads,
                    a.attention == "sdpa")
    if a.script:
        with warnings.catch_warnings():  # TorchScript is deprecated from 2.10 on
            warnings.simplefilter("ignore")
            torch.jit.script(model).save(a.script)
        return

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in os.environ:  # a free port: a run cut short may leave its port taken
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            os.environ["MASTER_PORT"] = str(s.getsockname()[1])
    dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=0, world_size=1)
    model = DistributedDataParallel(model.to(device),
                                    device_ids=[device.index or 0] if device.type == "cuda" else None)
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=a.lr)
    n = x_all.shape[0]
    g = torch.Generator().manual_seed(0)
    order = torch.randperm(n, generator=g)
    at = 0

    def batch():
        nonlocal order, at
        if at + a.batch_size > n:
            order, at = torch.randperm(n, generator=g), 0
        idx = order[at:at + a.batch_size]
        at += a.batch_size
        xb = x_all[idx]
        yb = y_all[idx]
        if device.type == "cuda":
            xb, yb = xb.pin_memory(), yb.pin_memory()
        xb = xb.to(device, non_blocking=True)
        yb = yb.to(device, non_blocking=True)
        return (xb.float() - mean) * inv_std, yb

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize()

    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=a.precision == "bf16")
    start = None
    for step in range(a.warmup_steps + a.steps):
        if step == a.warmup_steps:
            sync()
            start = time.perf_counter()
        xb, yb = batch()
        with autocast:
            loss = F.cross_entropy(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if (step + 1) % a.log_every == 0:
            print(f"step {step + 1} loss {loss.item():.4f}", flush=True)
    sync()
    seconds = time.perf_counter() - start
    sps = a.steps * a.batch_size / seconds
    print(f"PEER gpu model={a.model} precision={a.precision} attention={a.attention} "
          f"batch={a.batch_size} steps={a.steps} seconds={seconds:.2f} samples_per_s={sps:.1f} "
          f"final_loss={loss.item():.4f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
