# tgc_add_model(): compile a tinygrad graph into a library at build time
# (tgc's counterpart of tfcompile's tf_library).
#
#   tgc_add_model(<target> GRAPH <graph.json|graph.tgc>
#                 [WEIGHTS <file>...]          data files the graph reads (default: the ones the graph names)
#                 [EMBED_WEIGHTS]              tgc compile --weights=embed: those inputs become data in the object
#                 [WEIGHTS_MODE <mode>]        pass | embed | external | auto (--weights); external writes
#                                              <bin>/tgc/<target>.weights (target property TGC_WEIGHTS_FILE)
#                 [TARGET <triple>] [CPU <name>]        cross-compile / tune (default: the project's
#                                              target, TGC_TARGET: the host, or the toolchain file's)
#                 [EMIT <kind>...]             extra outputs beside obj,header: exe, llvm, mlir, asm
#                 [NAME <c-identifier>]        the symbol prefix (default: <target> made an identifier)
#                 [OBJECT]                     consumers link the object itself (no archive)
#                 [GEN_TEST] [GEN_BENCHMARK])
#
# At build time `tgc compile` (tgc::tgc) writes <bin>/tgc/<target>.o and
# <bin>/tgc/<target>.h, <bin> being the current binary dir. The library
# <target> holds the object, links tgc::runtime, and puts <bin>/tgc on its
# consumers' include path, so they `#include "<target>.h"`. The compile
# reruns when the graph, a data file or tgc itself changes. The data files are
# read from the graph at configure time (graph.json's `buffers[].file`, the
# text form's `buffer %x "file"` lines, relative to the graph's folder);
# WEIGHTS replaces that list. GEN_TEST adds the executable <target>_test
# (also a ctest test where testing is enabled) and GEN_BENCHMARK the
# executable <target>_benchmark (argument: the number of runs; last line
# median_ms=...): the C programs `tgc compile --emit=test,benchmark` writes,
# which drive the model through its header's metadata table (so they need C
# enabled in the project). With WEIGHTS_MODE external the model's data is the
# file <bin>/tgc/<target>.weights, which the program binds at run time
# (<target>_bind_weights, docs/deploy.md); the generated test and benchmark
# bind it from there. auto is decided here, at configure time, from the data
# files' total size (tgc compile's default threshold, 64 MiB).
#
# Works with an installed package (find_package(tgc CONFIG)) and inside tgc's
# own build tree, where tgc::tgc and tgc::runtime alias the real targets. In a
# project configured for a cross target (a toolchain file, tgc's own in
# <prefix>/lib/cmake/tgc/toolchains/), models are compiled for it and link its
# runtime; a TARGET of another architecture than the project's is an error,
# since nothing the project builds could link the object.
include_guard(GLOBAL)

# The data files a graph names, as absolute paths.
function(_tgc_graph_data_files graph out)
  file(READ "${graph}" text)
  get_filename_component(base "${graph}" DIRECTORY)
  set(files "")
  if(graph MATCHES "\\.json$")
    string(JSON nbuf ERROR_VARIABLE err LENGTH "${text}" buffers)
    if(err)
      set(nbuf 0) # no `buffers`: nothing allocated
    endif()
    if(nbuf GREATER 0)
      math(EXPR last "${nbuf} - 1")
      foreach(i RANGE ${last})
        string(JSON key MEMBER "${text}" buffers ${i})
        string(JSON f ERROR_VARIABLE err GET "${text}" buffers "${key}" file)
        if(NOT err AND NOT f STREQUAL "")
          list(APPEND files "${f}")
        endif()
      endforeach()
    endif()
  else()
    string(REGEX MATCHALL "(^|\n)[ \t]*buffer[ \t]+%[^ \t]+[ \t]+\"[^\"\n]*\"" lines "${text}")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE ".*\"([^\"]*)\"$" "\\1" f "${line}")
      if(NOT f STREQUAL "")
        list(APPEND files "${f}")
      endif()
    endforeach()
  endif()
  set(abs "")
  foreach(f IN LISTS files)
    get_filename_component(f "${f}" ABSOLUTE BASE_DIR "${base}")
    list(APPEND abs "${f}")
  endforeach()
  set(${out} "${abs}" PARENT_SCOPE)
