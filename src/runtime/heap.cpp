#include "slimtrain/runtime/heap.hpp"

#include <malloc.h>

#include <cstdlib>

namespace slimtrain::runtime {

void keep_freed_memory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 128 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // One arena for every thread unless the user chose (MALLOC_ARENA_MAX). A thread's own arena
  // never gives back its top (malloc_trim trims only the main one's, and the threshold above stops
  // free() doing it): the link probe's 4 MiB pieces left 2 MB of Open MPI's temporaries resident
  // on the data plane's thread all run, and an exited start-up thread's arena 1.3 MB more.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 1);
#endif
}

void return_freed_memory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 16 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

void release_freed_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace slimtrain::runtime
