slimtrain_add_gtest(NAME mpi_comm TIER mpi NP 2 3 4 TIMEOUT 90 CASE_TIMEOUT 30
  SOURCES test_comm_collectives.cpp test_comm_control.cpp test_comm_blocks.cpp LIBS slimtrain_comm slimtrain_dataplane)
slimtrain_use_torch(mpi_comm)
