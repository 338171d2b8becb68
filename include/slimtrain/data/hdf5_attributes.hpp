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

/**
 * @brief At most this many class names go in the root's class_names attribute: HDF5 keeps an
 * attribute under 64 KiB and a variable-length string takes 16 bytes of it (about 4,095 fit).
 */
inline constexpr std::size_t kClassNamesInAttribute = 4000;

/**
 * @brief The class names of a file: the root's attribute class_names, or beyond
 * kClassNamesInAttribute a dataset /class_names of fixed-width UTF-8 strings (h5py reads it as
 * bytes). Collective in a parallel file: every rank calls it; only `writer` writes the dataset's
 * values.
 */
void write_class_names(hid_t file, const std::vector<std::string>& names, bool writer = true);
/** @brief What write_class_names wrote (the attribute, else the dataset); empty when neither. */
std::vector<std::string> read_class_names(hid_t file, const std::string& where);

}  // namespace slimtrain::data
