#!/usr/bin/env python3
"""HuggingFace checkpoints made with transformers (random weights, nothing downloaded) and
slimtrain's outputs checked against transformers' own forward, for hf_models.sh.

  hf_models.py make DIR        DIR/text.h5 (layout 2: input_ids ragged, vocab 120, 4 classes,
                               the class's marker token 3..6 in the sequence) and checkpoints:
                               bert, roberta, distilbert, bert-bf16 (stored in bfloat16), bert-sharded
                               (model.safetensors.index.json), bert-base (BertModel: no "bert."
                               prefix, no classifier), bert-2labels (a head for 2 classes),
                               bert-missing, bert-shape, bert-extra (damaged), gpt2 (no module);
                               DIR/images.h5 (layout 1: 3x16x16 uint8, mean and std 127.5, 4
                               classes: a bright quadrant) and vit (ViTForImageClassification,
                               patch 4, its ViTImageProcessor beside it) and DIR/pngs/{train,test}/
                               CLASS/*.png (the same kind of images as files); qwen2 (Qwen2ForSequenceClassification, 4 heads over 2
                               key-value heads), qwen2-tune (its usual initialisation), llama,
                               llama3 (Llama 3.1's rotary scaling), qwen2-linear (rope_scaling
                               linear, as transformers 4 writes it), qwen2-yarn (a kind not
                               implemented), qwen2-gelu, llama-relu and llama-bias (hidden_act
                               gelu, relu and gelu_pytorch_tanh; attention_bias and mlp_bias);
                               DIR/text37.h5 and roberta-37 (sequences of exactly its 37
                               positions, which padding to a multiple of 8 passes)
  hf_models.py logits CKPT DATA SPLIT PRED.h5
                               /logits of PRED.h5 equal transformers' logits of CKPT (loaded in
                               float32, eval mode), sequence by sequence unpadded (images as
                               pixel_values (x - 127.5) / 127.5, as ViTImageProcessor), within 1e-4
  hf_models.py processed CKPT PNGDIR PRED.h5
                               /logits of PRED.h5 equal transformers' logits of the images of
                               PNGDIR/CLASS/*.png (sorted) through the checkpoint's processor
  hf_models.py agree HFDIR DATA SPLIT PRED.h5
                               an exported checkpoint loads with from_pretrained and predicts
                               PRED.h5's classes (logits within 1e-4), its id2label the data's
"""
import glob
import json
import os
import shutil
import sys

import h5py
import hf_compare
import numpy as np
import torch
from safetensors.torch import load_file, save_file
from transformers import (AutoModelForSequenceClassification, BertConfig, BertForSequenceClassification,
                          BertModel, DistilBertConfig, DistilBertForSequenceClassification, LlamaConfig, LlamaForSequenceClassification, Qwen2Config,
                          Qwen2ForSequenceClassification, RobertaConfig, RobertaForSequenceClassification,
                          ViTConfig, ViTForImageClassification)

CLASSES = ["one", "two", "three", "four"]


def write_data(path, rng, longest=40):
    """Sequences of 1..longest tokens; below 40, the first four of each split are of exactly
    `longest` tokens (a model whose limit that is must still take them, padded or not)."""
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 2
        f.attrs["num_classes"] = 4
        f.attrs["class_names"] = CLASSES
        for split, n in (("train", 512), ("test", 96)):
            labels = rng.integers(0, 4, n)
            sequences = []
            for i, y in enumerate(labels):
                length = longest if longest < 40 and i < 4 else rng.integers(1, longest + 1)
                s = rng.integers(8, 120, length)  # none of 0..7
                s[rng.integers(0, len(s))] = 3 + y
                sequences.append(s)
            ids = f.create_group(f"{split}/inputs/input_ids")
            ids.create_dataset("values", data=np.concatenate(sequences).astype(np.int64))
            ids.create_dataset("offsets", data=np.cumsum([0] + [len(s) for s in sequences]).astype(np.int64))
            ids.attrs["vocab_size"] = 120
            ids.attrs["pad_id"] = 0
            f[split].create_dataset("y", data=labels.astype(np.int64))


