# Evaluation at np 1-4 (97, 61 and 2 test samples: uneven and empty shares) equals one process
# evaluating the whole split; the bytes an evaluation sends; skip and retry agreed everywhere.
slimtrain_add_gtest(NAME mpi_eval TIER mpi NP 1 2 3 4 TIMEOUT 90 CASE_TIMEOUT 40
  SOURCES test_eval_distributed.cpp
  LIBS slimtrain_eval slimtrain_prep)
slimtrain_use_torch(mpi_eval)
# Replicas bit-identical after N steps of bucketed gradient sync, overlap on and off.
slimtrain_add_gtest(NAME mpi_train_replicas TIER mpi NP 2 3 4 TIMEOUT 90 CASE_TIMEOUT 40
  SOURCES test_train_replicas.cpp replica_runs.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(mpi_train_replicas)
# The per-step control decision: stop, timed checkpoint and loss in one reduction; a desync named
# (ranks on each side, first diverging operation) before the mismatched operation runs.
slimtrain_add_gtest(NAME mpi_train_step_control TIER mpi NP 2 3 4 TIMEOUT 60 CASE_TIMEOUT 20
  SOURCES test_train_step_control.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(mpi_train_step_control)
# TorchScript modules (written by python3-torch in the test) trained data-parallel: replicas
# bit-identical, frozen parameters untouched, BatchNorm statistics identical after the broadcast.
slimtrain_add_gtest(NAME mpi_train_torchscript TIER mpi NP 2 3 4 TIMEOUT 120 CASE_TIMEOUT 60
  SOURCES test_train_torchscript.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(mpi_train_torchscript)
target_compile_definitions(mpi_train_torchscript PRIVATE
  SLIMTRAIN_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# --weights bf16 (np 2: a sum of two is the same in any order, so the average is exact): float32
# averages as the masters' gradients, micro-batches added in float32, the
# weights the masters' rounding after each step; checkpoints and resumes through the masters.
slimtrain_add_gtest(NAME mpi_master_weights TIER mpi NP 2 TIMEOUT 60 CASE_TIMEOUT 20
  SOURCES test_master_weights.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(mpi_master_weights)
