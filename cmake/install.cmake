# cmake --install: the library, the public headers, a CMake package (find_package(convnd)) and
# a pkg-config file.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS convnd convnd_shared EXPORT convndTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS convnd-selftest RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

# The static library's own dependencies, for consumers of the installed package.
set(CONVND_PC_LIBS "-lpthread -lm -lstdc++")
set(CONVND_CONFIG_DEPS "find_dependency(Threads)\n")
set(CONVND_INSTALL_LINK Threads::Threads m stdc++)
if(CONVND_HAVE_CUDA)
  string(APPEND CONVND_CONFIG_DEPS "find_dependency(CUDAToolkit)\n")
  list(APPEND CONVND_INSTALL_LINK CUDA::cudart CUDA::cublas)
  set(CONVND_PC_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -lcublas -lcudart ${CONVND_PC_LIBS}")
endif()
if(CONVND_OPENBLAS)
  list(APPEND CONVND_INSTALL_LINK ${CONVND_OPENBLAS})
  set(CONVND_PC_LIBS "${CONVND_OPENBLAS} ${CONVND_PC_LIBS}")
endif()
target_link_libraries(convnd PUBLIC $<INSTALL_INTERFACE:${CONVND_INSTALL_LINK}>)

install(EXPORT convndTargets NAMESPACE convnd:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/convnd)
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/convndConfig.cmake CONTENT
"include(CMakeFindDependencyMacro)
${CONVND_CONFIG_DEPS}include(\"\${CMAKE_CURRENT_LIST_DIR}/convndTargets.cmake\")
" @ONLY)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/convndConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/convndConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/convndConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/convnd)

# Relocatable: the prefix is found from the .pc file's own folder, so `cmake --install --prefix`
# anywhere works.
file(RELATIVE_PATH CONVND_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/convnd.pc CONTENT
"prefix=\${pcfiledir}/${CONVND_PC_UP}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}

Name: convnd
Description: Hand-written CUDA convolution kernels behind one canonical conv_nd entry point
Version: ${PROJECT_VERSION}
Cflags: -I\${includedir}
Libs: -L\${libdir} -lconvnd
Libs.private: ${CONVND_PC_LIBS}
" @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/convnd.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
