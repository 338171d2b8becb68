#!/usr/bin/env python3
"""Tokenizer.json files of every shape the tokenizers library has, built here with the library
(trained on Debian's fortunes and the hard texts below; nothing downloaded), for
hf_tokenizer.sh: the real files' shapes (Llama 2, Gemma, Phi-3, T5, ALBERT, CLIP, Falcon, SmolLM,
OLMo, files without a model type) and one of every normalizer, pre-tokenizer (every split
behavior, inverted or not), model option, added-token flag and post-processor.

  hf_tokenizer_zoo.py make DIR    DIR/NAME/tokenizer.json for each NAME of ZOO, DIR/zoo.txt (one
                                  "NAME TEXTS" line each: texts.csv, or pairs.csv for pairs too),
                                  DIR/texts.csv and DIR/pairs.csv
  hf_tokenizer_zoo.py check DIR   DIR/NAME.h5 (prep text's) holds the library's ids for every
                                  NAME of zoo.txt, row for row; a line per NAME

A file whose BPE has a dropout is compared with the library's ids without it (DIR/NAME/
reference.json): the library draws merges at random then, as it should only while training.
"""
import csv
import glob
import json
import os
import sys

from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers as N,
                        pre_tokenizers as P, processors, trainers)

HARD = [
    "Hello, World! This is a plain sentence.",
    "Ελληνικά κείμενα και Кириллица: съешь же ещё этих мягких булок",
    "العربية نص تجريبي مع أرقام ١٢٣",
    "हिन्दी पाठ और বাংলা লেখা: कि का की कु",
    "中文文本测试，北京欢迎你！日本語のテキスト、カタカナ。한국어 텍스트입니다",
    "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "emoji 😀🎉👍🏽 and 👨‍👩‍👧 families ❤️",
    "combining: cafe\u0301 nai\u0308ve re\u0301sume\u0301 Ångström ÉCOLE Straße İstanbul ΣΊΣΥΦΟΣ",
    "a" * 150 + " pneumonoultramicroscopicsilicovolcanoconiosis " + "ab" * 60,
    "runs   of    spaces\t\ttabs\tand\nnew\nlines\r\nand\u00a0nbsp\u2003em\u200bzero-width",
    "\u3000",  # whitespace alone: normalised to the empty string (prep refuses a record of no bytes)
    "\u00a0 \u2003",
    "control\x07bell and \x01 soh and \u200e marks",
    "specials inline: [MASK] and [SEP] and [UNK] here",
    "punctuation!!! ... ??? «quotes» „more“ — dashes – and ¿questions? 1,234.56 $100 #tag @user",
    "MiXeD CaSe WoRdS and numbers 12345 67890 3.14159",
    "compatibility forms: \ufb01 ligature \u2460 circled \uff21\uff22\uff23 fullwidth \uff76\uff80\uff76\uff85 \u337f \u2122",
    "a mask lstrips: hello <mask> world, x  <mask>   y, ``quoted''",
    "<s>starts with a special token</s> then <unk> and <|endoftext|> <|begin_of_text|> <pad>",
    "digits 0123456789 9876543210 x1y22z333 ²³ ½ Ⅻ ١٢٣٤ and punctuation runs ?!?!... ---- ((([[{",
    "  leading and trailing spaces  ",
    "added words: Hello hello HELLO helloworld say hello, [NEW]  x [NEW]y z<x> <x> a<x>b wor  ld",
    "scripts mixed: abcабвαβγ日本語カタカナー漢字ひらがなabc123",
]


def corpus():
    texts = list(HARD)
    for path in sorted(glob.glob("/usr/share/games/fortunes/*"))[:12]:
        if path.endswith((".dat", ".u8")):
            continue
        try:
            texts += open(path, encoding="utf-8", errors="replace").read().split("\n%\n")[:400]
        except OSError:
            pass
    return texts


