# ctest driver (cmake -P): installs the tgc build into a fresh prefix, then
# configures, builds and runs (a copy of) the consumer project in this folder
# against the installed package only, checks what its programs print, and that
# touching the model's data file reruns `tgc compile` and nothing else does.
#   -DTGC_BUILD_DIR=  the tgc build tree      -DWORK_DIR=  scratch folder (wiped)
#   -DSOURCE_DIR=     this folder             -DGENERATOR= -DC_COMPILER= -DCXX_COMPILER=
#   -DTGC_VERSION=    the version the installed tgc must report
#   -DCROSS_TRIPLE=   optional: configure the consumer with the installed toolchain file for this target
#   -DEMULATOR=       with CROSS_TRIPLE: what runs the target's programs (qemu-aarch64)
# Cross, the same project is built for the target (tgc_add_model compiles for
# it, the programs link its runtime) and its programs run under EMULATOR.
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
# run() for a program the consumer built: under the emulator when cross.
function(run_program what)
  run("${what}" ${EMULATOR} ${ARGN})
  set(out "${out}" PARENT_SCOPE)
endfunction()

set(cross_files "")
set(configure_args -DCMAKE_C_COMPILER=${C_COMPILER} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(CROSS_TRIPLE)
  set(toolchain lib/cmake/tgc/toolchains/${CROSS_TRIPLE}.cmake)
  set(cross_files lib/${CROSS_TRIPLE}/libtgc_runtime.a lib/${CROSS_TRIPLE}/libtgc_launcher.a
                  lib/cmake/tgc/${CROSS_TRIPLE}/tgcRuntimeTargets.cmake ${toolchain})
  set(configure_args -DCMAKE_TOOLCHAIN_FILE=${WORK_DIR}/prefix/${toolchain})
  # What the target's ELF files say in e_machine (bytes 18-19): AArch64 0xb7, RISC-V 0xf3.
  string(REGEX MATCH "^[^-]+" arch "${CROSS_TRIPLE}")
  if(arch STREQUAL "aarch64")
    set(machine b700)
  elseif(arch STREQUAL "riscv64")
    set(machine f300)
  else()
    message(FATAL_ERROR "run-test.cmake: no ELF machine number known for ${arch}")
  endif()
endif()
# Fails unless every file (below WORK_DIR) is an ELF file of the cross target.
function(check_machine)
  foreach(f IN LISTS ARGN)
    file(READ "${WORK_DIR}/${f}" elf LIMIT 20 HEX)
    if(NOT elf MATCHES "${machine}$")
      message(FATAL_ERROR "${f} is not an ${arch} ELF file: ${elf}")
    endif()
  endforeach()
endfunction()
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("install" ${CMAKE_COMMAND} --install "${TGC_BUILD_DIR}" --prefix "${prefix}")
foreach(f bin/tgc lib/libtgc_runtime.a lib/libtgc_launcher.a include/tgc/Runtime/ModelABI.h
          lib/cmake/tgc/tgcConfig.cmake lib/cmake/tgc/tgcConfigVersion.cmake
          lib/cmake/tgc/tgcTargets.cmake lib/cmake/tgc/tgcRuntimeTargets.cmake lib/cmake/tgc/TgcAddModel.cmake
          include/tgc/Runtime/Npy.h ${cross_files})
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "the install lacks ${f}")
  endif()
endforeach()
run("installed tgc --version" "${prefix}/bin/tgc" --version)
if(NOT out MATCHES "^tgc ${TGC_VERSION}\nfollows tinygrad [0-9a-f]+ \\(snapshot [0-9a-f]+ \\+ [^\n]+\\)\n$")
  message(FATAL_ERROR "installed tgc --version printed '${out}', expected 'tgc ${TGC_VERSION}' and the tinygrad it follows")
endif()

