#include "slimtrain/core/thread_name.hpp"

#include <pthread.h>

namespace slimtrain {

void name_this_thread(const std::string& what) {
  const std::string name = ("st-" + what).substr(0, 15);
  pthread_setname_np(pthread_self(), name.c_str());
}

}  // namespace slimtrain
