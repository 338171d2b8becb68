#pragma once
/**
 * @brief RAII ownership of HDF5 identifiers, and the process-wide lock every HDF5 call takes.
 *
 * Debian's parallel HDF5 is built without thread safety, and the streaming loader reads on a
 * prefetch thread while the main thread may open another file for evaluation: every HDF5 call
 * in slimtrain holds hdf5_mutex().
 */
#include <hdf5.h>

#include <mutex>
#include <string>

namespace slimtrain::data {

/** @brief The lock serialising all HDF5 calls in the process (the library is not thread-safe). */
std::recursive_mutex& hdf5_mutex();

/**
 * @brief Owns one hid_t and closes it with the matching H5?close on destruction: the one RAII
 * handle for HDF5 identifiers in slimtrain (data files, prep, weight and embedding exports).
 */
class Hid {
 public:
  Hid() = default;
  explicit Hid(hid_t id) : id_(id) {}
  ~Hid() { reset(); }
  Hid(Hid&& other) noexcept : id_(other.id_) { other.id_ = H5I_INVALID_HID; }
  Hid& operator=(Hid&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;

  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /** @brief Closes, ignoring errors (destructors, error paths). */
  void reset();
  /** @brief Closes and throws DataError naming `where` if closing fails (a file's last write). */
  void close_checked(const std::string& where);
  /** @brief Gives up ownership without closing (a collective close that peers will not join). */
  hid_t release() {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

}  // namespace slimtrain::data
