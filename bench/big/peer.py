#!/usr/bin/env python3
"""bench/big's PyTorch + PEFT peer: the same run as a PEFT user writes it. The same checkpoint
loaded by AutoModelForSequenceClassification in bfloat16 (a new score for 4 labels), PEFT's LoRA
r=16, alpha 32, dropout 0.05 on the attention projections (the score trained in full, PEFT's
default for SEQ_CLS; the adapters in float32, PEFT's default), gradient checkpointing, AdamW at
1e-4 on what trains, batches of BATCH x 64 tokens of the same file, STEPS steps, THREADS threads.

  peer.py DIR STEPS BATCH THREADS

Prints the losses, the peak resident memory (getrusage) and the seconds of each step after the
first: PEER big peak_gb=... step_s=... losses=...
"""
import resource
import sys
import time

import h5py
import torch
from peft import LoraConfig, TaskType, get_peft_model
from transformers import AutoModelForSequenceClassification
from transformers.utils import logging as hf_logging


def main(d, steps, batch, threads):
    steps, batch = int(steps), int(batch)
    torch.set_num_threads(int(threads))
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(d, dtype=torch.bfloat16, num_labels=4)
    model.config.pad_token_id = 151643
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model = get_peft_model(model, LoraConfig(task_type=TaskType.SEQ_CLS, r=16, lora_alpha=32,
                                             lora_dropout=0.05,
                                             target_modules=["q_proj", "k_proj", "v_proj", "o_proj"]))
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    with h5py.File(f"{d}/text.h5", "r") as f:
        ids = torch.from_numpy(f["train/inputs/input_ids/values"][()]).view(-1, 64)
        labels = torch.from_numpy(f["train/y"][()])
    losses, times = [], []
    for step in range(steps):
        rows = slice(step * batch % len(ids), step * batch % len(ids) + batch)
        t0 = time.perf_counter()
        out = model(input_ids=ids[rows], labels=labels[rows])
        out.loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t0)
        losses.append(float(out.loss))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
    step_s = sum(times[1:]) / max(len(times) - 1, 1)
    print(f"PEER big peak_gb={peak:.2f} step_s={step_s:.1f} losses={','.join(f'{x:.4f}' for x in losses)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
