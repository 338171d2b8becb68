#!/usr/bin/env python3
"""safetensors files made and checked with HuggingFace's own library, for safetensors.sh.

  safetensors_files.py make DIR           one.safetensors (every dtype slimtrain reads, metadata),
                                          sharded/ (two files and model.safetensors.index.json
                                          as save_pretrained writes them), nan.safetensors, and
                                          the damaged files bad-*.safetensors
  safetensors_files.py refused FILE       exit 0 when the reference library refuses FILE
  safetensors_files.py same W.safetensors W.h5
                                          the export's tensors equal the HDF5 export's, names,
                                          shapes and values; the metadata says format pt
"""
import json
import os
import struct
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file


def raw(header, data):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


def make(d):
    g = torch.Generator().manual_seed(47)
    tensors = {
        "embeddings.word_embeddings.weight": torch.randn(10, 4, generator=g),
        "encoder.layer.0.attention.self.query.bias": torch.randn(4, generator=g).half(),
        "encoder.layer.0.output.dense.weight": torch.randn(4, 4, generator=g).bfloat16(),
        "pooler.dense.weight": torch.randn(2, 2, generator=g).double(),
        "embeddings.position_ids": torch.arange(8).unsqueeze(0),
        "mask": torch.tensor([True, False, True]),
        "u8": torch.arange(5, dtype=torch.uint8),
        "scalar": torch.tensor(1.5),
    }
    save_file(tensors, f"{d}/one.safetensors", metadata={"format": "pt"})
    os.makedirs(f"{d}/sharded", exist_ok=True)
    first = {k: tensors[k] for k in list(tensors)[:4]}
    second = {k: tensors[k] for k in list(tensors)[4:]}
    save_file(first, f"{d}/sharded/model-00001-of-00002.safetensors", metadata={"format": "pt"})
    save_file(second, f"{d}/sharded/model-00002-of-00002.safetensors", metadata={"format": "pt"})
    weight_map = {k: "model-00001-of-00002.safetensors" for k in first}
    weight_map.update({k: "model-00002-of-00002.safetensors" for k in second})
    with open(f"{d}/sharded/model.safetensors.index.json", "w") as f:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, f)
    save_file({"w": torch.tensor([1.0, float("nan")])}, f"{d}/nan.safetensors")

    good = open(f"{d}/one.safetensors", "rb").read()
    open(f"{d}/bad-truncated.safetensors", "wb").write(good[:-3])
    two = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
           "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}
    open(f"{d}/bad-overlap.safetensors", "wb").write(raw(two, bytes(12)))
    past = bytearray(good)
    past[0:8] = struct.pack("<Q", len(good))
    open(f"{d}/bad-length.safetensors", "wb").write(bytes(past))
    open(f"{d}/bad-dtype.safetensors", "wb").write(
        raw({"w": {"dtype": "F31", "shape": [2], "data_offsets": [0, 8]}}, bytes(8)))
    text = b"{not json}"
    open(f"{d}/bad-json.safetensors", "wb").write(struct.pack("<Q", len(text)) + text)
    dup = (b'{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
           b'"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}')
    open(f"{d}/bad-twice.safetensors", "wb").write(struct.pack("<Q", len(dup)) + dup + bytes(4))


def refused(path):
    try:
        with safe_open(path, framework="pt") as f:
            for k in f.keys():
                f.get_tensor(k)
    except Exception as e:  # the reference's own error types differ by version
        print(f"the reference refuses it: {type(e).__name__}: {e}")
        return 0
    print("the reference reads it")
    return 1


def same(st_path, h5_path):
    import h5py
    st = load_file(st_path)
    with safe_open(st_path, framework="pt") as f:
        meta = f.metadata()
    assert meta.get("format") == "pt", meta
    assert "model_spec" in meta and int(meta["step"]) > 0, meta
    with h5py.File(h5_path, "r") as f:
        names = sorted(f.keys())
        assert sorted(st) == names, (sorted(st), names)
        for k in names:
            want = torch.from_numpy(f[k][()])
            assert st[k].shape == want.shape, (k, st[k].shape, want.shape)
            assert torch.equal(st[k].to(want.dtype), want), k
    print(f"{len(st)} tensors equal the HDF5 export's; metadata {sorted(meta)}")
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        make(sys.argv[2])
    elif cmd == "refused":
        sys.exit(refused(sys.argv[2]))
    elif cmd == "same":
        sys.exit(same(sys.argv[2], sys.argv[3]))
