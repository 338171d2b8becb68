#include "slimtrain/cli/train_options.hpp"

#include <sstream>

#include "slimtrain/cli/command_line.hpp"
#include "slimtrain/eval/eval_stats.hpp"
#include "slimtrain/model/lora_options.hpp"
#include "slimtrain/model/model_option.hpp"

namespace slimtrain::cli {
namespace {

std::vector<std::int64_t> parse_widths(const std::string& text) {
  std::vector<std::int64_t> widths;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    try {
      std::size_t used = 0;
      const long long w = std::stoll(part, &used);
      if (used != part.size() || w <= 0) throw std::invalid_argument(part);
      widths.push_back(w);
    } catch (const std::exception&) {
      SLIMTRAIN_THROW(ConfigError, "--mlp-widths: '", text,
                      "' is not a comma-separated list of positive widths");
    }
  }
  if (widths.empty()) SLIMTRAIN_THROW(ConfigError, "--mlp-widths: at least one width is needed");
  return widths;
}

template <typename T>
T one_of(const std::string& option, const T& value, std::initializer_list<T> allowed) {
  for (const T& a : allowed)
    if (a == value) return value;
  std::ostringstream list;
  for (const T& a : allowed) list << (list.tellp() > 0 ? ", " : "") << a;
  SLIMTRAIN_THROW(ConfigError, option, ": '", value, "' is not one of ", list.str());
}

}  // namespace

