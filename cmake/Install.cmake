# `cmake --install build [--prefix DIR]` (issue 26 item 2): the tool, the
# headers, the library (static, or shared with ONNXP_BUILD_SHARED), a CMake
# package and a pkg-config file. A consumer writes
#   find_package(onnx-partition REQUIRED)
#   target_link_libraries(app PRIVATE onnx-partition::onnxp)
# or `pkg-config --cflags --libs onnx-partition`. test/install/ builds such a
# consumer against a scratch prefix.
include(CMakePackageConfigHelpers)
set(ONNXP_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/onnx-partition)

# A shared libonnxp is found by the installed tool beside it, wherever the
# prefix is.
if(ONNXP_BUILD_SHARED)
  set_target_properties(onnx-partition PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
endif()
install(TARGETS onnx-partition RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS onnxp onnxp_ir10_proto EXPORT onnx-partition-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/onnx-partition DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT onnx-partition-targets NAMESPACE onnx-partition:: DESTINATION ${ONNXP_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/onnx-partitionConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/onnx-partitionConfig.cmake INSTALL_DESTINATION ${ONNXP_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/onnx-partitionConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/onnx-partitionConfig.cmake
              ${PROJECT_BINARY_DIR}/onnx-partitionConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/third_party/cmake/FindCBC.cmake
        DESTINATION ${ONNXP_CMAKE_DIR})
# The .pc file finds the prefix from its own place (relocatable: the
# consumer test installs to a scratch prefix).
file(RELATIVE_PATH ONNXP_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
configure_file(${PROJECT_SOURCE_DIR}/cmake/onnx-partition.pc.in ${PROJECT_BINARY_DIR}/onnx-partition.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/onnx-partition.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
