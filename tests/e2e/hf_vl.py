#!/usr/bin/env python3
"""Qwen2-VL and Qwen2.5-VL checkpoints made with transformers (random weights, nothing
downloaded) and slimtrain's logits checked against transformers' own forward, for hf_vl.sh.

  hf_vl.py make DIR      DIR/vl.h5 (layout 2: input_ids, pixel_values and image_grid_thw ragged,
                         made with Qwen2VLImageProcessor: images of several sizes and aspect
                         ratios, a sample with two images, text-only samples; 4 classes) and the
                         checkpoints: qwen2vl (Qwen2VLForConditionalGeneration as transformers 5
                         saves it: visual.*, model.*, text fields under text_config, a score
                         added), qwen2vl-new (the same in transformers 4.52's layout:
                         model.visual.*, model.language_model.*, text fields at the top level),
                         qwen25vl (Qwen2.5-VL, windows smaller than the images, full attention
                         in block 1), qwen25vl-wide (windows larger than the images), and
                         qwen25vl-identity with DIR/vl-hidden.h5 (64 classes and an identity
                         score: its logits are the last token's hidden state); DIR/vl-short.h5
                         (a sample one image token short)
  hf_vl.py agree HFDIR DATA PRED.h5
                         an export loads in transformers (Qwen2_5_VLModel and its score, as
                         docs/models.md shows) and predicts PRED.h5's logits within 1e-4
  hf_vl.py logits CKPT DATA PRED.h5
                         /logits of PRED.h5 equal the score of transformers' last real token's
                         hidden state of Qwen2(_5)_VLModel, sample by sample, within 1e-4
"""
import json
import os
import shutil
import sys
import tempfile

import h5py
import hf_compare
import numpy as np
import torch
from safetensors.torch import load_file, save_file
from transformers import (Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2VLConfig,
                          Qwen2VLForConditionalGeneration, Qwen2VLImageProcessor)

