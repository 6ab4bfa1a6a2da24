# Shows that a consumer of the IR refuses to compile when one of ir.hpp's lists gains an
# entry it does not handle (docs/DECISIONS.md, "The op list dispatches every consumer").
# Run by ctest (tests/CMakeLists.txt, UnhandledOp.*) as
#   cmake -DCXX=<compiler> -DSOURCE=<source tree> -DFILE=<src/...cpp> -DLIST=<macro>
#         -DPROBE=<list entry> -DNAME=<its enumerator> -DWORK=<scratch directory>
#         -DINCLUDES=<include dirs> -DOPTIONS=<compile options of the tessel target>
#         -P check_unhandled_op.cmake
# It writes a copy of src/ir/ir.hpp whose list LIST starts with PROBE (the one list, with
# one entry more: no second list to keep in step), puts it ahead of src/ on the include
# path, and compiles FILE with the tessel target's options (-fsyntax-only). The test passes
# when the compiler refuses FILE with "enumeration value 'NAME' not handled in switch" at a
# line of FILE; the message is printed.
foreach(v CXX SOURCE FILE LIST PROBE NAME WORK INCLUDES OPTIONS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_unhandled_op.cmake: -D${v}=... is missing")
  endif()
endforeach()

file(READ ${SOURCE}/src/ir/ir.hpp header)
set(define "#define ${LIST}(X)")
string(FIND "${header}" "${define}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "src/ir/ir.hpp has no `${define}`")
endif()
string(REPLACE "${define}" "${define} ${PROBE}" header "${header}")
file(WRITE ${WORK}/ir/ir.hpp "${header}")

set(flags -I${WORK})
foreach(dir ${INCLUDES})
  list(APPEND flags -I${dir})
endforeach()
set(ENV{LC_ALL} C)  # plain quotes in the compiler's messages
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only ${OPTIONS} ${flags} ${SOURCE}/${FILE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCH "[^\n]*${FILE}:[0-9]+:[0-9]+: error: enumeration value '${NAME}' not handled in switch[^\n]*"
       refused "${err}")
if(rc EQUAL 0 OR NOT refused)
  message(FATAL_ERROR "${FILE} with ${PROBE} added to ${LIST}: expected the compiler to refuse "
                      "it with \"enumeration value '${NAME}' not handled in switch\"; exit "
                      "status ${rc}, compiler output:\n${err}")
endif()
message("refused as expected: ${refused}")
