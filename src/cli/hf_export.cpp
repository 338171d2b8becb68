#include "slimtrain/cli/hf_export.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "slimtrain/ckpt/safetensors_shards.hpp"
#include "slimtrain/cli/peft_export.hpp"
#include "slimtrain/core/detail/joined.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"
#include "slimtrain/core/log.hpp"
#include "slimtrain/eval/checkpoint_model.hpp"
#include "slimtrain/model/hf/hf_model.hpp"
#include "slimtrain/model/hf/registry.hpp"

namespace slimtrain::cli {
namespace {

namespace fs = std::filesystem;

// What save_pretrained and a tokenizer's or processor's save_pretrained leave beside the weights.
const char* const kCompanionFiles[] = {"tokenizer.json",
                                       "tokenizer_config.json",
                                       "special_tokens_map.json",
                                       "added_tokens.json",
                                       "vocab.txt",
                                       "vocab.json",
                                       "merges.txt",
                                       "sentencepiece.bpe.model",
                                       "preprocessor_config.json",
                                       "processor_config.json",
                                       "video_preprocessor_config.json",
                                       "chat_template.json",
                                       "chat_template.jinja",
                                       "generation_config.json"};

nlohmann::json exported_config(const model::ModelSpec& spec,
                               const std::vector<std::string>& class_names) {
  // The config.json kept, its architectures the one the registry exports this model_type as.
  nlohmann::json config = nlohmann::json::parse(spec.hf_config);
  config["architectures"] = {model::hf::config_of(spec).architecture().export_name};
  nlohmann::json id2label = nlohmann::json::object(), label2id = nlohmann::json::object();
  for (std::int64_t i = 0; i < spec.num_classes; ++i) {
    const auto at = static_cast<std::size_t>(i);
    const std::string name =
        at < class_names.size() ? class_names[at] : "LABEL_" + std::to_string(i);
    id2label[std::to_string(i)] = name;
    label2id[name] = i;
  }
  config["id2label"] = id2label;
  config["label2id"] = label2id;
  config.erase("num_labels");  // id2label says it
  config["problem_type"] = "single_label_classification";
  config["torch_dtype"] = "float32";
  if (config.contains("dtype")) config["dtype"] = "float32";
  return config;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) SLIMTRAIN_THROW(Error, "export --hf: cannot write ", path);
  files::fsync_file(path);
}

}  // namespace

std::string run_hf_export(const EmbedJobConfig& c) {
  std::string output = c.output;
  while (output.size() > 1 && output.back() == '/') output.pop_back();
  std::error_code ec;
  if (fs::exists(output, ec) && !c.force)
    SLIMTRAIN_THROW(ConfigError, "-o: ", output, " exists; give --force to replace it");
  // The weights stay in the checkpoint's file until each is written: never the model whole.
  const eval::CheckpointModel loaded =
      eval::open_checkpoint_model(eval::resolve_checkpoint(c.checkpoint), c.model);
  const model::ModelSpec& spec = loaded.model->spec();
  if (spec.name != "hf")
    SLIMTRAIN_THROW(ConfigError, "--hf: checkpoint ", loaded.checkpoint, " holds a ",
                    spec.model_option(),
                    " model; --hf exports models trained from --model hf:DIR (export other "
                    "models' weights with -o W.safetensors)");
  if (c.merge_lora && spec.lora.empty())
    SLIMTRAIN_THROW(ConfigError, "--merge-lora: checkpoint ", loaded.checkpoint,
                    " was not trained with --lora (it holds no adapters to merge)");
  const bool adapter = !spec.lora.empty() && !c.merge_lora;  // PEFT's format
  const auto* hf = dynamic_cast<const model::hf::HfModel*>(loaded.model.get());
  if (adapter && hf != nullptr && !hf->peft_adapter_refusal().empty())
    SLIMTRAIN_THROW(ConfigError, "--hf: checkpoint ", loaded.checkpoint, ": ",
                    hf->peft_adapter_refusal(),
                    "; --merge-lora writes the merged model, which every transformers loads");
  const std::map<std::string, std::string> metadata = {{"format", "pt"},
                                                       {"source_checkpoint", loaded.checkpoint},
                                                       {"step", std::to_string(loaded.step)}};
  const std::string tmp = output + ".tmp-" + std::to_string(::getpid());
  files::remove_tree(tmp);
  try {
    files::make_directories(tmp);
    std::vector<std::string> written;
    if (adapter) {
      write_text(tmp + "/adapter_config.json", peft_adapter_config(loaded));
      const std::vector<ckpt::TensorToWrite> tensors = peft_adapter_tensors(loaded);
      ckpt::write_safetensors_stream(tmp + "/adapter_model.safetensors", tensors, metadata);
      files::fsync_file(tmp + "/adapter_model.safetensors");
      log::info("export --hf: PEFT's LoRA adapter (", tensors.size(),
                " tensors; the base stays in ", spec.hf_dir,
                "): PeftModel.from_pretrained(base, DIR); --merge-lora writes the merged model");
    } else {
      write_text(tmp + "/config.json", exported_config(spec, loaded.class_names).dump(2) + "\n");
      // Tensor by tensor: each read from the checkpoint and converted as its bytes are written.
      written =
          ckpt::write_safetensors_shards(tmp, merged_tensors(loaded), c.max_shard_bytes, metadata);
    }
    if (written.size() > 1)
      log::info("export --hf: ", written.size() - 1, " safetensors shards of at most ",
                c.max_shard_bytes, " bytes (--max-shard-size): ", detail::joined(written));
    std::vector<std::string> copied;
    for (const char* name : kCompanionFiles) {
      const fs::path from = fs::path(spec.hf_dir) / name;
      if (!fs::is_regular_file(from, ec)) continue;
      fs::copy_file(from, fs::path(tmp) / name, fs::copy_options::overwrite_existing, ec);
      if (ec)
        SLIMTRAIN_THROW(Error, "export --hf: cannot copy ", from.string(), ": ", ec.message());
      files::fsync_file((fs::path(tmp) / name).string());
      copied.push_back(name);
    }
    if (!fs::is_directory(spec.hf_dir, ec))
      log::warn("export --hf: ", spec.hf_dir,
                " (the checkpoint trained from) is gone: no tokenizer or preprocessor file copied");
    else if (!copied.empty())
      log::info("export --hf: copied from ", spec.hf_dir, ": ", detail::joined(copied));
    files::fsync_directory(tmp);
    if (fs::exists(output, ec)) files::remove_tree(output);
    files::rename_checked(tmp, output);
    const fs::path parent = fs::absolute(output).parent_path();
    files::fsync_directory(parent.string());
  } catch (...) {
    files::remove_tree(tmp);
    throw;
  }
  return loaded.checkpoint;
}

}  // namespace slimtrain::cli
