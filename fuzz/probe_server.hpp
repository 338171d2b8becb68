#pragma once
// fuzz_hdf5's form of the binary's layout probe (data/layout_probe.hpp), at fuzzing speed: each
// input is read first in a child process, which HDF5 may crash or stall. The binary forks one
// child per file; a fork per input costs about 7 ms here (the page tables and copy-on-write
// faults of an ASan process: 142 executions/s), so this keeps one child alive and hands it each
// input through a shared mapping; the child runs the target's reads (`work`) and copies its
// coverage counters back through the same mapping, so the parent, which libFuzzer watches, never
// calls HDF5 (a second read there met HDF5 failures that the child's history had hidden, and cost
// as much again). When the child dies or passes the deadline, its sanitizer report (for a hang:
// the stack where SIGSEGV stopped it) is read: a first frame inside HDF5 is an input the binary
// refuses with exit 2, so it is skipped; a crash in slimtrain's code is a finding, and the process
// aborts with the report; a stall there is read again with kPatience times the time first (a large
// input read slowly is not a hang), and is a finding only if it stalls again; a report without a
// stack (ASan failing inside its own report) is said and skipped. The child is forked again after
// each death and every kInputsPerChild inputs, as HDF5's error paths leave state behind from one
// input to the next.
#include <fcntl.h>
#include <poll.h>
#include <sanitizer/common_interface_defs.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "coverage_counters.hpp"
#include "slimtrain/core/error.hpp"
#include "slimtrain/data/hdf5_file.hpp"
#include "slimtrain/data/layout_probe.hpp"

namespace fuzz {

class ProbeServer {
 public:
  ProbeServer(std::string name, std::size_t max_len, int timeout_ms,
              void (*work)(const std::string&))
      : name_(std::move(name)), max_len_(max_len), timeout_ms_(timeout_ms), work_(work) {
    void* p = mmap(nullptr, sizeof(std::uint64_t) + max_len_ + coverage_counters_size(),
                   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    shared_ = static_cast<std::uint8_t*>(p);
  }
  ~ProbeServer() {
    stop();
    if (log_ >= 0) close(log_);
    std::fprintf(
        stderr,
        "fuzz_hdf5: %llu inputs; skipped as HDF5's own failures: %llu crashes, %llu "
        "stalls; kept without a stack: %llu; slow in slimtrain's code, read again with more "
        "time: %llu\n",
        static_cast<unsigned long long>(inputs_), static_cast<unsigned long long>(crashes_),
        static_cast<unsigned long long>(stalls_), static_cast<unsigned long long>(unjudged_),
        static_cast<unsigned long long>(slow_));
  }

  /**
   * @brief Reads the input in the child. This process's coverage counters are then the child's
   * for it when the child came through (or refused it with an Error), and zero otherwise.
   */
  void run(const std::uint8_t* data, std::size_t size) {
    if (judge(data, size))
      std::memcpy(coverage_counters(), counters(), coverage_counters_size());
    else
      std::memset(coverage_counters(), 0, coverage_counters_size());
  }

 private:
  std::uint8_t* counters() const { return shared_ + sizeof(std::uint64_t) + max_len_; }

  bool judge(const std::uint8_t* data, std::size_t size) {
    ++inputs_;
    if (size > max_len_) return false;
    Verdict verdict = attempt(data, size, timeout_ms_);
    if (verdict == Verdict::slow_in_slimtrain) {
      ++slow_;
      verdict = attempt(data, size, kPatience * timeout_ms_);
      if (verdict == Verdict::slow_in_slimtrain) {
        std::fprintf(stderr, "fuzz_hdf5: the probe's child stalled in slimtrain's code:\n%s\n",
                     report_.c_str());
        std::abort();
      }
    }
    return verdict == Verdict::read;
  }

  static constexpr int kInputsPerChild = 2000;
  // A stall in slimtrain's code gets this many times the time again: 100 ms of CPU was passed by
  // good inputs (a 2^16-element sample's batch normalised under ASan), and 3 s stays within
  // libFuzzer's -timeout, which would otherwise call the parent's wait a hang.
  static constexpr int kPatience = 30;

  // read: the child came through (or refused the input with an Error); refused: HDF5 itself
  // crashed or stalled, or the report had no stack; slow_in_slimtrain: out of time in
  // slimtrain's code.
  enum class Verdict { read, refused, slow_in_slimtrain };

  Verdict attempt(const std::uint8_t* data, std::size_t size, int timeout_ms) {
    if (pid_ < 0) start();
    std::memcpy(shared_, &size, sizeof size);
    std::memcpy(shared_ + sizeof(std::uint64_t), data, size);
    char go = 1;
    if (write(to_child_, &go, 1) == 1 && answered(timeout_ms)) {
      if (++served_ >= kInputsPerChild) stop();
      return Verdict::read;
    }
    return judge_death(data, size);
  }

  // The child's CPU time in milliseconds (utime + stime of /proc/PID/stat), -1 if unreadable.
  double child_cpu_ms() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t end = stat.rfind(')');  // the command name may hold spaces
    if (end == std::string::npos) return -1;
    std::istringstream fields(stat.substr(end + 2));
    std::string skip;
    unsigned long long utime = 0, stime = 0;
    for (int i = 3; i < 14; ++i) fields >> skip;  // fields 3..13
    fields >> utime >> stime;
    return 1000.0 * static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }

