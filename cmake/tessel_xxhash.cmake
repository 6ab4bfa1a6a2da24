# tessel::xxhash, the xxHash library (Debian: libxxhash-dev) as an imported target: for
# tessel's build and, installed next to tesselConfig.cmake, for programs linking the
# static library.
if(NOT TARGET tessel::xxhash)
  find_path(TESSEL_XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
  find_library(TESSEL_XXHASH_LIBRARY NAMES xxhash REQUIRED)
  add_library(tessel::xxhash UNKNOWN IMPORTED)
  set_target_properties(tessel::xxhash PROPERTIES
      IMPORTED_LOCATION "${TESSEL_XXHASH_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${TESSEL_XXHASH_INCLUDE_DIR}")
endif()
