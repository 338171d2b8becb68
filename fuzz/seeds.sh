#!/usr/bin/env bash
# Writes a seed corpus for every fuzz target into OUT_DIR/<target>/, from real files made here and
# now (nothing binary is committed): prep output, h5py-written files, a real checkpoint, the
# shipped INI files, and small IDX/CSV/NPY inputs.
#   fuzz/seeds.sh SLIMTRAIN_BIN OUT_DIR
# Needs the slimtrain binary (prep, train) and /usr/bin/python3 with numpy; h5py is optional (its
# seeds are left out without it).
set -euo pipefail
bin=${1:?usage: seeds.sh SLIMTRAIN_BIN OUT_DIR}
out=${2:?usage: seeds.sh SLIMTRAIN_BIN OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"/{idx,csv,text,npy,hdf5,checkpoint,ini,safetensors,tokenizer_json}

# Small inputs of the parsers (also what prep reads below).
"$py" - "$work" "$out" <<'PY'
import gzip, json, struct, sys
import numpy as np
work, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(3)
x = rng.integers(0, 256, (12, 4, 4), dtype=np.uint8)
y = (np.arange(12) % 3).astype(np.uint8)
idx_x = struct.pack(">HBBIII", 0, 8, 3, 12, 4, 4) + x.tobytes()
idx_y = struct.pack(">HBBI", 0, 8, 1, 12) + y.tobytes()
for d in (work, f"{out}/idx"):
    open(f"{d}/images.idx3", "wb").write(idx_x)
    open(f"{d}/labels.idx1", "wb").write(idx_y)
rows = "\n".join(",".join(f"{v:.3g}" for v in r) + f",{i % 3}"
                 for i, r in enumerate(rng.normal(size=(24, 4))))
open(f"{work}/rows.csv", "w").write("a,b,c,d,label\n" + rows + "\n")
open(f"{out}/csv/header.csv", "w").write("a,b,c,d,label\n" + rows[:200] + "\n")
open(f"{out}/csv/semicolon.csv", "w").write("7;0.5\n8;nan\n9;1e3\n")
# Text: the first byte picks the format and columns (fuzz_text.cpp): 0 CSV by index, 1 TSV,
# 2 JSONL (text, text2, label keys), 4|32 CSV with a header, 64 the other quoting (TSV quoted,
# CSV literal).
open(f"{out}/text/quoted.csv", "wb").write(b"\x00" + b'0,"a, ""quoted""\ntext",1\n1,plain,0\n')
open(f"{out}/text/header.csv", "wb").write(b"\x24" + b'id,text,label\n0,"x",cat\n1,y,dog\n')
open(f"{out}/text/rows.tsv", "wb").write(b"\x01" + b"0\tsome text\t1\n1\tmore\t2\n")
open(f"{out}/text/unquoted.tsv", "wb").write(b"\x01" + b'0\t"starts with a quote\t1\r\n1\t""\t0\n')
open(f"{out}/text/quoted.tsv", "wb").write(b"\x41" + b'0\t"a\tb\nc"\t1\n')
open(f"{out}/text/bom.csv", "wb").write(b"\x24" + b'\xef\xbb\xbfid,text,label\n0,caf\xff,cat\n1,a\x00b,dog\n')
open(f"{out}/text/bom.jsonl", "wb").write(b"\x02" + b'\xef\xbb\xbf{"text": "a", "label": -2}\n')
open(f"{out}/text/pairs.jsonl", "wb").write(
    b"\x0a" + b'{"text": "a", "text2": "b", "label": 1}\n\n{"text": "c", "text2": "d", "label": "x"}\n')
# safetensors: the layout the reference writes (8-byte length, JSON padded with spaces, data).
def safetensors(header, data):
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data
open(f"{out}/safetensors/two.safetensors", "wb").write(safetensors(
    {"__metadata__": {"format": "pt"}, "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
     "b": {"dtype": "BF16", "shape": [1, 2], "data_offsets": [8, 12]}}, bytes(12)))
open(f"{out}/safetensors/empty.safetensors", "wb").write(safetensors(
    {"e": {"dtype": "I64", "shape": [0, 3], "data_offsets": [0, 0]}}, b""))
# tokenizer.json: BERT's shape (WordPiece, its normalizer and pre-tokenizer, a template).
vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", ",", "world",
                                     "!", "caf", "##e", "a", "pair", "of", "text", "##s", "\u5317"])}
