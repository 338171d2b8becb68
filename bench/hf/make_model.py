#!/usr/bin/env python3
"""The checkpoint bench/hf fine-tunes, made here (nothing downloaded): a WordPiece tokenizer
trained on the text demo's training CSV (BERT's normalizer, pre-tokenizer and template, 8000
ids, model_max_length 128) and a random BertForSequenceClassification of BERT-small's size
(4 layers, hidden 512, 8 heads, feed-forward 2048, 512 positions), saved with save_pretrained.

  make_model.py TRAIN.csv CLASSES DIR
"""
import csv
import json
import sys

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import BertConfig, BertForSequenceClassification

train_csv, classes, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
texts = [row[0] for row in list(csv.reader(open(train_csv, newline="", encoding="utf-8")))[1:]]
t = Tokenizer(models.WordPiece(unk_token="[UNK]"))
t.normalizer = normalizers.BertNormalizer(lowercase=True)
t.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
t.decoder = decoders.WordPiece()
t.train_from_iterator(texts, trainers.WordPieceTrainer(
    vocab_size=8000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
t.post_processor = processors.TemplateProcessing(
    single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
    special_tokens=[("[CLS]", t.token_to_id("[CLS]")), ("[SEP]", t.token_to_id("[SEP]"))])
torch.manual_seed(0)
config = BertConfig(vocab_size=t.get_vocab_size(), hidden_size=512, num_hidden_layers=4,
                    num_attention_heads=8, intermediate_size=2048, max_position_embeddings=512,
                    num_labels=classes)
BertForSequenceClassification(config).save_pretrained(out)
t.save(f"{out}/tokenizer.json")
json.dump({"model_max_length": 128, "tokenizer_class": "BertTokenizer"},
          open(f"{out}/tokenizer_config.json", "w"))
print(f"{out}: BERT-small, {t.get_vocab_size()} ids, {classes} labels")
