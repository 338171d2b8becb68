#!/usr/bin/env python3
"""bench/memory_plan's model and data: a Qwen2ForSequenceClassification at Qwen2.5-7B's widths
(hidden 3584, intermediate 18944, 28 heads over 4 key-value heads) with LAYERS decoder layers and
its vocabulary cut to 32,000 (about 580M parameters at 2 layers), random weights (nothing
downloaded) saved as save_pretrained shards of at most 500 MB with their index; and a layout-2
file of 64 training samples of TOKENS tokens, 4 classes.

  make.py DIR [LAYERS=2] [TOKENS=64] [NAME=VALUE...]

NAME=VALUE changes the model: hidden, intermediate, heads, kv_heads, dtype (float32 or bfloat16,
as the weights are saved), shard (save_pretrained's max_shard_size): tests/e2e/shard_loading.sh
makes a small bf16 one of many files.
"""
import sys

import h5py
import numpy as np
import torch
from transformers import Qwen2Config, Qwen2ForSequenceClassification


def main(d, layers=2, tokens=64, *changes):
    layers, tokens = int(layers), int(tokens)
    o = {"hidden": "3584", "intermediate": "18944", "heads": "28", "kv_heads": "4",
         "dtype": "float32", "shard": "500MB"}
    for change in changes:
        name, value = change.split("=", 1)
        assert name in o, f"make.py: no setting {name} (there are {', '.join(o)})"
        o[name] = value
    torch.manual_seed(0)
    config = Qwen2Config(hidden_size=int(o["hidden"]), intermediate_size=int(o["intermediate"]),
                         num_hidden_layers=layers, num_attention_heads=int(o["heads"]),
                         num_key_value_heads=int(o["kv_heads"]), vocab_size=32000,
                         max_position_embeddings=32768, num_labels=4, pad_token_id=0,
                         tie_word_embeddings=False)
    model = Qwen2ForSequenceClassification(config).to(getattr(torch, o["dtype"]))
    model.save_pretrained(d, max_shard_size=o["shard"])
    rng = np.random.default_rng(0)
    with h5py.File(d + "/text.h5", "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 2
        f.attrs["num_classes"] = 4
        f.attrs["class_names"] = ["a", "b", "c", "d"]
        for split, n in (("train", 64), ("test", 8)):
            ids = f.create_group(f"{split}/inputs/input_ids")
            ids.create_dataset("values", data=rng.integers(8, 32000, n * tokens).astype(np.int64))
            ids.create_dataset("offsets", data=np.arange(0, n * tokens + 1, tokens, dtype=np.int64))
            ids.attrs["vocab_size"] = 32000
            ids.attrs["pad_id"] = 0
            f[split].create_dataset("y", data=rng.integers(0, 4, n).astype(np.int64))
    print(f"{sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters, {layers} layers")


if __name__ == "__main__":
    main(*sys.argv[1:])
