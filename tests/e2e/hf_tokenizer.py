#!/usr/bin/env python3
"""HuggingFace tokenizers trained here (on Debian's fortunes and the texts below; nothing
downloaded) and slimtrain's token ids checked against the tokenizers library, for
hf_tokenizer.sh.

  hf_tokenizer.py make DIR    DIR/uncased/ and DIR/cased/: tokenizer.json (WordPiece, BERT's
                              normalizer, pre-tokenizer and [CLS] $A [SEP] template) and
                              tokenizer_config.json (model_max_length 48); byte-level BPE ones:
                              DIR/gpt2/ (GPT-2's), DIR/roberta/ (a prefix space, <s> A </s>),
                              DIR/qwen2/ (NFC, Qwen2's split regex, its added tokens), DIR/llama3/
                              (Llama 3's regex, ignore_merges, <|begin_of_text|> A); DIR/texts.csv (the
                              hard texts, label a or b), DIR/pairs.csv (two texts and a label);
                              Unigram ones as transformers converts SentencePiece models:
                              DIR/xlmr/ (XLM-RoBERTa's pipeline), DIR/xlmr-bytes/ (byte fallback);
                              DIR/bad-*.json (a model, a normalizer and a Metaspace
                              prepend_scheme the library does not have, a charsmap not base64,
                              broken JSON)
  hf_tokenizer.py bert DIR    DIR/bert/: a small random BertForSequenceClassification
                              (save_pretrained) with the uncased tokenizer beside it,
                              DIR/bert-pairs/ (the same with wide weights), DIR/distilbert/ (no
                              token types), DIR/xlmr-model/ (XLMRobertaForSequenceClassification
                              with the xlmr tokenizer), and
                              DIR/reviews-{train,test}.csv: fortunes' sentences marked by a word
                              of their class (good or bad words)
  hf_tokenizer.py same TOKENIZER CSV OUT.h5 MAXLEN [pair|types]
                              /train/inputs/input_ids of OUT.h5 equal tokenizers' encode() of
                              each row (truncated to MAXLEN, longest first), row for row; types:
                              pairs, and token_type_ids equal the encoding's type_ids
  hf_tokenizer.py text_logits CKPT CSV PRED.h5
                              the same for the CSV's single texts
  hf_tokenizer.py pair_logits CKPT CSV PRED.h5
                              /logits of PRED.h5 equal transformers' on the CSV's pairs through
                              CKPT's own tokenizer (its token_type_ids included), within 1e-4
"""
import csv
import json
import sys

import h5py
import numpy as np
from hf_tokenizer_zoo import HARD, corpus, write_tables
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

def wordpiece(lowercase):
    t = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    t.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                              strip_accents=None, lowercase=lowercase)
    t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    t.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=600, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    t.train_from_iterator(corpus(), trainer)
    cls, sep = t.token_to_id("[CLS]"), t.token_to_id("[SEP]")
    t.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return t


LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def byte_bpe(kind):
    t = Tokenizer(models.BPE())
    if kind in ("qwen2", "llama3"):
        if kind == "qwen2":
            t.normalizer = normalizers.NFC()
        t.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN2_SPLIT if kind == "qwen2" else LLAMA3_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        specials = (["<|endoftext|>", "<|im_start|>", "<|im_end|>"] if kind == "qwen2"
                    else ["<|begin_of_text|>", "<|end_of_text|>"])
    else:
        t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=kind == "roberta")
        specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"] if kind == "roberta" else ["<|endoftext|>"]
    t.decoder = decoders.ByteLevel()
    t.train_from_iterator(corpus(), trainers.BpeTrainer(
        vocab_size=900, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    if kind == "roberta":
        t.post_processor = processors.RobertaProcessing(("</s>", t.token_to_id("</s>")), ("<s>", t.token_to_id("<s>")))
    elif kind == "llama3":  # Llama 3's: ByteLevel, then <|begin_of_text|> before each text
        bos = ("<|begin_of_text|>", t.token_to_id("<|begin_of_text|>"))
        t.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                          pair="<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
                                          special_tokens=[bos])])
        config = json.loads(t.to_str())
        config["model"]["ignore_merges"] = True  # Llama 3 takes a word in the vocab whole
        return Tokenizer.from_str(json.dumps(config))
    else:
        t.post_processor = processors.ByteLevel(trim_offsets=False)
    return t


