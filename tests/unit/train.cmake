slimtrain_add_gtest(NAME unit_optim TIER unit TIMEOUT 60
  SOURCES test_optim.cpp test_optimizers.cpp test_schedule.cpp test_overlap_choice.cpp
    test_precision_choice.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(unit_optim)
# SLIMTRAIN_INJECT parsing and arming (the e2e fault tests depend on when a plan fires).
slimtrain_add_gtest(NAME unit_train_fault_injection TIER unit TIMEOUT 30
  SOURCES test_train_fault_injection.cpp
  LIBS slimtrain_train)
# Stragglers named once from every rank's window times; SLIMTRAIN_INJECT action=slow.
slimtrain_add_gtest(NAME unit_stragglers TIER unit TIMEOUT 30
  SOURCES test_stragglers.cpp
  LIBS slimtrain_train)
# slimtrain report: reading run directories (a run still writing, a resume) and drawing charts.
slimtrain_add_gtest(NAME unit_report TIER unit TIMEOUT 30
  SOURCES test_report.cpp
  LIBS slimtrain_report)
# --shard: flat layout and padding, the N -> M reshard for N, M in 1..5, optimizer state by element.
slimtrain_add_gtest(NAME unit_sharding TIER unit TIMEOUT 60
  SOURCES test_sharding.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(unit_sharding)
# model::linear's gradient sink: what it is handed and what autograd gets back (grad_sink.hpp).
slimtrain_add_gtest(NAME unit_grad_sink TIER unit TIMEOUT 30
  SOURCES test_grad_sink.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(unit_grad_sink)
# The GPU step's step-ahead batch copy, ordered as the caching allocator needs (step_ahead_copy.hpp).
slimtrain_add_gtest(NAME unit_step_ahead_copy TIER unit TIMEOUT 30
  SOURCES test_step_ahead_copy.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(unit_step_ahead_copy)
# The memory plan: bytes a parameter costs per --shard mode, activations, what a refusal names.
slimtrain_add_gtest(NAME unit_memory_plan TIER unit TIMEOUT 30
  SOURCES test_memory_plan.cpp
  LIBS slimtrain_train)
slimtrain_use_torch(unit_memory_plan)
