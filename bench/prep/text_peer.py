"""The tokenizer peer of bench/prep/text.sh: what a Python user writes to turn a CSV of texts
and class names into slimtrain's layout 2 with python3-sentencepiece and h5py, timed inside
(after the imports) from reading the CSV to the closed file.

  text_peer.py CSV MODEL OUT.h5 loop       sp.encode(text) per record, in a Python loop
  text_peer.py CSV MODEL OUT.h5 batch N    sp.encode(all texts, num_threads=N): SentencePiece's
                                           own C++ batch, N threads

Prints: peer_s=... records=... tokens=... mode=...
"""
import csv
import sys
import time

import h5py
import numpy as np
import sentencepiece as spm


def main():
    path, model, out, mode = sys.argv[1:5]
    threads = int(sys.argv[5]) if len(sys.argv) > 5 else 1
    start = time.perf_counter()
    sp = spm.SentencePieceProcessor(model_file=model)
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    texts = [r["text"] for r in rows]
    classes = sorted({r["category"] for r in rows})
    index = {c: i for i, c in enumerate(classes)}
    if mode == "loop":
        ids = [sp.encode(t) for t in texts]
    else:
        ids = sp.encode(texts, num_threads=threads)
    lengths = np.fromiter((len(s) for s in ids), dtype=np.int64, count=len(ids))
    offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = np.fromiter((t for s in ids for t in s), dtype=np.int32, count=int(offsets[-1]))
    with h5py.File(out, "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 2
        f.attrs["num_classes"] = len(classes)
        f.attrs["class_names"] = classes
        f.create_dataset("tokenizer", data=np.frombuffer(sp.serialized_model_proto(), np.uint8))
        g = f.create_group("train/inputs/input_ids")
        g.create_dataset("values", data=values, chunks=(min(len(values), 1 << 18),))
        g.create_dataset("offsets", data=offsets)
        g.attrs["vocab_size"] = sp.get_piece_size()
        g.attrs["pad_id"] = max(sp.pad_id(), 0)
        f.create_dataset("train/y", data=np.asarray([index[r["category"]] for r in rows], np.int64))
    print(f"peer_s={time.perf_counter() - start:.3f} records={len(rows)} tokens={offsets[-1]} "
          f"mode={mode}{threads if mode == 'batch' else ''}")


if __name__ == "__main__":
    main()
