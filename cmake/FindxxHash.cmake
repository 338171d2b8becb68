# Finds xxHash (Debian: libxxhash-dev), which ships neither CMake config nor pkg-config file
# on every distribution. Provides xxHash::xxhash.
find_path(xxHash_INCLUDE_DIR xxhash.h HINTS ${xxHash_ROOT} ENV xxHash_ROOT PATH_SUFFIXES include)
find_library(xxHash_LIBRARY NAMES xxhash HINTS ${xxHash_ROOT} ENV xxHash_ROOT PATH_SUFFIXES lib lib64)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(xxHash REQUIRED_VARS xxHash_LIBRARY xxHash_INCLUDE_DIR)
if(xxHash_FOUND AND NOT TARGET xxHash::xxhash)
  add_library(xxHash::xxhash UNKNOWN IMPORTED)
  set_target_properties(xxHash::xxhash PROPERTIES IMPORTED_LOCATION "${xxHash_LIBRARY}"
                                                  INTERFACE_INCLUDE_DIRECTORIES "${xxHash_INCLUDE_DIR}")
endif()
mark_as_advanced(xxHash_INCLUDE_DIR xxHash_LIBRARY)
