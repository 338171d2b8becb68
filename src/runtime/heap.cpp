#include "slimtrain/runtime/heap.hpp"

#include <malloc.h>

namespace slimtrain::runtime {

void keep_freed_memory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 128 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

void release_freed_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

}  // namespace slimtrain::runtime
