# Install rules and the package files: the library, its public headers and the timing
# worker; tesselConfig.cmake (find_package(tessel) from an install prefix or from this
# build tree), its version file, and tessel.pc for pkg-config. All paths are relative
# to the prefix, so `cmake --install build --prefix P` works for any P.
include(CMakePackageConfigHelpers)
set(TESSEL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)

install(TARGETS tessel EXPORT tesselTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS tessel_bench_worker EXPORT tesselTargets
        RUNTIME DESTINATION ${TESSEL_WORKER_INSTALL_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessel
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(EXPORT tesselTargets NAMESPACE tessel:: DESTINATION ${TESSEL_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tesselConfig.cmake.in
    ${PROJECT_BINARY_DIR}/tesselConfig.cmake INSTALL_DESTINATION ${TESSEL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tesselConfig.cmake
              ${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/tessel_xxhash.cmake
        DESTINATION ${TESSEL_CMAKE_DIR})

# The build tree as a package too: find_package(tessel) with tessel_DIR=<this build dir>.
export(EXPORT tesselTargets NAMESPACE tessel:: FILE ${PROJECT_BINARY_DIR}/tesselTargets.cmake)
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessel_xxhash.cmake
               ${PROJECT_BINARY_DIR}/tessel_xxhash.cmake COPYONLY)

file(RELATIVE_PATH TESSEL_PC_PREFIX_FROM_PCDIR ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig
     ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" TESSEL_PC_PREFIX_FROM_PCDIR "${TESSEL_PC_PREFIX_FROM_PCDIR}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessel.pc.in ${PROJECT_BINARY_DIR}/tessel.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tessel.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
