// The probe child and its parent's side: one process per kernel set, because OpenBLAS reads
// OPENBLAS_CORETYPE once, as it loads (runtime/blas_kernels.hpp).
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "slimtrain/core/clock.hpp"
#include "slimtrain/runtime/blas_kernels.hpp"

extern char** environ;

namespace slimtrain::runtime {
namespace {

constexpr const char* kChildVariable = "SLIMTRAIN_BLAS_PROBE_CHILD";
constexpr int kProbeSize = 1024;  // the bench/train GEMM peak's size: the same figure
constexpr int kProbeRepeats = 8;

using Sgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*,
                       const float*, const int*, const float*, const int*, const float*, float*,
                       const int*);

// The child's environment: the parent's, with the kernel set named (or OpenBLAS left to choose)
// and one thread, so every set is timed on one core as a rank with --threads 1 runs it.
std::vector<std::string> child_environment(const std::string& requested) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "OPENBLAS_CORETYPE" || name == "OPENBLAS_VERBOSE" || name == kChildVariable ||
        name == "OMP_NUM_THREADS" || name == "OPENBLAS_NUM_THREADS")
      continue;
    env.push_back(entry);
  }
  env.push_back(std::string(kChildVariable) + "=1");
  env.push_back("OMP_NUM_THREADS=1");
  env.push_back("OPENBLAS_NUM_THREADS=1");
  // Test only: an OpenBLAS whose own choice is slow (issue 33's EPYC) acted on any machine.
  const char* own = std::getenv("SLIMTRAIN_TEST_OPENBLAS_OWN");
  if (!requested.empty())
    env.push_back("OPENBLAS_CORETYPE=" + requested);
  else if (own != nullptr && *own != '\0')
    env.push_back(std::string("OPENBLAS_CORETYPE=") + own);
  return env;
}

bool parse_child_line(const std::string& text, KernelRate& out) {
  char kernels[64] = {};
  double gflops = 0;
  if (std::sscanf(text.c_str(), "kernels=%63s gflops=%lf", kernels, &gflops) != 2 || gflops <= 0)
    return false;
  out.kernels = kernels;
  out.gflops = gflops;
  return true;
}

}  // namespace

bool measure_kernels(const std::string& requested, double timeout_s, KernelRate& out,
                     std::string& why) {
  out = KernelRate{requested, "", 0};
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    why = "cannot read /proc/self/exe";
    return false;
  }
  self[n] = '\0';
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  // OpenBLAS says "Core not found" on stderr for a name it does not know: the kernels it then
  // loaded are what the child reports, so the words are not needed.
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> env = child_environment(requested);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  char name[] = "slimtrain-blas-probe";
  char* argv[] = {name, nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, self, &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    why = std::string("cannot start the probe: ") + std::strerror(rc);
    return false;
  }
  std::string text;
  const auto start = Clock::now();
  bool late = false;
  for (;;) {
    const double left = timeout_s - seconds_since(start);
    if (left <= 0) {
      late = true;
      break;
    }
    pollfd p{pipe_fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline is checked at the top
    char buffer[256];
    const ssize_t got = read(pipe_fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  close(pipe_fds[0]);
  if (late) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (late) {
    why = "the probe took longer than " + std::to_string(static_cast<int>(timeout_s)) + " s";
    return false;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !parse_child_line(text, out)) {
    why = "the probe failed" + (text.empty() ? std::string() : ": " + text);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return false;
  }
  return true;
}

bool is_kernel_probe_child() {
  return std::getenv(kChildVariable) != nullptr;
}

int run_kernel_probe_child() {
  auto* sgemm = reinterpret_cast<Sgemm>(dlsym(RTLD_DEFAULT, "sgemm_"));
  auto* corename = reinterpret_cast<char* (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (sgemm == nullptr || corename == nullptr) {
    std::printf("no OpenBLAS sgemm_ in this process\n");
    return 1;
  }
  if (auto* set = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    set(1);
  const int n = kProbeSize;
  std::vector<float> a(static_cast<std::size_t>(n) * n), b(a.size()), c(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i % 17) * 0.01f;
    b[i] = static_cast<float>(i % 13) * 0.02f;
  }
  const float one = 1.0f, zero = 0.0f;
  double best = 1e30;
  for (int r = 0; r <= kProbeRepeats; ++r) {  // the first is the warm-up
    const auto start = Clock::now();
    sgemm("N", "N", &n, &n, &n, &one, a.data(), &n, b.data(), &n, &zero, c.data(), &n);
    if (r > 0) best = std::min(best, seconds_since(start));
  }
  std::printf("kernels=%s gflops=%.1f\n", corename(), 2.0 * n * n * n / best / 1e9);
  return 0;
}

}  // namespace slimtrain::runtime
