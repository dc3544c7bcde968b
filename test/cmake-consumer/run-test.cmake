# ctest driver (cmake -P): installs the tgc build into a fresh prefix, then
# configures, builds and runs the consumer project in this folder against the
# installed package only, and checks what it prints.
#   -DTGC_BUILD_DIR=  the tgc build tree      -DWORK_DIR=  scratch folder (wiped)
#   -DSOURCE_DIR=     this folder             -DGENERATOR= -DC_COMPILER= -DCXX_COMPILER=
#   -DTGC_VERSION=    the version the installed tgc must report
foreach(v TGC_BUILD_DIR WORK_DIR SOURCE_DIR GENERATOR C_COMPILER CXX_COMPILER TGC_VERSION)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run-test.cmake: -D${v}= is required")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("install" ${CMAKE_COMMAND} --install "${TGC_BUILD_DIR}" --prefix "${prefix}")
foreach(f bin/tgc lib/cmake/tgc/tgcConfig.cmake lib/cmake/tgc/tgcConfigVersion.cmake
          lib/cmake/tgc/tgcTargets.cmake lib/cmake/tgc/TgcAddModel.cmake include/tgc/Runtime/Npy.h)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
run("installed tgc --version" "${prefix}/bin/tgc" --version)
if(NOT out MATCHES "^tgc ${TGC_VERSION}\n$")
  message(FATAL_ERROR "installed tgc --version printed '${out}', expected 'tgc ${TGC_VERSION}'")
endif()

# Only the install prefix is searched: no path into the build or source tree.
run("configure the consumer" ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run("build the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")

run("npy_roundtrip" "${WORK_DIR}/build/npy_roundtrip" "${WORK_DIR}/roundtrip.npy")
if(NOT out STREQUAL "descr=<i4 shape=2,3, sum=-3\n")
  message(FATAL_ERROR "npy_roundtrip printed '${out}'")
endif()
message(STATUS "installed package OK: ${prefix}")
