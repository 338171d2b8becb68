# HuggingFace tokenizers on empty strings, which prep text never hands them; fixtures/ holds
# tokenizer.json files the tokenizers library wrote.
slimtrain_add_gtest(NAME unit_hf_tokenizer TIER unit TIMEOUT 60
  SOURCES test_hf_tokenizer.cpp
  LIBS slimtrain_tokenize)
target_compile_definitions(unit_hf_tokenizer PRIVATE SLIMTRAIN_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
