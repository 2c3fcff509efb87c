# What beamlab gives other projects, and where an install puts it:
#
#   lib/libbeamlab.so             beamlab::beamlab: the engine, the front-ends, the database,
#                                 the tuner and the reports, in one shared library
#   include/beamlab/...           its headers, as <beamlab/beamlab.hpp> (cmake/public_headers.cmake)
#   lib/cmake/beamlab/            find_package(beamlab): beamlabConfig.cmake and its version file
#   lib/pkgconfig/beamlab.pc      pkg-config --cflags --libs beamlab
#   bin/beamlab, bin/beamlab-gui  the CLI and the workbench
#   libexec/beamlab/              the sandboxed worker and the benchmark suite, found relative to
#                                 the program or library that needs them (tuner/measure/sandbox.cpp)
#   lib/python3/dist-packages/beamlab/   import beamlab (python/)
#   share/man/man1, share/bash-completion/completions   (apps/)
#
# A .deb of the same tree: cpack -G DEB in the build folder.
include(CMakePackageConfigHelpers)
find_package(nlohmann_json REQUIRED)

# ---- the library: every layer's objects, linked against their dependencies
set(beamlab_layers beamlab_support beamlab_ir beamlab_rewrite beamlab_schedule beamlab_opt
  beamlab_codegen beamlab_runtime beamlab_realize beamlab_tensor beamlab_api beamlab_expr
  beamlab_onnx beamlab_ir_text beamlab_db beamlab_tuner beamlab_reports)
add_library(beamlab_shared SHARED)
foreach(layer IN LISTS beamlab_layers)
  target_sources(beamlab_shared PRIVATE $<TARGET_OBJECTS:${layer}>)
endforeach()
# The layers' own dependencies (LLVM, OpenMP, SQLite, libonnx, fmt, ...); their archives add
# nothing, every symbol being defined by the objects above.
target_link_libraries(beamlab_shared PRIVATE ${beamlab_layers})
if(NOT BEAMLAB_SANITIZE) # a sanitized library leaves the runtime's symbols to the program
  target_link_options(beamlab_shared PRIVATE -Wl,--no-undefined)
endif()
set_target_properties(beamlab_shared PROPERTIES OUTPUT_NAME beamlab EXPORT_NAME beamlab
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
target_compile_features(beamlab_shared INTERFACE cxx_std_20)
target_include_directories(beamlab_shared INTERFACE
  $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
# What the public headers include from elsewhere (both header-only).
target_link_libraries(beamlab_shared INTERFACE tl::expected nlohmann_json::nlohmann_json)
add_library(beamlab::beamlab ALIAS beamlab_shared)

# ---- the public headers, written to the build tree's include/ (and installed from there)
add_custom_target(beamlab_headers ALL
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DOUT=${CMAKE_BINARY_DIR}/include
          -P ${PROJECT_SOURCE_DIR}/cmake/public_headers.cmake
  COMMENT "Writing the public headers to include/beamlab" VERBATIM)
add_dependencies(beamlab_shared beamlab_headers)

# ---- where the helper programs are, relative to bin/ and to lib/ (tuner/measure/sandbox.cpp)
set(helpers_dir ${CMAKE_INSTALL_LIBEXECDIR}/beamlab) # bench/ installs beamlab-bench there too
file(RELATIVE_PATH helpers_from_bin /p/${CMAKE_INSTALL_BINDIR} /p/${helpers_dir})
file(RELATIVE_PATH helpers_from_lib /p/${CMAKE_INSTALL_LIBDIR} /p/${helpers_dir})
set_property(SOURCE ${PROJECT_SOURCE_DIR}/tuner/measure/sandbox.cpp DIRECTORY ${PROJECT_SOURCE_DIR}/tuner
  APPEND PROPERTY COMPILE_DEFINITIONS BEAMLAB_HELPERS_FROM_BIN="${helpers_from_bin}"
  BEAMLAB_HELPERS_FROM_LIB="${helpers_from_lib}")

# ---- install rules
install(TARGETS beamlab_shared EXPORT beamlabTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library)
install(DIRECTORY ${CMAKE_BINARY_DIR}/include/beamlab DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT library)
install(EXPORT beamlabTargets NAMESPACE beamlab:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/beamlab
  COMPONENT library)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/beamlabConfig.cmake.in
  ${CMAKE_BINARY_DIR}/beamlabConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/beamlab)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/beamlabConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/beamlabConfig.cmake ${CMAKE_BINARY_DIR}/beamlabConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/beamlab COMPONENT library)
file(RELATIVE_PATH pc_to_prefix /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${PROJECT_SOURCE_DIR}/cmake/beamlab.pc.in ${CMAKE_BINARY_DIR}/beamlab.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/beamlab.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
  COMPONENT library)

install(TARGETS beamlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT programs)
if(TARGET beamlab-gui)
  install(TARGETS beamlab-gui RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT programs)
endif()
install(TARGETS beamlab-worker RUNTIME DESTINATION ${helpers_dir} COMPONENT programs)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT programs)

# ---- a .deb of the install tree (cpack -G DEB)
set(CPACK_PACKAGE_NAME beamlab)
set(CPACK_PACKAGE_VENDOR beamlab)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Tensor compiler with a BEAM-search autotuner and workbench")
set(CPACK_PACKAGE_CONTACT "beamlab developers <beamlab@localhost>")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3-numpy")
# What the installed headers include (header-only), for building against the library.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libexpected-dev, nlohmann-json3-dev, clang-19")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
include(CPack)
