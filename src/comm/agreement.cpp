#include "slimtrain/comm/agreement.hpp"

#include "slimtrain/core/error.hpp"

namespace slimtrain::comm {
namespace {

// What peers rethrow: the same class as far as exit codes and callers' catch clauses go.
enum Kind : char { kOk = 'k', kConfig = 'c', kData = 'd', kComm = 'm', kOther = 'o' };

Kind kind_of(std::exception_ptr failure, std::string& message) {
  try {
    std::rethrow_exception(failure);
  } catch (const ConfigError& e) {
    message = e.what();
    return kConfig;
  } catch (const DataError& e) {
    message = e.what();
    return kData;
  } catch (const CommError& e) {
    message = e.what();
    return kComm;
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown error";
  }
  return kOther;
}

template <typename E>
[[noreturn]] void throw_told(E error) {
  error.mark_told_by_peer();
  throw error;
}

// The error another rank raised, of its class; that rank prints it, this one only ends with it.
[[noreturn]] void throw_as(char kind, const std::string& message) {
  switch (kind) {
    case kConfig:
      throw_told(ConfigError(message, __FILE__, __LINE__));
    case kData:
      throw_told(DataError(message, __FILE__, __LINE__));
    case kComm:
      throw_told(CommError(message, __FILE__, __LINE__));
    default:
      throw_told(Error(message, __FILE__, __LINE__));
  }
}

}  // namespace

void agree_or_throw(ControlPlane& control, std::exception_ptr local, const OpOptions& options) {
  const std::int64_t size = control.size();
  const std::vector<std::int64_t> mine{local ? control.rank() : size};
  const std::int64_t first = control.all_reduce(mine, ReduceOp::min, options).front();
  if (first == size) return;
  std::string text;
  if (control.rank() == first) {
    std::string message;
    text = std::string(1, static_cast<char>(kind_of(local, message))) + message;
  }
  text = control.broadcast(text, static_cast<int>(first), options);
  if (control.rank() == first) std::rethrow_exception(local);
  throw_as(text.empty() ? static_cast<char>(kOther) : text[0],
           "rank " + std::to_string(first) + " failed: " + (text.empty() ? "" : text.substr(1)));
}

std::string decide_on_root(ControlPlane& control, int root,
                           const std::function<std::string()>& decide, const OpOptions& options) {
  std::string text;
  std::exception_ptr failure;
  if (control.rank() == root) {
    try {
      text = std::string(1, static_cast<char>(kOk)) + decide();
    } catch (...) {
      failure = std::current_exception();
      std::string message;
      text = std::string(1, static_cast<char>(kind_of(failure, message))) + message;
    }
  }
  text = control.broadcast(text, root, options);
  if (failure) std::rethrow_exception(failure);
  if (text.empty()) SLIMTRAIN_THROW(CommError, control.name(), ": empty answer from rank ", root);
  if (text[0] != kOk) throw_as(text[0], text.substr(1));
  return text.substr(1);
}

}  // namespace slimtrain::comm
