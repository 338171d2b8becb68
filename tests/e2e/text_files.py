"""Text files for tests/e2e/prep_text.sh, and checks of what `prep text` wrote.

  text_files.py inputs DIR          small CSV, TSV and JSONL(.gz) files, good and bad
  text_files.py check-csv OUT CSV   /test of OUT against python3-sentencepiece encoding CSV's
                                    texts with OUT's own /tokenizer, labels by sorted name
  text_files.py check-pair OUT JSONL  pairs joined by the tokenizer's <sep>, integer labels
"""
import csv
import gzip
import json
import random
import sys

import h5py
import numpy as np
import sentencepiece as spm

WORDS = {
    "space": "orbit rocket planet moon star galaxy comet launch crew station".split(),
    "food": "bread cheese apple soup pasta spice oven bake salt garlic".split(),
    "sport": "goal match team score coach league ball race medal field".split(),
}


def sentence(rng, topic):
    common = "the a of and to in is it with for".split()
    words = [rng.choice(WORDS[topic]) if rng.random() < 0.5 else rng.choice(common)
             for _ in range(rng.randint(3, 30))]
    return " ".join(words)


def inputs(folder):
    rng = random.Random(7)
    topics = sorted(WORDS)
    rows = []
    for i in range(300):
        topic = topics[i % 3]
        text = sentence(rng, topic)
        if i % 17 == 0:
            text = 'she said "hello, there"\nand left, ' + text  # quotes, comma, newline
        rows.append((text, topic))
    for name, part in (("train", rows[:240]), ("test", rows[240:])):
        with open(f"{folder}/{name}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "text", "topic"])
            for i, (text, topic) in enumerate(part):
                w.writerow([i, text, topic])
    # TSV, no header, integer labels in column 0, text in column 1 (no tabs or newlines in text).
    with open(f"{folder}/train.tsv", "w") as f:
        for text, topic in rows[:240]:
            f.write(f"{topics.index(topic)}\t{text.replace(chr(10), ' ')}\n")
    # JSONL.gz: pairs (premise, hypothesis) with integer labels.
    with gzip.open(f"{folder}/pairs.jsonl.gz", "wt") as f:
        for i, (text, topic) in enumerate(rows[:200]):
            other = sentence(rng, topics[(i + 1) % 3])
            f.write(json.dumps({"premise": text, "hypothesis": other,
                                "label": topics.index(topic)}) + "\n")
            if i % 50 == 0:
                f.write("\n")  # blank lines are not records
    good = "id,text,topic\n1,fine text,space\n2,more text,food\n"
    bad = {
        "unclosed.csv": good + '3,"never closed,space\n4,ok,food\n',
        "fields.csv": good + "3,one,two,space\n",
        "after_quote.csv": good + '3,"quoted" tail,space\n',
        "float_label.csv": good + "3,text,1.5\n",
        "empty_text.csv": good + "3,  ,space\n",
        "mixed.csv": good + "3,text,2\n",
        "bad.jsonl": '{"text": "a", "label": 1}\n{"text": "b", "label": 2\n',
        "nokey.jsonl": '{"text": "a", "label": 1}\n{"body": "b", "label": 2}\n',
        "skip.csv": good + "3,one,two,space\n4,text,1.5\n5,last text,sport\n",
    }
    for name, text in bad.items():
        with open(f"{folder}/{name}", "w") as f:
            f.write(text)
    with open(f"{folder}/data.txt", "w") as f:
        f.write(good)


def tokenizer(f):
    return spm.SentencePieceProcessor(model_proto=f["tokenizer"][()].tobytes())


def sequences(f, split):
    g = f[f"{split}/inputs/input_ids"]
    off, val = g["offsets"][()], g["values"][()]
    assert off[0] == 0 and off[-1] == len(val), "offsets must span values"
    return [val[off[i]:off[i + 1]].tolist() for i in range(len(off) - 1)]


def check_csv(out, path):
    with h5py.File(out, "r") as f:
        sp = tokenizer(f)
        names = [n.decode() if isinstance(n, bytes) else n for n in f.attrs["class_names"]]
        got = sequences(f, "test")
        y = f["test/y"][()]
        g = f["test/inputs/input_ids"]
        assert g.attrs["vocab_size"] == sp.get_piece_size(), "vocab_size is the tokenizer's"
        assert g.attrs["pad_id"] == sp.pad_id() == 0, "pad_id 0"
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(got), (len(rows), len(got))
    assert names == sorted({r["topic"] for r in rows} | set(names)), names
    for i, r in enumerate(rows):
        assert got[i] == sp.encode(r["text"]), f"row {i}: ids differ from python3-sentencepiece"
        assert names[y[i]] == r["topic"], f"row {i}: label"
    print(f"check-csv: {len(rows)} test sequences equal python3-sentencepiece's, labels by name")


def check_pair(out, path):
    with h5py.File(out, "r") as f:
        sp = tokenizer(f)
        got = sequences(f, "train")
        y = f["train/y"][()]
    sep = sp.piece_to_id("<sep>")
    with gzip.open(path, "rt") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    assert len(rows) == len(got)
    for i, r in enumerate(rows):
        want = sp.encode(r["premise"]) + [sep] + sp.encode(r["hypothesis"])
        assert got[i] == want, f"row {i}: pair ids"
        assert y[i] == r["label"]
    print(f"check-pair: {len(rows)} pairs joined by <sep> ({sep})")


if __name__ == "__main__":
    {"inputs": lambda: inputs(sys.argv[2]),
     "check-csv": lambda: check_csv(sys.argv[2], sys.argv[3]),
     "check-pair": lambda: check_pair(sys.argv[2], sys.argv[3])}[sys.argv[1]]()
