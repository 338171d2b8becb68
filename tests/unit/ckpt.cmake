slimtrain_add_gtest(NAME unit_ckpt TIER unit TIMEOUT 120
  SOURCES test_ckpt_format.cpp test_ckpt_crash.cpp test_ckpt_manager.cpp test_ckpt_torch.cpp
  LIBS slimtrain_ckpt)
slimtrain_use_torch(unit_ckpt)
slimtrain_add_gtest(NAME unit_safetensors TIER unit TIMEOUT 60
  SOURCES test_safetensors.cpp test_safetensors_shards.cpp
  LIBS slimtrain_ckpt)
slimtrain_use_torch(unit_safetensors)
