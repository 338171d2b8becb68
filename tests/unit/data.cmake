slimtrain_add_gtest(NAME unit_data TIER unit TIMEOUT 60
  SOURCES test_data_parsers.cpp test_data_shard.cpp test_data_augment.cpp test_text_encoding.cpp
  LIBS slimtrain_dataio ZLIB::ZLIB)

# Reads files that /usr/bin/python3's h5py writes at test time (skips without h5py), and the
# layout probe's child process.
slimtrain_add_gtest(NAME unit_data_interop TIER unit TIMEOUT 60
  SOURCES test_data_interop.cpp test_data_probe.cpp
  LIBS slimtrain_data)
slimtrain_use_torch(unit_data_interop)
target_compile_definitions(unit_data_interop PRIVATE SLIMTRAIN_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# Layout 2 (named, ragged inputs) through the loaders, on a file tests/e2e/named_inputs.py writes.
slimtrain_add_gtest(NAME unit_named_inputs TIER unit TIMEOUT 120
  SOURCES test_named_split.cpp test_batch_normaliser.cpp
  LIBS slimtrain_data)
slimtrain_use_torch(unit_named_inputs)
target_compile_definitions(unit_named_inputs PRIVATE SLIMTRAIN_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
