# ctest Package.InstallAndConsume: installs this build to a temporary prefix, then builds
# examples/consumer (a project of its own) against it with find_package(tessel) and with
# pkg-config, and runs it on the CPU interpreter; builds it against the build tree
# (tessel_DIR) too, and configures it with tessel's sources through add_subdirectory.
#   cmake -DBUILD=<build dir> -DSOURCE=<tessel's sources> -DWORK=<scratch dir>
#         -DCXX=<compiler> -DGENERATOR=<generator> [-DLAUNCHER=ccache] -P test_package.cmake
cmake_minimum_required(VERSION 3.24)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# Configures examples/consumer in WORK/<name> with the extra cache arguments.
function(consumer name)
  set(dir ${WORK}/${name})
  set(args -S ${SOURCE}/examples/consumer -B ${dir} -G ${GENERATOR}
           -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)
  if(LAUNCHER)
    list(APPEND args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
  endif()
  run(${CMAKE_COMMAND} ${args} ${ARGN})
endfunction()

# Builds WORK/<name> and runs its program, which must report that its values are ok.
function(build_and_run name)
  run(${CMAKE_COMMAND} --build ${WORK}/${name})
  run(${WORK}/${name}/tessel_consumer)
  message(STATUS "${name}: ${out}")
  if(NOT out MATCHES "on the CPU interpreter: ok|on the GPU: ok")
    message(FATAL_ERROR "${name}: unexpected output: ${out}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
foreach(f include/tessel/tessel.hpp include/tessel/language.hpp libexec/tessel/tessel_bench_worker)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()
file(GLOB_RECURSE config ${prefix}/*/tesselConfig.cmake)
file(GLOB_RECURSE pc ${prefix}/*/tessel.pc)
if(NOT config OR NOT pc)
  message(FATAL_ERROR "no tesselConfig.cmake or tessel.pc under ${prefix}")
endif()
# The installed worker starts (its libraries resolve) and exits when its socket closes.
run(${prefix}/libexec/tessel/tessel_bench_worker --socket-fd=0 INPUT_FILE /dev/null)

# find_package(tessel) from the install prefix; the source tree is not on any path.
consumer(installed -DCMAKE_PREFIX_PATH=${prefix})
build_and_run(installed)

# pkg-config (relocatable: tessel.pc finds the prefix from its own directory).
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(PKG_CONFIG)
  get_filename_component(pcdir ${pc} DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pcdir})
  run(${PKG_CONFIG} --cflags --libs tessel)
  separate_arguments(flags UNIX_COMMAND "${out}")
  file(MAKE_DIRECTORY ${WORK}/pkgconfig)
  run(${LAUNCHER} ${CXX} -O1 ${SOURCE}/examples/consumer/main.cpp ${flags}
      -o ${WORK}/pkgconfig/tessel_consumer)
  run(${WORK}/pkgconfig/tessel_consumer)
  message(STATUS "pkgconfig: ${out}")
else()
  message(STATUS "pkg-config not found: tessel.pc not checked")
endif()

# find_package(tessel) from the build tree.
consumer(build_tree -Dtessel_DIR=${BUILD})
build_and_run(build_tree)

# add_subdirectory(tessel's sources): configures without its tests, benchmarks or
# examples (building it would compile the library again).
consumer(subdirectory -DTESSEL_SOURCE_DIR=${SOURCE})
file(REMOVE_RECURSE ${WORK})
