slimtrain_add_gtest(NAME unit_data TIER unit TIMEOUT 60
  SOURCES test_data_parsers.cpp test_data_shard.cpp
  LIBS slimtrain_dataio ZLIB::ZLIB)
