#include "slimtrain/data/batch_memory.hpp"

#include <c10/util/Exception.h>

#include <cstdio>
#include <cstring>
#include <new>
#include <sstream>

#include "slimtrain/core/error.hpp"

namespace slimtrain::data {

bool is_allocation_failure(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return true;
  if (dynamic_cast<const c10::Error*>(&e) == nullptr) return false;
  // c10::OutOfMemoryError exists from LibTorch 2.0 only; the messages hold in 1.13 and 2.x.
  const std::string what = foreign_message(e);
  return what.find("can't allocate memory") != std::string::npos ||
         what.find("out of memory") != std::string::npos;
}

namespace {

// "allocating 37.7 GB failed" from LibTorch's "you tried to allocate 37715968000 bytes" (or
// CUDA's "Tried to allocate 35.13 GiB"), else the message's first line.
std::string reason_of(const std::exception& e) {
  const std::string what = foreign_message(e);
  std::size_t at = what.find("ried to allocate ");
  if (at == std::string::npos) return what;
  std::istringstream in(what.substr(at + std::strlen("ried to allocate ")));
  double amount = 0;
  std::string unit;
  if (!(in >> amount >> unit)) return what;
  char text[64];
  if (unit.rfind("bytes", 0) == 0)
    std::snprintf(text, sizeof text, "allocating %.1f GB failed", amount / 1e9);
  else
    std::snprintf(text, sizeof text, "allocating %.2f %s failed", amount,
                  unit.substr(0, unit.find_first_of(".;,)")).c_str());
  return text;
}

}  // namespace

void refuse_batch(const std::string& what, std::int64_t samples, std::int64_t longest_row,
                  std::int64_t longest_length, const std::string& split, const std::exception& e,
                  const std::string& remedy) {
  const std::string reason = reason_of(e);
  if (longest_row < 0) {
    // No ragged input: only the batch's size can change (the sample's shape is the file's).
    const std::string batch_option = remedy.substr(remedy.rfind(" --") + 1);
    SLIMTRAIN_THROW(DataError, what, " of ", samples, " samples of /", split,
                    " does not fit in memory (", reason, "); use a smaller ", batch_option);
  }
  SLIMTRAIN_THROW(DataError, what, " of ", samples, " samples of /", split,
                  " does not fit in memory (", reason, "): its longest sample, row ", longest_row,
                  ", is ", longest_length,
                  " elements long. Prep with --max-length (prep text cuts at 4096 tokens by "
                  "default), or ",
                  remedy);
}

}  // namespace slimtrain::data
