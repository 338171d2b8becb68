# Faults injected into 2-rank training jobs: late eval rank -> eval_skipped everywhere, training
# and checkpoints go on; retry recovers a one-off delay; a hung rank ends the job within the
# collective deadline naming it (also one hung in eval); a dead rank ends it promptly (~40 s).
slimtrain_add_e2e(NAME e2e_train_faults COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_faults.sh
                  TIMEOUT 180 LABELS train)
# Bad train/eval options exit 2 naming them with no run directory left; slimtrain eval of the
# final checkpoint at np 1, 2, 3 equals the trainer's final test evaluation (about 30 s).
slimtrain_add_e2e(NAME e2e_train_cli_eval COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_cli_eval.sh
                  TIMEOUT 180 LABELS train)
# Two planes at np 2 and 4: an injected desync ends the job within the step naming ranks and
# operations; a DataError on rank 1 ends it in seconds with that rank's message; a rank hung in
# evaluation is named with what it is doing; a slow checkpoint write waits under the I/O deadline.
slimtrain_add_e2e(NAME e2e_train_planes COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_planes.sh
                  TIMEOUT 300 LABELS train)
# A one-bucket model's step issues exactly 2 collectives (its bucket and the control reduction),
# counted from outside with a PMPI interposer, logging every step with --checkpoint-minutes on,
# plus one all-gather per log window (every rank's times for stragglers).
# The thread rule at 1, 2 and 4 ranks: no rank runs more busy threads than its share of the
# cores (read from /proc/PID/task), and --threads beyond the share is warned of and seen.
slimtrain_add_e2e(NAME e2e_train_threads COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_threads.sh
                  TIMEOUT 180 LABELS train)
# It reads scheduling states: other tests beside it would keep its threads waiting for a core
# (runnable) and blur the count, so it runs alone.
set_tests_properties(e2e_train_threads PROPERTIES RUN_SERIAL TRUE)
# CPU speed settings checked for effect: the BLAS named at start-up, --memory-format auto per
# model, a channels-last cnn-bn resumed byte-identical, --precision bf16 on a native-bf16 CPU.
# OpenBLAS's kernels chosen by measurement, cached, replaced when OpenBLAS's own choice is slow,
# and left alone when the user set OPENBLAS_CORETYPE (about 15 s).
slimtrain_add_e2e(NAME e2e_blas_kernels COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/blas_kernels.sh
                  TIMEOUT 120 LABELS train)
slimtrain_add_e2e(NAME e2e_train_cpu_speed COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_cpu_speed.sh
                  TIMEOUT 180 LABELS train torch)
slimtrain_add_e2e(NAME e2e_train_collectives COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/train_collectives.sh
                  TIMEOUT 120 LABELS train ENV MPI_COUNT_LIB=$<TARGET_FILE:slimtrain_mpi_count>)
# Your own model: TorchScript modules written by python3-torch, trained at np 2 behind the slim
# boundary, exported, resumed, and checked against a plain PyTorch loop.
slimtrain_add_e2e(NAME e2e_torchscript COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/torchscript.sh
                  TIMEOUT 300 LABELS train torch)
# --grad-accum: 16 x 4 micro-batches against batch 64 within 1e-5 after 100 steps at np 2, the
# bucket hook path bit-identical, kill -9 + resume bit-identical, bad values exit 2 (about 20 s).
slimtrain_add_e2e(NAME e2e_grad_accum COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/grad_accum.sh
                  TIMEOUT 180 LABELS train torch)
# A diverging run: a NaN loss on one rank skips that step's update everywhere; --lr 50 ends the
# job with exit 1 after --max-nonfinite-steps skipped steps in a row, no checkpoint non-finite.
slimtrain_add_e2e(NAME e2e_diverge COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/diverge.sh
                  TIMEOUT 180 LABELS train torch)
# --shard optimizer|gradients: bit-identical to none at np 2, within 1e-6 at np 4; checkpoints
# reshard on resume (np 4 -> 2 -> 3 -> 1), kill -9 mid sharded write, inspect, export, eval.
slimtrain_add_e2e(NAME e2e_shard COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/shard.sh
                  TIMEOUT 420 LABELS train torch)
# --shard parameters (ZeRO-3) against --shard gradients: bit-identical at np 2 (mlp, vit-tiny,
# evaluations, checkpoints, --grad-accum, --clip-grad-norm), within 1e-6 at np 4 and for a
# TorchScript model; resumes across world sizes and modes; a dead rank ends the job.
slimtrain_add_e2e(NAME e2e_shard_parameters COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/shard_parameters.sh
                  TIMEOUT 420 LABELS train torch)
# A full disk under the checkpoint write: a warning and a retry at the next interval, the job ends
# only at --max-failed-checkpoints failures in a row or when the final checkpoint cannot land.
slimtrain_add_e2e(NAME e2e_disk_full COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/disk_full.sh
                  TIMEOUT 240 LABELS train)
# Layout 2, the seeds' shape: images and ragged token ids by name into a TorchScript model at np
# 1, 2, 3; --group-by-length resumes bit-identically; malformed files and mismatched models exit 2.
slimtrain_add_e2e(NAME e2e_named_inputs COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/named_inputs.sh
                  TIMEOUT 360 LABELS train torch)
# The GPU step on a CPU (SLIMTRAIN_TEST_DEVICE_STEP=1): fused optimizers and the non-finite vote
# on the device against the host's step, NaN and divergence one step late at most, AdamW's counts
# across a resume (about 30 s; LibTorch 2.4 on: the 2.x build runs it).
slimtrain_add_e2e(NAME e2e_device_step COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/device_step.sh
                  TIMEOUT 240 LABELS train torch)
set_tests_properties(e2e_device_step PROPERTIES PROCESSORS 2)
