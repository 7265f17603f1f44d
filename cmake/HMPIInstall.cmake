# make install: the libraries, hmpi.h, the tools, a CMake package (find_package(HMPI)
# gives HMPI::hmpi) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(TARGETS hmpi hmpi_static EXPORT HMPITargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/hmpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# hmpi.pc forces this header into every compile: it stops one against the other MPI's mpi.h.
if(HMPI_MPI STREQUAL "openmpi")
  set(HMPI_BUILT_OPENMPI 1)
  set(HMPI_MPI_NAME "Open MPI")
else()
  set(HMPI_BUILT_OPENMPI 0)
  set(HMPI_MPI_NAME "MPICH")
endif()
get_filename_component(HMPI_MPICC_NAME ${HMPI_MPICC} NAME)
configure_file(${PROJECT_SOURCE_DIR}/cmake/hmpi_mpi_check.h.in
  ${PROJECT_BINARY_DIR}/hmpi_mpi_check.h @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hmpi_mpi_check.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS hmpi_info RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS
  ${PROJECT_BINARY_DIR}/tools/install/hmpirun
  ${PROJECT_BINARY_DIR}/tools/install/hmpicc
  ${PROJECT_BINARY_DIR}/tools/install/hmpic++
  ${PROJECT_BINARY_DIR}/tools/install/hmpifort
  DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT HMPITargets NAMESPACE HMPI:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/HMPI)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/HMPIConfig.cmake.in
  ${PROJECT_BINARY_DIR}/HMPIConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/HMPI)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/HMPIConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/HMPIConfig.cmake ${PROJECT_BINARY_DIR}/HMPIConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/HMPI)

# hmpi.pc finds the prefix from its own place, so `cmake --install --prefix X` works.
file(RELATIVE_PATH HMPI_PC_TO_PREFIX
  /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${PROJECT_SOURCE_DIR}/cmake/hmpi.pc.in ${PROJECT_BINARY_DIR}/hmpi.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hmpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Man pages: hmpirun(1), hmpi_info(1), OPI_Alloc(3) and its .so links (OPI_Free,
# OPI_Give, OPI_Take, OPI_Igive, OPI_Itake).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/man/man1 ${PROJECT_SOURCE_DIR}/man/man3
  DESTINATION ${CMAKE_INSTALL_MANDIR} FILES_MATCHING PATTERN "*.[13]")
