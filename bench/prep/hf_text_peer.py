"""The peer and the inputs of bench/prep/hf_text.sh.

  hf_text_peer.py make DIR N        DIR/texts.csv: N records (fortunes, one in 40 a hard text in
                                    another script), DIR/NAME/tokenizer.json for each NAME of
                                    KINDS, trained here with the tokenizers library (nothing
                                    downloaded)
  hf_text_peer.py run TOKENIZER CSV OUT.h5
                                    what a Python user writes to turn the CSV into slimtrain's
                                    layout 2 with the library: Tokenizer.from_file, the CSV read,
                                    encode_batch of every text (the library's parallelism off:
                                    one thread, as prep at one rank), the ids written with h5py.
                                    Prints peer_s=... encode_s=... tokens=...: the whole, and
                                    encode_batch alone
  hf_text_peer.py same A.h5 B.h5   the same ids and offsets in both
"""
import os
import sys

os.environ["TOKENIZERS_PARALLELISM"] = "false"  # before the library starts its thread pool
os.environ["RAYON_NUM_THREADS"] = "1"

import csv  # noqa: E402
import time  # noqa: E402

KINDS = {
    "bert": "WordPiece, BertNormalizer, BertPreTokenizer ([CLS] A [SEP])",
    "llama3": "byte-level BPE, Llama 3's split regex, ignore_merges",
    "llama2": "SentencePiece BPE, byte fallback, Prepend + Replace",
    "t5": "Unigram, Precompiled charsmap, WhitespaceSplit + Metaspace",
}


def make(d, n):
    import json
    import random
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "tests", "e2e"))
    import hf_tokenizer
    import hf_tokenizer_zoo as zoo
    texts = [t for t in zoo.corpus()[len(zoo.HARD):] if t.strip()]
    rng = random.Random(2026)
    with open(f"{d}/texts.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["text", "label"])
        for i in range(int(n)):
            text = zoo.HARD[i // 40 % len(zoo.HARD)] if i % 40 == 39 else rng.choice(texts)
            w.writerow([text if text.strip() else "empty", "ab"[i % 2]])
    built = zoo.build(d)
    configs = {"bert": built["wordpiece-bert"], "llama2": built["spm-llama2"], "t5": built["spm-t5"],
               "llama3": json.loads(hf_tokenizer.byte_bpe("llama3").to_str())}
    for name in KINDS:
        os.makedirs(f"{d}/{name}", exist_ok=True)
        json.dump(configs[name], open(f"{d}/{name}/tokenizer.json", "w"), ensure_ascii=False)


def run(tokenizer, table, out):
    import h5py
    import numpy as np
    from tokenizers import Tokenizer
    start = time.perf_counter()
    t = Tokenizer.from_file(tokenizer)
    with open(table, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    texts = [r["text"] for r in rows]
    classes = sorted({r["label"] for r in rows})
    index = {c: i for i, c in enumerate(classes)}
    encode_start = time.perf_counter()
    encodings = t.encode_batch(texts)
    encode_s = time.perf_counter() - encode_start
    lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
    offsets = np.zeros(len(encodings) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = np.fromiter((i for e in encodings for i in e.ids), dtype=np.int32, count=int(offsets[-1]))
    with h5py.File(out, "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 2
        f.attrs["num_classes"] = len(classes)
        f.attrs["class_names"] = classes
        f.create_dataset("tokenizer", data=np.frombuffer(open(tokenizer, "rb").read(), np.uint8))
        g = f.create_group("train/inputs/input_ids")
        g.create_dataset("values", data=values, chunks=(min(len(values), 1 << 18),))
        g.create_dataset("offsets", data=offsets)
        g.attrs["vocab_size"] = t.get_vocab_size()
        f.create_dataset("train/y", data=np.asarray([index[r["label"]] for r in rows], np.int64))
    print(f"peer_s={time.perf_counter() - start:.3f} encode_s={encode_s:.3f} tokens={offsets[-1]}")


def same(a, b):
    import h5py
    import numpy as np
    with h5py.File(a, "r") as x, h5py.File(b, "r") as y:
        for name in ("train/inputs/input_ids/values", "train/inputs/input_ids/offsets"):
            assert np.array_equal(x[name][()], y[name][()]), f"{name} differs: {a} {b}"
        print(f"same ids: {len(x['train/inputs/input_ids/offsets']) - 1} records, "
              f"{len(x['train/inputs/input_ids/values'])} tokens")


if __name__ == "__main__":
    {"make": make, "run": run, "same": same}[sys.argv[1]](*sys.argv[2:])