IMAGE, START, END, VIDEO = 195, 193, 194, 196
TEXT = dict(vocab_size=200, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
            initializer_range=0.2,
            rope_parameters={"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 10000.0})
TOKENS = dict(image_token_id=IMAGE, video_token_id=VIDEO, vision_start_token_id=START,
              vision_end_token_id=END)
PROCESSOR = dict(patch_size=4, merge_size=2, temporal_patch_size=2, min_pixels=8 * 8,
                 max_pixels=40 * 40)


def processor():
    return Qwen2VLImageProcessor(**PROCESSOR)


def samples(rng, n, classes):
    """(token ids, images) pairs: text around zero, one or two images of several shapes."""
    shapes = [(24, 24), (16, 40), (40, 16), (32, 24), (8, 8)]
    out = []
    for i in range(n):
        count = [1, 1, 2, 0, 1][i % 5]
        images = [rng.integers(0, 256, shapes[(i + k) % len(shapes)] + (3,), dtype=np.uint8)
                  for k in range(count)]
        out.append((images, int(rng.integers(0, classes))))
    return out


def encode(images, rng, proc):
    """Token ids with each image's pad tokens, and the processor's pixel_values and grids."""
    ids = list(rng.integers(1, 190, rng.integers(1, 6)))
    pixels, grids = [], []
    for image in images:
        out = proc(images=[image], return_tensors="np")
        grid = out["image_grid_thw"][0]
        pixels.append(out["pixel_values"])
        grids.append(grid)
        ids += [START] + [IMAGE] * int(np.prod(grid) // 4) + [END]
        ids += list(rng.integers(1, 190, rng.integers(1, 4)))
    return ids, pixels, grids


def ragged(group, name, rows, dtype, **attrs):
    g = group.create_group(name)
    g.create_dataset("values", data=np.concatenate([np.asarray(r, dtype).reshape(-1) for r in rows])
                     if rows else np.zeros(0, dtype))
    g.create_dataset("offsets", data=np.cumsum([0] + [np.asarray(r).size for r in rows]).astype(np.int64))
    for k, v in attrs.items():
        g.attrs[k] = v


def write_data(path, rng, classes, short=False):
    proc = processor()
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 2
        f.attrs["num_classes"] = classes
        f.attrs["class_names"] = [f"c{i}" for i in range(classes)]
        for split, n in (("train", 10), ("test", 10)):
            ids, pixels, grids, labels = [], [], [], []
            for images, label in samples(rng, n, classes):
                i, p, g = encode(images, rng, proc)
                if short and split == "test" and g:  # an image token fewer than its features
                    i.remove(IMAGE)
                    short = False
                ids.append(i)
                pixels.append(np.concatenate(p) if p else np.zeros((0, 96), np.float32))
                grids.append(np.stack(g) if g else np.zeros((0, 3), np.int64))
                labels.append(label)
            inputs = f.create_group(f"{split}/inputs")
            ragged(inputs, "input_ids", ids, np.int64, vocab_size=200, pad_id=0)
            ragged(inputs, "pixel_values", pixels, np.float32, row_size=96)
            ragged(inputs, "image_grid_thw", grids, np.int64, row_size=3)
            f[split].create_dataset("y", data=np.array(labels, np.int64))


def add_score(ckpt, classes, identity=False):
    """A score head beside the checkpoint's tensors (lm_head stays: slimtrain leaves it out)."""
    tensors = load_file(f"{ckpt}/model.safetensors")
    torch.manual_seed(7)
    score = torch.eye(64) if identity else torch.randn(classes, 64) * 0.2
    tensors["score.weight"] = score
    save_file(tensors, f"{ckpt}/model.safetensors", metadata={"format": "pt"})


def new_layout(src, dst):
    """transformers 4.52's keys (model.visual.*, model.language_model.*) and top-level text fields."""
    shutil.copytree(src, dst)
    tensors = load_file(f"{src}/model.safetensors")
    renamed = {}
    for k, v in tensors.items():
        if k.startswith("visual."):
            k = "model." + k
        elif k.startswith("model."):
            k = "model.language_model." + k[len("model."):]
        renamed[k] = v
    save_file(renamed, f"{dst}/model.safetensors", metadata={"format": "pt"})
    config = json.load(open(f"{src}/config.json"))
    text = config.pop("text_config")
    text.pop("model_type", None)
    rope = text.pop("rope_parameters")
    config.update(text)
    config["rope_theta"] = rope["rope_theta"]
    config["rope_scaling"] = {"type": "mrope", "mrope_section": rope["mrope_section"]}
    json.dump(config, open(f"{dst}/config.json", "w"))


def make(d):
    torch.manual_seed(61)
    write_data(f"{d}/vl.h5", np.random.default_rng(61), 4)
    write_data(f"{d}/vl-hidden.h5", np.random.default_rng(62), 64)
    write_data(f"{d}/vl-short.h5", np.random.default_rng(61), 4, short=True)
    vision2 = dict(depth=2, embed_dim=32, num_heads=4, mlp_ratio=2, hidden_size=64, patch_size=4,
                   spatial_merge_size=2, temporal_patch_size=2, in_channels=3, initializer_range=0.2)
    Qwen2VLForConditionalGeneration(Qwen2VLConfig(text_config=TEXT, vision_config=vision2, **TOKENS)).save_pretrained(f"{d}/qwen2vl")
    add_score(f"{d}/qwen2vl", 4)
    new_layout(f"{d}/qwen2vl", f"{d}/qwen2vl-new")
    for name, window, classes in (("qwen25vl", 16, 4), ("qwen25vl-wide", 64, 4), ("qwen25vl-identity", 16, 64)):
        vision = dict(depth=3, hidden_size=32, out_hidden_size=64, intermediate_size=48, num_heads=4,
                      patch_size=4, spatial_merge_size=2, temporal_patch_size=2, in_channels=3,
                      window_size=window, fullatt_block_indexes=[1], initializer_range=0.2)
        torch.manual_seed(62)
        Qwen2_5_VLForConditionalGeneration(Qwen2_5_VLConfig(text_config=TEXT, vision_config=vision, **TOKENS)).save_pretrained(f"{d}/{name}")
        add_score(f"{d}/{name}", classes, identity=name.endswith("identity"))


def sequence_classifier():
    """What docs/models.md shows: Qwen2_5_VLModel and a score on the last real token."""
    from torch import nn
    from transformers import Qwen2_5_VLModel, Qwen2_5_VLPreTrainedModel

    class Qwen2_5_VLForSequenceClassification(Qwen2_5_VLPreTrainedModel):
        def __init__(self, config):
            super().__init__(config)
            self.model = Qwen2_5_VLModel(config)
            self.score = nn.Linear(config.text_config.hidden_size, config.num_labels, bias=False)
            self.post_init()

        def forward(self, input_ids, attention_mask=None, **kwargs):
            kwargs.pop("labels", None)  # PEFT's wrapper passes labels=None through
            hidden = self.model(input_ids=input_ids, attention_mask=attention_mask, **kwargs).last_hidden_state
            last = attention_mask.sum(1) - 1 if attention_mask is not None else torch.full((len(input_ids),), input_ids.shape[1] - 1)
            return self.score(hidden[torch.arange(len(hidden)), last])
    return Qwen2_5_VLForSequenceClassification


def agree(hfdir, data, pred):
    config = json.load(open(f"{hfdir}/config.json"))
    assert config["architectures"] == ["Qwen2_5_VLForSequenceClassification"], config["architectures"]
    model = sequence_classifier().from_pretrained(hfdir, dtype=torch.float32).eval()
    same_predictions(model, config["image_token_id"], data, pred, "the export in transformers")


def peft_agree(base, adapter, data, pred):
    """--lora's adapter on the base checkpoint through PEFT: what eval --predictions wrote."""
    from peft import PeftModel
    config = json.load(open(f"{base}/config.json"))
    with h5py.File(data, "r") as f:
        classes = len(f.attrs["class_names"])
    # The base as the class above names its tensors (a ForConditionalGeneration checkpoint keeps
    # visual.* and model.*); the config as it is.
    renamed = tempfile.mkdtemp()
    shutil.copytree(base, renamed, dirs_exist_ok=True)
    layout = {"visual.": "model.visual.", "model.": "model.language_model."}
    tensors = {next((layout[p] + k[len(p):] for p in layout if k.startswith(p)), k): v
               for k, v in load_file(f"{base}/model.safetensors").items()}
    save_file(tensors, f"{renamed}/model.safetensors", metadata={"format": "pt"})
    model = sequence_classifier().from_pretrained(renamed, dtype=torch.float32, num_labels=classes)
    shutil.rmtree(renamed)
    model = PeftModel.from_pretrained(model, adapter).eval()
    same_predictions(model, config["image_token_id"], data, pred, "PEFT's adapter on the base",
                     tolerance=1e-5)


def same_predictions(model, image, data, pred, what, tolerance=1e-4):
    out = []
    with h5py.File(data, "r") as f:
        g = f["test/inputs"]
        for i in range(len(f["test/y"])):
            o = lambda n: g[n]["offsets"]
            ids = torch.tensor(g["input_ids"]["values"][o("input_ids")[i]:o("input_ids")[i + 1]]).unsqueeze(0)
            grid = torch.tensor(g["image_grid_thw"]["values"][o("image_grid_thw")[i]:o("image_grid_thw")[i + 1]].reshape(-1, 3))
            pixels = torch.tensor(g["pixel_values"]["values"][o("pixel_values")[i]:o("pixel_values")[i + 1]].reshape(-1, 96))
            kwargs = dict(pixel_values=pixels, image_grid_thw=grid) if len(grid) else {}
            with torch.no_grad():
                out.append(model(input_ids=ids, mm_token_type_ids=(ids == image).int(), **kwargs)[0].numpy())
    want = np.stack(out)
    with h5py.File(pred, "r") as f:
        got = f["logits"][()]
    gap = float(np.abs(got - want).max())
    assert gap < tolerance, f"{what}: logits differ by {gap}"
    print(f"{what}: {len(got)} samples, logits within {gap:.1e}")


def reference(ckpt, data, split="test"):
    config = json.load(open(f"{ckpt}/config.json"))
    cls = Qwen2_5_VLForConditionalGeneration if config["model_type"] == "qwen2_5_vl" else Qwen2VLForConditionalGeneration
    model = cls.from_pretrained(ckpt, dtype=torch.float32).eval()
    score = load_file(f"{ckpt}/model.safetensors")["score.weight"]
    out = []
    with h5py.File(data, "r") as f:
        g = f[f"{split}/inputs"]
        def row(name, i, width):
            o = g[name]["offsets"]
            return g[name]["values"][o[i]:o[i + 1]].reshape(-1, width)
        for i in range(len(f[f"{split}/y"])):
            ids = torch.tensor(row("input_ids", i, 1).reshape(-1)).unsqueeze(0)
            kwargs = dict(input_ids=ids, mm_token_type_ids=(ids == IMAGE).int())
            grid = row("image_grid_thw", i, 3)
            if len(grid):
                kwargs["pixel_values"] = torch.tensor(row("pixel_values", i, 96))
                kwargs["image_grid_thw"] = torch.tensor(grid)
            with torch.no_grad():
                hidden = model.model(**kwargs).last_hidden_state[0, -1]
            out.append((score @ hidden).numpy())
    return np.stack(out)


def logits(ckpt, data, pred):
    hf_compare.against(reference(ckpt, data), pred, "samples", min_spread=0.01)


if __name__ == "__main__":
    {"make": make, "logits": logits, "agree": agree, "peft_agree": peft_agree}[sys.argv[1]](*sys.argv[2:])