bool parse_train_options(const std::vector<std::string>& args, train::TrainConfig& c) {
  CommandLine cl(
      "train", "mpirun -np N slimtrain train --data F.h5 --out RUN_DIR [options]",
      "Trains a classifier data-parallel: every rank reads its shard of the HDF5 file,\n"
      "gradients are averaged in buckets (during backward where that pays), every collective has "
      "a\n"
      "deadline. A late evaluation is skipped on all ranks; a hung training collective ends\n"
      "the job with a stall report. Metrics go to RUN_DIR/metrics.jsonl.");
  std::string widths = "256,128";
  std::string lora = "none", lora_train;
  double bucket_mb = 0, chunk_mb = 0;
  // clang-format off
  cl.add()
    ("data", po::value(&c.data)->required(), "HDF5 file written by 'slimtrain prep' (or h5py, same layout)")
    ("out", po::value(&c.out)->required(), "run directory: metrics.jsonl and checkpoints/")
    ("model", bound(c.model), "images and features: mlp, cnn-small, cnn-bn (5 conv+BatchNorm layers, jobs/fashion_full.ini), vit-tiny; text (a file from prep text): text-bow (fastText's averaged embeddings), text-transformer (a small encoder); or torchscript:PATH.pt: your own classifier saved with torch.jit.script(model).save(PATH); forward(x) or forward(x, labels) returning the logits, a tuple or a dict; or hf:DIR: a HuggingFace checkpoint as save_pretrained wrote it (config.json, model.safetensors) of an architecture slimtrain builds natively (docs/models.md lists them; another model_type is named at start-up), fine-tuned from its weights, on a file of input_ids from prep text or, for an image model, on images")
    ("logits-output", po::value(&c.arch.logits_output)->default_value(""), "torchscript: which output of forward is the logits, a tuple index or a dict key (default: HuggingFace's order, or 'logits')")
    ("model-loss", po::bool_switch(&c.arch.model_loss), "torchscript: train on the loss forward returns (tuple [0] when given labels, or 'loss') instead of slimtrain's cross-entropy")
    ("jit-optimize", po::bool_switch(&c.arch.jit_optimize), "torchscript: let LibTorch's graph executor optimise (profile, differentiate, fuse) the module; off, it runs op by op as eager PyTorch, which trained cnn-small's backward ~15% faster on CPU")
    ("strict-slim", po::bool_switch(&c.strict_slim), "refuse a model whose forward returns anything beside the logits (and the loss) instead of dropping it at the slim boundary")
    ("mlp-widths", bound(widths), "hidden widths of mlp, comma-separated")
    ("vit-patch", bound(c.arch.vit_patch), "vit-tiny patch size")
    ("vit-dim", bound(c.arch.vit_dim), "vit-tiny embedding width")
    ("vit-depth", bound(c.arch.vit_depth), "vit-tiny encoder layers")
    ("vit-heads", bound(c.arch.vit_heads), "vit-tiny attention heads")
    ("cnn-width", bound(c.arch.cnn_width), "cnn-bn channels: W, W, 2W, 2W, 4W over its five conv layers (the work grows as W squared)")
    ("cnn-layers", bound(c.arch.cnn_layers), "cnn-bn conv layers, 5 to 8: each past the fifth is one more 4W -> 4W layer at a quarter of the image's size, where capacity is cheapest (at 28x28 and W 32 the sixth adds 147 K parameters and a third to the work)")
    ("epochs", bound(c.epochs), "passes over the training split")
    ("max-steps", bound(c.max_steps), "stop after this many steps (0: epochs decide)")
    ("batch-size", bound(c.batch_size), "samples per rank per micro-batch (the last batch of an epoch may be short)")
    ("grad-accum", bound(c.grad_accum), "micro-batches per optimizer step: gradients accumulate locally and are reduced once, at the last; the loss is averaged over them, so --grad-accum 4 --batch-size 16 trains like --batch-size 64 in a quarter of the memory. Steps, schedules, logging, evaluation and checkpoints count optimizer steps; an epoch's last batches that make no whole step are skipped")
    ("seed", bound(c.seed), "seed of initial weights and data order")
    ("optimizer", bound(c.optim.name), "sgd or adamw")
    ("lr", bound(c.optim.lr), "peak learning rate")
    ("momentum", bound(c.optim.momentum), "SGD momentum")
    ("nesterov", bound(c.optim.nesterov), "SGD Nesterov momentum")
    ("weight-decay", bound(c.optim.weight_decay), "weight decay (decoupled for adamw)")
    ("schedule", bound(c.schedule.kind), "constant, cosine or step")
    ("warmup-steps", bound(c.schedule.warmup_steps), "linear warmup steps")
    ("min-lr-ratio", bound(c.schedule.min_lr_ratio), "cosine floor as a fraction of --lr")
    ("step-every", bound(c.schedule.step_every), "step schedule: decay every N steps")
    ("step-gamma", bound(c.schedule.step_gamma), "step schedule: decay factor")
    ("clip-grad-norm", bound(c.clip_grad_norm), "clip the global gradient norm (0: off)")
    ("max-failed-checkpoints", bound(c.max_failed_checkpoints), "a checkpoint write that fails (a full disk, a lost file system) is a warning: the previous checkpoint stays the latest and the next one is tried at the next interval; after this many failures in a row the job ends with exit 1 naming the error. The final checkpoint must land")
    ("max-nonfinite-steps", bound(c.max_nonfinite_steps), "a step whose loss (on any rank) or gradient norm (with --clip-grad-norm) is NaN or infinite updates nothing, on every rank, and is named in the log; after this many in a row the job ends with exit 1, naming the first and the last checkpoint (whose weights are finite): resume it with a lower --lr")
    ("label-smoothing", bound(c.arch.label_smoothing), "label smoothing of the loss")
    ("device", bound(c.device), "cpu, or cuda: one GPU per rank, local rank N on GPU N, or GPU 0 when each task sees only its own (srun --gpus-per-task=1)")
    ("precision", bound(c.precision), "fp32, bf16 or auto. bf16: autocast of the forward pass (fp32 weights, gradients and all-reduce; with --lora the frozen base is held in bf16, with no fp32 master; --weights bf16 holds the trained weights in bf16 too, with fp32 masters), on cuda or on a CPU with native bf16 (avx512_bf16 or amx_bf16; refused elsewhere: emulated bf16 is slower than fp32). auto: bf16 on a CPU with native bf16 for the built-in models measured faster in it at equal accuracy (bench/train/bf16.sh; docs/performance.md), fp32 otherwise; the start line says which and why")
    ("weights", bound(c.weights), "fp32, or bf16: the trained weights held in bfloat16 (the forward computes in it throughout, no per-step cast of fp32 weights) and the optimizer steps float32 master copies of them, the update cast back each step (round to nearest even); gradients are averaged in float32 buckets, micro-batches add up there. Needs --precision bf16 (or auto choosing it) and --shard none. Checkpoints hold the float32 masters: a resume continues bit for bit. 6 bytes a trained value (2 for the weight, 4 for its master) as autocast's fp32 weights and their bf16 copies take")
    ("tf32", bound(c.tf32), "on or off: TF32 tensor cores for float32 matrix products and convolutions on GPUs that have them (Ampere on; 10 mantissa bits in the products, float32 sums: what PyTorch's torch.backends.cuda.matmul.allow_tf32 gives); no effect on a CPU")
    ("threads", bound(c.threads), kThreadsHelp)
    ("memory-format", bound(c.memory_format), "auto, contiguous or channels-last: the layout of 4-D weights and input batches; auto takes channels-last on CPU for the models measured faster in it (cnn-bn: 1.12x; cnn-small was slower)")
    ("max-pool", bound(c.max_pool), "own or libtorch: the 2x2 max pooling of cnn-small and cnn-bn on contiguous CPU tensors; own is slimtrain's loop, bit-identical to LibTorch's kernel and 3-4x faster than it on the test VM; libtorch compares against models that call torch::max_pool2d (TorchScript models always do)")
    ("data-mode", bound(c.data_mode), "auto, memory or stream")
    ("memory-budget-mb", bound(c.memory_budget_mb), "auto mode loads the shard into memory below this")
    ("memory-per-rank", bound(c.memory_per_rank_gb), "GB (10^9 bytes) one rank may hold: before any weight is loaded, the memory plan (weights, gradients, optimizer state and an activation estimate for this --shard, --precision, --optim and batch) is checked against it, and the run refuses to start (exit 2) when it does not fit, naming the smallest --shard that does. 0: measured, the GPU's free memory, or on a CPU this host's available memory (within its cgroup's limit, as under Slurm) shared among its ranks")
    ("augment-crop-padding", bound(c.augment_crop_padding), "augmentation: pad each training image by P black pixels and crop it back at a random offset (a random shift of up to P pixels; 0: off)")
    ("augment-flip", bound(c.augment_flip)->implicit_value(true, "true"), "augmentation: mirror each training image left-right with probability 1/2 (--augment-flip, or augment-flip = true in an INI file)")
    ("augment-rotate", bound(c.augment_rotate_deg), "augmentation: rotate each training image by a uniform angle in [-DEG, DEG] (bilinear, black corners; 0: off)")
    ("text-dim", bound(c.arch.text_dim), "text-bow and text-transformer: the token embedding width (even)")
    ("text-bigrams", bound(c.arch.text_bigrams), "text-bow: hashed bigram buckets beside the vocabulary, as fastText's -bucket (0: unigrams only)")
    ("text-depth", bound(c.arch.text_depth), "text-transformer: encoder blocks")
    ("text-heads", bound(c.arch.text_heads), "text-transformer: attention heads (divides --text-dim)")
    ("max-length", bound(c.max_length), "named inputs (layout 2): sequences longer than this are cut to it (0: never); a batch is padded to its longest sequence, rounded up to a multiple of 8")
    ("group-by-length", bound(c.group_by_length), "named inputs (layout 2): batch sequences of similar length together (sorted within windows of 64 batches, the batches in an order drawn from the seed and epoch), so little of a batch is padding; resumes stay bit-identical")
    ("augment-erase", bound(c.augment_erase), "augmentation: with probability P, black out a random rectangle of 2-33% of each training image (random erasing; 0: off). Augmentation draws from (seed, epoch, sample), runs on the prefetch thread, and never touches evaluation")
    ("bucket-mb", bound(bucket_mb), "gradient bucket size in MiB; 0: 4 on a CPU (measured: bench/train), 25 on a GPU (PyTorch DDP's bucket_cap_mb)")
    ("chunk-mb", bound(chunk_mb), "largest single all-reduce in MiB (bigger buckets are split); 0: at start-up an 8 MiB all-reduce is timed in 4 MiB and in 1 MiB pieces and the faster is kept (4 MiB suits shared memory, smaller pieces some TCP links; CPU only: NCCL takes a bucket in one call, pipelining it itself)")
    ("overlap", bound(c.overlap), "all-reduce gradients during backward: auto (on, unless several buckets would compete with backward for a CPU core), on, off")
    ("overlap-gather", bound(c.overlap_gather), "with --shard optimizer or gradients: all-gather the updated weights while the next forward runs, each layer of a built-in model waiting for its own (a TorchScript model waits for all before its forward); with --shard parameters: gather the next layer's weights while one computes (one more layer held): auto (on with NCCL on GPUs; off on CPU, where the communication thread competes with forward for the rank's core: docs/performance.md), on, off")
    ("shard", bound(c.shard), "none, optimizer, gradients or parameters (ZeRO stages 0, 1, 2, 3): with optimizer each rank keeps and updates only its 1/N shard of the optimizer state; with gradients also only its shard of the averaged gradient (buckets are reduce-scattered during backward); the updated weights are all-gathered after each step. With parameters a rank keeps only its shard of the weights too: the layers of the built-in models and of hf Qwen2 and Llama gather their weights just before they run, in forward and again in backward, and free them after, the next layer's gather issued while one computes; other models gather theirs whole for each step. Evaluations gather as training does; checkpoints are written from the shards. Checkpoints resume at any world size and any --shard")
    ("activation-checkpointing", bound(c.activation_checkpointing), "none, or layers: each transformer layer keeps only its input through forward and computes its activations again in backward, dropout's random numbers replayed so that the gradients equal those without; for the hf models, vit-tiny and text-transformer (Qwen2-VL's language model; not its vision tower). Less memory for about one more forward a step; the memory plan counts it. With --shard parameters a layer's weights are gathered for its recomputation as for its backward")
    ("lora", bound(lora), "none, or low-rank adapters (LoRA, as PEFT makes them) beside the linear layers of an hf model's body: r=16,alpha=32,dropout=0.05,targets=q_proj,k_proj,v_proj,o_proj (module names) or targets=all-linear (the default; alpha defaults to 2r). The base weights are frozen: only the adapters, the classification head and --lora-train's modules train, travel on the data plane and have optimizer state; export --hf writes PEFT's adapter format. For BERT, RoBERTa, XLM-R, DistilBERT, ViT, Qwen2, Llama and Qwen2-VL; not with --shard parameters yet")
    ("lora-train", bound(lora_train), "with --lora: modules trained in full beside the adapters, comma-separated (a name such as embed_tokens, or a path prefix such as model.norm; not a layer --lora targets, whose base PEFT keeps frozen); the head always trains")
    ("grad-compression", bound(c.grad_compression), "none, or bf16: gradients travel as bfloat16 (half the bytes, for slow links), summed in float32 at each reduction step and averaged in float32; as DDP's bf16_compress_hook")
    ("collective-timeout", bound(c.collective_timeout_s), "seconds a training collective may take before the job ends, plus size / floor bandwidth")
    ("floor-bandwidth", bound(c.floor_bandwidth_mbps), "MB/s the data plane's deadlines assume in the worst case (size / this is added to --collective-timeout); 0: a quarter of the all-reduce bandwidth measured at start-up, so a slow link gets longer deadlines and a fast fabric shorter ones")
    ("io-timeout", bound(c.io_timeout_s), "seconds an I/O phase (resume, waiting for a checkpoint write) may take, plus size / io floor bandwidth; ranks wait this long for rank 0's file system instead of --collective-timeout")
    ("io-floor-bandwidth", bound(c.io_floor_bandwidth_mbps), "MB/s of the file system assumed in the worst case when scaling I/O deadlines")
    ("eval-every", bound(c.eval_every), "evaluate every N steps (0: only at the end)")
    ("eval-split", po::value(&c.eval_split)->default_value(""), "split for periodic evaluation: train, val, test or none (default: val if present, else test; a file with only /train needs --eval-every 0)")
    ("final-split", po::value(&c.final_split)->default_value(""), "split of the final evaluation: train, val, test or none (default: test if present, else the --eval-split; skipped with a note when there is none)")
    ("eval-batch-size", bound(c.eval_batch_size), "evaluation batch per rank")
    ("eval-deadline", bound(c.eval_deadline_s), "seconds the evaluation reduction may wait for late ranks before the evaluation is skipped")
    ("eval-retries", bound(c.eval_retries), "retries with a halved batch before skipping")
    ("confusion-max-classes", bound(c.confusion_max_classes), kConfusionMaxClassesHelp)
    ("log-every", bound(c.log_every), "steps between progress lines and train events")
    ("straggler-threshold", bound(c.straggler_threshold), "each log window every rank's compute time (data+forward+backward+optimizer) goes to rank 0; it warns once, naming rank and host, when one rank is this fraction slower than the median (0.25: 25%) for --straggler-windows windows in a row; 0: never warn")
    ("straggler-windows", bound(c.straggler_windows), "consecutive log windows a rank must stay that slow before the warning")
    ("checkpoint-every", bound(c.checkpoint_every), "checkpoint every N steps (0: only at the end and on signals)")
    ("checkpoint-minutes", bound(c.checkpoint_minutes), "also checkpoint every M minutes (0: off)")
    ("keep-last", bound(c.keep_last), "checkpoints kept besides the best")
    ("best-metric", bound(c.best_metric), "accuracy, macro_f1 or loss: keeps the best evaluated checkpoint by it, and checkpoints each evaluation that sets a new best (when checkpoints are written during training). Unset: the most accurate of the checkpoints that fall on evaluation steps, with no checkpoints of their own")
    ("resume", bound(c.resume), "auto (newest valid checkpoint in --out), none, or a checkpoint path");
  // clang-format on
  cl.enable_config_file();
  cl.set_epilog(
      "example (the README's demo):\n"
      "  mpirun -np 2 slimtrain train --config jobs/fashion_demo.ini --data data/fashion-mnist.h5 "
      "--out runs/demo\n"
      "exit codes: 0 done, 1 runtime failure (a collective past its deadline ends the job), 2 bad\n"
      "option or input, 75 stopped by SIGUSR1/SIGTERM after a checkpoint (requeue; resume with "
      "--resume auto)");
  if (!cl.parse(args)) return false;

  c.arch.mlp_widths = parse_widths(widths);
  model::parse_model_option(c.model);  // ConfigError naming --model
  one_of<std::string>("--optimizer", c.optim.name, {"sgd", "adamw"});
  one_of<std::string>("--schedule", c.schedule.kind, {"constant", "cosine", "step"});
  one_of<std::string>("--device", c.device, {"cpu", "cuda"});
  one_of<std::string>("--precision", c.precision, {"fp32", "bf16", "auto"});
  one_of<std::string>("--tf32", c.tf32, {"on", "off"});
  one_of<std::string>("--weights", c.weights, {"fp32", "bf16"});
  if (c.weights == "bf16" && c.precision == "fp32")
    SLIMTRAIN_THROW(ConfigError,
                    "--weights bf16 needs --precision bf16 (or auto): the weights are "
                    "bfloat16 and the forward computes in it");
  one_of<std::string>("--memory-format", c.memory_format, {"auto", "contiguous", "channels-last"});
  one_of<std::string>("--max-pool", c.max_pool, {"own", "libtorch"});
  one_of<std::string>("--data-mode", c.data_mode, {"auto", "memory", "stream"});
  // true/false/1/0 are kept as spellings of on/off (older configs).
  if (c.overlap == "true" || c.overlap == "1") c.overlap = "on";
  if (c.overlap == "false" || c.overlap == "0") c.overlap = "off";
  one_of<std::string>("--overlap", c.overlap, {"auto", "on", "off"});
  one_of<std::string>("--overlap-gather", c.overlap_gather, {"auto", "on", "off"});
  one_of<std::string>("--grad-compression", c.grad_compression, {"none", "bf16"});
  one_of<std::string>("--shard", c.shard, {"none", "optimizer", "gradients", "parameters"});
  one_of<std::string>("--activation-checkpointing", c.activation_checkpointing, {"none", "layers"});
  if (c.weights == "bf16" && c.shard != "none")
    SLIMTRAIN_THROW(ConfigError, "--weights bf16 with --shard ", c.shard,
                    ": not built yet (--shard keeps the trained weights in one float32 buffer "
                    "that its optimizer shard is a view of); use --shard none");
  if (lora != "none") {
    if (c.model.rfind("hf:", 0) != 0)
      SLIMTRAIN_THROW(ConfigError, "--lora: for --model hf:DIR (", c.model,
                      " has no adapters yet)");
    if (c.shard == "parameters")
      SLIMTRAIN_THROW(ConfigError,
                      "--lora with --shard parameters: not built yet (the frozen "
                      "base would be sharded too); use --shard gradients");
    c.arch.lora = model::LoraOptions::parse(lora).canonical();
    std::istringstream names(lora_train);
    for (std::string name; std::getline(names, name, ',');)
      if (!name.empty()) c.arch.lora_train.push_back(name);
  } else if (!lora_train.empty()) {
    SLIMTRAIN_THROW(ConfigError,
                    "--lora-train: only with --lora (it names the modules trained "
                    "in full beside the adapters)");
  }
  if (!c.best_metric.empty())
    one_of<std::string>("--best-metric", c.best_metric, {"accuracy", "macro_f1", "loss"});
  require_range<std::int64_t>("--epochs", c.epochs, 1, 1000000);
  require_range<std::int64_t>("--max-steps", c.max_steps, 0, INT64_MAX);
  require_range<std::int64_t>("--batch-size", c.batch_size, 1, 1 << 20);
  require_range<std::int64_t>("--grad-accum", c.grad_accum, 1, 1 << 20);
  require_range<double>("--lr", c.optim.lr, 1e-12, 100.0);
  require_range<double>("--momentum", c.optim.momentum, 0.0, 0.999999);
  require_range<double>("--weight-decay", c.optim.weight_decay, 0.0, 10.0);
  require_range<std::int64_t>("--warmup-steps", c.schedule.warmup_steps, 0, INT64_MAX);
  require_range<double>("--min-lr-ratio", c.schedule.min_lr_ratio, 0.0, 1.0);
  require_range<std::int64_t>("--step-every", c.schedule.step_every, 1, INT64_MAX);
  require_range<double>("--step-gamma", c.schedule.step_gamma, 0.0, 1.0);
  require_range<double>("--clip-grad-norm", c.clip_grad_norm, 0.0, 1e9);
  require_range<int>("--max-nonfinite-steps", c.max_nonfinite_steps, 1, 1000000);
  require_range<int>("--max-failed-checkpoints", c.max_failed_checkpoints, 1, 1000000);
  require_range<double>("--label-smoothing", c.arch.label_smoothing, 0.0, 0.999);
  require_range<int>("--threads", c.threads, 0, 4096);
  require_range<std::int64_t>("--memory-budget-mb", c.memory_budget_mb, 0, INT64_MAX >> 20);
  require_range<double>("--memory-per-rank", c.memory_per_rank_gb, 0.0, 1e9);
  require_range<int>("--augment-crop-padding", c.augment_crop_padding, 0, 4096);
  require_range<double>("--augment-rotate", c.augment_rotate_deg, 0.0, 180.0);
  require_range<double>("--augment-erase", c.augment_erase, 0.0, 1.0);
  require_range<std::int64_t>("--max-length", c.max_length, 0, std::int64_t{1} << 30);
  if (bucket_mb != 0) require_range<double>("--bucket-mb", bucket_mb, 0.0009765625, 4096.0);
  if (chunk_mb != 0) require_range<double>("--chunk-mb", chunk_mb, 0.0009765625, 4096.0);
  require_range<double>("--collective-timeout", c.collective_timeout_s, 0.01, 86400.0);
  if (c.floor_bandwidth_mbps != 0)
    require_range<double>("--floor-bandwidth", c.floor_bandwidth_mbps, 0.001, 1e9);
  require_range<double>("--io-timeout", c.io_timeout_s, 0.01, 1e7);
  require_range<double>("--io-floor-bandwidth", c.io_floor_bandwidth_mbps, 0.001, 1e9);
  require_range<std::int64_t>("--eval-every", c.eval_every, 0, INT64_MAX);
  require_range<std::int64_t>("--eval-batch-size", c.eval_batch_size, 1, 1 << 20);
  require_range<double>("--eval-deadline", c.eval_deadline_s, 0.001, 86400.0);
  require_range<int>("--eval-retries", c.eval_retries, 0, 10);
  require_range<std::int64_t>("--confusion-max-classes", c.confusion_max_classes, 0,
                              eval::kMaxConfusionMaxClasses);
  require_range<std::int64_t>("--log-every", c.log_every, 1, INT64_MAX);
  require_range<double>("--straggler-threshold", c.straggler_threshold, 0.0, 1000.0);
  require_range<int>("--straggler-windows", c.straggler_windows, 1, 1000000);
  require_range<std::int64_t>("--checkpoint-every", c.checkpoint_every, 0, INT64_MAX);
  require_range<double>("--checkpoint-minutes", c.checkpoint_minutes, 0.0, 1e6);
  require_range<int>("--keep-last", c.keep_last, 1, 1000000);
  require_range<std::int64_t>("--vit-patch", c.arch.vit_patch, 1, 1024);
  require_range<std::int64_t>("--vit-dim", c.arch.vit_dim, 1, 65536);
  require_range<std::int64_t>("--vit-depth", c.arch.vit_depth, 1, 1024);
  require_range<std::int64_t>("--vit-heads", c.arch.vit_heads, 1, 1024);
  require_range<std::int64_t>("--cnn-width", c.arch.cnn_width, 1, 4096);
  require_range<std::int64_t>("--cnn-layers", c.arch.cnn_layers, model::kCnnLayersMin,
                              model::kCnnLayersMax);
  c.settings = cl.settings();
  c.bucket_bytes = static_cast<std::size_t>(bucket_mb * (1 << 20));
  c.chunk_bytes = static_cast<std::size_t>(chunk_mb * (1 << 20));
  return true;
}

}  // namespace slimtrain::cli