def trained(model, pre, normalizer=None, **options):
    """A tokenizer of `model` trained on the corpus with `pre` (and `normalizer`)."""
    kind = type(model).__name__
    t = Tokenizer(model)
    if normalizer is not None:
        t.normalizer = normalizer
    t.pre_tokenizer = pre
    trainer = {"BPE": trainers.BpeTrainer, "WordPiece": trainers.WordPieceTrainer,
               "WordLevel": trainers.WordLevelTrainer}[kind](**options)
    t.train_from_iterator(corpus(), trainer)
    return json.loads(t.to_str())


def sentencepiece_bpe(unk):
    """Llama 2's shape: a BPE of "▁"-joined pieces with byte fallback (its <0xXX> entries in
    the vocabulary; the rarest characters left out of it, so the fallback is taken), fuse_unk,
    Prepend and Replace normalizers and no pre-tokenizer, <s> before each text."""
    specials = ["<unk>", "<s>", "</s>"]
    config = trained(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True),
                     P.Metaspace(), vocab_size=800, limit_alphabet=90,
                     special_tokens=specials + [f"<0x{b:02X}>" for b in range(256)])
    config["added_tokens"] = [a for a in config["added_tokens"] if a["content"] in specials]
    config["model"]["unk_token"] = unk
    return with_parts(config, pre_tokenizer=None,
                      normalizer=N.Sequence([N.Prepend("\u2581"), N.Replace(" ", "\u2581")]),
                      post_processor=processors.TemplateProcessing(
                          single="<s> $A", pair="<s> $A <s>:1 $B:1", special_tokens=[("<s>", 1)]))


def sentencepiece_unigram(d):
    """A SentencePiece unigram model trained on the corpus, converted as transformers converts
    XLM-RoBERTa's: Precompiled (nmt_nfkc) and Replace normalizers, Metaspace."""
    import sentencepiece as spm
    from transformers import XLMRobertaTokenizer
    from transformers.convert_slow_tokenizer import convert_slow_tokenizer
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus()), model_prefix=f"{d}/spm",
                                   model_type="unigram", vocab_size=700, minloglevel=2)
    config = json.loads(convert_slow_tokenizer(XLMRobertaTokenizer(vocab_file=f"{d}/spm.model")).to_str())
    os.remove(f"{d}/spm.model")
    os.remove(f"{d}/spm.vocab")
    return config


def state(component):
    return json.loads(component.__getstate__())


def with_parts(base, **parts):
    """`base` (a tokenizer.json dict) with some of its sections replaced (None removes one)."""
    out = json.loads(json.dumps(base))
    for key, value in parts.items():
        out[key] = value if value is None or isinstance(value, dict) else state(value)
    return out


def byte_level_variant(base, pre=None, normalizer=None):
    """GPT-2's model behind another pre-tokenizer (ending in ByteLevel, so every byte reaches it)."""
    steps = ([pre] if pre is not None else []) + [P.ByteLevel(add_prefix_space=False, use_regex=False)]
    return with_parts(base, pre_tokenizer=P.Sequence(steps), normalizer=normalizer)


