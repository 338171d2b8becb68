#!/usr/bin/env python3
"""bench/vl's peer: the same model and data in PyTorch + transformers, as a careful user writes a
classifier on Qwen2.5-VL (Qwen2_5_VLModel, a score on the last token, eager mode, the same SGD
step without momentum: no optimizer state on either side), one sample a step, STEPS steps on
THREADS threads, the first untimed. Prints the mean step time and the peak RSS.

  peer.py DIR STEPS THREADS
"""
import resource
import sys
import time

import h5py
import torch
from torch import nn
from transformers import Qwen2_5_VLModel


def main(d, steps, threads):
    steps, threads = int(steps), int(threads)
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = Qwen2_5_VLModel.from_pretrained(d, dtype=torch.float32).train()
    score = nn.Linear(model.config.text_config.hidden_size, 4, bias=False)
    params = list(model.parameters()) + list(score.parameters())
    opt = torch.optim.SGD(params, lr=1e-5)
    with h5py.File(f"{d}/vl.h5", "r") as f:
        g = f["train/inputs"]
        rows = lambda n, i, w: g[n]["values"][g[n]["offsets"][i]:g[n]["offsets"][i + 1]].reshape(-1, w)
        batches = [(torch.tensor(rows("input_ids", i, 1).reshape(1, -1)), torch.tensor(rows("pixel_values", i, 1176)),
                    torch.tensor(rows("image_grid_thw", i, 3)), int(f["train/y"][i])) for i in range(len(f["train/y"]))]
    times = []
    for step in range(steps):
        ids, pixels, grid, y = batches[step % len(batches)]
        start = time.perf_counter()
        hidden = model(input_ids=ids, pixel_values=pixels, image_grid_thw=grid,
                       mm_token_type_ids=(ids == 151655).int()).last_hidden_state
        loss = nn.functional.cross_entropy(score(hidden[:, -1]), torch.tensor([y]))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - start)
        print(f"step {step + 1}: loss {loss.item():.4f} in {times[-1]:.2f} s", flush=True)
    mean = sum(times[1:]) / max(1, len(times) - 1)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"PEER vl step_s={mean:.3f} peak_rss_gib={peak:.2f}")


if __name__ == "__main__":
    main(*sys.argv[1:])
