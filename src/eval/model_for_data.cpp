#include "slimtrain/eval/model_for_data.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/named_inputs.hpp"
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::eval {
namespace {

[[noreturn]] void needs_one_input(const model::ModelSpec& spec, const data::DatasetInfo& info) {
  SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(), ": ", info.path,
                  " has named inputs (", data::describe_inputs(info.inputs),
                  "), and built-in image and feature models read one input x; give a "
                  "TorchScript model (--model torchscript:FILE.pt) whose forward takes them by "
                  "name, text-bow or text-transformer for token sequences, or hf:DIR for a "
                  "HuggingFace checkpoint");
}

[[noreturn]] void needs_tokens(const model::ModelSpec& spec, const data::DatasetInfo& info) {
  SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(),
                  ": reads token sequences (input_ids) of a layout-2 file from prep text; ",
                  info.path, " has one input x (layout 1)");
}

}  // namespace

void check_takes(const model::ModelSpec& spec, const data::DatasetInfo& info) {
  switch (spec.kind().takes) {
    case model::Takes::x:
      if (info.named()) needs_one_input(spec, info);
      return;
    case model::Takes::tokens:
      if (!info.named()) needs_tokens(spec, info);
      return;
    case model::Takes::named:
      return;
    case model::Takes::config:
      break;
  }
  if (model::hf::config_of(spec).architecture().reads == model::hf::Reads::tokens) {
    if (!info.named()) needs_tokens(spec, info);
    return;
  }
  if (info.named())
    SLIMTRAIN_THROW(ConfigError, "--model ", spec.model_option(),
                    ": a ViT reads images, a layout-1 file's x (prep images); ", info.path,
                    " has named inputs (", data::describe_inputs(info.inputs), ")");
}

model::ModelSpec model_for_data(const model::ModelSpec& options, const std::string& model_option,
                                const data::DatasetInfo& info) {
  model::ModelSpec spec = options;
  spec.set_model(model_option);
  if (spec.name == "hf") {
    model::hf::ReadConfig read = model::hf::read_config(spec.hf_dir);
    spec.hf_config = std::move(read.text);
    spec.hf = std::move(read.config);
  }
  spec.input_shape = info.input_shape();
  spec.num_classes = info.num_classes;
  for (const data::InputInfo& in : info.inputs)
    if (in.name == "input_ids") spec.vocab_size = in.vocab_size;
  check_takes(spec, info);
  return spec;
}

}  // namespace slimtrain::eval
