slimtrain_add_gtest(NAME gpu_comm TIER gpu TIMEOUT 60 SOURCES test_comm_nccl.cpp
  LIBS slimtrain_dataplane slimtrain_device slimtrain_train)
slimtrain_use_torch(gpu_comm)
