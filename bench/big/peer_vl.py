#!/usr/bin/env python3
"""bench/big's PyTorch + PEFT peer of the Qwen2.5-VL-7B run, as a PEFT user writes it:
Qwen2_5_VLForConditionalGeneration from the same checkpoint in bfloat16 (transformers has no
sequence classifier for it), PEFT's LoRA r=16, alpha 32, dropout 0.05 on the attention
projections (the language model's: the vision tower's are named qkv and proj), the adapters in
float32, gradient checkpointing, a float32 score (hidden size to 4 classes, no bias) on the last
token's hidden state trained beside them, AdamW at 1e-4, batch 1 of the same file's samples (one
448 x 448 image and 64 tokens), STEPS steps, THREADS threads.

  peer_vl.py DIR STEPS THREADS

Prints the losses, the peak resident memory (getrusage) and the seconds of each step after the
first: PEER big peak_gb=... step_s=... losses=...
"""
import resource
import sys
import time

import h5py
import torch
from peft import LoraConfig, get_peft_model
from transformers import Qwen2_5_VLForConditionalGeneration
from transformers.utils import logging as hf_logging


def rows(f, split, name, i, width=None):
    g = f[f"{split}/inputs/{name}"]
    a, b = g["offsets"][i], g["offsets"][i + 1]
    t = torch.from_numpy(g["values"][a:b])
    return t.view(-1, width) if width else t


def main(d, steps, threads):
    steps = int(steps)
    torch.set_num_threads(int(threads))
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    model = Qwen2_5_VLForConditionalGeneration.from_pretrained(d, dtype=torch.bfloat16)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.enable_input_require_grads()
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.05,
                                             target_modules=r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj)|model\.layers\.\d+\.self_attn\.(q_proj|k_proj|v_proj|o_proj)"))
    model.train()
    score = torch.nn.Linear(model.config.text_config.hidden_size if hasattr(model.config, "text_config") else model.config.hidden_size, 4, bias=False)
    trained = [p for p in model.parameters() if p.requires_grad] + list(score.parameters())
    optimizer = torch.optim.AdamW(trained, lr=1e-4)
    f = h5py.File(f"{d}/vl.h5", "r")
    labels = torch.from_numpy(f["train/y"][()])
    losses, times = [], []
    for step in range(steps):
        i = step % len(labels)
        ids = rows(f, "train", "input_ids", i).view(1, -1)
        pixels = rows(f, "train", "pixel_values", i, f["train/inputs/pixel_values"].attrs["row_size"])
        grid = rows(f, "train", "image_grid_thw", i, 3)
        t0 = time.perf_counter()
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids), pixel_values=pixels,
                    image_grid_thw=grid, output_hidden_states=True, logits_to_keep=1)
        hidden = out.hidden_states[-1][:, -1].float()
        loss = torch.nn.functional.cross_entropy(score(hidden), labels[i:i + 1])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t0)
        losses.append(float(loss))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
    step_s = sum(times[1:]) / max(len(times) - 1, 1)
    print(f"PEER big peak_gb={peak:.2f} step_s={step_s:.1f} losses={','.join(f'{x:.4f}' for x in losses)}")


if __name__ == "__main__":
    main(*sys.argv[1:])
