#include <filesystem>
#include <iostream>

#include "slimtrain/ckpt/export_weights.hpp"
#include "slimtrain/cli/app.hpp"
#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/cli/embed_job.hpp"
#include "slimtrain/cli/hf_export.hpp"
#include "slimtrain/core/byte_size.hpp"
#include "slimtrain/core/file_io.hpp"

namespace slimtrain::cli {

int run_export(const std::vector<std::string>& args) {
  CommandLine cl(
      "export",
      "slimtrain export --checkpoint PATH -o weights.h5|weights.safetensors [--force]\n"
      "       slimtrain export --torchscript --checkpoint PATH -o trained.pt [--force]\n"
      "       slimtrain export --hf --checkpoint PATH -o DIR [--force]\n"
      "       slimtrain export --embeddings --checkpoint PATH --data F.h5 [--split test] "
      "-o features.h5",
      "Writes a checkpoint's weights to HDF5: one dataset per parameter and buffer under "
      "its parameter name (e.g. /conv1.weight), plus a root attribute 'model_spec' "
      "(JSON); or, for an output named *.safetensors, as safetensors (each tensor in its "
      "stored dtype, model_spec and step in the metadata). With --embeddings, writes instead the "
      "model's pre-head features of every "
      "sample of a split: /embeddings [N, F] float32 and /labels [N] int64 in the "
      "split's row order. With --torchscript (a torchscript:PATH model), writes the "
      "TorchScript module with the trained weights, in eval mode, for torch.jit.load. With "
      "--hf (a model trained from hf:DIR), writes a directory transformers' from_pretrained "
      "loads: config.json with id2label from the data's class names, model.safetensors (or shards "
      "of "
      "at most --max-shard-size with their index), and "
      "the tokenizer and preprocessor files copied from DIR. The "
      "checkpoint is verified first; the output appears atomically. Runs as one process "
      "(no mpirun needed).");
  EmbedJobConfig e;
  // clang-format off
  cl.add()
      ("checkpoint", po::value(&e.checkpoint), "a checkpoint directory (RUN_DIR/checkpoints/step-NNNNNNNN), "
                                               "or a run directory for its newest checkpoint that verifies")
      ("output,o", po::value(&e.output), "the file to write: HDF5, or safetensors when it ends in .safetensors")
      ("force", po::bool_switch(&e.force), "replace an existing output file")
      ("embeddings", po::bool_switch(), "export features of a split instead of weights (a torchscript model needs an embed method)")
      ("torchscript", po::bool_switch(), "export the trained TorchScript module (torchscript:PATH models) instead of HDF5 weights")
      ("hf", po::bool_switch(), "export a model trained from hf:DIR as a HuggingFace checkpoint directory -o DIR")
      ("max-shard-size", po::value<std::string>()->default_value("5GB"), "--hf: the largest safetensors file; weights beyond it are split into model-00001-of-0000N.safetensors files and a model.safetensors.index.json, as save_pretrained writes them (5GB = 5*10^9 bytes; MB, GiB, bytes)")
      ("merge-lora", po::bool_switch(&e.merge_lora), "--hf of a run trained with --lora: write the merged model (each adapter added into its layer's weight: a plain transformers checkpoint) instead of PEFT's adapter directory")
      ("model", po::value(&e.model), "torchscript:PATH.pt: where the TorchScript file of a torchscript checkpoint is now (default: the path it was trained from)")
      ("data", po::value(&e.data), "--embeddings: the HDF5 data file")
      ("split", bound(e.split), "--embeddings: train, val or test")
      ("batch-size", bound(e.batch_size), "--embeddings: samples per forward pass")
      ("threads", bound(e.threads), "--embeddings: LibTorch threads (0: LibTorch's default)");
  // clang-format on
  cl.set_epilog(
      "Load the weights in PyTorch:\n"
      "  import h5py, torch\n"
      "  with h5py.File('weights.h5') as f:\n"
      "      sd = {k: torch.from_numpy(f[k][()]) for k in f.keys()}\n"
      "  model.load_state_dict(sd)\n"
      "or, exported as weights.safetensors:\n"
      "  from safetensors.torch import load_file\n"
      "  model.load_state_dict(load_file('weights.safetensors'))\n"
      "or, exported with --hf -o DIR:\n"
      "  from transformers import AutoModelForSequenceClassification\n"
      "  model = AutoModelForSequenceClassification.from_pretrained('DIR')\n"
      "or, a run trained with --lora, exported with --hf -o DIR (PEFT's adapter format):\n"
      "  from peft import PeftModel\n"
      "  base = AutoModelForSequenceClassification.from_pretrained('BASE', num_labels=N)\n"
      "  model = PeftModel.from_pretrained(base, 'DIR')\n"
      "exit codes: 0 written, 2 bad option, existing output, or a checkpoint that does not "
      "verify\n");
  if (!cl.parse(args)) return kExitOk;
  if (!cl.has("checkpoint")) SLIMTRAIN_THROW(ConfigError, "--checkpoint is required");
  if (!cl.has("output")) SLIMTRAIN_THROW(ConfigError, "-o/--output is required");
  if (!cl.get<bool>("hf") && e.merge_lora)
    SLIMTRAIN_THROW(ConfigError, "--merge-lora: only with --hf");
  if (!cl.get<bool>("hf") && cl.has("max-shard-size"))
    SLIMTRAIN_THROW(ConfigError,
                    "--max-shard-size: only with --hf (the other exports write one file)");
  e.max_shard_bytes = parse_byte_size(cl.get<std::string>("max-shard-size"), "--max-shard-size");
  // The output checked before the checkpoint is read: --hf writes a directory (replaced whole
  // with --force), the others a file.
  std::error_code ec;
  if (!cl.get<bool>("hf"))
    files::check_output_file(e.output, e.force, "-o");
  else if (!std::filesystem::is_directory(e.output, ec))
    files::check_output_directory(e.output, "-o");
  if (cl.get<bool>("hf")) {
    if (cl.get<bool>("embeddings") || cl.get<bool>("torchscript"))
      SLIMTRAIN_THROW(ConfigError, "--hf: choose one of --hf, --torchscript and --embeddings");
    if (cl.has("data")) SLIMTRAIN_THROW(ConfigError, "--data: not used with --hf");
    const std::string used = run_hf_export(e);
    std::cout << "exported " << used << " -> " << e.output
              << " (HuggingFace: for from_pretrained, or PEFT's adapter of a --lora run)\n";
    return kExitOk;
  }
  if (cl.get<bool>("torchscript")) {
    if (cl.get<bool>("embeddings"))
      SLIMTRAIN_THROW(ConfigError, "--torchscript and --embeddings: choose one");
    if (cl.has("data")) SLIMTRAIN_THROW(ConfigError, "--data: not used with --torchscript");
    const std::string used = run_script_export(e);
    std::cout << "exported " << used << " -> " << e.output << " (TorchScript, eval mode)\n";
    return kExitOk;
  }
  if (cl.get<bool>("embeddings")) {
    if (!cl.has("data"))
      SLIMTRAIN_THROW(ConfigError, "--embeddings needs --data (the HDF5 data file)");
    require_range<std::int64_t>("--batch-size", e.batch_size, 1, 1 << 20);
    require_range("--threads", e.threads, 0, 1024);
    const std::int64_t rows = run_embed_job(e);
    std::cout << "exported " << rows << " embeddings of split '" << e.split << "' -> " << e.output
              << "\n";
    return kExitOk;
  }
  if (cl.has("data")) SLIMTRAIN_THROW(ConfigError, "--data: only used with --embeddings");
  const std::string used = ckpt::export_weights(e.checkpoint, e.output, e.force);
  std::cout << "exported " << used << " -> " << e.output << "\n";
  return kExitOk;
}

}  // namespace slimtrain::cli
