slimtrain_add_gtest(NAME unit_model TIER unit TIMEOUT 90
  SOURCES test_model_classifier.cpp test_model_recompute.cpp test_model_lora.cpp
  LIBS slimtrain_model)
slimtrain_use_torch(unit_model)

slimtrain_add_gtest(NAME unit_max_pool TIER unit TIMEOUT 60
  SOURCES test_model_max_pool.cpp
  LIBS slimtrain_model)
slimtrain_use_torch(unit_max_pool)

slimtrain_add_gtest(NAME unit_attention TIER unit TIMEOUT 60
  SOURCES test_attention.cpp
  LIBS slimtrain_model)
slimtrain_use_torch(unit_attention)

# The HuggingFace architectures' registry: configs parsed once into each one's struct (hf/).
slimtrain_add_gtest(NAME unit_hf_registry TIER unit TIMEOUT 60
  SOURCES test_hf_registry.cpp
  LIBS slimtrain_model)
slimtrain_use_torch(unit_hf_registry)
