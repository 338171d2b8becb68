#include "slimtrain/runtime/blas_kernels.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "slimtrain/core/clock.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/core/file_io.hpp"

namespace slimtrain::runtime {
namespace {

constexpr double kProbeTimeoutS = 30;  // one child: a library load and nine sgemms
constexpr const char* kChoiceVariable = "SLIMTRAIN_OPENBLAS_CHOICE";

// FNV-1a: a stable name for the cache file (std::hash may differ between library builds).
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Everything that changes which kernels win: the CPU (model, vendor, flags) and the OpenBLAS
// build (its configuration string carries the version, and the file).
std::string cache_key(const BlasInfo& blas) {
  const CpuInfo& cpu = cpu_info();
  // The configuration string names the kernels loaded ("... USE_OPENMP Haswell MAX_THREADS=64"),
  // which a user's OPENBLAS_CORETYPE changes: the build is the rest of it.
  std::string build = blas.detail;
  if (!blas.kernels.empty())
    for (std::size_t at; (at = build.find(blas.kernels)) != std::string::npos;)
      build.erase(at, blas.kernels.size());
  std::string flags;
  for (const std::string& f : cpu.flags) flags += f + " ";
  const char* test_own = std::getenv("SLIMTRAIN_TEST_OPENBLAS_OWN");  // kernel_probe.cpp
  if (test_own != nullptr) flags += std::string("test-own=") + test_own;
  char hex[17];
  std::snprintf(
      hex, sizeof hex, "%016" PRIx64,
      fnv1a(cpu.model + "\n" + cpu.vendor + "\n" + flags + "\n" + build + "\n" + blas.library));
  return hex;
}

// The cached decision for `key`, if the file holds one for it.
bool read_cached(const std::string& file, const std::string& key, KernelChoice& out) {
  std::ifstream in(file);
  std::string first;
  if (!in || !std::getline(in, first) || first != "key " + key) return false;
  std::ostringstream rest;
  rest << in.rdbuf();
  out = KernelChoice::parse(rest.str());
  return !out.rates.empty();
}

// Written whole under another name and renamed (core/file_io), so a reader never sees half a
// decision; false when the directory cannot take it.
bool write_cached(const std::string& file, const std::string& key, const KernelChoice& choice) {
  try {
    files::write_file_atomically(file, true, "SLIMTRAIN_CACHE_DIR", [&](const std::string& tmp) {
      std::ofstream out(tmp);
      out << "key " << key << "\n" << choice.serialise();
      if (!out.flush()) SLIMTRAIN_THROW(Error, "cannot write ", tmp);
    });
    return true;
  } catch (const Error&) {
    return false;
  }
}

KernelChoice measure_all(std::string& why) {
  KernelChoice choice;
  KernelRate rate;
  if (!measure_kernels("", kProbeTimeoutS, rate, why)) return choice;
  choice.rates.push_back(rate);
  for (const std::string& name : candidate_kernels()) {
    std::string failed;
    if (!measure_kernels(name, kProbeTimeoutS, rate, failed)) continue;  // others may still do
    bool seen = false;  // a name OpenBLAS rejects loads a set measured already
    for (const KernelRate& r : choice.rates) seen = seen || r.kernels == rate.kernels;
    if (!seen) choice.rates.push_back(rate);
  }
  // A second round in the same order, each set keeping its better figure: a set timed while
  // another process held the core measured half its rate (CI: Haswell 52.4 GFLOP/s, then 103.8
  // on the same machine), and a round apart the two sets rarely share the same bad moment.
  for (KernelRate& r : choice.rates) {
    std::string failed;
    if (measure_kernels(r.requested, kProbeTimeoutS, rate, failed) && rate.kernels == r.kernels)
      r.gflops = std::max(r.gflops, rate.gflops);
  }
  choice.kernels = fastest_kernels(choice.rates);
  return choice;
}

}  // namespace

std::vector<std::string> candidate_kernels(const CpuInfo& cpu) {
  std::vector<std::string> names;
  const bool avx2 = cpu.has("avx2") && cpu.has("fma");
  if (cpu.has("avx") && !avx2) names.push_back("Sandybridge");  // never ahead of Haswell's
  if (avx2) names.push_back("Haswell");
  if (avx2 && cpu.vendor == "AuthenticAMD") names.push_back("Zen");
  const bool avx512 = cpu.has("avx512f") && cpu.has("avx512bw") && cpu.has("avx512dq") &&
                      cpu.has("avx512vl") && cpu.has("avx512cd");
  if (avx512) names.push_back("SkylakeX");
  if (avx512 && cpu.has("avx512_bf16")) names.push_back("Cooperlake");
  return names;
}

std::string kernel_cache_dir() {
  if (const char* dir = std::getenv("SLIMTRAIN_CACHE_DIR"); dir != nullptr && *dir != '\0')
    return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return std::string(xdg) + "/slimtrain";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return std::string(home) + "/.cache/slimtrain";
  return "";
}

KernelChoice choose_openblas_kernels(const BlasInfo& blas, const std::string& cache_dir,
                                     double lock_wait_s) {
  const std::string key = cache_key(blas);
  const std::string file = cache_dir + "/openblas-kernels-" + key + ".txt";
  KernelChoice choice;
  if (!cache_dir.empty() && read_cached(file, key, choice)) {
    choice.how = "cached in " + file;
    return choice;
  }
  std::string why;
  bool usable = !cache_dir.empty();
  try {
    if (usable) files::make_directories(cache_dir);
  } catch (const Error&) {
    usable = false;
  }
  if (!usable || access(cache_dir.c_str(), W_OK) != 0) {
    // Nowhere to agree on a decision: each rank measuring beside the others would time a busy
    // core, so none does.
    choice.how = "no cache directory (" + (cache_dir.empty() ? "HOME unset" : cache_dir) +
                 " not writable; set SLIMTRAIN_CACHE_DIR)";
    return choice;
  }
  // One rank per node measures (whichever takes the lock first); the others wait for its file.
  const std::string lock_path = cache_dir + "/openblas-kernels.lock";
  const int lock = open(lock_path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock < 0) {
    choice.how = "cannot open " + lock_path + ": " + std::strerror(errno);
    return choice;
  }
  const auto start = Clock::now();
  while (flock(lock, LOCK_EX | LOCK_NB) != 0) {
    if (seconds_since(start) > lock_wait_s) {
      close(lock);
      choice.how = "another process held " + lock_path + " for " +
                   std::to_string(static_cast<int>(lock_wait_s)) + " s";
      return choice;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (read_cached(file, key, choice)) {  // measured by the rank that held the lock
    choice.how = "cached in " + file;
  } else {
    choice = measure_all(why);
    if (choice.rates.empty()) {
      choice.how = why;
    } else {
      choice.how = write_cached(file, key, choice) ? "measured now, cached in " + file
                                                   : "measured now (could not write " + file + ")";
    }
  }
  flock(lock, LOCK_UN);
  close(lock);
  return choice;
}

void reexec_for_openblas_kernels(char** argv) {
  if (std::getenv(kChoiceVariable) != nullptr) return;  // decided already: this is the re-exec
  if (is_kernel_probe_child()) return;                  // a probe measures what it was given
  const BlasInfo blas = detect_blas();
  if (blas.kind != BlasInfo::Kind::openblas) return;
  KernelChoice choice = choose_openblas_kernels(blas, kernel_cache_dir());
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) {
    // Left alone (it may pin results to one kernel set on purpose); the figures only inform.
    choice.kernels.clear();
    choice.yours = blas.kernels.empty() ? "?" : blas.kernels;
  }
  setenv(kChoiceVariable, choice.serialise().c_str(), 1);
  if (choice.kernels.empty()) return;
  // The program's own path, not /proc/self/exe: ps and top would show the process as "exe".
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = '\0';
    setenv("OPENBLAS_CORETYPE", choice.kernels.c_str(), 1);
    execv(self, argv);
    unsetenv("OPENBLAS_CORETYPE");
  }
  // No exec: carry on with OpenBLAS's own kernels, and say so on the start line.
  choice.kernels.clear();
  choice.how += "; could not run again with the chosen kernels (no /proc/self/exe or exec failed)";
  setenv(kChoiceVariable, choice.serialise().c_str(), 1);
}

KernelChoice current_kernel_choice() {
  const char* text = std::getenv(kChoiceVariable);
  return text == nullptr ? KernelChoice{} : KernelChoice::parse(text);
}

std::string openblas_kernels_note() {
  if (std::getenv(kChoiceVariable) == nullptr) return "";
  return current_kernel_choice().describe();
}

}  // namespace slimtrain::runtime
