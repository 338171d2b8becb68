#include "slimtrain/data/layout_probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <vector>

#include "slimtrain/core/error.hpp"
#include "slimtrain/data/dataset_info.hpp"
#include "slimtrain/data/split_reader.hpp"

namespace slimtrain::data {
namespace {

// A page shared with the child (MAP_SHARED): survives the child however it dies.
struct ProbeReport {
  char reading[512];
  char error[3584];
};

ProbeReport* g_report = nullptr;  // set in the child only

constexpr int kChildDataError = 3;
constexpr int kChildOtherError = 4;

void copy_text(char* to, std::size_t capacity, const std::string& text) {
  const std::size_t n = std::min(capacity - 1, text.size());
  std::memcpy(to, text.data(), n);
  to[n] = '\0';
}

}  // namespace

void read_layout_and_edges(const std::string& path, std::size_t max_row_bytes) {
  DatasetInfo info = read_dataset_info(path);
  if (info.named()) return;  // every input opened above; rows are checked as they load
  if (info.mean.empty()) {   // a SplitReader needs values; any will do to read rows
    info.mean.assign(static_cast<std::size_t>(info.channels()), 0.0f);
    info.std.assign(info.mean.size(), 1.0f);
  }
  for (const SplitInfo& s : info.splits) {
    if (s.size == 0) continue;
    SplitReader reader(info, s.name);
    if (reader.sample_bytes() > max_row_bytes) continue;
    std::vector<std::uint8_t> row(reader.sample_bytes());
    std::int64_t label = 0;
    for (const std::int64_t r : {std::int64_t{0}, s.size - 1}) {
      reader.read_x(r, 1, row.data());
      reader.read_y(r, 1, &label);
    }
  }
}

namespace {

[[noreturn]] void run_child(const std::string& path, const ProbeOptions& options,
                            ProbeReport* report) {
  // Die as the kernel would: no crash handler of the parent's (libFuzzer's, a runtime's) runs
  // here, and HDF5's or a sanitizer's last words go nowhere; the parent's message says it all.
  for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP})
    std::signal(sig, SIG_DFL);
  const rlimit no_core{0, 0};  // no core file of HDF5's crash in the user's directory
  setrlimit(RLIMIT_CORE, &no_core);
  const int null = open("/dev/null", O_WRONLY);
  if (null >= 0) {
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
  }
  if (options.in_child != nullptr) options.in_child();
  g_report = report;
  int code = 0;
  try {
    read_layout_and_edges(path);
  } catch (const DataError& e) {
    copy_text(report->error, sizeof report->error, e.what());
    code = kChildDataError;
  } catch (const std::exception& e) {
    copy_text(report->error, sizeof report->error, e.what());
    code = kChildOtherError;
  }
  _exit(code);  // no atexit handlers: HDF5's or LeakSanitizer's belong to the parent
}

// True when the child ended (its end of the pipe closed) before the deadline.
bool wait_for_end(int read_end, double timeout_s) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const double left = std::chrono::duration<double>(deadline - clock::now()).count();
    if (left <= 0) return false;
    pollfd p{read_end, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min(left * 1000.0 + 1.0, 6e4)));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

}  // namespace

namespace detail {
bool noting_hdf5_reads() {
  return g_report != nullptr;
}
void note_hdf5_read_text(const std::string& what) {
  copy_text(g_report->reading, sizeof g_report->reading, what);
}
}  // namespace detail

void probe_data_file(const std::string& path, const ProbeOptions& options) {
  void* shared =
      mmap(nullptr, sizeof(ProbeReport), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED)
    SLIMTRAIN_THROW(Error, path,
                    ": cannot map a page for the layout probe: ", std::strerror(errno));
  struct Unmap {
    void* page;
    ~Unmap() { munmap(page, sizeof(ProbeReport)); }
  } unmap{shared};
  auto* report = static_cast<ProbeReport*>(shared);  // zero-filled by mmap
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    SLIMTRAIN_THROW(Error, path,
                    ": cannot make a pipe for the layout probe: ", std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    SLIMTRAIN_THROW(Error, path, ": cannot fork the layout probe: ", std::strerror(err));
  }
  if (pid == 0) {
    close(fds[0]);
    run_child(path, options, report);  // holds the write end until it ends, however it ends
  }
  close(fds[1]);
  const bool ended = wait_for_end(fds[0], options.timeout_s);
  close(fds[0]);
  if (!ended) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string reading = report->reading[0] != '\0' ? report->reading : path;
  if (!ended)
    SLIMTRAIN_THROW(DataError, reading, ": HDF5 did not finish reading this within ",
                    options.timeout_s, " s (", options.deadline_name,
                    "; slimtrain reads a file's layout first in a child process, and killed "
                    "it): the file is damaged (HDF5 1.10 can loop forever on a damaged heap), "
                    "or its file system stalls");
  if (WIFSIGNALED(status))
    SLIMTRAIN_THROW(DataError, reading, ": HDF5 crashed reading this (",
                    strsignal(WTERMSIG(status)),
                    ", in the child process where slimtrain reads a file's layout first): the "
                    "file is damaged; check it with h5dump, or write it again");
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0) return;
  if (code == kChildDataError) SLIMTRAIN_THROW(DataError, report->error);
  if (code == kChildOtherError)
    SLIMTRAIN_THROW(DataError, path, ": reading the layout failed: ", report->error);
  SLIMTRAIN_THROW(DataError, reading, ": HDF5 ended the process reading this with exit code ", code,
                  " (in the child process where slimtrain reads a file's layout first): "
                  "the file is damaged; check it with h5dump, or write it again");
}

}  // namespace slimtrain::data
