# FindCBC.cmake - locate COIN-OR CBC (Debian coinor-libcbc-dev) through
# pkg-config and expose it as the imported target CBC::CBC.
find_package(PkgConfig REQUIRED)
pkg_check_modules(CBC_PC QUIET IMPORTED_TARGET cbc)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CBC REQUIRED_VARS CBC_PC_FOUND VERSION_VAR CBC_PC_VERSION)
if(CBC_FOUND AND NOT TARGET CBC::CBC)
  add_library(CBC::CBC INTERFACE IMPORTED)
  target_link_libraries(CBC::CBC INTERFACE PkgConfig::CBC_PC)
endif()