def unigram(d, name, **train):
    """DIR/NAME/tokenizer.json: a SentencePiece unigram model trained here on the corpus
    (nmt_nfkc rules), converted as transformers converts XLM-RoBERTa's: Precompiled, Strip and
    Replace normalizers, Metaspace, <s> A </s></s> B </s>, a <mask> that takes the space before
    it."""
    import os
    import sentencepiece as spm
    from transformers import XLMRobertaTokenizer
    from transformers.convert_slow_tokenizer import convert_slow_tokenizer
    os.makedirs(f"{d}/{name}", exist_ok=True)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus()), model_prefix=f"{d}/{name}/spm",
                                   model_type="unigram", minloglevel=2, **train)
    fast = convert_slow_tokenizer(XLMRobertaTokenizer(vocab_file=f"{d}/{name}/spm.model"))
    config = json.loads(fast.to_str())
    # Byte fallback as a SentencePiece model trained with it has (the converter leaves it off),
    # and <mask> taking the space before it, as XLM-RoBERTa's tokenizer.json has it.
    config["model"]["byte_fallback"] = bool(train.get("byte_fallback"))
    ids = {piece: i for i, (piece, _) in enumerate(config["model"]["vocab"])}
    have = {token["content"] for token in config["added_tokens"]}
    for special in ("<pad>", "<unk>", "<mask>"):
        if special not in have:
            config["added_tokens"].append({"id": ids[special], "content": special, "single_word": False,
                                           "lstrip": special == "<mask>", "rstrip": False,
                                           "normalized": False, "special": True})
    json.dump(config, open(f"{d}/{name}/tokenizer.json", "w"), ensure_ascii=False)
    os.remove(f"{d}/{name}/spm.model")
    os.remove(f"{d}/{name}/spm.vocab")


def make(d):
    import os
    unigram(d, "xlmr", vocab_size=800, character_coverage=0.9995)
    unigram(d, "xlmr-bytes", vocab_size=900, character_coverage=0.98, byte_fallback=True)
    for kind in ("gpt2", "roberta", "qwen2", "llama3"):
        os.makedirs(f"{d}/{kind}", exist_ok=True)
        byte_bpe(kind).save(f"{d}/{kind}/tokenizer.json")
    for name, lower in (("uncased", True), ("cased", False)):
        os.makedirs(f"{d}/{name}", exist_ok=True)
        wordpiece(lower).save(f"{d}/{name}/tokenizer.json")
        json.dump({"model_max_length": 48, "tokenizer_class": "BertTokenizer"},
                  open(f"{d}/{name}/tokenizer_config.json", "w"))
    write_tables(d)
    good = json.load(open(f"{d}/uncased/tokenizer.json"))
    json.dump(dict(good, model=dict(good["model"], type="WordPieceX")), open(f"{d}/bad-model.json", "w"))
    json.dump(dict(good, normalizer={"type": "Capitalize"}), open(f"{d}/bad-normalizer.json", "w"))
    xlmr = json.load(open(f"{d}/xlmr/tokenizer.json"))
    json.dump(dict(xlmr, pre_tokenizer=dict(xlmr["pre_tokenizer"], prepend_scheme="sometimes")),
              open(f"{d}/bad-metaspace.json", "w"))
    charsmap = xlmr["normalizer"]["normalizers"][0]
    json.dump(dict(xlmr, normalizer=dict(charsmap, precompiled_charsmap="not*base64")),
              open(f"{d}/bad-charsmap.json", "w"))
    open(f"{d}/bad-broken.json", "w").write(json.dumps(good)[:500])