def build(d):
    """{name: tokenizer.json dict}, and the dropout reference."""
    z = {}
    wp = trained(models.WordPiece(unk_token="[UNK]"), P.BertPreTokenizer(),
                 N.BertNormalizer(lowercase=True), vocab_size=600,
                 special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    cls, sep = wp["model"]["vocab"]["[CLS]"], wp["model"]["vocab"]["[SEP]"]
    bert_template = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    z["wordpiece-bert"] = with_parts(wp, post_processor=bert_template)
    # Added tokens with every flag, on a lowercasing normalizer (normalized ones match lowercased).
    t = Tokenizer.from_str(json.dumps(z["wordpiece-bert"]))
    t.add_tokens([AddedToken("Hello", single_word=True, normalized=True),
                  AddedToken("<x>", single_word=True, normalized=False),
                  AddedToken("wor", rstrip=True, normalized=False), AddedToken("ing", normalized=True)])
    t.add_special_tokens([AddedToken("[NEW]", lstrip=True, rstrip=True, normalized=False, special=True)])
    z["added-flags"] = json.loads(t.to_str())
    # Older BERT files: no model type, NFD + Lowercase + StripAccents, BertProcessing.
    legacy = with_parts(wp, normalizer=N.Sequence([N.NFD(), N.Lowercase(), N.StripAccents()]),
                        post_processor=processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls)))
    del legacy["model"]["type"]
    z["legacy-wordpiece"] = legacy

    gpt2 = trained(models.BPE(), P.ByteLevel(add_prefix_space=False), vocab_size=900,
                   special_tokens=["<|endoftext|>"], initial_alphabet=P.ByteLevel.alphabet())
    z["bpe-gpt2"] = with_parts(gpt2, post_processor=processors.ByteLevel(trim_offsets=False))
    roberta = with_parts(gpt2, pre_tokenizer=P.ByteLevel(add_prefix_space=True),
                         post_processor=processors.RobertaProcessing(("<|endoftext|>", 0), ("<|endoftext|>", 0)))
    del roberta["model"]["type"]
    z["legacy-bpe-roberta"] = roberta
    # Falcon's and SmolLM's pre-tokenizers, OLMo's (dolma2) regex removed inverted.
    z["bpe-falcon"] = with_parts(gpt2, pre_tokenizer=P.Sequence([
        P.Punctuation("contiguous"), P.ByteLevel(add_prefix_space=False, use_regex=True),
        P.Digits(individual_digits=False), P.Split(Regex("[0-9][0-9][0-9]"), "isolated")]))
    z["bpe-smollm"] = with_parts(gpt2, pre_tokenizer=P.Sequence([
        P.Digits(individual_digits=True), P.ByteLevel(add_prefix_space=False, use_regex=True)]))
    dolma2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+")
    z["bpe-olmo"] = byte_level_variant(gpt2, P.Split(Regex(dolma2), "removed", invert=True))
    # Every split behavior, inverted and not, Punctuation's and Digits', and the rest.
    z["pre-a"] = byte_level_variant(gpt2, P.Sequence([
        P.WhitespaceSplit(), P.Punctuation("merged_with_previous"), P.Digits(individual_digits=True),
        P.Split(Regex(r"\p{Lu}"), "merged_with_next", invert=True)]))
    z["pre-b"] = byte_level_variant(gpt2, P.Sequence([
        P.Split(" ", "merged_with_next"), P.Punctuation("merged_with_next"), P.Digits()]))
    z["pre-c"] = byte_level_variant(gpt2, P.Sequence([
        P.Split(Regex(r"\s+"), "contiguous", invert=True), P.Punctuation("contiguous"),
        P.Split(Regex("[0-9]"), "contiguous")]))
    z["pre-d"] = byte_level_variant(gpt2, P.Sequence([
        P.Split(Regex("[aeiou]"), "removed"), P.Punctuation("removed")]))
    z["pre-e"] = byte_level_variant(gpt2, P.Sequence([
        P.Whitespace(), P.Split(Regex(r"\p{L}+"), "isolated", invert=True),
        P.Split(Regex(r"\d"), "merged_with_previous", invert=True)]))
    z["pre-f"] = byte_level_variant(gpt2, P.Sequence([
        P.UnicodeScripts(), P.FixedLength(4), P.CharDelimiterSplit("e")]))
    z["pre-g"] = byte_level_variant(gpt2, P.BertPreTokenizer())
    # Normalizers.
    z["norm-a"] = byte_level_variant(gpt2, normalizer=N.Sequence([
        N.NFKD(), N.StripAccents(), N.Lowercase(), N.Strip(left=True, right=False)]))
    z["norm-b"] = byte_level_variant(gpt2, normalizer=N.Sequence([
        N.Nmt(), N.NFKC(), N.Replace(Regex(r"\d+"), "#"), N.Strip(left=False, right=True),
        N.Prepend("\u2581")]))
    z["norm-c"] = with_parts(gpt2, normalizer=N.Sequence([N.NFD(), N.StripAccents(), N.ByteLevel()]),
                             pre_tokenizer=P.Split(Regex("\u0120"), "merged_with_next"))
    z["norm-bert-accents"] = with_parts(wp, normalizer=N.BertNormalizer(
        clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False))
    # BPE's options: a pair listed twice (ranked by its last place), characters the vocabulary
    # lacks with no unknown token (dropped: their neighbours merge), dropout (ignored).
    dup = json.loads(json.dumps(gpt2))
    dup["model"]["merges"] += [m for m in gpt2["model"]["merges"][:400:3]][::-1]
    z["bpe-merges-twice"] = dup
    merged = {part for m in gpt2["model"]["merges"] for part in m} | {"".join(m) for m in gpt2["model"]["merges"]}
    holes = json.loads(json.dumps(gpt2))
    holes["model"]["vocab"] = {k: v for k, v in gpt2["model"]["vocab"].items()
                               if k in merged or k == "<|endoftext|>" or v % 3 != 0}
    z["bpe-missing-bytes"] = holes
    drop = json.loads(json.dumps(z["bpe-gpt2"]))
    drop["model"]["dropout"] = 0.5
    z["bpe-dropout"] = drop
    prefixed = trained(models.BPE(unk_token="[UNK]"), P.Whitespace(), N.NFC(), vocab_size=500,
                       special_tokens=["[UNK]"], continuing_subword_prefix="##", limit_alphabet=60)
    z["bpe-prefix-unk"] = prefixed
    z["bpe-prefix-fuse"] = with_parts(prefixed, model=dict(prefixed["model"], fuse_unk=True))
    z["bpe-prefix-no-unk"] = with_parts(prefixed, model=dict(prefixed["model"], unk_token=None))
    clip = trained(models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>"),
                   P.Sequence([P.Split(Regex(r"'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"),
                                       "removed", invert=True),
                               P.ByteLevel(add_prefix_space=False, use_regex=False)]),
                   N.Sequence([N.NFC(), N.Replace(Regex(r"\s+"), " "), N.Lowercase()]),
                   vocab_size=900, special_tokens=["<|startoftext|>", "<|endoftext|>"],
                   end_of_word_suffix="</w>", initial_alphabet=P.ByteLevel.alphabet())
    z["bpe-clip"] = with_parts(clip, post_processor=processors.RobertaProcessing(
        ("<|endoftext|>", 1), ("<|startoftext|>", 0), trim_offsets=False, add_prefix_space=False))
    # SentencePiece's shapes: Llama 2's (Mistral's, Phi-3's), transformers' later Llama files
    # (Metaspace first, no unknown token), Gemma's; T5's and ALBERT's unigram ones.
    llama = sentencepiece_bpe("<unk>")
    z["spm-llama2"] = llama
    z["spm-llama-first"] = with_parts(sentencepiece_bpe(None), normalizer=None,
                                      pre_tokenizer=P.Metaspace(prepend_scheme="first", split=False))
    z["spm-gemma"] = with_parts(llama, normalizer=N.Replace(" ", "\u2581"),
                                pre_tokenizer=P.Split(" ", "merged_with_previous"))
    unigram = sentencepiece_unigram(d)
    eos = unigram["model"]["vocab"].index(["</s>", 0.0]) if ["</s>", 0.0] in unigram["model"]["vocab"] else 2
    t5 = with_parts(unigram, pre_tokenizer=P.Sequence([P.WhitespaceSplit(), P.Metaspace()]),
                    post_processor=processors.TemplateProcessing(
                        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos)]))
    z["spm-t5"] = t5
    albert = [N.Replace("``", '"'), N.Replace("''", '"'), N.NFKD(), N.StripAccents(), N.Lowercase()]
    z["spm-albert"] = with_parts(unigram, normalizer={"type": "Sequence", "normalizers": [
        state(n) for n in albert] + [unigram["normalizer"]["normalizers"][0],
                                     state(N.Replace(Regex(" {2,}"), " "))]})
    z["spm-metaspace-never"] = with_parts(t5, pre_tokenizer=P.Metaspace(prepend_scheme="never"))
    z["spm-metaspace-first"] = with_parts(t5, pre_tokenizer=P.Sequence([
        P.Metaspace(prepend_scheme="first", split=True)]))
    legacy_t5 = json.loads(json.dumps(t5))
    del legacy_t5["model"]["type"]
    z["legacy-unigram"] = legacy_t5
    wl = trained(models.WordLevel(unk_token="[UNK]"), P.Whitespace(), N.Sequence([N.NFKC(), N.Lowercase()]),
                 vocab_size=800, special_tokens=["[UNK]", "[CLS]", "[SEP]"])
    z["wordlevel"] = with_parts(wl, post_processor=processors.TemplateProcessing(
        single="[CLS] $A", pair="[CLS] $A [SEP] $B:1", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]))
    legacy_wl = json.loads(json.dumps(wl))
    del legacy_wl["model"]["type"]
    z["legacy-wordlevel"] = legacy_wl
    return z


