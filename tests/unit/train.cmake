slimtrain_add_gtest(NAME unit_optim TIER unit TIMEOUT 60
  SOURCES test_optim.cpp test_schedule.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(unit_optim)
