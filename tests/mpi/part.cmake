# Partitioned point-to-point (MPI-4.1 §4; src/p2p/part.c): where the MPI below has the
# calls (HMPI_MPI_PART: MPICH 4, Open MPI 5; not Open MPI 4.1). Included from
# tests/mpi/CMakeLists.txt. Each at 2 and 4 ranks, on the real node and on simulated
# 2-rank nodes (HMPI_NODE_SIZE=2: some neighbours are remote, and the MPI below's own
# partitioned calls carry them); the PLAIN builds run unmodified under hmpirun.
#   part_basic   a ring, byte for byte: partition counts equal and not, heap, static and
#                stack buffers, Pready/Pready_range/Pready_list, Startall, derived types,
#                the order of initialization, PROC_NULL, requests freed
#   part_early   early bird, proven by a handshake: the receiver sees (MPI_Parrived) and
#                checks a partition while the sender has not yet marked the others
#   part_rounds  1,000 MPI_Start rounds, the send buffer rewritten between them, heap and
#                static, and a sender that starts its next round while the receiver copies
#   part_threads MPI_THREAD_MULTIPLE: sender threads mark partitions at once, receiver
#                threads poll MPI_Parrived for theirs and check them as they arrive
# The bad-input cases are rows of errors_args.c; a rank killed in a partitioned transfer
# is the driver's scenario kill-part.
set(_part_dir ${CMAKE_CURRENT_LIST_DIR})
set(_part_env "")
if(HMPI_MPI STREQUAL "openmpi")
  set(_part_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
endif()
set(_part_plain ON)
if(HMPI_SANITIZE MATCHES "address|thread|memory")
  set(_part_plain OFF)
endif()
function(part_test name)
  cmake_parse_arguments(P "" "TIMEOUT" "RANKS" ${ARGN})
  hmpi_mpi_test(${name} SOURCES ${_part_dir}/${name}.c RANKS ${P_RANKS} NODE_SIZES 0 2
    ENV ${_part_env} TIMEOUT ${P_TIMEOUT} LIBS Threads::Threads)
  if(_part_plain)
    hmpi_mpi_test(${name}_plain PLAIN SOURCES ${_part_dir}/${name}.c RANKS 2
      ENV ${_part_env} TIMEOUT ${P_TIMEOUT} LIBS Threads::Threads)
  endif()
endfunction()
part_test(part_basic  RANKS 2 4 TIMEOUT 120)
part_test(part_early  RANKS 2 4 TIMEOUT 60)
part_test(part_rounds RANKS 2 4 TIMEOUT 180)
part_test(part_threads RANKS 2 4 TIMEOUT 120)
# The same programs on the MPI below alone (HMPI_DISABLE=1): the tests are the standard's.
hmpi_mpi_test(part_basic_disabled SOURCES ${_part_dir}/part_basic.c RANKS 2
  ENV ${_part_env} HMPI_DISABLE=1 TIMEOUT 120)
