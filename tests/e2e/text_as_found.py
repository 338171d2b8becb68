#!/usr/bin/env python3
"""Text files as people have them, made here (no downloads) for text_as_found.sh.

  text_as_found.py inputs DIR     writes every file the test reads into DIR
  text_as_found.py classes H5     prints the file's class names, one per line (attribute or
                                  /class_names dataset)
  text_as_found.py longest H5     prints the longest /train sample's token count
"""
import json
import random
import sys

WORDS = ("free prize call now win cash offer text reply stop meeting lunch tomorrow home "
         "later sorry love good night morning see you soon work late train bus car").split()


def sentence(rng, lo, hi, words=WORDS):
    return " ".join(rng.choice(words) for _ in range(rng.randint(lo, hi)))


def write(path, text, bom=False):
    with open(path, "wb") as f:
        if bom:
            f.write(b"\xef\xbb\xbf")
        f.write(text.encode("utf-8") if isinstance(text, str) else text)


def csv_field(text):
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n') else text


def inputs(d):
    rng = random.Random(46)
    # An unquoted TSV, as the SMS Spam Collection is: texts that start with a quote, quotes
    # never closed, a CRLF line; every line one record.
    lines = []
    for i in range(300):
        label = "spam" if i % 3 == 0 else "ham"
        text = sentence(rng, 3, 9)
        if i % 5 == 0:
            text = '"' + text + '" he said'
        if i % 7 == 0:
            text = '"' + text
        lines.append(f"{label}\t{text}" + ("\r\n" if i == 11 else "\n"))
    write(f"{d}/quotes.tsv", "".join(lines))
    # Byte order marks before a header (CSV), a label (TSV) and a JSON object (JSONL).
    rows = [(("spam" if i % 2 else "ham"), sentence(rng, 3, 8)) for i in range(120)]
    write(f"{d}/bom.csv", "label,text\n" + "".join(f"{a},{b}\n" for a, b in rows), bom=True)
    write(f"{d}/bom.tsv", "".join(f"{a}\t{b}\n" for a, b in rows), bom=True)
    write(f"{d}/bom.jsonl", "".join(json.dumps({"text": b, "label": a}) + "\n" for a, b in rows),
          bom=True)
    # Bytes no tokenizer reads: \xff (not UTF-8) in line 6, a NUL in line 10.
    body = b"label,text\n"
    for i in range(100):
        text = sentence(rng, 3, 8).encode()
        if i == 4:
            text += b" caf\xff"
        if i == 8:
            text += b" a\x00b"
        body += b"%s,%s\n" % (b"ham" if i % 2 else b"spam", text)
    write(f"{d}/flaws.csv", body)
    # Labels as they come: 1..4 (AG News), -2..2 (sentiment scales), 5,000 distinct.
    write(f"{d}/one_to_four.csv", "label,text\n" + "".join(
        f"{1 + i % 4},{sentence(rng, 3, 8)}\n" for i in range(200)))
    write(f"{d}/negative.csv", "label,text\n" + "".join(
        f"{i % 5 - 2},{sentence(rng, 3, 8)}\n" for i in range(200)))
    write(f"{d}/zero_to_three.csv", "label,text\n" + "".join(
        f"{i % 4},{sentence(rng, 3, 8)}\n" for i in range(200)))
    write(f"{d}/many.csv", "label,text\n" + "".join(
        f"intent_{i % 5000},{sentence(rng, 3, 8)}\n" for i in range(10000)))
    write(f"{d}/many_test.csv", "label,text\n" + "".join(
        f"intent_{i},{sentence(rng, 3, 8)}\n" for i in range(5000)))
    # Vocabularies: 600 short texts; 20,000 longer ones over 3,000 words (Zipf-like).
    write(f"{d}/short.csv", "label,text\n" + "".join(
        f"{'ab'[i % 2]},{sentence(rng, 2, 6)}\n" for i in range(600)))
    lexicon = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
               for _ in range(3000)]
    weights = [1.0 / (k + 1) for k in range(len(lexicon))]
    long_rows = []
    for i in range(20000):
        words = rng.choices(lexicon, weights, k=rng.randint(20, 60))
        long_rows.append(f"{'xyz'[i % 3]},{' '.join(words)}\n")
    write(f"{d}/long.csv", "label,text\n" + "".join(long_rows))
    # 300 texts of about 5 KB: longer than SentencePiece's sentence limit (4,192 bytes).
    write(f"{d}/five_kb.csv", "label,text\n" + "".join(
        f"{'ab'[i % 2]},{sentence(rng, 1000, 1000)[:5000]}\n" for i in range(300)))
    # One record of 50 MB among 200 short ones.
    big = sentence(rng, 200, 200)
    big = (big + " ") * (50_000_000 // (len(big) + 1))
    with open(f"{d}/huge.csv", "w") as f:
        f.write("label,text\n")
        for i in range(200):
            f.write(f"{'ab'[i % 2]},{sentence(rng, 3, 8)}\n")
            if i == 100:
                f.write(f"a,{big}\n")
    # An error every rank sees, for np 2: a label outside --class-names.
    write(f"{d}/outside.csv", "label,text\n" + "".join(
        f"{['ham', 'spam', 'eggs'][i % 3]},{sentence(rng, 3, 8)}\n" for i in range(60)))


def classes(path):
    import h5py
    with h5py.File(path, "r") as f:
        if "class_names" in f.attrs:
            names = list(f.attrs["class_names"])
        else:
            names = list(f["class_names"][()])
    for n in names:
        print(n.decode() if isinstance(n, bytes) else n)


def longest(path):
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        print(int(np.diff(f["train/inputs/input_ids/offsets"][()]).max()))


if __name__ == "__main__":
    {"inputs": inputs, "classes": classes, "longest": longest}[sys.argv[1]](sys.argv[2])
