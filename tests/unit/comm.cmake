slimtrain_add_gtest(NAME unit_comm TIER unit TIMEOUT 60
  SOURCES test_comm_units.cpp LIBS slimtrain_comm slimtrain_device)

# World size 1 without mpirun: the test constructs the Runtime itself. Also the BLAS LibTorch calls
# (runtime/blas.hpp), which needs LibTorch loaded.
slimtrain_add_gtest(NAME unit_comm_single_rank TIER unit TIMEOUT 60
  SOURCES test_comm_single.cpp test_runtime_blas.cpp LIBS slimtrain_dataplane slimtrain_device
       slimtrain_train)
slimtrain_use_torch(unit_comm_single_rank)
# The NCCL data plane's watchdog on fakes: a caller's lock held, an abort that hangs (op_watch.hpp).
slimtrain_add_gtest(NAME unit_op_watch TIER unit TIMEOUT 60
  SOURCES test_op_watch.cpp LIBS slimtrain_comm)
