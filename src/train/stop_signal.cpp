#include "slimtrain/train/stop_signal.hpp"

#include <csignal>

namespace slimtrain::train {
namespace {
volatile std::sig_atomic_t g_signal = 0;

extern "C" void remember_signal(int sig) {
  g_signal = sig;
}
}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int stop_signal() {
  return g_signal;
}

}  // namespace slimtrain::train
