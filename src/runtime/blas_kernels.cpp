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

std::string figure(double gflops) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", gflops);
  return text;
}

std::string name_of(const KernelRate& rate) {
  return rate.kernels.empty() ? "?" : rate.kernels;
}

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

const KernelRate* KernelChoice::own() const {
  return rates.empty() ? nullptr : &rates.front();
}

const KernelRate* KernelChoice::chosen() const {
  if (rates.empty()) return nullptr;
  for (const KernelRate& r : rates)
    if (!kernels.empty() && r.requested == kernels) return &r;
  return own();
}

const KernelRate* KernelChoice::fastest() const {
  const KernelRate* best = nullptr;
  for (const KernelRate& r : rates)
    if (best == nullptr || r.gflops > best->gflops) best = &r;
  return best;
}

const KernelRate* KernelChoice::rate_of(const std::string& name) const {
  for (const KernelRate& r : rates)
    if (r.kernels == name) return &r;
  return nullptr;
}

std::string KernelChoice::slower_than_best_warning() const {
  const KernelRate* mine = rate_of(yours);
  const KernelRate* best = fastest();
  if (yours.empty() || mine == nullptr || best == nullptr ||
      best->gflops < mine->gflops * kKernelMargin)
    return "";
  char times[16];
  std::snprintf(times, sizeof times, "%.2f", best->gflops / mine->gflops);
  return "OPENBLAS_CORETYPE in the environment loads OpenBLAS's " + name_of(*mine) + " kernels, " +
         figure(mine->gflops) + " GFLOP/s where " + name_of(*best) + "'s run " +
         figure(best->gflops) + " on this CPU (" + times +
         "x; 1024-cubed sgemm on one core): matrix products run that much slower. Kept, as you "
         "set it; unset OPENBLAS_CORETYPE (or set it to " +
         name_of(*best) + ") to run the fastest";
}

std::string KernelChoice::describe() const {
  if (!yours.empty()) {
    const KernelRate* mine = rate_of(yours);
    if (mine == nullptr)
      return "; OPENBLAS_CORETYPE set by you (" + yours + "): kernels not compared (" +
             (rates.empty() ? how : "no figure for " + yours) + ")";
    std::string out =
        "; OPENBLAS_CORETYPE set by you, kept: " + yours + " " + figure(mine->gflops) + " GFLOP/s";
    const KernelRate* best = fastest();
    if (best != mine && best->gflops >= mine->gflops * kKernelMargin)
      out += ", " + name_of(*best) + " " + figure(best->gflops) + " on this CPU";
    else
      out += ", no other set " + std::to_string(static_cast<int>((kKernelMargin - 1) * 100 + 0.5)) +
             "% faster";
    return out + "; 1024-cubed sgemm on one core, " + how;
  }
  if (rates.empty()) return "; kernels not measured (" + how + "): OpenBLAS's own choice kept";
  std::string others;
  for (const KernelRate& r : rates) {
    if (&r == chosen() || &r == own()) continue;
    others += (others.empty() ? "" : ", ") + name_of(r) + " " + figure(r.gflops);
  }
  std::string out;
  if (chosen() != own()) {
    out = "; kernels chosen by measurement: " + name_of(*chosen()) + " " +
          figure(chosen()->gflops) + " GFLOP/s against OpenBLAS's own " + name_of(*own()) + " " +
          figure(own()->gflops);
  } else {
    out = "; OpenBLAS's own kernels kept by measurement: " + name_of(*own()) + " " +
          figure(own()->gflops) + " GFLOP/s, no other " +
          std::to_string(static_cast<int>((kKernelMargin - 1) * 100 + 0.5)) + "% faster";
  }
  if (!others.empty()) out += " (also measured: " + others + ")";
  return out + "; 1024-cubed sgemm on one core, " + how;
}

std::string KernelChoice::serialise() const {
  std::ostringstream out;
  out << "kernels " << (kernels.empty() ? "-" : kernels) << "\n";
  for (const KernelRate& r : rates)
    out << "rate " << (r.requested.empty() ? "-" : r.requested) << " "
        << (r.kernels.empty() ? "?" : r.kernels) << " " << figure(r.gflops) << "\n";
  if (!yours.empty()) out << "yours " << yours << "\n";
  if (!how.empty()) out << "how " << how << "\n";
  return out.str();
}

KernelChoice KernelChoice::parse(const std::string& text) {
  KernelChoice choice;
  std::istringstream lines(text);
  std::string line;
  bool ok = true;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string tag;
    words >> tag;
    if (tag == "kernels") {
      words >> choice.kernels;
      if (choice.kernels == "-") choice.kernels.clear();
    } else if (tag == "rate") {
      KernelRate r;
      ok = ok && static_cast<bool>(words >> r.requested >> r.kernels >> r.gflops);
      if (r.requested == "-") r.requested.clear();
      choice.rates.push_back(r);
    } else if (tag == "yours") {
      words >> choice.yours;
    } else if (tag == "how") {
      std::getline(words >> std::ws, choice.how);
    }
  }
  // The own choice comes first and the chosen set is one of the rates: else no figure is trusted.
  if (!choice.rates.empty()) ok = ok && choice.rates.front().requested.empty();
  if (!choice.kernels.empty()) ok = ok && choice.chosen() != choice.own();
  if (!ok) {
    choice.rates.clear();
    choice.kernels.clear();
  }
  return choice;
}

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

std::string fastest_kernels(const std::vector<KernelRate>& rates) {
  if (rates.empty()) return "";
  const KernelRate* best = &rates.front();
  for (const KernelRate& r : rates)
    if (r.gflops > best->gflops) best = &r;
  if (best == &rates.front() || best->kernels == rates.front().kernels) return "";
  return best->gflops >= rates.front().gflops * kKernelMargin ? best->requested : "";
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
