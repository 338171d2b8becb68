#!/usr/bin/env python3
"""bench/vl's model and data: a Qwen2.5-VL at Qwen2.5-VL-7B-Instruct's widths (language model:
hidden 3584, intermediate 18944, 28 heads over 4 key-value heads, vocabulary 152,064; vision:
1280 wide, 16 heads, intermediate 3420, windows of 112 pixels) cut to DECODER_LAYERS decoder
and VISION_LAYERS vision blocks, random weights (nothing downloaded), saved as a base
Qwen2_5_VLModel (no lm_head: neither side trains one); and a layout-2 file of SAMPLES samples,
each one 448x448 image (through Qwen2VLImageProcessor: 32x32 patches, 256 tokens) and 64 text
tokens.

  make.py DIR [DECODER_LAYERS=2] [VISION_LAYERS=2] [SAMPLES=8]
"""
import sys

import h5py
import numpy as np
import torch
from transformers import Qwen2_5_VLConfig, Qwen2_5_VLModel, Qwen2VLImageProcessor

IMAGE, START, END = 151655, 151652, 151653


def main(d, layers=2, vision_layers=2, samples=8):
    layers, vision_layers, samples = int(layers), int(vision_layers), int(samples)
    text = dict(vocab_size=152064, hidden_size=3584, intermediate_size=18944, num_hidden_layers=layers,
                num_attention_heads=28, num_key_value_heads=4, max_position_embeddings=32768,
                rms_norm_eps=1e-6, rope_parameters={"rope_type": "default", "mrope_section": [16, 24, 24],
                                                    "rope_theta": 1000000.0})
    vision = dict(depth=vision_layers, hidden_size=1280, out_hidden_size=3584, intermediate_size=3420,
                  num_heads=16, patch_size=14, spatial_merge_size=2, temporal_patch_size=2,
                  window_size=112, fullatt_block_indexes=[vision_layers - 1])
    config = Qwen2_5_VLConfig(text_config=text, vision_config=vision, image_token_id=IMAGE,
                              vision_start_token_id=START, vision_end_token_id=END, num_labels=4)
    config.architectures = ["Qwen2_5_VLForConditionalGeneration"]
    torch.manual_seed(0)
    with torch.device("meta"):
        model = Qwen2_5_VLModel(config)
    model = model.to_empty(device="cpu")
    for p in model.parameters():  # random weights, quickly: the values do not matter here
        p.data.normal_(0, 0.02)
    model.save_pretrained(d, max_shard_size="2GB")
    print(f"{sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters")
    rng = np.random.default_rng(0)
    processor = Qwen2VLImageProcessor()
    with h5py.File(f"{d}/vl.h5", "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 2
        f.attrs["num_classes"] = 4
        f.attrs["class_names"] = ["a", "b", "c", "d"]
        for split in ("train", "test"):
            ids, pixels, grids = [], [], []
            for _ in range(samples):
                out = processor(images=[rng.integers(0, 256, (448, 448, 3), dtype=np.uint8)], return_tensors="np")
                tokens = list(rng.integers(0, 151000, 64))
                ids.append(tokens[:8] + [START] + [IMAGE] * int(np.prod(out["image_grid_thw"][0]) // 4) + [END] + tokens[8:62])
                pixels.append(out["pixel_values"].reshape(-1))
                grids.append(out["image_grid_thw"].reshape(-1))
            g = f.create_group(f"{split}/inputs")
            for name, rows, dtype, extra in (("input_ids", ids, np.int64, {"vocab_size": 152064, "pad_id": 0}),
                                             ("pixel_values", pixels, np.float32, {"row_size": 1176}),
                                             ("image_grid_thw", grids, np.int64, {"row_size": 3})):
                r = g.create_group(name)
                r.create_dataset("values", data=np.concatenate([np.asarray(x, dtype) for x in rows]))
                r.create_dataset("offsets", data=np.cumsum([0] + [len(x) for x in rows]).astype(np.int64))
                for k, v in extra.items():
                    r.attrs[k] = v
            f[split].create_dataset("y", data=rng.integers(0, 4, samples).astype(np.int64))


if __name__ == "__main__":
    main(*sys.argv[1:])
