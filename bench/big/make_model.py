#!/usr/bin/env python3
"""bench/big's model and data: Qwen2.5-7B as published (its config.json's values, written here:
nothing downloaded) with random bfloat16 weights (N(0, 0.02), norms at 1), saved tensor by tensor
in save_pretrained's shards of at most 5 GB with their index, so that no more than one shard is
ever in memory here; and a layout-2 file of 64-token samples (train 16, test 4; 4 classes).

  make_model.py DIR [TOKENS=64]
"""
import json
import os
import sys

import h5py
import numpy as np
import torch
from safetensors.torch import save_file

# Qwen/Qwen2.5-7B's config.json (transformers' Qwen2Config fields as published).
CONFIG = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_act": "silu",
    "hidden_size": 3584, "intermediate_size": 18944, "num_hidden_layers": 28,
    "num_attention_heads": 28, "num_key_value_heads": 4, "vocab_size": 152064,
    "max_position_embeddings": 131072, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
    "sliding_window": 131072, "use_sliding_window": False, "max_window_layers": 28,
    "tie_word_embeddings": False, "attention_dropout": 0.0, "initializer_range": 0.02,
    "bos_token_id": 151643, "eos_token_id": 151643, "torch_dtype": "bfloat16", "use_cache": True,
}
SHARD_BYTES = 5_000_000_000


def tensors(c):
    """(name, shape) of every tensor, in save_pretrained's order."""
    h, ffn, kv = c["hidden_size"], c["intermediate_size"], c["num_key_value_heads"]
    d = h // c["num_attention_heads"]
    yield "model.embed_tokens.weight", (c["vocab_size"], h)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        yield p + "self_attn.q_proj.weight", (h, h)
        yield p + "self_attn.q_proj.bias", (h,)
        for kvp in ("k_proj", "v_proj"):
            yield p + f"self_attn.{kvp}.weight", (kv * d, h)
            yield p + f"self_attn.{kvp}.bias", (kv * d,)
        yield p + "self_attn.o_proj.weight", (h, h)
        yield p + "mlp.gate_proj.weight", (ffn, h)
        yield p + "mlp.up_proj.weight", (ffn, h)
        yield p + "mlp.down_proj.weight", (h, ffn)
        yield p + "input_layernorm.weight", (h,)
        yield p + "post_attention_layernorm.weight", (h,)
    yield "model.norm.weight", (h,)
    yield "lm_head.weight", (c["vocab_size"], h)


def write_weights(d, config, names_and_shapes):
    """config.json and random bf16 weights (N(0, 0.02), norms at 1, biases 0) in shards of at
    most SHARD_BYTES with their index, one shard in memory at a time; returns the bytes."""
    os.makedirs(d, exist_ok=True)
    json.dump(config, open(f"{d}/config.json", "w"), indent=2)
    shards, size = [[]], 0
    for name, shape in names_and_shapes:
        n = 2 * int(np.prod(shape))
        if size + n > SHARD_BYTES and shards[-1]:
            shards.append([])
            size = 0
        shards[-1].append((name, shape))
        size += n
    torch.manual_seed(0)
    weight_map, total = {}, 0
    for k, shard in enumerate(shards):
        file = f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors"
        out = {}
        for name, shape in shard:
            norm = name.endswith("norm.weight") or name.endswith(("norm1.weight", "norm2.weight", "ln_q.weight"))
            t = torch.ones(shape, dtype=torch.bfloat16) if norm else (torch.randn(shape) * 0.02).to(torch.bfloat16)
            if name.endswith(".bias"):
                t.zero_()
            out[name] = t
            weight_map[name] = file
            total += 2 * t.numel()
        save_file(out, f"{d}/{file}", metadata={"format": "pt"})
        del out
    json.dump({"metadata": {"total_size": total}, "weight_map": weight_map},
              open(f"{d}/model.safetensors.index.json", "w"), indent=2)
    return total, len(shards)


def data_file(path):
    """A layout-2 slimtrain data file of 4 classes, open for writing."""
    f = h5py.File(path, "w")
    f.attrs["format"] = "slimtrain"
    f.attrs["format_version"] = 2
    f.attrs["num_classes"] = 4
    f.attrs["class_names"] = ["a", "b", "c", "d"]
    return f


def main(d, tokens=64):
    tokens = int(tokens)
    total, count = write_weights(d, CONFIG, tensors(CONFIG))
    rng = np.random.default_rng(0)
    with data_file(f"{d}/text.h5") as f:
        for split, n in (("train", 16), ("test", 4)):
            ids = f.create_group(f"{split}/inputs/input_ids")
            ids.create_dataset("values", data=rng.integers(8, 150000, n * tokens).astype(np.int64))
            ids.create_dataset("offsets", data=np.arange(0, n * tokens + 1, tokens, dtype=np.int64))
            ids.attrs["vocab_size"] = CONFIG["vocab_size"]
            ids.attrs["pad_id"] = 151643
            f[split].create_dataset("y", data=rng.integers(0, 4, n).astype(np.int64))
    print(f"Qwen2.5-7B: {total / 2 / 1e9:.2f}B parameters in {count} bf16 shards, {total / 1e9:.1f} GB")


if __name__ == "__main__":
    main(*sys.argv[1:])
