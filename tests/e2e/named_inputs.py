"""Files of layout version 2 (named inputs) and TorchScript models that take them, written with
h5py and python3-torch for tests/e2e/named_inputs.sh: the seeds' shape, an image and a token
sequence of any length per sample.

python3 named_inputs.py DIR writes into DIR:
  mm.h5          /SPLIT/inputs/pixel_values uint8 [N, 3, 8, 8] (mean/std attributes) and
                 /SPLIT/inputs/input_ids ragged int64 (vocab_size 50, pad_id 0), 4 classes:
                 bit 0 of the label brightens the image, bit 1 puts token 7 in the sequence
  bad-offsets.h5 mm.h5 with train offsets that decrease at row 5
  bad-ids.h5     mm.h5 with token id 60 (vocab_size 50) in train row 7
  text.h5        input_ids alone (vocab_size 200), 4 classes: the class's marker token (1-4)
                 appears in the sequence, among random others
  mm.pt          forward(pixel_values, input_ids, attention_mask) -> {"logits", "hidden_states"}
  extra.pt       forward(pixel_values, input_ids, attention_mask, token_type_ids): one input more
  text.pt        forward(input_ids, attention_mask): leaves pixel_values unused
"""
import shutil
import sys
from typing import Dict

import h5py
import numpy as np
import torch
import torch.nn.functional as F


def write(path, splits):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 2
        f.attrs["num_classes"] = 4
        f.attrs["class_names"] = ["plain", "bright", "seven", "both"]
        for name, (pixels, sequences, labels) in splits.items():
            inputs = f.create_group(f"{name}/inputs")
            px = inputs.create_dataset("pixel_values", data=pixels)
            px.attrs["mean"] = np.array([100.0], np.float32)
            px.attrs["std"] = np.array([60.0], np.float32)
            ids = inputs.create_group("input_ids")
            ids.create_dataset("values", data=np.concatenate(sequences).astype(np.int64))
            ids.create_dataset("offsets", data=np.cumsum([0] + [len(s) for s in sequences]).astype(np.int64))
            ids.attrs["vocab_size"] = 50
            ids.attrs["pad_id"] = 0
            f[name].create_dataset("y", data=np.asarray(labels, np.int64))


def make_split(rng, n):
    labels = rng.integers(0, 4, n)
    pixels = rng.integers(0, 120, (n, 3, 8, 8))
    pixels[labels % 2 == 1] += 120
    sequences = []
    for y in labels:
        s = rng.integers(8, 50, rng.integers(1, 41))
        if y >= 2:
            s[rng.integers(0, len(s))] = 7
        sequences.append(s)
    return pixels.astype(np.uint8), sequences, labels


class Multimodal(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.embed_tokens = torch.nn.Embedding(50, 16)
        self.head = torch.nn.Linear(24, 4)

    def forward(self, pixel_values: torch.Tensor, input_ids: torch.Tensor,
                attention_mask: torch.Tensor) -> Dict[str, torch.Tensor]:
        image = F.relu(self.conv(pixel_values)).mean(dim=[2, 3])
        mask = attention_mask.unsqueeze(-1).to(torch.float32)
        text = (self.embed_tokens(input_ids) * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        hidden_states = torch.cat([image, text], 1)
        return {"logits": self.head(hidden_states), "hidden_states": hidden_states}


class Extra(Multimodal):
    def forward(self, pixel_values: torch.Tensor, input_ids: torch.Tensor,
                attention_mask: torch.Tensor, token_type_ids: torch.Tensor) -> Dict[str, torch.Tensor]:
        return {"logits": self.head(torch.zeros(pixel_values.size(0), 24))}


class TextOnly(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(50, 16)
        self.head = torch.nn.Linear(16, 4)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed_tokens(input_ids).mean(1))


def main():
    d = sys.argv[1]
    rng = np.random.default_rng(7)
    write(f"{d}/mm.h5", {"train": make_split(rng, 120), "test": make_split(rng, 37)})
    shutil.copy(f"{d}/mm.h5", f"{d}/bad-offsets.h5")
    with h5py.File(f"{d}/bad-offsets.h5", "r+") as f:
        o = f["train/inputs/input_ids/offsets"]
        o[6] = o[5] - 1
    shutil.copy(f"{d}/mm.h5", f"{d}/bad-ids.h5")
    with h5py.File(f"{d}/bad-ids.h5", "r+") as f:
        o = f["train/inputs/input_ids/offsets"][()]
        f["train/inputs/input_ids/values"][o[7]] = 60
    with h5py.File(f"{d}/text.h5", "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 2
        f.attrs["num_classes"] = 4
        for split, n in (("train", 400), ("test", 101)):
            labels = rng.integers(0, 4, n)
            sequences = []
            for y in labels:
                s = rng.integers(5, 200, rng.integers(3, 60))
                s[rng.integers(0, len(s))] = y + 1
                sequences.append(s)
            ids = f.create_group(f"{split}/inputs/input_ids")
            ids.create_dataset("values", data=np.concatenate(sequences).astype(np.int64))
            ids.create_dataset("offsets", data=np.cumsum([0] + [len(s) for s in sequences]).astype(np.int64))
            ids.attrs["vocab_size"] = 200
            f[split].create_dataset("y", data=labels.astype(np.int64))
    torch.manual_seed(0)
    torch.jit.script(Multimodal()).save(f"{d}/mm.pt")
    torch.jit.script(Extra()).save(f"{d}/extra.pt")
    torch.jit.script(TextOnly()).save(f"{d}/text.pt")


if __name__ == "__main__":
    main()
