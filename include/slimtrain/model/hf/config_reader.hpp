#pragma once
/**
 * @brief Reading a config.json field by field, as each architecture's config struct does: sizes
 * (positive integers), numbers and flags with transformers' defaults, strings from a list, and
 * fields that would change the computation refused by name. Every error is a ConfigError naming
 * the file and the key. Free of LibTorch.
 */
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

namespace slimtrain::model::hf {

class ConfigReader {
 public:
  /** @brief Over `j` (a JSON object, else ConfigError), `where` naming it ("DIR/config.json"). */
  ConfigReader(const nlohmann::json& j, std::string where);

  const nlohmann::json& json() const { return j_; }
  const std::string& where() const { return where_; }
  bool has(const char* key) const { return j_.contains(key) && !j_[key].is_null(); }

  /** @brief A positive integer up to 2^24; ConfigError when missing or not one. */
  std::int64_t size(const char* key) const;
  /** @brief size(key), or `fallback` when the key is missing or null. */
  std::int64_t size_or(const char* key, std::int64_t fallback) const;
  /** @brief Any integer, or `fallback` when missing, null or not an integer (pad_token_id). */
  std::int64_t integer_or(const char* key, std::int64_t fallback) const;
  /** @brief A number, or `fallback` when missing or null; ConfigError when not a number. */
  double number_or(const char* key, double fallback) const;
  /** @brief A probability in [0, 1), or `fallback` when missing. */
  double probability_or(const char* key, double fallback) const;
  /** @brief A boolean, or `fallback` when missing or null; ConfigError when not one. */
  bool flag_or(const char* key, bool fallback) const;
  /** @brief A string, or `fallback` when missing or null; ConfigError when not one. */
  std::string text_or(const char* key, const std::string& fallback) const;
  /**
   * @brief The activation `key` names (`fallback` when missing): one of gelu, gelu_new,
   * gelu_pytorch_tanh, relu, silu, swish, quick_gelu; ConfigError naming the key otherwise.
   */
  std::string activation_or(const char* key, const std::string& fallback) const;
  /** @brief ConfigError "`key` <value> is not implemented (<why>)" when `refused` holds. */
  void refuse(bool refused, const char* key, const std::string& why) const;
  /** @brief A key under another name in the same object, as a reader of that object. */
  ConfigReader child(const char* key) const;
  /** @brief The labels the checkpoint's head has: id2label's size, else num_labels, else 2. */
  std::int64_t num_labels() const;

 private:
  nlohmann::json j_;
  std::string where_;
};

/** @brief x with the activation `name` (as ConfigReader::activation_or accepts). */
std::string activation_names();

}  // namespace slimtrain::model::hf
