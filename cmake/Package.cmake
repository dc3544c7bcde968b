# The installable CMake package: `cmake --install build --prefix P` puts the
# tgc executable, the runtime library with its headers and this package's
# config under P, and `find_package(tgc CONFIG)` then gives the imported
# targets tgc::tgc (the compiler) and tgc::runtime, and tgc_add_model().
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

# In this tree tgc::tgc and tgc::runtime are aliases of the real targets.
include(${CMAKE_CURRENT_LIST_DIR}/TgcAddModel.cmake)
