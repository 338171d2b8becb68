#include "slimtrain/eval/model_inputs.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/named_inputs.hpp"

namespace slimtrain::eval {

void check_model_inputs(const model::ClassifierImpl& model, const data::DatasetInfo& info) {
  if (!info.named()) return;
  std::vector<std::string> available;
  for (const data::InputInfo& in : info.inputs) {
    available.push_back(in.name);
    if (in.ragged) available.push_back(data::mask_name(in.name));
  }
  const std::string mismatch = model.input_mismatch(info.input_names(), available);
  if (!mismatch.empty())
    SLIMTRAIN_THROW(ConfigError, "--model ", model.spec().model_option(), ": ", mismatch);
}

}  // namespace slimtrain::eval