# A copy, so that the test may touch its files. Only the install prefix is
# searched: no path into tgc's build or source tree.
file(COPY "${SOURCE_DIR}/" DESTINATION "${WORK_DIR}/src")
run("configure the consumer" ${CMAKE_COMMAND} -S "${WORK_DIR}/src" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    ${configure_args} -DCMAKE_BUILD_TYPE=Release
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
# TARGET: a model for the project's own target builds (cross: spelled out as the toolchain's triple); other
# targets fail at configure time, saying why: a model for another architecture than the project's, and a
# project target tgc has no runtime for.
file(WRITE "${WORK_DIR}/mini/CMakeLists.txt" "cmake_minimum_required(VERSION 3.25)\nproject(mini LANGUAGES C)\n"
     "find_package(tgc 0.1 CONFIG REQUIRED)\n"
     "tgc_add_model(mini_model GRAPH ${WORK_DIR}/src/model/affine.tgc TARGET \${MODEL_TARGET})\n")
function(configure_mini define)
  file(REMOVE_RECURSE "${WORK_DIR}/mini/build")
  execute_process(COMMAND ${CMAKE_COMMAND} -S "${WORK_DIR}/mini" -B "${WORK_DIR}/mini/build" -G "${GENERATOR}"
                          ${configure_args} -DCMAKE_PREFIX_PATH=${prefix} -D${define}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "[ \n]+" " " err "${err}")
  set(rc "${rc}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()
if(CROSS_TRIPLE)
  configure_mini(MODEL_TARGET=${CROSS_TRIPLE})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tgc_add_model(... TARGET ${CROSS_TRIPLE}) in a project for it failed to configure:\n${err}")
  endif()
  run("build a model with TARGET ${CROSS_TRIPLE}" ${CMAKE_COMMAND} --build "${WORK_DIR}/mini/build")
  check_machine(mini/build/tgc/mini_model.o)
else()
  foreach(case "MODEL_TARGET=powerpc64le-linux-gnu;this project builds for the host"
               "TGC_TARGET=powerpc64le-linux-gnu;this tgc has no runtime for powerpc64le-linux-gnu")
    list(GET case 0 define)
    list(GET case 1 expected)
    configure_mini(${define})
    if(rc EQUAL 0 OR NOT err MATCHES "${expected}")
      message(FATAL_ERROR "configuring with -D${define} should fail with '${expected}' (exit ${rc}):\n${err}")
    endif()
  endforeach()
endif()
run("build the consumer" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
if(NOT out MATCHES "tgc compile [^\n]*affine\\.tgc -> affine\\.o")
  message(FATAL_ERROR "the build did not run tgc compile:\n${out}")
endif()

run_program("npy_roundtrip" "${WORK_DIR}/build/npy_roundtrip" "${WORK_DIR}/roundtrip.npy")
if(NOT out STREQUAL "descr=<i4 shape=2,3, sum=-3\n")
  message(FATAL_ERROR "npy_roundtrip printed '${out}'")
endif()

# y = x * 2 + 1 on x.npy = 1..6, through the header, the archive and the runtime.
run_program("affine_app" "${WORK_DIR}/build/affine_app" "${WORK_DIR}/src/model/x.npy")
if(NOT out STREQUAL "status 0 y = 3 5 7 9 11 13\n")
  message(FATAL_ERROR "affine_app printed '${out}'")
endif()
# The OBJECT variant, named `twice`, from C, with x.npy embedded in the object.
run_program("twice_app" "${WORK_DIR}/build/twice_app")
if(NOT out STREQUAL "twice: 1 tensor, status 0, y = 3 .. 13\n")
  message(FATAL_ERROR "twice_app printed '${out}'")
endif()
# The third variant reads x.npy from the weights file tgc compile wrote beside its object.
run_program("ext_app" "${WORK_DIR}/build/ext_app")
if(NOT out STREQUAL "ext: 1 weights, status 0, y = 3 .. 13\n")
  message(FATAL_ERROR "ext_app printed '${out}'")
endif()
run_program("generated test" "${WORK_DIR}/build/affine_test")
if(NOT out MATCHES "^affine: ok \\(2 tensors, workspace [0-9]+ bytes\\)\n$")
  message(FATAL_ERROR "affine_test printed '${out}'")
endif()
run_program("generated benchmark" "${WORK_DIR}/build/affine_benchmark" 5)
if(NOT out MATCHES "^model=affine runs=5 min_ms=[0-9.]+\nmedian_ms=[0-9.]+\n$")
  message(FATAL_ERROR "affine_benchmark printed '${out}'")
endif()
# The launcher computes y = 2x + 1 on its embedded x.npy: 3, 5, ..., 13 as little-endian float32s.
run_program("the launcher" "${WORK_DIR}/build/tgc/affine_launcher" --output-dir "${WORK_DIR}/launcher-out")
file(READ "${WORK_DIR}/launcher-out/out0.npy" npy HEX)
if(NOT npy MATCHES "000040400000a0400000e040000010410000304100005041$")
  message(FATAL_ERROR "the launcher wrote out0.npy = ${npy}")
endif()
# Cross, every program is the target's.
if(CROSS_TRIPLE)
  check_machine(build/affine_app build/twice_app build/ext_app build/affine_test build/tgc/affine_launcher)
endif()
run("ctest in the consumer" ${CMAKE_CTEST_COMMAND} --test-dir "${WORK_DIR}/build")
if(NOT out MATCHES "100% tests passed, 0 tests failed out of 2")
  message(FATAL_ERROR "the consumer's ctest (affine_test, affine_ext_test) said:\n${out}")
endif()

# Dependencies: a data file the graph names reruns the compile; a no-op build
# runs nothing.
file(TOUCH "${WORK_DIR}/src/model/x.npy")
run("rebuild after touching x.npy" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
if(NOT out MATCHES "tgc compile [^\n]*affine\\.tgc -> affine\\.o")
  message(FATAL_ERROR "touching model/x.npy did not rerun tgc compile:\n${out}")
endif()
run("no-op rebuild" ${CMAKE_COMMAND} --build "${WORK_DIR}/build")
if(out MATCHES "tgc compile")
  message(FATAL_ERROR "a no-op build reran tgc compile:\n${out}")
endif()
message(STATUS "installed package OK: ${prefix}")