  // The deadline counts the child's CPU time, not the wall clock: on a loaded machine (two
  // workers, a build beside them) a good input can wait longer than a stalled one spins, and a
  // child stopped in slimtrain's code by a wall-clock deadline would read as a finding.
  bool answered(int timeout_ms) {
    pollfd p{from_child_, POLLIN, 0};
    const double cpu_at_start = child_cpu_ms();
    // The wall clock only as a backstop, under libFuzzer's -timeout (20 s) for the patient try.
    const auto give_up = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(std::min(50 * timeout_ms, 15000));
    for (;;) {
      const int ready = poll(&p, 1, 10);
      if (ready < 0 && errno == EINTR) continue;
      if (ready != 0) {
        char done = 0;
        return ready > 0 && read(from_child_, &done, 1) == 1;
      }
      if (child_cpu_ms() - cpu_at_start >= timeout_ms || std::chrono::steady_clock::now() > give_up)
        return false;
    }
  }

  void start() {
    int down[2], up[2];
    if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0) std::abort();
    // The child's stderr: a file with no name, so nothing is left behind however this ends.
    if (log_ >= 0) close(log_);
    log_ = memfd_create("fuzz-hdf5-child-stderr", MFD_CLOEXEC);
    if (log_ < 0) std::abort();
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ < 0) std::abort();
    if (pid_ == 0) {
      close(down[1]);
      close(up[0]);
      dup2(log_, STDERR_FILENO);
      serve(down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    to_child_ = down[1];
    from_child_ = up[0];
    served_ = 0;
  }

  // libFuzzer's handler for these would write a crash file from the child: print the stack for
  // judge_death instead (ASan itself reports a SEGV).
  static void print_stack_and_die(int) {
    __sanitizer_print_stack_trace();
    _exit(1);
  }

  [[noreturn]] void serve(int in, int out) {
    // The child's death is judged by the parent: no libFuzzer crash file from here.
    __sanitizer_set_death_callback(nullptr);
    for (const int sig : {SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGTRAP})
      std::signal(sig, print_stack_and_die);
    char go = 0;
    while (read(in, &go, 1) == 1) {
      std::uint64_t size = 0;
      std::memcpy(&size, shared_, sizeof size);
      slimtrain::data::set_hdf5_file_image(
          name_, std::vector<std::uint8_t>(shared_ + sizeof size, shared_ + sizeof size + size));
      // Any exception but slimtrain's Error (which `work` catches) ends the child through
      // std::terminate and SIGABRT: a finding, judged by its stack.
      std::memset(coverage_counters(), 0, coverage_counters_size());
      work_(name_);
      std::memcpy(counters(), coverage_counters(), coverage_counters_size());
      if (write(out, &go, 1) != 1) break;
    }
    _exit(0);
  }

  void stop() {
    if (pid_ < 0) return;
    close(to_child_);  // the child reads end of file and exits
    int status = 0;
    waitpid(pid_, &status, 0);
    close(from_child_);
    pid_ = -1;
  }

  // The child died or is stuck: where was it?
  static void keep(const std::uint8_t* data, std::size_t size) {
    const char* dir = std::getenv("FUZZ_HDF5_UNJUDGED_DIR");
    if (dir == nullptr) return;
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a: one file per distinct input
    for (std::size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
    char name[32];
    std::snprintf(name, sizeof name, "/unjudged-%016llx", static_cast<unsigned long long>(h));
    std::ofstream(std::string(dir) + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }

  Verdict judge_death(const std::uint8_t* data, std::size_t size) {
    int status = 0;
    const bool stalled = waitpid(pid_, &status, WNOHANG) == 0;
    if (stalled) {
      // Stuck: SIGSEGV makes ASan print the stack where it stands; then it is killed.
      kill(pid_, SIGSEGV);
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (waitpid(pid_, &status, WNOHANG) == 0 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    close(to_child_);
    close(from_child_);
    pid_ = -1;
    std::stringstream report;
    char chunk[4096];
    ssize_t got;
    for (off_t at = 0; (got = pread(log_, chunk, sizeof chunk, at)) > 0; at += got)
      report.write(chunk, got);
    // The first frame in HDF5 or in slimtrain's own code decides.
    static const std::regex frame(
        R"(^ +#[0-9]+ .*(libhdf5|in slimtrain::|in fuzz::|in LLVMFuzzerTestOneInput).*$)");
    static const std::regex any_frame(R"(^ +#[0-9]+ 0x)");
    std::string line;
    bool stack = false;
    while (std::getline(report, line)) {
      std::smatch m;
      stack = stack || std::regex_search(line, any_frame);
      if (!std::regex_match(line, m, frame)) continue;
      if (m[1] == "libhdf5") {  // HDF5's: the binary's probe turns it into exit 2
        ++(stalled ? stalls_ : crashes_);
        return Verdict::refused;
      }
      break;
    }
    if (!stack) {
      // ASan's report failed inside the child ("nested bug in the same thread", seen on
      // memcpy-param-overlap and allocation-size-too-big): nothing to judge by here. The input
      // is kept in $FUZZ_HDF5_UNJUDGED_DIR, where smoke.sh runs it again with
      // FUZZ_HDF5_NO_PROBE=1 in a process of its own, which prints the stack.
      std::string first;
      std::stringstream again(report.str());
      while (std::getline(again, first) && first.find("ERROR:") == std::string::npos) {
      }
      std::fprintf(stderr, "fuzz_hdf5: the probe's child died without a stack (%s); kept\n",
                   first.c_str());
      keep(data, size);
      ++unjudged_;
      return Verdict::refused;
    }
    if (stalled) {  // the caller decides: slow, or a hang
      report_ = report.str();
      return Verdict::slow_in_slimtrain;
    }
    std::fprintf(stderr, "fuzz_hdf5: the probe's child failed outside HDF5:\n%s\n",
                 report.str().c_str());
    std::abort();
  }

  std::string name_;
  std::size_t max_len_;
  int timeout_ms_;
  void (*work_)(const std::string&);
  int log_ = -1;
  std::uint8_t* shared_ = nullptr;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  int served_ = 0;
  std::string report_;  // the last stall's, for the abort
  std::uint64_t inputs_ = 0, crashes_ = 0, stalls_ = 0, unjudged_ = 0, slow_ = 0;
};

}  // namespace fuzz
