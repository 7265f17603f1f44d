# Chooses the MPI below: its compiler wrapper, its launcher and its flags.
# Debian installs both MPIs side by side; the explicit wrapper names select one.
if(HMPI_MPI STREQUAL "mpich")
  set(_hmpi_mpicc mpicc.mpich)
  set(_hmpi_mpiexec mpiexec.mpich)
elseif(HMPI_MPI STREQUAL "openmpi")
  set(_hmpi_mpicc mpicc.openmpi)
  set(_hmpi_mpiexec mpiexec.openmpi)
else()
  message(FATAL_ERROR "HMPI_MPI must be mpich or openmpi, not '${HMPI_MPI}'")
endif()

find_program(HMPI_MPICC NAMES ${_hmpi_mpicc} mpicc REQUIRED)
find_program(HMPI_MPIEXEC NAMES ${_hmpi_mpiexec} mpiexec REQUIRED)
set(MPI_C_COMPILER ${HMPI_MPICC} CACHE FILEPATH "" FORCE)
set(MPIEXEC_EXECUTABLE ${HMPI_MPIEXEC} CACHE FILEPATH "" FORCE)
find_package(MPI 3.0 REQUIRED COMPONENTS C)
# The version of the MPI below, from its mpi.h: Open MPI 4 and 5 differ in components
# (tests choose among them) and in what they check.
set(HMPI_MPI_VERSION "")
set(HMPI_OMPI_MAJOR 0)
find_file(_hmpi_mpi_h mpi.h PATHS ${MPI_C_INCLUDE_DIRS} NO_DEFAULT_PATH NO_CACHE)
if(_hmpi_mpi_h)
  file(STRINGS ${_hmpi_mpi_h} _hmpi_v
    REGEX "^#define[ \t]+(OMPI_(MAJOR|MINOR|RELEASE)_VERSION|MPICH_VERSION)[ \t]")
  foreach(_l ${_hmpi_v})
    if(_l MATCHES "MPICH_VERSION[ \t]+\"([0-9.]+)")
      set(HMPI_MPI_VERSION ${CMAKE_MATCH_1})
    elseif(_l MATCHES "OMPI_MAJOR_VERSION[ \t]+([0-9]+)")
      set(HMPI_OMPI_MAJOR ${CMAKE_MATCH_1})
      set(HMPI_MPI_VERSION ${CMAKE_MATCH_1})
    elseif(_l MATCHES "OMPI_(MINOR|RELEASE)_VERSION[ \t]+([0-9]+)")
      string(APPEND HMPI_MPI_VERSION ".${CMAKE_MATCH_2}")
    endif()
  endforeach()
endif()
message(STATUS "HMPI layers on ${HMPI_MPI} ${HMPI_MPI_VERSION}: ${HMPI_MPICC}, ${HMPI_MPIEXEC}")
# MPI 4.0's calls (MPI_Isendrecv, sessions): MPICH 4 says MPI 4; Open MPI 5.0 has them too
# though its mpi.h says MPI 3.1 (core/below.h, HMPI_MPI4_CALLS). Its _c calls it lacks.
if(MPI_C_VERSION_MAJOR GREATER_EQUAL 4 OR HMPI_OMPI_MAJOR GREATER_EQUAL 5)
  set(HMPI_MPI4_CALLS ON)
else()
  set(HMPI_MPI4_CALLS OFF)
endif()
# MPI 4.1's (MPI_Request_get_status_any & co.): MPICH 4.2, not Open MPI 5.0.
if(MPI_C_VERSION VERSION_GREATER_EQUAL 4.1)
  set(HMPI_MPI41_CALLS ON)
else()
  set(HMPI_MPI41_CALLS OFF)
endif()

# MPI 4's partitioned calls: MPICH 4 and Open MPI 5 have them (Open MPI 5's mpi.h still
# says MPI_VERSION 3), Open MPI 4.1 does not (src/core/below.h, HMPI_MPI4_CALLS). Their
# tests and benchmark are built where they are. MPICH 4.1 made the array of
# MPI_Pready_list const, MPICH 4.0 and Open MPI 5.0 did not: HMPI's definition must say
# what the mpi.h at hand declares.
set(HMPI_MPI_PART OFF)
if(MPI_C_VERSION_MAJOR GREATER_EQUAL 4 OR HMPI_OMPI_MAJOR GREATER_EQUAL 5)
  set(HMPI_MPI_PART ON)
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
  set(CMAKE_REQUIRED_QUIET ON)
  check_c_source_compiles([[
#include <mpi.h>
int MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request);
int main(void) { return 0; }
]] HMPI_PREADY_LIST_CONST)
  unset(CMAKE_REQUIRED_INCLUDES)
  unset(CMAKE_REQUIRED_QUIET)
endif()

# Extra launcher flags the tests need: Open MPI refuses root and more ranks than cores
# unless told. The benchmarks get only what they need to start: Open MPI turns
# mpi_yield_when_idle on by itself when the ranks outnumber the cores, and forcing it
# with fewer slows the MPI below (2 ranks, 8 B latency 0.60 against 0.24-0.47 us, a
# 1 MiB all-to-all 5-20% slower): an unfair baseline.
if(HMPI_MPI STREQUAL "openmpi")
  set(HMPI_MPIEXEC_FLAGS --oversubscribe --mca mpi_yield_when_idle 1)
  set(HMPI_BENCH_FLAGS --oversubscribe)
else()
  set(HMPI_MPIEXEC_FLAGS "")
  set(HMPI_BENCH_FLAGS "")
endif()
