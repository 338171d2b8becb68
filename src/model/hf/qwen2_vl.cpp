#include "slimtrain/model/hf/qwen2_vl.hpp"

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/token_inputs.hpp"

namespace slimtrain::model::hf {
namespace {

const torch::Tensor* find_input(const NamedInputs& inputs, const char* name) {
  for (const auto& [n, t] : inputs)
    if (n == name) return &t;
  return nullptr;
}

// The real elements of a ragged input (its mask's 1s), the samples one after the other.
torch::Tensor real_part(const NamedInputs& inputs, const char* name, const char* mask) {
  const torch::Tensor* values = find_input(inputs, name);
  const torch::Tensor* marks = find_input(inputs, mask);
  if (values == nullptr || values->numel() == 0) return {};
  if (marks == nullptr) return values->reshape({-1});
  return values->masked_select(marks->to(torch::kBool));
}

}  // namespace

Qwen2VLForSequenceClassification::Qwen2VLForSequenceClassification(const ModelSpec& spec)
    : HfModel(spec), config_(config_as<Qwen2VLConfig>(spec)) {
  check_vocabulary(spec, config_->vocab_size);
  auto model = group(*this, "model");
  visual_ = std::make_unique<VisionTower>(*group(*model, "visual"), config_->vision);
  language_model_ = std::make_unique<DecoderBody>(*group(*model, "language_model"), config_);
  score_ = add_linear(*this, "score", config_->hidden_size, spec.num_classes,
                      config_->initializer_range, false);
}

std::vector<std::string> Qwen2VLForSequenceClassification::stored_names(
    const std::string& name) const {
  // transformers 4.52+ and 5 save model.visual.* and model.language_model.*; the original
  // checkpoints visual.* and model.*; a base Qwen2VLModel visual.* and language_model.*.
  const std::string visual = "model.visual.", language = "model.language_model.";
  if (name.compare(0, visual.size(), visual) == 0)
    return {name, "visual." + name.substr(visual.size())};
  if (name.compare(0, language.size(), language) == 0)
    return {name, "model." + name.substr(language.size()),
            "language_model." + name.substr(language.size())};
  return {name};
}

torch::Tensor Qwen2VLForSequenceClassification::rope_positions(
    const torch::Tensor& ids, const torch::Tensor& mask, const std::vector<Grid>& grids) const {
  const std::int64_t b = ids.size(0), t = ids.size(1), merge = config_->vision.spatial_merge_size;
  torch::Tensor positions = torch::zeros({3, b, t}, torch::kInt64);
  auto p = positions.accessor<std::int64_t, 3>();
  const auto id = ids.accessor<std::int64_t, 2>();
  const auto real = mask.accessor<std::int64_t, 2>();
  std::size_t next = 0;  // the batch's images in order, sample after sample
  for (std::int64_t s = 0; s < b; ++s) {
    std::int64_t now = 0, left = 0, k = 0, start = 0, rows = 1, cols = 1;
    for (std::int64_t i = 0; i < t; ++i) {
      if (real[s][i] == 0) continue;
      if (id[s][i] != config_->image_token_id) {  // text: one position, the same on all axes
        p[0][s][i] = p[1][s][i] = p[2][s][i] = now++;
        continue;
      }
      if (left == 0) {  // an image starts
        if (next >= grids.size())
          SLIMTRAIN_THROW(DataError, "--model ", spec().model_option(), ": sample ", s,
                          " of a batch has more <|image_pad|> tokens than its images' features");
        const Grid& g = grids[next++];
        rows = g[1] / merge;
        cols = g[2] / merge;
        left = g[0] * rows * cols;
        k = 0;
        start = now;
      }
      p[0][s][i] = start + k / (rows * cols);  // the frame
      p[1][s][i] = start + (k / cols) % rows;
      p[2][s][i] = start + k % cols;
      ++k;
      if (--left == 0) now = start + std::max(rows, cols);
    }
    if (left != 0)
      SLIMTRAIN_THROW(DataError, "--model ", spec().model_option(), ": sample ", s,
                      " of a batch ends inside an image (", left,
                      " <|image_pad|> tokens short of its grid)");
  }
  return positions;
}

Output Qwen2VLForSequenceClassification::forward(const torch::Tensor&, const torch::Tensor&) {
  refuse_single_input(spec().model_option());
}

Output Qwen2VLForSequenceClassification::forward_named(const NamedInputs& inputs,
                                                       const torch::Tensor& y) {
  const Qwen2VLConfig& c = *config_;
  language_model_->set_grad_sink(grad_sink());
  const TokenInputs in = token_inputs(fit_padding(inputs, c.max_tokens()), spec().model_option());
  check_length(spec(), in.ids.size(1), c.max_tokens());
  torch::Tensor x = language_model_->embed(in.ids);
  // The images' grids are read on the host: their sizes shape the vision tower's work.
  std::vector<Grid> grids;
  const torch::Tensor grid = real_part(inputs, "image_grid_thw", "image_grid_thw_mask");
  if (grid.defined()) {
    const torch::Tensor g = grid.to(torch::kCPU, torch::kInt64).contiguous();
    if (g.numel() % 3 != 0)
      SLIMTRAIN_THROW(DataError, "--model ", spec().model_option(), ": image_grid_thw holds ",
                      g.numel(), " values, not 3 per image");
    const auto* v = g.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < g.numel(); i += 3) grids.push_back({v[i], v[i + 1], v[i + 2]});
  }
  const torch::Tensor real = in.mask.to(torch::kBool);
  if (!grids.empty()) {
    const VisionConfig& vc = c.vision;
    std::int64_t patches = 0;
    for (const Grid& g : grids) {
      if (g[0] < 1 || g[1] % vc.spatial_merge_size != 0 || g[2] % vc.spatial_merge_size != 0 ||
          g[1] < 1 || g[2] < 1)
        SLIMTRAIN_THROW(DataError, "--model ", spec().model_option(), ": an image grid of ", g[0],
                        "x", g[1], "x", g[2], " patches is not whole merge blocks of ",
                        vc.spatial_merge_size);
      patches += g[0] * g[1] * g[2];
    }
    const torch::Tensor pixels = real_part(inputs, "pixel_values", "pixel_values_mask");
    if (!pixels.defined() || pixels.numel() != patches * vc.patch_elements())
      SLIMTRAIN_THROW(DataError, "--model ", spec().model_option(), ": the batch's images' grids ",
                      "give ", patches, " patches of ", vc.patch_elements(),
                      " values, and pixel_values holds ", pixels.defined() ? pixels.numel() : 0);
    const torch::Tensor features =
        visual_->forward(pixels.view({patches, vc.patch_elements()}), grids, is_training());
    const torch::Tensor image = in.ids.eq(c.image_token_id) & real;
    const std::int64_t tokens = image.sum().item<std::int64_t>();
    if (tokens != features.size(0))
      SLIMTRAIN_THROW(DataError, "--model ", spec().model_option(), ": the batch holds ", tokens,
                      " <|image_pad|> tokens where its images give ", features.size(0),
                      " features (prep it with the checkpoint's processor settings)");
    x = x.masked_scatter(image.unsqueeze(-1).expand_as(x), features.to(x.scalar_type()));
  }
  const torch::Tensor positions =
      rope_positions(in.ids.to(torch::kCPU).contiguous(),
                     in.mask.to(torch::kCPU, torch::kInt64).contiguous(), grids)
          .to(x.device());
  const auto [cos, sin] = language_model_->rotary(positions, x.scalar_type());
  const torch::Tensor hidden =
      language_model_->forward(x, cos, sin, real, is_training(), {}, layer_recompute());
  return make_output(score_->forward(DecoderBody::last_token(hidden, real)), y);
}

torch::Tensor Qwen2VLForSequenceClassification::embed(const torch::Tensor&) {
  refuse_embeddings(spec().model_option());
}

namespace {

HfArchitecture vl_architecture(const std::string& model_type, const std::string& prefix,
                               bool windowed) {
  HfArchitecture a;
  a.model_type = model_type;
  a.export_name = prefix + "ForSequenceClassification";
  a.reads_architectures = {prefix};
  a.parse = [windowed](const ConfigReader& r) { return read_qwen2_vl_config(r, windowed); };
  a.build = [](const ModelSpec& spec) {
    return std::make_shared<Qwen2VLForSequenceClassification>(spec);
  };
  return a;
}

}  // namespace

HfArchitecture qwen2_vl_architecture() {
  return vl_architecture("qwen2_vl", "Qwen2VL", false);
}

HfArchitecture qwen2_5_vl_architecture() {
  return vl_architecture("qwen2_5_vl", "Qwen2_5_VL", true);
}

}  // namespace slimtrain::model::hf
