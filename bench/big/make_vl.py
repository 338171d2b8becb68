#!/usr/bin/env python3
"""bench/big's seeds' model: Qwen2.5-VL-7B-Instruct as published (its config.json's values,
written here: nothing downloaded; the language model is Qwen2.5-7B's, make_model.py) with random
bfloat16 weights in 5 GB shards, in the original key layout (visual.*, model.*, lm_head); and a
layout-2 file whose samples are one 448 x 448 image (1024 patches of 14 x 14 x 2 frames, 256
tokens after the 2 x 2 merge, between <|vision_start|> and <|vision_end|>) and 64 text tokens:
322 tokens a sample (train 8, test 2; 4 classes). The pixel values are random normal, as the
processor's normalised pixels are distributed.

  make_vl.py DIR
"""
import sys

import numpy as np

from make_model import CONFIG as TEXT, data_file, tensors as text_tensors, write_weights

START, END, IMAGE = 151652, 151653, 151655
VISION = {
    "depth": 32, "hidden_act": "silu", "hidden_size": 1280, "intermediate_size": 3420,
    "num_heads": 16, "in_chans": 3, "out_hidden_size": 3584, "patch_size": 14,
    "spatial_merge_size": 2, "spatial_patch_size": 14, "window_size": 112,
    "fullatt_block_indexes": [7, 15, 23, 31], "tokens_per_second": 2, "temporal_patch_size": 2,
}
CONFIG = dict(TEXT, **{
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
    "eos_token_id": 151645, "vision_start_token_id": START, "vision_end_token_id": END,
    "vision_token_id": 151654, "image_token_id": IMAGE, "video_token_id": 151656,
    "max_position_embeddings": 128000, "sliding_window": 32768,
    "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}, "vision_config": VISION,
})
SIDE = 448


def tensors(c):
    v = c["vision_config"]
    w, ffn, merged = v["hidden_size"], v["intermediate_size"], v["hidden_size"] * 4
    p = v["patch_size"]
    yield "visual.patch_embed.proj.weight", (w, v["in_chans"], v["temporal_patch_size"], p, p)
    for i in range(v["depth"]):
        b = f"visual.blocks.{i}."
        yield b + "norm1.weight", (w,)
        yield b + "norm2.weight", (w,)
        yield b + "attn.qkv.weight", (3 * w, w)
        yield b + "attn.qkv.bias", (3 * w,)
        yield b + "attn.proj.weight", (w, w)
        yield b + "attn.proj.bias", (w,)
        for name, shape in (("gate_proj", (ffn, w)), ("up_proj", (ffn, w)), ("down_proj", (w, ffn))):
            yield b + f"mlp.{name}.weight", shape
            yield b + f"mlp.{name}.bias", (shape[0],)
    yield "visual.merger.ln_q.weight", (w,)
    yield "visual.merger.mlp.0.weight", (merged, merged)
    yield "visual.merger.mlp.0.bias", (merged,)
    yield "visual.merger.mlp.2.weight", (v["out_hidden_size"], merged)
    yield "visual.merger.mlp.2.bias", (v["out_hidden_size"],)
    yield from text_tensors(c)


def ragged(group, name, rows, dtype, **attrs):
    g = group.create_group(name)
    g.create_dataset("values", data=np.concatenate([np.asarray(r, dtype).reshape(-1) for r in rows]))
    g.create_dataset("offsets", data=np.cumsum([0] + [np.asarray(r).size for r in rows]).astype(np.int64))
    for k, val in attrs.items():
        g.attrs[k] = val


def main(d):
    total, count = write_weights(d, CONFIG, tensors(CONFIG))
    v = CONFIG["vision_config"]
    grid = SIDE // v["patch_size"]
    row = v["in_chans"] * v["temporal_patch_size"] * v["patch_size"] ** 2
    image_tokens = grid * grid // v["spatial_merge_size"] ** 2
    rng = np.random.default_rng(0)
    with data_file(f"{d}/vl.h5") as f:
        for split, n in (("train", 8), ("test", 2)):
            ids = [[START] + [IMAGE] * image_tokens + [END] + list(rng.integers(8, 150000, 64))
                   for _ in range(n)]
            pixels = [rng.standard_normal((grid * grid, row), dtype=np.float32) for _ in range(n)]
            grids = [np.array([[1, grid, grid]]) for _ in range(n)]
            inputs = f.create_group(f"{split}/inputs")
            ragged(inputs, "input_ids", ids, np.int64, vocab_size=CONFIG["vocab_size"], pad_id=151643)
            ragged(inputs, "pixel_values", pixels, np.float32, row_size=row)
            ragged(inputs, "image_grid_thw", grids, np.int64, row_size=3)
            f[split].create_dataset("y", data=rng.integers(0, 4, n).astype(np.int64))
    print(f"Qwen2.5-VL-7B: {total / 2 / 1e9:.2f}B parameters in {count} bf16 shards, "
          f"{total / 1e9:.1f} GB; samples of one {SIDE}x{SIDE} image ({image_tokens} tokens) and 64 more")


if __name__ == "__main__":
    main(*sys.argv[1:])
