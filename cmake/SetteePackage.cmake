# What `cmake --install` puts in the prefix, so that an application can use
# settee as a new user would, without this build tree:
#
#   include/settee/*.h                  the public C and C++ API
#   lib/libsettee.so.*, lib/libsettee.a  one library (capi/CMakeLists.txt)
#   lib/cmake/settee/                   find_package(settee): settee::settee
#                                       (shared) and settee::settee_static
#   lib/pkgconfig/settee.pc             pkg-config --cflags --libs settee
#                                       (add --static for libsettee.a)
#   bin/settee                          the executable
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/settee
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(TARGETS settee_shared settee_static EXPORT settee-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS settee RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(SETTEE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/settee)
install(EXPORT settee-targets NAMESPACE settee:: DESTINATION ${SETTEE_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/settee-config.cmake.in
  ${CMAKE_BINARY_DIR}/settee-config.cmake INSTALL_DESTINATION ${SETTEE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/settee-config-version.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/settee-config.cmake ${CMAKE_BINARY_DIR}/settee-config-version.cmake
        DESTINATION ${SETTEE_CMAKE_DIR})

# pkg-config: the static link line names every dependency's library file.
set(SETTEE_PC_LIBS_PRIVATE "")
foreach(dep ${SETTEE_LIBRARY_DEPS})
  if(dep MATCHES "^/")
    string(APPEND SETTEE_PC_LIBS_PRIVATE " ${dep}")
  endif()
endforeach()
set(SETTEE_PC_REQUIRES_PRIVATE "icu-i18n icu-uc libcrypto libcurl zlib simdjson")
string(APPEND SETTEE_PC_LIBS_PRIVATE " -lleveldb -lstdc++ -lpthread -lm")
if(SETTEE_WITH_JS)
  # libnode is not on the default search path (scripts/setup.sh).
  set(SETTEE_PC_RPATH " -Wl,-rpath,${LIBNODE_DIR}")
endif()
file(RELATIVE_PATH SETTEE_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" SETTEE_PC_UP "${SETTEE_PC_UP}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/settee.pc.in ${CMAKE_BINARY_DIR}/settee.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/settee.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