endfunction()

# The triple a model is compiled for: TARGET, else the project's (TGC_TARGET,
# set by tgcConfig.cmake; "" = the host). Fails when TARGET's architecture is
# not the project's.
function(_tgc_model_target target requested out)
  set(project_target "${TGC_TARGET}")
  if(NOT requested)
    set(${out} "${project_target}" PARENT_SCOPE)
    return()
  endif()
  string(REGEX MATCH "^[^-]+" want "${requested}")
  if(project_target)
    string(REGEX MATCH "^[^-]+" have "${project_target}")
  else()
    set(have "${CMAKE_HOST_SYSTEM_PROCESSOR}")
    set(project_target "the host (${have})")
  endif()
  if(want STREQUAL "arm64")
    set(want aarch64)
  endif()
  if(NOT want STREQUAL have)
    message(FATAL_ERROR "tgc_add_model(${target}): TARGET ${requested}, but this project builds for ${project_target}: "
                        "configure it for ${requested} with a toolchain file (tgc installs one per target it has a "
                        "runtime for: <prefix>/lib/cmake/tgc/toolchains/<triple>.cmake, docs/deploy.md)")
  endif()
  set(${out} "${requested}" PARENT_SCOPE)
endfunction()

function(tgc_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 M "OBJECT;EMBED_WEIGHTS;GEN_TEST;GEN_BENCHMARK" "GRAPH;TARGET;CPU;NAME;WEIGHTS_MODE"
                        "WEIGHTS;EMIT")
  if(M_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tgc_add_model(${target}): unknown arguments: ${M_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT M_GRAPH)
    message(FATAL_ERROR "tgc_add_model(${target}): GRAPH <file> is required")
  endif()
  if(NOT TARGET tgc::tgc OR NOT TARGET tgc::runtime)
    message(FATAL_ERROR "tgc_add_model(${target}): needs tgc::tgc and tgc::runtime (find_package(tgc CONFIG))")
  endif()
  get_filename_component(graph "${M_GRAPH}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${graph}")
    message(FATAL_ERROR "tgc_add_model(${target}): graph '${graph}' does not exist")
  endif()
  if(DEFINED M_WEIGHTS)
    set(data "")
    foreach(f IN LISTS M_WEIGHTS)
      get_filename_component(f "${f}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND data "${f}")
    endforeach()
  else()
    _tgc_graph_data_files("${graph}" data)
  endif()
  foreach(f IN LISTS data)
    if(NOT EXISTS "${f}")
      message(FATAL_ERROR "tgc_add_model(${target}): ${M_GRAPH} names the data file ${f}, which does not exist "
                          "(WEIGHTS lists the files instead of the graph)")
    endif()
  endforeach()
  # Editing the graph can change its data files: reconfigure then.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${graph}")

  # The weights mode; auto is resolved now, so the build knows its outputs.
  set(mode pass)
  if(M_EMBED_WEIGHTS)
    set(mode embed)
  endif()
  if(M_WEIGHTS_MODE)
    if(NOT M_WEIGHTS_MODE MATCHES "^(pass|embed|external|auto)$")
      message(FATAL_ERROR "tgc_add_model(${target}): WEIGHTS_MODE ${M_WEIGHTS_MODE}: expected pass, embed, external or auto")
    endif()
    if(M_EMBED_WEIGHTS AND NOT M_WEIGHTS_MODE STREQUAL "embed")
      message(FATAL_ERROR "tgc_add_model(${target}): EMBED_WEIGHTS contradicts WEIGHTS_MODE ${M_WEIGHTS_MODE}")
    endif()
    set(mode "${M_WEIGHTS_MODE}")
  endif()
  if(mode STREQUAL "auto")
    set(total 0)
    foreach(f IN LISTS data)
      file(SIZE "${f}" size)
      math(EXPR total "${total} + ${size}")
    endforeach()
    if(total GREATER 67108864)
      set(mode external)
    else()
      set(mode embed)
    endif()
  endif()

  set(outdir "${CMAKE_CURRENT_BINARY_DIR}/tgc")
  set(obj "${outdir}/${target}.o")
  set(hdr "${outdir}/${target}.h")
  set(emit obj header)
  set(outputs "${obj}" "${hdr}")
  foreach(kind IN LISTS M_EMIT)
    if(kind STREQUAL "exe")
      list(APPEND outputs "${outdir}/${target}")
    elseif(kind STREQUAL "llvm")
      list(APPEND outputs "${outdir}/${target}.ll")
    elseif(kind STREQUAL "mlir")
      list(APPEND outputs "${outdir}/${target}.mlir")
    elseif(kind STREQUAL "asm")
      list(APPEND outputs "${outdir}/${target}.s")
    elseif(NOT kind MATCHES "^(obj|header)$")
      message(FATAL_ERROR "tgc_add_model(${target}): EMIT ${kind}: expected exe, llvm, mlir or asm")
    endif()
    list(APPEND emit "${kind}")
  endforeach()
  if(M_GEN_TEST)
    list(APPEND emit test)
    list(APPEND outputs "${outdir}/${target}_test.c")
  endif()
  if(M_GEN_BENCHMARK)
    list(APPEND emit benchmark)
    list(APPEND outputs "${outdir}/${target}_benchmark.c")
  endif()
  list(REMOVE_DUPLICATES emit)
  list(JOIN emit "," emit)
  set(weights_file "")
  if(mode STREQUAL "external")
    set(weights_file "${outdir}/${target}.weights")
    list(APPEND outputs "${weights_file}")
  endif()

  # tgc compile's default name is the stem made a C identifier, as here.
  if(M_NAME)
    set(name "${M_NAME}")
  else()
    string(MAKE_C_IDENTIFIER "${target}" name)
  endif()
  set(args "${graph}" -o "${obj}" --emit=${emit} --name "${name}")
  _tgc_model_target(${target} "${M_TARGET}" model_target)
  if(model_target)
    list(APPEND args --target "${model_target}")
  endif()
  if(M_CPU)
    list(APPEND args --cpu "${M_CPU}")
  endif()
  if(NOT mode STREQUAL "pass")
    list(APPEND args --weights=${mode})
  endif()
  file(MAKE_DIRECTORY "${outdir}")
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND "$<TARGET_FILE:tgc::tgc>" compile ${args}
    DEPENDS "${graph}" ${data} "$<TARGET_FILE:tgc::tgc>"
    COMMENT "tgc compile ${M_GRAPH} -> ${target}.o"
    VERBATIM)

  if(M_OBJECT)
    # CMake's OBJECT libraries do not pass on an object they did not compile,
    # so the object becomes an interface source: every consumer links it.
    add_custom_target(${target}_tgc_compile DEPENDS ${outputs})
    add_library(${target} INTERFACE)
    target_sources(${target} INTERFACE "${obj}")
    add_dependencies(${target} ${target}_tgc_compile)
    set(scope INTERFACE)
  else()
    add_library(${target} STATIC "${obj}" "${hdr}")
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C)
    set(scope PUBLIC)
  endif()
  target_include_directories(${target} ${scope} "$<BUILD_INTERFACE:${outdir}>")
  set_target_properties(${target} PROPERTIES TGC_WEIGHTS_FILE "${weights_file}")
  target_link_libraries(${target} ${scope} tgc::runtime)
  if(UNIX AND NOT APPLE)
    target_link_libraries(${target} ${scope} m) # the kernels call libm
  endif()

  if(M_GEN_TEST)
    add_executable(${target}_test "${outdir}/${target}_test.c")
    target_link_libraries(${target}_test PRIVATE ${target})
    add_test(NAME ${target}_test COMMAND ${target}_test) # ignored unless testing is enabled
  endif()
  if(M_GEN_BENCHMARK)
    add_executable(${target}_benchmark "${outdir}/${target}_benchmark.c")
    target_link_libraries(${target}_benchmark PRIVATE ${target})
  endif()
endfunction()