PAIRS = {"wordpiece-bert", "added-flags", "legacy-wordpiece", "legacy-bpe-roberta", "bpe-clip",
         "spm-llama2", "spm-t5", "wordlevel"}


def write_tables(d):
    """DIR/texts.csv (the hard texts twice, label a or b) and DIR/pairs.csv (two texts, a label)."""
    with open(f"{d}/texts.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["text", "label"])
        for i, text in enumerate(HARD * 2):
            w.writerow([text, "ab"[i % 2]])
    with open(f"{d}/pairs.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["first", "second", "label"])
        for i, text in enumerate(HARD):
            w.writerow([text, HARD[(i + 3) % len(HARD)], "ab"[i % 2]])


def make(d):
    os.makedirs(d, exist_ok=True)
    write_tables(d)
    zoo = build(d)
    with open(f"{d}/zoo.txt", "w") as listing:
        for name, config in zoo.items():
            os.makedirs(f"{d}/{name}", exist_ok=True)
            json.dump(config, open(f"{d}/{name}/tokenizer.json", "w"), ensure_ascii=False)
            if config["model"].get("dropout"):
                json.dump(dict(config, model=dict(config["model"], dropout=None)),
                          open(f"{d}/{name}/reference.json", "w"), ensure_ascii=False)
            Tokenizer.from_file(f"{d}/{name}/tokenizer.json")  # the library loads it
            listing.write(f"{name} {'pairs' if name in PAIRS else 'texts'}\n")


def check(d):
    import h5py
    failed = 0
    for line in open(f"{d}/zoo.txt"):
        name, table = line.split()
        reference = f"{d}/{name}/reference.json"
        t = Tokenizer.from_file(reference if os.path.exists(reference) else f"{d}/{name}/tokenizer.json")
        t.no_truncation()
        rows = list(csv.reader(open(f"{d}/{table}.csv", newline="", encoding="utf-8")))[1:]
        with h5py.File(f"{d}/{name}.h5", "r") as f:
            ids = f["train/inputs/input_ids"]
            values, offsets = ids["values"][()], ids["offsets"][()]
        wrong, at, empty = [], 0, 0
        for i, row in enumerate(rows):
            expected = (t.encode(row[0], row[1]) if table == "pairs" else t.encode(row[0])).ids
            if not expected:  # prep leaves out (--skip-bad) a record of no tokens
                empty += 1
                continue
            got = values[offsets[at]:offsets[at + 1]].tolist() if at + 1 < len(offsets) else None
            at += 1
            if got != expected:
                wrong.append(f"row {i} {row[0][:30]!r}: slimtrain {got}, tokenizers {expected}")
        if at + 1 != len(offsets):
            wrong.append(f"{len(offsets) - 1} records in the file, {at} with ids from tokenizers")
        failed += bool(wrong)
        print(f"{'FAIL' if wrong else 'ok  '} {name}: {len(rows)} {table}, {len(values)} ids"
              + (f", {empty} of no ids left out" if empty else "")
              + ("".join(f"\n       {w}" for w in wrong[:3])))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](*sys.argv[2:])
