slimtrain_add_gtest(NAME unit_metrics TIER unit TIMEOUT 60
  SOURCES test_metrics.cpp
  LIBS slimtrain_eval)
slimtrain_use_torch(unit_metrics)
