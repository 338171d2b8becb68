# np 3 does not divide the sample counts the tests use: uneven shares are the point.
slimtrain_add_gtest(NAME mpi_data TIER mpi NP 1 2 3 4 TIMEOUT 90 CASE_TIMEOUT 40
  SOURCES test_data_loader.cpp
  LIBS slimtrain_data slimtrain_prep slimtrain_train)
slimtrain_use_torch(mpi_data)
