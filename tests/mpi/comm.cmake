slimtrain_add_gtest(NAME mpi_comm TIER mpi NP 2 3 4 TIMEOUT 90 CASE_TIMEOUT 30
  SOURCES test_comm_collectives.cpp LIBS slimtrain_comm)
