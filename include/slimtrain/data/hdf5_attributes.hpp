#pragma once
/**
 * @brief Reading and writing the layout's attributes the way users' h5py files store them:
 * strings fixed- or variable-length (scalar or 1-D), integers of any width, float arrays.
 * All callers hold hdf5_mutex(). Errors are DataError naming `where` (file and object).
 */
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace slimtrain::data {

bool has_attribute(hid_t object, const std::string& name, const std::string& where);
std::vector<std::string> read_string_attribute(hid_t object, const std::string& name,
                                               const std::string& where);
std::int64_t read_int_attribute(hid_t object, const std::string& name, const std::string& where);
std::vector<float> read_float_attribute(hid_t object, const std::string& name,
                                        const std::string& where);

/** @brief Variable-length UTF-8 strings (h5py reads them as str); scalar when values.size()==1 and
 * scalar. */
void write_string_attribute(hid_t object, const std::string& name,
                            const std::vector<std::string>& values, bool scalar);
void write_int_attribute(hid_t object, const std::string& name, std::int64_t value);
void write_float_attribute(hid_t object, const std::string& name, const std::vector<float>& values);

}  // namespace slimtrain::data
