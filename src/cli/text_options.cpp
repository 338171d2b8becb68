// `prep text`'s options: how the file is read (columns, delimiter, quoting), the tokenizer, what
// is refused or cut. prep_text.cpp reads them.
#include "slimtrain/cli/prep_text.hpp"
#include "slimtrain/core/error.hpp"

namespace slimtrain::cli {

void add_text_options(CommandLine& cl) {
  // clang-format off
  cl.add()
      ("text-column", po::value<std::vector<std::string>>()->composing(), "text: the text's column (a header name, a JSONL key, or a 0-based index); given twice, a pair joined by the tokenizer's separator (a tokenizer.json: its pair template, and token_type_ids when the config.json beside it has type_vocab_size > 1, as BERT's) (required)")
      ("quoting", po::value<std::string>(), "text: csv or none. csv: RFC 4180 quotes (a field that starts with \" may hold delimiters and newlines; \"\" is a quote), the default for .csv; none: every field literal (a delimiter ends a field, a newline a record, a quote is a character), the default for .tsv and --delimiter tab, as people write TSV")
      ("strict", po::bool_switch(), "text: a record holding bytes that are not UTF-8, or a NUL byte, is an error (exit 2, naming it); without it they become <unk> pieces and are counted, the first record named")
      ("max-length", po::value<std::int64_t>()->default_value(4096, "4096; with a tokenizer.json, the model's maximum"), "text: tokens kept of a sample (a pair counted whole); longer ones are cut, counted and the longest named; 0 keeps every token (a 50 MB record becomes millions of tokens, more than a batch can hold)")
      ("tokenizer", po::value<std::string>(), "text: a SentencePiece .model, or a HuggingFace tokenizer.json (its WordPiece, byte-level BPE or Unigram model: data/README.md lists the components), to tokenize with (else a SentencePiece model is trained on the training split); a tokenizer.json adds the special tokens its post-processor names, and --max-length defaults to the model's (tokenizer_config.json or config.json beside it)")
      ("vocab-size", po::value<std::int64_t>()->default_value(0), "text: pieces of the tokenizer trained without --tokenizer; 0: as many as the training texts fill, up to 8000, said in the log (a larger value the texts cannot fill, or one too small for their characters, is exit 2 naming the size that would do)")
      ("tokenizer-type", po::value<std::string>()->default_value("unigram"), "text: unigram or bpe, the tokenizer trained without --tokenizer")
      ("image-column", po::value<std::vector<std::string>>()->composing(), "text: a column of image paths (relative to the file's folder, or absolute; JPEG or PNG; an empty field is no image), given once per image of a sample: images and text together for a Qwen2-VL or Qwen2.5-VL checkpoint, its tokenizer.json as --tokenizer; each image made into pixel_values and image_grid_thw as Qwen2VLImageProcessor makes them with the preprocessor_config.json beside the tokenizer (or --preprocessor), the text put in the chat template's user turn after its images, each <|image_pad|> one token per merged patch (data/README.md)")
      ("max-pixels", po::value<std::int64_t>(), "text with --image-column: an image's pixels at most, after resizing (the processor's max_pixels, which this overrides: lower to bound memory; each 28x28 pixels become one token)")
      ("no-chat-template", po::bool_switch(), "text with --image-column: no chat template, even where the checkpoint has one: <|vision_start|><|image_pad|>...<|vision_end|> before the text");
  // clang-format on
}

data::TextColumns text_columns(const CommandLine& cl) {
  data::TextColumns columns;
  columns.text = cl.get<std::vector<std::string>>("text-column");
  columns.label = cl.get<std::string>("label-column");
  if (cl.has("image-column")) columns.images = cl.get<std::vector<std::string>>("image-column");
  columns.header = !cl.get<bool>("no-header");  // a header by default, as pandas reads a CSV
  if (cl.has("delimiter")) {
    const std::string d = cl.get<std::string>("delimiter");
    if (d == "\\t" || d == "tab" || d == "\t")
      columns.delimiter = '\t';
    else if (d.size() == 1)
      columns.delimiter = d[0];
    else
      SLIMTRAIN_THROW(ConfigError, "--delimiter: '", d,
                      "' must be one character, or \\t (or tab) for a tab");
  }
  if (cl.has("quoting")) {
    const std::string q = cl.get<std::string>("quoting");
    if (q != "csv" && q != "none")
      SLIMTRAIN_THROW(ConfigError, "--quoting: '", q, "' must be csv or none");
    columns.quoting = q == "csv" ? data::Quoting::csv : data::Quoting::none;
  }
  return columns;
}

}  // namespace slimtrain::cli
