#pragma once
/**
 * @brief What this CPU is and which instructions it has, from /proc/cpuinfo: the BLAS kernel
 * probe's candidates and cache key, and the bf16 check, read it from here.
 */
#include <set>
#include <string>

namespace slimtrain::runtime {

/** @brief The CPU as the kernel decisions are keyed: model name, vendor and flags. */
struct CpuInfo {
  std::string model;   ///< "model name", e.g. "AMD EPYC 9R45"; "" when unknown
  std::string vendor;  ///< "vendor_id", e.g. "AuthenticAMD"
  std::set<std::string> flags;
  bool has(const std::string& flag) const { return flags.count(flag) != 0; }
  /** @brief avx512_bf16 or amx_bf16: bf16 in hardware; elsewhere LibTorch emulates it. */
  bool native_bf16() const { return has("avx512_bf16") || has("amx_bf16"); }
  /** @brief AMX tiles for bf16: oneDNN's fastest bf16 matrix products and convolutions. */
  bool amx_bf16() const { return has("amx_bf16"); }
};

/** @brief Parses the first processor's block of a /proc/cpuinfo text (all cores list the same). */
CpuInfo parse_cpu_info(const std::string& text);

/** @brief This machine's CPU, read once. */
const CpuInfo& cpu_info();

}  // namespace slimtrain::runtime