def write_images(path, rng):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 1
        f.attrs["num_classes"] = 4
        f.attrs["class_names"] = CLASSES
        for split, n in (("train", 512), ("test", 96)):
            y = rng.integers(0, 4, n)
            x = rng.integers(0, 150, (n, 3, 16, 16))
            for i in range(n):
                r, c = divmod(int(y[i]), 2)
                x[i, :, 8 * r:8 * r + 8, 8 * c:8 * c + 8] += 100
            ds = f.create_dataset(f"{split}/x", data=x.astype(np.uint8))
            ds.attrs["mean"] = np.full(3, 127.5, np.float32)
            ds.attrs["std"] = np.full(3, 127.5, np.float32)
            f[split].create_dataset("y", data=y.astype(np.int64))


def bert_config(**extra):
    base = dict(vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                intermediate_size=64, max_position_embeddings=64, num_labels=4, initializer_range=0.3,
                id2label={i: c for i, c in enumerate(CLASSES)}, label2id={c: i for i, c in enumerate(CLASSES)})
    base.update(extra)
    return BertConfig(**base)


def make_vit(d):
    """DIR/images.h5 and the ViT that classifies them."""
    write_images(f"{d}/images.h5", np.random.default_rng(48))
    ViTForImageClassification(ViTConfig(
        image_size=16, patch_size=4, num_channels=3, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=64, num_labels=4, initializer_range=0.3)).save_pretrained(f"{d}/vit")


def make(d):
    torch.manual_seed(47)
    write_data(f"{d}/text.h5", np.random.default_rng(47))
    bert = BertForSequenceClassification(bert_config()).eval()
    bert.save_pretrained(f"{d}/bert")
    bert.to(torch.bfloat16).save_pretrained(f"{d}/bert-bf16")
    bert.to(torch.float32).save_pretrained(f"{d}/bert-sharded", max_shard_size="40KB")
    BertModel(bert_config()).save_pretrained(f"{d}/bert-base")
    BertForSequenceClassification(bert_config(num_labels=2, id2label=None, label2id=None)).save_pretrained(f"{d}/bert-2labels")
    roberta = RobertaForSequenceClassification(RobertaConfig(
        vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=66, type_vocab_size=1, pad_token_id=1, num_labels=4,
        initializer_range=0.3))
    roberta.save_pretrained(f"{d}/roberta")
    # Issue 55: a model whose limit (39 - pad_token_id - 1 = 37 positions) a batch padded to a
    # multiple of 8 passes; text37.h5 holds sequences of exactly 37 tokens.
    write_data(f"{d}/text37.h5", np.random.default_rng(49), longest=37)
    RobertaForSequenceClassification(RobertaConfig(
        vocab_size=120, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=39, type_vocab_size=1, pad_token_id=1, num_labels=4,
        initializer_range=0.3)).save_pretrained(f"{d}/roberta-37")
    DistilBertForSequenceClassification(DistilBertConfig(
        vocab_size=120, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64,
        num_labels=4, initializer_range=0.3)).save_pretrained(f"{d}/distilbert")

    tensors = load_file(f"{d}/bert/model.safetensors")
    for name, change in (("missing", "drop"), ("shape", "shape"), ("extra", "extra")):
        out = f"{d}/bert-{name}"
        shutil.copytree(f"{d}/bert", out)
        t = dict(tensors)
        if change == "drop":
            del t["bert.encoder.layer.1.output.dense.weight"]
        elif change == "shape":
            t["bert.encoder.layer.0.attention.self.key.weight"] = torch.zeros(32, 16)
        else:
            t["bert.encoder.layer.0.adapter.weight"] = torch.zeros(4, 4)
        save_file(t, f"{out}/model.safetensors", metadata={"format": "pt"})
    make_vit(d)
    from PIL import Image
    from transformers import ViTImageProcessor
    ViTImageProcessor(size={"height": 16, "width": 16}, image_mean=[0.5] * 3, image_std=[0.5] * 3,
                      resample=2).save_pretrained(f"{d}/vit")
    with h5py.File(f"{d}/images.h5", "r") as f:
        for split in ("train", "test"):
            x, y = f[f"{split}/x"][()], f[f"{split}/y"][()]
            for i in range(len(y)):
                folder = f"{d}/pngs/{split}/{CLASSES[y[i]]}"
                os.makedirs(folder, exist_ok=True)
                Image.fromarray(x[i].transpose(1, 2, 0)).save(f"{folder}/{i:04d}.png")
    decoder = dict(vocab_size=120, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                   num_labels=4, pad_token_id=0, initializer_range=0.3)
    Qwen2ForSequenceClassification(Qwen2Config(**decoder)).save_pretrained(f"{d}/qwen2")
    LlamaForSequenceClassification(LlamaConfig(**decoder)).save_pretrained(f"{d}/llama")
    # Issue 55: hidden_act honoured by the decoders, and Llama's attention_bias (o_proj's too)
    # and mlp_bias built.
    Qwen2ForSequenceClassification(Qwen2Config(**decoder, hidden_act="gelu")).save_pretrained(f"{d}/qwen2-gelu")
    LlamaForSequenceClassification(LlamaConfig(**decoder, hidden_act="gelu_pytorch_tanh", attention_bias=True,
                                               mlp_bias=True)).save_pretrained(f"{d}/llama-bias")
    LlamaForSequenceClassification(LlamaConfig(**decoder, hidden_act="relu")).save_pretrained(f"{d}/llama-relu")
    # Llama 3.1's rotary scaling, sized so that the head's 4 frequencies fall in all three of its
    # bands (kept, blended, stretched); and the linear kind, as a transformers 4 file writes it.
    LlamaForSequenceClassification(LlamaConfig(**decoder, rope_parameters=dict(
        rope_type="llama3", rope_theta=100.0, factor=4.0, low_freq_factor=1.0, high_freq_factor=4.0,
        original_max_position_embeddings=32))).save_pretrained(f"{d}/llama3")
    for kind, scaling in (("linear", {"type": "linear", "factor": 2.0}), ("yarn", {"rope_type": "yarn", "factor": 2.0})):
        os.makedirs(f"{d}/qwen2-{kind}", exist_ok=True)
        shutil.copy(f"{d}/qwen2/model.safetensors", f"{d}/qwen2-{kind}/")
        config = json.load(open(f"{d}/qwen2/config.json"))
        config.pop("rope_parameters", None)
        config.update(rope_theta=10000.0, rope_scaling=scaling)
        json.dump(config, open(f"{d}/qwen2-{kind}/config.json", "w"))
    # The logits tests want a wide spread (0.3); fine-tuning a decoder wants transformers' 0.02.
    Qwen2ForSequenceClassification(Qwen2Config(**dict(decoder, initializer_range=0.02))).save_pretrained(
        f"{d}/qwen2-tune")
    os.makedirs(f"{d}/gpt2")
    with open(f"{d}/gpt2/config.json", "w") as f:
        json.dump({"model_type": "gpt2", "architectures": ["GPT2ForSequenceClassification"]}, f)


