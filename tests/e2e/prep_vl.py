#!/usr/bin/env python3
"""Images and text together, prepared by `slimtrain prep text --image-column` and checked against
transformers' Qwen2-VL processing (its image processor, its chat template rendered by the
tokenizer, each <|image_pad|> expanded to a token per merged patch as Qwen2VLProcessor does: the
processor object itself needs torchvision, which the venv does not have), for hf_vl.sh.

  prep_vl.py make DIR    DIR/ckpt: a tiny Qwen2.5-VL checkpoint (transformers' initialisation)
                         with its own tokenizer (byte-level BPE trained here, Qwen's special
                         tokens), Qwen2-VL-7B-Instruct's chat template (tests/unit/fixtures) and
                         a preprocessor_config.json (patches of 4 pixels, merged 2x2);
                         DIR/images/*.png|jpg of several sizes and aspect ratios;
                         DIR/{train,test}.csv: image,image2,text,label rows, one image, two, or
                         none (text only); the label is the first image's colour (red or blue)
                         and the word "left" or "right" in the text (4 classes)
  prep_vl.py compare DIR FILE.h5 SPLIT [plain]
                         FILE.h5's input_ids equal the processor's exactly, image_grid_thw too,
                         pixel_values within 1e-6 (PIL's bicubic, replicated); plain: without the
                         chat template (<|vision_start|><|image_pad|><|vision_end|> + text)
"""
import csv
import json
import os
import sys

import h5py
import numpy as np
import torch
from PIL import Image
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2VLImageProcessor

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
            "<|image_pad|>", "<|video_pad|>"]
WORDS = ["left", "right"]
PROCESSOR = dict(patch_size=4, merge_size=2, temporal_patch_size=2, min_pixels=8 * 8, max_pixels=32 * 32)


def template_source():
    root = os.environ.get("SLIMTRAIN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    path = f"{root}/tests/unit/fixtures/chat_templates/qwen2-vl-7b-instruct/tokenizer_config.json"
    return json.load(open(path))["chat_template"]


def make(d):
    ckpt = f"{d}/ckpt"
    os.makedirs(ckpt, exist_ok=True)
    os.makedirs(f"{d}/images", exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = ["the picture shows a shape on the left", "the picture shows a shape on the right",
              "You are a helpful assistant.", "system user assistant"] * 40
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=320, special_tokens=SPECIALS,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.save(f"{ckpt}/tokenizer.json")
    json.dump({"chat_template": template_source(), "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
               "tokenizer_class": "PreTrainedTokenizerFast"}, open(f"{ckpt}/tokenizer_config.json", "w"))
    Qwen2VLImageProcessor(**PROCESSOR).save_pretrained(ckpt)
    ids = {s: tok.token_to_id(s) for s in SPECIALS}
    text = dict(vocab_size=tok.get_vocab_size(), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                rope_parameters={"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0})
    vision = dict(depth=2, hidden_size=32, out_hidden_size=64, intermediate_size=48, num_heads=4, patch_size=4,
                  spatial_merge_size=2, temporal_patch_size=2, in_channels=3, window_size=16,
                  fullatt_block_indexes=[1])
    torch.manual_seed(66)
    Qwen2_5_VLForConditionalGeneration(Qwen2_5_VLConfig(
        text_config=text, vision_config=vision, image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"])).save_pretrained(ckpt)
    rng = np.random.default_rng(67)
    shapes = [(16, 16), (24, 16), (16, 32), (20, 28), (33, 17)]
    for split, n in (("train", 192), ("test", 64)):
        with open(f"{d}/{split}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["image", "image2", "text", "label"])
            for i in range(n):
                colour, word = int(rng.integers(0, 2)), int(rng.integers(0, 2))
                h, wd = shapes[i % len(shapes)]
                pixels = rng.integers(0, 90, (h, wd, 3), dtype=np.uint8)
                pixels[..., 0 if colour == 0 else 2] += 160
                ext = "png" if i % 3 else "jpg"
                name = f"images/{split}-{i}.{ext}"
                Image.fromarray(pixels).save(f"{d}/{name}", quality=95)
                second = ""
                if i % 7 == 3:  # a second image, of the other size
                    second = f"images/{split}-{i}-b.png"
                    Image.fromarray(rng.integers(0, 256, (12, 20, 3), dtype=np.uint8)).save(f"{d}/{second}")
                first = name if i % 11 != 5 else ""  # text only: its label from the text alone
                words = f"the picture shows a shape on the {WORDS[word]}"
                w.writerow([first, second, words, 2 * colour + word if first else word])


def reference(d, split, plain):
    tok = PreTrainedTokenizerFast(tokenizer_file=f"{d}/ckpt/tokenizer.json")
    processor = Qwen2VLImageProcessor(**PROCESSOR)
    rows = list(csv.DictReader(open(f"{d}/{split}.csv", newline="")))
    out = []
    for r in rows:
        images = [Image.open(f"{d}/{p}").convert("RGB") for p in (r["image"], r["image2"]) if p]
        content = [{"type": "image"} for _ in images] + [{"type": "text", "text": r["text"]}]
        if plain:
            text = "<|vision_start|><|image_pad|><|vision_end|>" * len(images) + r["text"]
        else:
            text = tok.apply_chat_template([{"role": "user", "content": content}], chat_template=template_source(),
                                           add_generation_prompt=True, tokenize=False)
        pixels, grids = np.zeros((0, 96), np.float32), np.zeros((0, 3), np.int64)
        if images:
            p = processor(images=images, return_tensors="np")
            pixels, grids = p["pixel_values"], p["image_grid_thw"]
            for g in grids:  # Qwen2VLProcessor's expansion, one image at a time
                text = text.replace("<|image_pad|>", "<|placeholder|>" * int(np.prod(g) // 4), 1)
            text = text.replace("<|placeholder|>", "<|image_pad|>")
        out.append((tok(text)["input_ids"], pixels, grids))
    return out


def compare(d, h5, split, plain=""):
    want = reference(d, split, plain == "plain")
    with h5py.File(h5, "r") as f:
        g = f[f"{split}/inputs"]
        def rows(name, i, width):
            o = g[name]["offsets"]
            return g[name]["values"][o[i]:o[i + 1]].reshape(-1, width)
        assert g["pixel_values"].attrs["row_size"] == 96 and g["image_grid_thw"].attrs["row_size"] == 3
        worst, images = 0.0, 0
        for i, (ids, pixels, grids) in enumerate(want):
            got_ids = rows("input_ids", i, 1).reshape(-1).tolist()
            assert got_ids == ids, f"row {i}: ids differ:\n{got_ids}\n{ids}"
            assert (rows("image_grid_thw", i, 3) == grids).all(), f"row {i}: grids {rows('image_grid_thw', i, 3)} != {grids}"
            got = rows("pixel_values", i, 96)
            assert got.shape == pixels.shape, (i, got.shape, pixels.shape)
            if len(pixels):
                worst = max(worst, float(np.abs(got - pixels).max()))
            images += len(grids)
    assert worst < 1e-6, f"pixel_values differ from the processor's by {worst}"
    print(f"{len(want)} samples ({images} images): ids and grids equal, pixel_values within {worst:.1e}")


if __name__ == "__main__":
    {"make": make, "compare": compare}[sys.argv[1]](*sys.argv[2:])
