slimtrain_add_gtest(NAME unit_model TIER unit TIMEOUT 90
  SOURCES test_model_classifier.cpp
  LIBS slimtrain_model)
slimtrain_use_torch(unit_model)
