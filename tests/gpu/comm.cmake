slimtrain_add_gtest(NAME gpu_comm TIER gpu TIMEOUT 60 SOURCES test_comm_nccl.cpp
  LIBS slimtrain_dataplane slimtrain_device slimtrain_train)
slimtrain_use_torch(gpu_comm)
# The step-ahead batch copy with the step's stream kept busy (issue 54's race): needs a GPU to fail.
slimtrain_add_gtest(NAME gpu_step_ahead_copy TIER gpu TIMEOUT 60 SOURCES test_step_ahead_copy.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(gpu_step_ahead_copy)
if(SLIMTRAIN_TORCH_CUDA)
  target_compile_definitions(gpu_step_ahead_copy PRIVATE SLIMTRAIN_TORCH_CUDA=1)
  target_compile_definitions(gpu_comm PRIVATE SLIMTRAIN_TORCH_CUDA=1)
endif()
