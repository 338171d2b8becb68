#!/usr/bin/env python3
"""PyTorch + transformers DDP (gloo) peer of `slimtrain train --model hf:DIR` (bench/hf/run.sh):
the same checkpoint loaded with from_pretrained (its default attention, scaled dot-product on
PyTorch 2.x), the same `prep text` HDF5 file, the same recipe: --nproc ranks x --threads threads,
--batch-size sequences per rank per step, AdamW at a constant --lr, no weight decay, dropout on,
lengths grouped as HuggingFace's group_by_length (bench/train/text_peer.py's grouping), each
batch padded to its longest sequence rounded up to 8 with its attention_mask (what
DataCollatorWithPadding(pad_to_multiple_of=8) gives). --steps steps, the first --warmup-steps not
timed. With --device cuda (bench/gpu/run.sh, world size 1): the model on the GPU, batches copied
from pinned memory without blocking, --precision bf16 under autocast, no DDP at one process, and
the clock read after a synchronize. Rank 0 prints one line:

  PEER hf nproc=2 threads=1 batch=16 steps=... samples_per_s=...
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "train"))
from text_peer import epoch_batches, free_port, load_split  # noqa: E402


def worker(rank, args, port):
    from transformers import AutoModelForSequenceClassification
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    distributed = args.nproc > 1
    if distributed:
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
        dist.init_process_group("gloo" if device.type == "cpu" else "nccl", rank=rank,
                                world_size=args.nproc)
    seqs, y, _, _ = load_split(args.data, "train", 0)
    net = AutoModelForSequenceClassification.from_pretrained(args.model, dtype=torch.float32)
    net.to(device).train()
    model = DistributedDataParallel(net) if distributed else net
    pinned = device.type == "cuda"
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.precision == "bf16")
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    loss_fn = torch.nn.CrossEntropyLoss()
    lengths = [len(s) for s in seqs]
    step, started, epoch = 0, None, 0
    while step < args.steps:
        for rows in epoch_batches(lengths, args.batch_size, args.nproc, args.seed, epoch):
            if step == args.warmup_steps:
                sync()
                started = time.perf_counter()
            if step == args.steps:
                break
            mine = rows[rank * args.batch_size:(rank + 1) * args.batch_size]
            width = (max(lengths[i] for i in mine) + 7) // 8 * 8
            ids = torch.zeros(len(mine), width, dtype=torch.int64)
            mask = torch.zeros(len(mine), width, dtype=torch.int64)
            for k, i in enumerate(mine):
                ids[k, :lengths[i]] = seqs[i]
                mask[k, :lengths[i]] = 1
            target = y[mine]
            if pinned:
                ids, mask, target = (t.pin_memory().to(device, non_blocking=True)
                                     for t in (ids, mask, target))
            with autocast:
                logits = model(input_ids=ids, attention_mask=mask).logits
                loss = loss_fn(logits.float(), target)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
        epoch += 1
    sync()
    elapsed = time.perf_counter() - started
    if rank == 0:
        sps = (args.steps - args.warmup_steps) * args.batch_size * args.nproc / elapsed
        print(f"PEER hf nproc={args.nproc} threads={args.threads} batch={args.batch_size} "
              f"steps={args.steps} device={args.device} samples_per_s={sps:.1f} "
              f"torch={torch.__version__}", flush=True)
    if distributed:
        dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup-steps", type=int, default=10)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    args = p.parse_args()
    if args.nproc == 1:
        worker(0, args, 0)
    else:
        mp.spawn(worker, args=(args, free_port()), nprocs=args.nproc)


if __name__ == "__main__":
    main()