def make_small(d):
    """What tests/gpu/hf_cuda.sh and e2e_hf_lora train: the text data, BERT, DistilBERT and
    qwen2-tune, as make makes them, and the images and ViT."""
    torch.manual_seed(47)
    write_data(f"{d}/text.h5", np.random.default_rng(47))
    BertForSequenceClassification(bert_config()).save_pretrained(f"{d}/bert")
    DistilBertForSequenceClassification(DistilBertConfig(
        vocab_size=120, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64,
        num_labels=4, initializer_range=0.3)).save_pretrained(f"{d}/distilbert")
    qwen2 = Qwen2ForSequenceClassification(Qwen2Config(
        vocab_size=120, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64, num_labels=4, pad_token_id=0,
        initializer_range=0.02))
    qwen2.save_pretrained(f"{d}/qwen2-tune")
    qwen2.to(torch.bfloat16).save_pretrained(f"{d}/qwen2-bf16")  # stored as the 7B ones are
    make_vit(d)


def sequences(data, split):
    with h5py.File(data, "r") as f:
        ids = f[f"{split}/inputs/input_ids"]
        values, offsets = ids["values"][()], ids["offsets"][()]
        return [values[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]


def reference_logits(ckpt, data, split):
    config = json.load(open(f"{ckpt}/config.json"))
    if config["model_type"] == "vit":
        model = ViTForImageClassification.from_pretrained(ckpt, dtype=torch.float32).eval()
        with h5py.File(data, "r") as f:
            pixels = (torch.from_numpy(f[f"{split}/x"][()]).float() - 127.5) / 127.5
        with torch.no_grad():
            return model(pixel_values=pixels).logits.numpy()
    model = AutoModelForSequenceClassification.from_pretrained(ckpt, dtype=torch.float32).eval()
    with torch.no_grad():
        return np.concatenate([model(input_ids=torch.tensor(s).unsqueeze(0)).logits.numpy()
                               for s in sequences(data, split)])


def processed(ckpt, pngs, pred):
    from PIL import Image
    from transformers import ViTImageProcessor
    processor = ViTImageProcessor.from_pretrained(ckpt)
    model = ViTForImageClassification.from_pretrained(ckpt, dtype=torch.float32).eval()
    files = sorted(glob.glob(f"{pngs}/*/*.png"))
    pixels = processor(images=[Image.open(p).convert("RGB") for p in files], return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        want = model(pixel_values=pixels).logits.numpy()
    with h5py.File(pred, "r") as f:
        got = f["logits"][()]
    assert got.shape == want.shape, (got.shape, want.shape)
    gap = float(np.abs(got - want).max())
    assert gap < 1e-4, f"logits differ from transformers' by {gap}"
    print(f"{len(files)} images through the processor: logits within {gap:.1e} of transformers'")


def padded(ckpt, data, split, pred):
    """A decoder's logits in batches padded right and left (the pad token, attention_mask 0,
    positions counted over the real tokens as generate() counts them) equal PRED.h5's."""
    model = AutoModelForSequenceClassification.from_pretrained(ckpt, dtype=torch.float32).eval()
    seqs = sequences(data, split)
    with h5py.File(pred, "r") as f:
        got = f["logits"][()]
    pad = model.config.pad_token_id
    for side in ("right", "left"):
        out = []
        for b in range(0, len(seqs), 16):
            chunk = seqs[b:b + 16]
            width = max(len(s) for s in chunk)
            ids = torch.full((len(chunk), width), pad, dtype=torch.int64)
            mask = torch.zeros_like(ids)
            for i, s in enumerate(chunk):
                at = slice(0, len(s)) if side == "right" else slice(width - len(s), width)
                ids[i, at], mask[i, at] = torch.tensor(s), 1
            positions = (mask.cumsum(1) - 1).clamp(min=0)
            with torch.no_grad():
                out.append(model(input_ids=ids, attention_mask=mask, position_ids=positions).logits.numpy())
        gap = float(np.abs(np.concatenate(out) - got).max())
        assert gap < 1e-4, f"{side} padding: logits differ by {gap}"
        print(f"transformers with {side} padding: logits within {gap:.1e}")


def logits(ckpt, data, split, pred):
    hf_compare.against(reference_logits(ckpt, data, split), pred, "sequences", min_spread=0.05)


def agree(hfdir, data, split, pred):
    config = json.load(open(f"{hfdir}/config.json"))
    arch = {"bert": "BertForSequenceClassification", "roberta": "RobertaForSequenceClassification",
            "vit": "ViTForImageClassification", "qwen2": "Qwen2ForSequenceClassification",
            "llama": "LlamaForSequenceClassification",
            "distilbert": "DistilBertForSequenceClassification"}[config["model_type"]]
    assert config["architectures"] == [arch], config["architectures"]
    with h5py.File(data, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else str(n) for n in f.attrs["class_names"]]
    assert [config["id2label"][str(i)] for i in range(len(names))] == names, config["id2label"]
    want = reference_logits(hfdir, data, split)
    with h5py.File(pred, "r") as f:
        got, predicted = f["logits"][()], f["predicted"][()]
    assert (want.argmax(1) == predicted).all(), "transformers predicts other classes"
    gap = float(np.abs(got - want).max())
    assert gap < 1e-4, f"logits differ by {gap}"
    print(f"from_pretrained predicts what slimtrain eval wrote ({len(got)} samples, logits within {gap:.1e})")


if __name__ == "__main__":
    {"make": make, "make_small": make_small, "logits": logits, "agree": agree, "padded": padded,
     "processed": processed}[sys.argv[1]](*sys.argv[2:])