def bert(d):
    import os
    import random
    import shutil
    import torch
    from transformers import BertConfig, BertForSequenceClassification
    torch.manual_seed(3)
    vocab = Tokenizer.from_file(f"{d}/uncased/tokenizer.json").get_vocab_size()
    config = BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=64, num_labels=2)
    BertForSequenceClassification(config).save_pretrained(f"{d}/bert")
    # Wide weights for the pair logits, so a token type ignored moves them well past 1e-4.
    config.initializer_range = 0.5
    BertForSequenceClassification(config).save_pretrained(f"{d}/bert-pairs")
    from transformers import DistilBertConfig, DistilBertForSequenceClassification
    DistilBertForSequenceClassification(DistilBertConfig(
        vocab_size=vocab, dim=32, n_layers=1, n_heads=4, hidden_dim=64, max_position_embeddings=64,
        num_labels=2)).save_pretrained(f"{d}/distilbert")
    from transformers import XLMRobertaConfig, XLMRobertaForSequenceClassification
    XLMRobertaForSequenceClassification(XLMRobertaConfig(
        vocab_size=Tokenizer.from_file(f"{d}/xlmr/tokenizer.json").get_vocab_size(), hidden_size=32,
        num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, max_position_embeddings=66,
        type_vocab_size=1, pad_token_id=1, num_labels=2, initializer_range=0.5)).save_pretrained(
            f"{d}/xlmr-model")
    shutil.copy(f"{d}/xlmr/tokenizer.json", f"{d}/xlmr-model/tokenizer.json")
    json.dump({"model_max_length": 64, "tokenizer_class": "XLMRobertaTokenizer"},
              open(f"{d}/xlmr-model/tokenizer_config.json", "w"))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        for ckpt in ("bert", "bert-pairs"):
            shutil.copy(f"{d}/uncased/{name}", f"{d}/{ckpt}/{name}")
    words = {"good": ["wonderful", "excellent", "great", "lovely"],
             "bad": ["terrible", "awful", "horrible", "dreadful"]}
    lines = [l.strip() for t in corpus()[len(HARD):] for l in t.split("\n") if len(l.split()) > 3]
    rng = random.Random(3)
    for split, n in (("train", 600), ("test", 200)):
        with open(f"{d}/reviews-{split}.csv", "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["review", "sentiment"])
            for _ in range(n):
                label = rng.choice(["good", "bad"])
                tokens = rng.choice(lines).split()[:20]
                tokens.insert(rng.randrange(len(tokens) + 1), rng.choice(words[label]))
                w.writerow([" ".join(tokens), label])


def same(tokenizer, table, out, max_length, pair=None):
    t = Tokenizer.from_file(tokenizer)
    t.enable_truncation(int(max_length), strategy="longest_first")
    with open(table, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    with h5py.File(out, "r") as f:
        ids = f["train/inputs/input_ids"]
        values, offsets = ids["values"][()], ids["offsets"][()]
        types = f["train/inputs/token_type_ids"] if pair == "types" else None
        if types is not None:
            assert (types["offsets"][()] == offsets).all(), "token_type_ids' offsets are not input_ids'"
            types = types["values"][()]
    assert len(offsets) - 1 == len(rows), (len(offsets) - 1, len(rows))
    cut = 0
    for i, row in enumerate(rows):
        encoding = t.encode(row[0], row[1]) if pair else t.encode(row[0])
        got = values[offsets[i]:offsets[i + 1]].tolist()
        assert got == encoding.ids, f"row {i} {row[0][:40]!r}: slimtrain {got} tokenizers {encoding.ids}"
        if types is not None:
            got = types[offsets[i]:offsets[i + 1]].tolist()
            assert got == encoding.type_ids, f"row {i}: token types {got}, tokenizers' {encoding.type_ids}"
        cut += len(encoding.ids) == int(max_length)
    if json.loads(t.to_str())["model"].get("byte_fallback"):  # the fallback was taken somewhere
        assert any(t.id_to_token(int(i)).startswith("<0x") for i in values), "no byte fallback used"
    print(f"{len(rows)} rows, the same ids{' and token types' if types is not None else ''} as "
          f"tokenizers ({cut} cut at {max_length})")


def through_transformers(ckpt, table, pred):
    """CKPT's own tokenizer and model (float32, eval mode), the CSV's rows and PRED.h5's /logits,
    one row each."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    tokenizer = AutoTokenizer.from_pretrained(ckpt)
    model = AutoModelForSequenceClassification.from_pretrained(ckpt, dtype=torch.float32).eval()
    with open(table, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    got = h5py.File(pred, "r")["logits"][()]
    assert len(got) == len(rows), (len(got), len(rows))
    return tokenizer, model, rows, got


def text_logits(ckpt, table, pred):
    """PRED.h5's /logits equal transformers' on the CSV's texts through the checkpoint's own
    tokenizer (AutoTokenizer, truncated to the model's length), row for row."""
    import torch
    tokenizer, model, rows, got = through_transformers(ckpt, table, pred)
    with torch.no_grad():
        gap = max(float((model(**tokenizer(row[0], truncation=True, return_tensors="pt")).logits[0]
                         - torch.from_numpy(got[i])).abs().max()) for i, row in enumerate(rows))
    assert gap < 1e-4, f"logits differ from transformers' by {gap}"
    print(f"{len(rows)} texts: logits within {gap:.1e} of transformers' through its tokenizer")


def pair_logits(ckpt, table, pred):
    """PRED.h5's /logits equal transformers' on the CSV's pairs through the checkpoint's own
    tokenizer (AutoTokenizer: input_ids, token_type_ids, attention_mask), row for row."""
    import torch
    tokenizer, model, rows, got = through_transformers(ckpt, table, pred)
    gap, untyped = 0.0, 0.0
    with torch.no_grad():
        for i, row in enumerate(rows):
            batch = tokenizer(row[0], row[1], truncation=True, return_tensors="pt")
            assert "token_type_ids" in batch and batch["token_type_ids"].max() == 1
            mine = torch.from_numpy(got[i])
            gap = max(gap, float((model(**batch).logits[0] - mine).abs().max()))
            batch["token_type_ids"].zero_()  # what a model blind to the second segment gives
            untyped = max(untyped, float((model(**batch).logits[0] - mine).abs().max()))
    assert gap < 1e-4, f"logits differ from transformers' by {gap}"
    assert untyped > 100 * max(gap, 1e-6), f"token types move the logits by only {untyped}"
    print(f"{len(rows)} pairs: logits within {gap:.1e} of transformers' through its tokenizer "
          f"({untyped:.2f} from them with every token type 0)")


if __name__ == "__main__":
    {"make": make, "bert": bert, "same": same, "pair_logits": pair_logits,
     "text_logits": text_logits}[sys.argv[1]](*sys.argv[2:])
