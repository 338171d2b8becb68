#!/usr/bin/env bash
# prep text --tokenizer DIR/tokenizer.json against HuggingFace's tokenizers library (the venv's
# Python, SLIMTRAIN_TORCH_PYTHON), on tokenizers trained here on Debian's fortunes: WordPiece
# (BERT's, uncased and cased), byte-level BPE (GPT-2's, RoBERTa's, Qwen2's, Llama 3's) and Unigram
# (SentencePiece models converted as XLM-RoBERTa's):
# - the same ids, row for row, for texts in Greek, Cyrillic, Arabic, Devanagari, Bengali, CJK,
#   Thai, emoji (with modifiers and joiners), combining accents, words of 150 characters, runs of
#   whitespace, tabs and newlines, text that normalises to nothing, control characters and
#   special tokens written in the text; uncased (accents stripped) and cased; pairs through the
#   template; --max-length from tokenizer_config.json, and cuts longest first; pairs for a BERT
#   checkpoint get its token types (token_type_ids), and its logits are transformers' through
#   its own tokenizer;
# - Unigram as transformers converts SentencePiece models (XLM-RoBERTa's: the Precompiled
#   charsmap, Strip, Replace, Metaspace, a <mask> that takes the space before it), with byte
#   fallback too; an XLM-RoBERTa checkpoint gives transformers' logits through its tokenizer;
# - one tokenizer.json of every shape the library has (hf_tokenizer_zoo.py: Llama 2's, Gemma's,
#   T5's, ALBERT's, CLIP's, Falcon's, SmolLM's, OLMo's, files without a model type, every
#   normalizer, pre-tokenizer and split behavior, BPE's options, WordLevel, added-token flags),
#   each through prep text, their ids compared with the library's in one process;
# - a tokenizer.json naming a model, normalizer or Metaspace scheme the library does not have, a
#   charsmap that is not base64, or not JSON: exit 2 naming it;
# - end to end: a BERT checkpoint with its tokenizer beside it fine-tuned at np 2 on a file
#   prep text made with it; export --hf copies the tokenizer files.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
[ -n "$PY2" ] && "$PY2" -c "import tokenizers, transformers, h5py, sentencepiece" 2>/dev/null ||
  { echo "skipped: no Python with tokenizers, transformers, h5py and sentencepiece (SLIMTRAIN_TORCH_PYTHON='$PY2'; scripts/install-deps.sh --torch pip makes .torch-venv)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tok="$SLIMTRAIN_SOURCE_DIR/tests/e2e/hf_tokenizer.py"
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
py_start "$PY2"
py "$tok" make "$work" > /dev/null 2>&1 || { py "$tok" make "$work"; exit 1; }
np() { timeout 120 "$MPIEXEC" --oversubscribe -np "$@"; }
prep=(prep text --train "$work/texts.csv" --text-column text --label-column label)

check "prep text --tokenizer uncased/tokenizer.json" expect_rc 0 "$S" "${prep[@]}" \
  --tokenizer "$work/uncased/tokenizer.json" -o "$work/u.h5"
check "  --max-length from tokenizer_config.json" contains "max-length 48 from $work/uncased/tokenizer_config.json (model_max_length)"
check "  the ids of tokenizers, row for row" py "$tok" same "$work/uncased/tokenizer.json" "$work/texts.csv" "$work/u.h5" 48
check "cased, every token kept (--max-length 0), at np 2" expect_rc 0 np 2 "$S" "${prep[@]}" \
  --tokenizer "$work/cased/tokenizer.json" --max-length 0 -o "$work/c.h5"
check "  the ids of tokenizers" py "$tok" same "$work/cased/tokenizer.json" "$work/texts.csv" "$work/c.h5" 100000
check "  the file says which tokenizer" expect_rc 0 "$S" inspect "$work/c.h5"
check "    huggingface" contains "huggingface"
for n in 20 7; do
  check "pairs, --max-length $n" expect_rc 0 "$S" prep text --train "$work/pairs.csv" --text-column first \
    --text-column second --label-column label --tokenizer "$work/uncased/tokenizer.json" --max-length $n -o "$work/p$n.h5"
  check "  the ids of tokenizers: [CLS] A [SEP] B [SEP], the longer cut first" py "$tok" same "$work/uncased/tokenizer.json" "$work/pairs.csv" "$work/p$n.h5" $n pair
done
check "  no config.json beside the tokenizer: a warning that pairs get no token types" contains "pairs get no token_type_ids (every token of type 0)"
for k in gpt2 roberta qwen2 llama3; do
  check "byte-level BPE ($k's)" expect_rc 0 "$S" "${prep[@]}" --tokenizer "$work/$k/tokenizer.json" \
    --max-length 0 -o "$work/$k.h5"
  check "  the ids of tokenizers" py "$tok" same "$work/$k/tokenizer.json" "$work/texts.csv" "$work/$k.h5" 100000
done
check "RoBERTa's pairs, --max-length 20" expect_rc 0 "$S" prep text --train "$work/pairs.csv" --text-column first \
  --text-column second --label-column label --tokenizer "$work/roberta/tokenizer.json" --max-length 20 -o "$work/rp.h5"
check "  the ids of tokenizers: <s> A </s></s> B </s>" py "$tok" same "$work/roberta/tokenizer.json" "$work/pairs.csv" "$work/rp.h5" 20 pair
check "Llama 3's pairs, --max-length 20" expect_rc 0 "$S" prep text --train "$work/pairs.csv" --text-column first \
  --text-column second --label-column label --tokenizer "$work/llama3/tokenizer.json" --max-length 20 -o "$work/lp.h5"
check "  the ids of tokenizers: <|begin_of_text|> A <|begin_of_text|> B" py "$tok" same "$work/llama3/tokenizer.json" "$work/pairs.csv" "$work/lp.h5" 20 pair
check "Qwen2's, cut at 24" expect_rc 0 np 2 "$S" "${prep[@]}" --tokenizer "$work/qwen2/tokenizer.json" \
  --max-length 24 -o "$work/q24.h5"
check "  the ids of tokenizers" py "$tok" same "$work/qwen2/tokenizer.json" "$work/texts.csv" "$work/q24.h5" 24
for k in xlmr xlmr-bytes; do
  check "Unigram ($k: Precompiled, Strip, Replace, Metaspace), at np 2" expect_rc 0 np 2 "$S" \
    "${prep[@]}" --tokenizer "$work/$k/tokenizer.json" --max-length 0 -o "$work/$k.h5"
  check "  the ids of tokenizers" py "$tok" same "$work/$k/tokenizer.json" "$work/texts.csv" "$work/$k.h5" 100000
done
check "XLM-RoBERTa's pairs, --max-length 20" expect_rc 0 "$S" prep text --train "$work/pairs.csv" --text-column first \
  --text-column second --label-column label --tokenizer "$work/xlmr/tokenizer.json" --max-length 20 -o "$work/xp.h5"
check "  the ids of tokenizers: <s> A </s></s> B </s>" py "$tok" same "$work/xlmr/tokenizer.json" "$work/pairs.csv" "$work/xp.h5" 20 pair
check "a model the library does not have: exit 2" expect_rc 2 "$S" "${prep[@]}" --tokenizer "$work/bad-model.json" -o "$work/x.h5"
check "  naming it" contains "bad-model.json: model WordPieceX is not one the tokenizers library has (BPE, WordPiece, WordLevel, Unigram)"
check "a normalizer the library does not have: exit 2" expect_rc 2 "$S" "${prep[@]}" --tokenizer "$work/bad-normalizer.json" -o "$work/x.h5"
check "  naming it" contains "bad-normalizer.json: normalizer Capitalize is not one the tokenizers library has"
check "a Metaspace prepend_scheme the library does not have: exit 2" expect_rc 2 "$S" "${prep[@]}" --tokenizer "$work/bad-metaspace.json" -o "$work/x.h5"
check "  naming it" contains "bad-metaspace.json: Metaspace with prepend_scheme sometimes is not one the tokenizers library has (always, first, never)"
check "a charsmap that is not base64: exit 2" expect_rc 2 "$S" "${prep[@]}" --tokenizer "$work/bad-charsmap.json" -o "$work/x.h5"
check "  naming it" contains "bad-charsmap.json: the Precompiled normalizer's charsmap is not base64"
check "a tokenizer.json cut short: exit 2" expect_rc 2 "$S" "${prep[@]}" --tokenizer "$work/bad-broken.json" -o "$work/x.h5"
check "  naming the file" contains "bad-broken.json: is not JSON"
check "  nothing written" eval '[ ! -e "$work/x.h5" ]'

# One tokenizer.json of every shape the library has (hf_tokenizer_zoo.py), each through prep text
# (--skip-bad: a text that is whitespace alone to a tokenizer with no special tokens is no
# sample), then one comparison of them all.
zoo_py="$SLIMTRAIN_SOURCE_DIR/tests/e2e/hf_tokenizer_zoo.py"
py "$zoo_py" make "$work/zoo" > /dev/null 2>&1 || { py "$zoo_py" make "$work/zoo"; exit 1; }
zoo_ok=0
while read -r name table; do
  columns=(--text-column text)
  [ "$table" = pairs ] && columns=(--text-column first --text-column second)
  "$S" prep text --train "$work/zoo/$table.csv" "${columns[@]}" --label-column label --skip-bad \
    --tokenizer "$work/zoo/$name/tokenizer.json" --max-length 0 -o "$work/zoo/$name.h5" \
    > "$work/zoo/$name.log" 2>&1 || { echo "prep text on $name:"; tail -3 "$work/zoo/$name.log"; zoo_ok=1; }
done < "$work/zoo/zoo.txt"
check "prep text with every tokenizer of the zoo ($(wc -l < "$work/zoo/zoo.txt") tokenizer.json files)" eval '[ $zoo_ok = 0 ]'
check "  the ids of tokenizers on each" py "$zoo_py" check "$work/zoo"

py "$tok" bert "$work" > /dev/null 2>&1 || { py "$tok" bert "$work"; exit 1; }
check "pairs with a BERT checkpoint's tokenizer (its config.json beside)" expect_rc 0 np 2 "$S" prep text \
  --train "$work/pairs.csv" --text-column first --text-column second --label-column label \
  --tokenizer "$work/bert-pairs/tokenizer.json" -o "$work/bp.h5"
check "  token_type_ids written, saying why" contains "pairs get token_type_ids beside input_ids ($work/bert-pairs/config.json: type_vocab_size 2)"
check "  the ids and token types of tokenizers" py "$tok" same "$work/bert-pairs/tokenizer.json" "$work/pairs.csv" "$work/bp.h5" 48 types
check "  eval --model hf:bert-pairs --predictions on them" expect_rc 0 "$S" eval --data "$work/bp.h5" \
  --split train --model "hf:$work/bert-pairs" --predictions "$work/p-bp.h5" --threads 1
check "    transformers' logits through its own tokenizer (token types included)" py "$tok" pair_logits "$work/bert-pairs" "$work/pairs.csv" "$work/p-bp.h5"
check "  a model without token types (DistilBERT) on that file: exit 2" expect_rc 2 "$S" eval \
  --data "$work/bp.h5" --split train --model "hf:$work/distilbert"
check "    naming the input" contains "the file's input 'token_type_ids' is not an argument of forward"
check "XLM-RoBERTa: prep text with its tokenizer" expect_rc 0 "$S" "${prep[@]}" \
  --tokenizer "$work/xlmr-model/tokenizer.json" -o "$work/xm.h5"
check "  --max-length 64 from its tokenizer_config.json" contains "max-length 64 from"
check "  eval --model hf:xlmr-model (model_type xlm-roberta) --predictions" expect_rc 0 "$S" eval \
  --data "$work/xm.h5" --split train --model "hf:$work/xlmr-model" --predictions "$work/p-xm.h5" --threads 1
check "    transformers' logits through its own tokenizer" py "$tok" text_logits "$work/xlmr-model" "$work/texts.csv" "$work/p-xm.h5"
check "end to end: prep text with the checkpoint's tokenizer" expect_rc 0 np 2 "$S" prep text \
  --train "$work/reviews-train.csv" --test "$work/reviews-test.csv" --text-column review \
  --label-column sentiment --tokenizer "$work/bert/tokenizer.json" -o "$work/reviews.h5"
check "  fine-tuning it at np 2" expect_rc 0 np 2 "$S" train --data "$work/reviews.h5" \
  --model "hf:$work/bert" --optimizer adamw --lr 3e-3 --epochs 6 --batch-size 16 --threads 1 \
  --out "$work/run"
check "  learns the class words" json_is "$(events "$work/run" done)" 'e["final"]["accuracy"] > 0.8'
check "  export --hf" expect_rc 0 "$S" export --hf --checkpoint "$work/run" -o "$work/exported"
check "    copies the tokenizer beside the weights" eval '[ "$(ls "$work/exported" | tr "\n" " ")" = "config.json model.safetensors tokenizer.json tokenizer_config.json " ]'
finish