specials = {n: {"id": n, "ids": [vocab[n]], "tokens": [n]} for n in ("[CLS]", "[SEP]")}
json.dump({"version": "1.0",
           "added_tokens": [{"id": vocab[n], "content": n, "special": True, "normalized": False}
                            for n in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")],
           "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                          "strip_accents": None, "lowercase": True},
           "pre_tokenizer": {"type": "BertPreTokenizer"},
           "post_processor": {"type": "TemplateProcessing",
                              "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                         {"Sequence": {"id": "A", "type_id": 0}},
                                         {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                              "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                       {"Sequence": {"id": "A", "type_id": 0}},
                                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                                       {"Sequence": {"id": "B", "type_id": 1}},
                                       {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                              "special_tokens": specials},
           "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                     "max_input_chars_per_word": 100, "vocab": vocab}},
          open(f"{out}/tokenizer_json/bert.json", "w"))
# ... and a byte-level BPE one (Qwen2's shape: NFC, a Split regex, ByteLevel, merges as pairs).
json.dump({"version": "1.0", "added_tokens": [{"id": 5, "content": "<|endoftext|>", "special": True}],
           "normalizer": {"type": "NFC"},
           "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
               {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"},
                "behavior": "Isolated", "invert": False},
               {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]},
           "post_processor": {"type": "ByteLevel", "trim_offsets": False},
           "model": {"type": "BPE", "vocab": {"H": 0, "e": 1, "l": 2, "o": 3, "He": 4, "ll": 6, "llo": 7},
                     "merges": [["H", "e"], ["l", "l"], ["ll", "o"]]}},
          open(f"{out}/tokenizer_json/bpe.json", "w"))
np.save(f"{out}/npy/f4.npy", rng.normal(size=(3, 2)).astype(np.float32))
np.save(f"{out}/npy/u1.npy", x[:2])
np.save(f"{out}/npy/f8-fortran.npy", np.asfortranarray(rng.normal(size=(2, 3))))
PY
# tokenizer.json: a Unigram one (a converted SentencePiece model: Precompiled rules, Metaspace);
# the unit test's synthetic ones (BPE's options, WordLevel, files without a model type, added-token
# flags, Metaspace's first, truncation); and one with every normalizer and pre-tokenizer in a row.
cp "$root/tests/unit/fixtures/unigram-tokenizer.json" "$out/tokenizer_json/unigram.json"
"$py" - "$root/tests/unit/fixtures/cases.json" "$out/tokenizer_json" <<'PY'
import json, sys
cases = json.load(open(sys.argv[1]))
for name, config in cases["tokenizers"].items():
    json.dump(config, open(f"{sys.argv[2]}/{name}.json", "w"))
every = dict(cases["tokenizers"]["byte-fallback"])
every["normalizer"] = {"type": "Sequence", "normalizers": [
    {"type": t} for t in ("NFC", "NFD", "NFKC", "NFKD", "Nmt", "Lowercase", "StripAccents", "ByteLevel")] + [
    {"type": "Strip", "strip_left": True, "strip_right": False},
    {"type": "Replace", "pattern": {"Regex": "\\d+"}, "content": "#"},
    {"type": "Prepend", "prepend": "\u2581"},
    {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
     "lowercase": False}]}
every["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
    {"type": "Punctuation", "behavior": "Contiguous"}, {"type": "Digits", "individual_digits": True},
    {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithNext", "invert": True},
    {"type": "Split", "pattern": {"Regex": "a+"}, "behavior": "MergedWithPrevious", "invert": False},
    {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": True},
    {"type": "CharDelimiterSplit", "delimiter": "b"}, {"type": "UnicodeScripts"},
    {"type": "FixedLength", "length": 3}, {"type": "Whitespace"}, {"type": "WhitespaceSplit"},
    {"type": "BertPreTokenizer"},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}]}
every["post_processor"] = {"type": "Sequence", "processors": [
    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
    {"type": "RobertaProcessing", "sep": ["<unk>", 0], "cls": ["a", 1], "trim_offsets": True,
     "add_prefix_space": True}]}
json.dump(every, open(f"{sys.argv[2]}/every-component.json", "w"))
PY

# HDF5: what prep writes (uint8 images chunked and compressed with a val split; float features
# contiguous), and what users write with h5py (other integer widths, fixed-length strings, no
# mean/std).
"$bin" prep idx --train-images "$work/images.idx3" --train-labels "$work/labels.idx1" \
  --val-fraction 0.25 --compress 4 --chunk-bytes 64 --class-names a,b,c \
  -o "$out/hdf5/prep-idx.h5" --log-level error
"$bin" prep csv --train "$work/rows.csv" --header -o "$work/rows.h5" --log-level error
cp "$work/rows.h5" "$out/hdf5/prep-csv.h5"
if "$py" -c "import h5py" 2>/dev/null; then
  "$py" - "$out/hdf5" <<'PY'
import sys
import h5py, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(4)
with h5py.File(f"{d}/h5py-float.h5", "w") as f:
    f.attrs["format"] = "slimtrain"
    f.attrs["format_version"] = np.int32(1)
    f.attrs["num_classes"] = 2
    f.attrs.create("class_names", np.array([b"no", b"yes"], dtype="S3"))
    for split, n in (("train", 6), ("test", 3)):
        g = f.create_group(split)
        g["x"] = rng.normal(size=(n, 2, 3, 3)).astype(np.float32)
        g["y"] = (np.arange(n) % 2).astype(np.int32)
with h5py.File(f"{d}/h5py-chunked.h5", "w") as f:
    f.attrs["format"] = np.bytes_(b"slimtrain")
    f.attrs["format_version"] = 1
    f.attrs["num_classes"] = np.uint8(3)
    g = f.create_group("train")
    x = g.create_dataset("x", data=rng.integers(0, 255, (5, 4, 4), dtype=np.uint8), chunks=(2, 4, 4))
    x.attrs["mean"] = np.array([100.0], dtype=np.float32)
    x.attrs["std"] = np.array([50.0], dtype=np.float64)
    g["y"] = np.array([0, 1, 2, 1, 0], dtype=np.int16)
PY
else
  echo "seeds.sh: python3 has no h5py: the h5py-written HDF5 seeds are left out" >&2
fi

# A real checkpoint: two steps of a tiny MLP, packed as fuzz_checkpoint reads it (manifest.json,
# then each listed file's bytes in the manifest's order, separated by a marker line).
"$bin" train --data "$work/rows.h5" --out "$work/run" --model mlp --mlp-widths 4 --batch-size 8 \
  --max-steps 2 --checkpoint-every 1 --eval-every 0 --log-level error >"$work/train.log" 2>&1 ||
  { cat "$work/train.log"; exit 1; }
for step in "$work"/run/checkpoints/step-*; do
  "$py" - "$step" "$out/checkpoint/$(basename "$step")" <<'PY'
import json, sys
d, target = sys.argv[1], sys.argv[2]
manifest = open(f"{d}/manifest.json", "rb").read()
parts = [manifest] + [open(f"{d}/{f['name']}", "rb").read() for f in json.loads(manifest)["files"]]
open(target, "wb").write(b"\n--slimtrain-fuzz-file--\n".join(parts))
PY
done

# INI: the shipped job configurations.
cp "$root"/jobs/*.ini "$out/ini/"
echo "seeds.sh: $(find "$out" -type f | wc -l) seeds in $out"
