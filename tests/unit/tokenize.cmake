# HuggingFace tokenizers on empty strings, which prep text never hands them; fixtures/ holds
# tokenizer.json files the tokenizers library wrote.
slimtrain_add_gtest(NAME unit_hf_tokenizer TIER unit TIMEOUT 60
  SOURCES test_hf_tokenizer.cpp
  LIBS slimtrain_tokenize)
target_compile_definitions(unit_hf_tokenizer PRIVATE SLIMTRAIN_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# Chat templates rendered as transformers renders them (jinja2): fixtures/chat_templates/ holds
# Qwen2, Qwen2.5, Qwen2-VL and Qwen2.5-VL templates and expected.json, transformers' renderings
# (fixtures/make_chat_templates.py writes it).
slimtrain_add_gtest(NAME unit_chat_template TIER unit TIMEOUT 60
  SOURCES test_chat_template.cpp
  LIBS slimtrain_tokenize nlohmann_json::nlohmann_json)
target_compile_definitions(unit_chat_template PRIVATE SLIMTRAIN_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
