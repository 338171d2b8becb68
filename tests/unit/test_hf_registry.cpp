// The HuggingFace architectures' registry (model/hf/registry.hpp): each model_type parsed into its
// own config struct once, built from it, exported under its own name; fields that change the
// computation refused by name; the config.json of a model read once and parsed once on the way
// from the directory to a built model, its description and its export name. A decoder made under
// DeferredWeights: its body without memory, its head as without.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "slimtrain/core/error.hpp"
#include "slimtrain/model/classifier.hpp"
#include "slimtrain/model/deferred_weights.hpp"
#include "slimtrain/model/hf/bert.hpp"
#include "slimtrain/model/hf/decoder.hpp"
#include "slimtrain/model/hf/distilbert.hpp"
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::model::hf {
namespace {

nlohmann::json tiny(const std::string& type) {
  nlohmann::json j = {{"model_type", type},
                      {"vocab_size", 50},
                      {"hidden_size", 16},
                      {"num_hidden_layers", 1},
                      {"num_attention_heads", 2},
                      {"intermediate_size", 32},
                      {"max_position_embeddings", 40},
                      {"type_vocab_size", 2}};
  if (type == "distilbert")
    j = {{"model_type", type},
         {"vocab_size", 50},
         {"dim", 16},
         {"n_layers", 1},
         {"n_heads", 2},
         {"hidden_dim", 32},
         {"max_position_embeddings", 40}};
  if (type == "vit")
    j = {{"model_type", type},       {"hidden_size", 16},       {"num_hidden_layers", 1},
         {"num_attention_heads", 2}, {"intermediate_size", 32}, {"image_size", 8},
         {"patch_size", 4},          {"num_channels", 3}};
  if (type == "qwen2_vl" || type == "qwen2_5_vl") {
    // Head width 8: its 4 rotary frequencies turned by time, height and width.
    j["rope_scaling"] = {{"type", "mrope"}, {"mrope_section", {2, 1, 1}}};
    j["vision_config"] = type == "qwen2_vl"
                             ? nlohmann::json{{"depth", 1},
                                              {"num_heads", 2},
                                              {"embed_dim", 16},
                                              {"hidden_size", 16},
                                              {"mlp_ratio", 2}}
                             : nlohmann::json{{"depth", 1},
                                              {"num_heads", 2},
                                              {"hidden_size", 16},
                                              {"intermediate_size", 32},
                                              {"out_hidden_size", 16}};
  }
  return j;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

TEST(HfRegistry, EveryArchitectureOnceParsedIntoItsOwnConfig) {
  std::set<std::string> types;
  for (const HfArchitecture& a : architectures()) {
    EXPECT_TRUE(types.insert(a.model_type).second) << a.model_type << " registered twice";
    EXPECT_FALSE(a.export_name.empty()) << a.model_type;
    const auto c = parse_config(tiny(a.model_type), "config.json");
    EXPECT_EQ(c->model_type, a.model_type);
    EXPECT_EQ(&c->architecture(), &a);
    EXPECT_EQ(c->hidden_size, 16) << a.model_type;
  }
  EXPECT_EQ(architecture("xlm-roberta", "x").export_name, "XLMRobertaForSequenceClassification");
  EXPECT_EQ(architecture("camembert", "x").export_name, "CamembertForSequenceClassification");
  EXPECT_EQ(architecture("vit", "x").reads, Reads::images);
}

TEST(HfRegistry, UnknownTypesAndArchitecturesAreNamed) {
  const std::string unknown = message_of([] { parse_config(tiny("gpt2"), "d/config.json"); });
  EXPECT_NE(unknown.find("d/config.json: model_type \"gpt2\" has no native module"),
            std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find(model_type_list()), std::string::npos) << unknown;
  nlohmann::json j = tiny("bert");
  j["architectures"] = {"RobertaForMaskedLM"};
  EXPECT_NE(message_of([&] { parse_config(j, "c"); }).find("architecture RobertaForMaskedLM"),
            std::string::npos);
  j["architectures"] = {"BertForMaskedLM"};  // another head of the same body loads
  EXPECT_NO_THROW(parse_config(j, "c"));
}

TEST(HfRegistry, DefaultsAreTransformersAndRefusalsNameTheField) {
  const auto distil =
      std::dynamic_pointer_cast<const DistilBertConfig>(parse_config(tiny("distilbert"), "c"));
  ASSERT_TRUE(distil);
  EXPECT_DOUBLE_EQ(distil->seq_classif_dropout, 0.2);
  EXPECT_EQ(distil->activation, "gelu");
  const auto qwen =
      std::dynamic_pointer_cast<const DecoderConfig>(parse_config(tiny("qwen2"), "c"));
  ASSERT_TRUE(qwen);
  EXPECT_TRUE(qwen->qkv_bias);
  EXPECT_FALSE(qwen->o_bias);
  EXPECT_EQ(qwen->hidden_act, "silu");
  nlohmann::json llama = tiny("llama");
  llama["attention_bias"] = true;
  llama["mlp_bias"] = true;
  llama["hidden_act"] = "gelu";
  const auto l = std::dynamic_pointer_cast<const DecoderConfig>(parse_config(llama, "c"));
  EXPECT_TRUE(l->qkv_bias && l->o_bias && l->mlp_bias);
  EXPECT_EQ(l->hidden_act, "gelu");
  nlohmann::json sliding = tiny("qwen2");
  sliding["use_sliding_window"] = true;
  EXPECT_NE(message_of([&] { parse_config(sliding, "c"); }).find("use_sliding_window true is not"),
            std::string::npos);
  nlohmann::json act = tiny("bert");
  act["hidden_act"] = "mish";
  EXPECT_NE(message_of([&] { parse_config(act, "c"); }).find("hidden_act \"mish\" is not"),
            std::string::npos);
  nlohmann::json relative = tiny("roberta");
  relative["position_embedding_type"] = "relative_key";
  EXPECT_NE(message_of([&] { parse_config(relative, "c"); }).find("position_embedding_type"),
            std::string::npos);
  // RoBERTa's positions start past pad_token_id: two fewer tokens than its table has.
  EXPECT_EQ(parse_config(tiny("roberta"), "c")->max_tokens(), 40 - 1);
  nlohmann::json padded = tiny("roberta");
  padded["pad_token_id"] = 1;
  EXPECT_EQ(parse_config(padded, "c")->max_tokens(), 38);
  EXPECT_EQ(parse_config(tiny("bert"), "c")->max_tokens(), 40);
}

TEST(HfRegistry, ConfigJsonReadAndParsedOncePerModel) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hf-registry-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << tiny("llama").dump();
  const std::int64_t files = config_counts().files, parses = config_counts().parses;
  ModelSpec spec;
  spec.set_model("hf:" + dir.string());
  ReadConfig read = read_config(spec.hf_dir);  // as eval::model_for_data does
  spec.hf_config = read.text;
  spec.hf = read.config;
  spec.num_classes = 3;
  spec.vocab_size = 50;
  auto model = make_model(spec);
  const std::string described = model->spec().describe();
  const std::string exported = config_of(model->spec()).architecture().export_name;
  EXPECT_EQ(config_counts().files - files, 1);
  EXPECT_EQ(config_counts().parses - parses, 1) << "config.json parsed more than once";
  EXPECT_NE(described.find("llama hidden 16 layers 1"), std::string::npos) << described;
  EXPECT_EQ(exported, "LlamaForSequenceClassification");
  // A spec from a checkpoint keeps the text: parsed once, on first use.
  ModelSpec restored = ModelSpec::from_json(spec.to_json());
  EXPECT_FALSE(restored.hf);
  EXPECT_EQ(&config_of(restored), &config_of(restored));
  EXPECT_EQ(restored.fingerprint(), spec.fingerprint());
  std::filesystem::remove_all(dir);
}

TEST(DeferredWeights, TheDecoderBodyIsMadeWithoutMemoryTheHeadAsWithout) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("hf-deferred-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  nlohmann::json config = tiny("qwen2");
  config["num_hidden_layers"] = 2;
  std::ofstream(dir / "config.json") << config.dump();
  ModelSpec spec;
  spec.set_model("hf:" + dir.string());
  spec.hf = read_config(spec.hf_dir).config;
  spec.num_classes = 3;
  spec.vocab_size = 50;
  torch::manual_seed(4);
  auto whole = make_model(spec);
  torch::manual_seed(4);
  std::shared_ptr<ClassifierImpl> empty;
  {
    DeferredWeights deferred(torch::kCPU);
    empty = make_model(spec);
  }
  const auto made = whole->named_parameters(true);
  const auto deferred = empty->named_parameters(true);
  ASSERT_EQ(made.size(), deferred.size());
  for (std::size_t i = 0; i < made.size(); ++i) {
    const std::string& name = made[i].key();
    EXPECT_EQ(deferred[i].key(), name);
    EXPECT_EQ(deferred[i].value().sizes(), made[i].value().sizes()) << name;
    EXPECT_TRUE(has_memory(made[i].value())) << name;
    if (name.rfind("model.", 0) == 0) {
      EXPECT_FALSE(has_memory(deferred[i].value())) << name << ": the body's, without memory";
    } else {  // the head, from the same random numbers
      ASSERT_TRUE(has_memory(deferred[i].value())) << name;
      EXPECT_TRUE(torch::equal(deferred[i].value(), made[i].value())) << name;
    }
  }
  defer_memory(whole->parameters());  // outside a scope: nothing
  for (const torch::Tensor& p : whole->parameters()) EXPECT_TRUE(has_memory(p));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace slimtrain::model::hf
