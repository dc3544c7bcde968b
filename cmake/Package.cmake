# The installable CMake package: `cmake --install build --prefix P` puts the
# tgc executable, the runtime library with its headers (and the runtimes built
# for cross targets, lib/Runtime/CMakeLists.txt) and this package's config
# under P, and `find_package(tgc CONFIG)` then gives the imported targets
# tgc::tgc (the compiler), tgc::runtime and tgc::launcher (the host's, or in a
# project configured for a cross target that target's), and tgc_add_model().
include(CMakePackageConfigHelpers)
set(TGC_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tgc)

install(EXPORT tgcTargets NAMESPACE tgc:: DESTINATION ${TGC_CMAKE_INSTALL_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tgcConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/tgcConfig.cmake INSTALL_DESTINATION ${TGC_CMAKE_INSTALL_DIR})
# A 0.x release promises nothing across minor versions.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/tgcConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/tgcConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/tgcConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/TgcAddModel.cmake
  DESTINATION ${TGC_CMAKE_INSTALL_DIR})
# Toolchain files for projects that compile models for a cross target (docs/deploy.md).
file(GLOB TGC_TOOLCHAIN_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/toolchains/*.cmake)
install(FILES ${TGC_TOOLCHAIN_FILES} DESTINATION ${TGC_CMAKE_INSTALL_DIR}/toolchains)

# In this tree tgc::tgc and tgc::runtime are aliases of the real targets.
include(${CMAKE_CURRENT_LIST_DIR}/TgcAddModel.cmake)
