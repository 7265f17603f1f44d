# Large teams on a small node (issue 25): a few programs at 32 and 64 ranks on the one
# node, oversubscribed 16x and 32x on a 2-core machine, so a cost that grows with the
# number of local ranks (lanes polled per pass, setup in MPI_Init, flat collectives)
# shows as a timeout. Included from tests/mpi/CMakeLists.txt; label "scale" (ctest -L
# scale runs them alone, -LE scale leaves them out).
#   p2p_ordering  non-overtaking with MPI_ANY_SOURCE/MPI_ANY_TAG, every protocol size
#   p2p_storm     the seeded storm: probes, cancels, wildcards
#   coll_stress   collectives of every family on six communicators, with skew
#   rma_halo      RMA halo exchange: fence, PSCW, lock_all, lock, shared windows
# The 64-rank runs cost minutes each on 2 cores; HMPI_TEST_SCALE_RANKS says which rank
# counts are registered (default: 32 and 64 with MPICH without sanitizer, 32 elsewhere;
# empty: none).
if(HMPI_MPI STREQUAL "mpich" AND NOT HMPI_SANITIZE)
  set(_scale_default "32;64")
else()
  set(_scale_default "32")
endif()
set(HMPI_TEST_SCALE_RANKS "${_scale_default}" CACHE STRING
  "rank counts of the large-team tests (label scale), e.g. 32;64; empty: none")

set(_scale_env "")
if(HMPI_MPI STREQUAL "openmpi")
  set(_scale_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
endif()
if(HMPI_SANITIZE MATCHES "address")
  list(APPEND _scale_env ASAN_OPTIONS=detect_leaks=0)
endif()

# The timeout of each program at each rank count: about 3x its time on a busy 2-core
# machine (docs/performance.md, "Scale").
set(_scale_timeout_32 240)
set(_scale_timeout_64 480)
foreach(np ${HMPI_TEST_SCALE_RANKS})
  if(DEFINED _scale_timeout_${np})
    set(_t ${_scale_timeout_${np}})
  else()
    math(EXPR _t "${np} * 8")
  endif()
  foreach(prog p2p_ordering p2p_storm coll_stress rma_halo)
    add_test(NAME mpi.scale.${prog}.np${np}
      COMMAND ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n ${np} $<TARGET_FILE:${prog}>)
    set_tests_properties(mpi.scale.${prog}.np${np} PROPERTIES TIMEOUT ${_t}
      LABELS "mpi;scale" PROCESSORS 2 ENVIRONMENT "${_scale_env}")
  endforeach()
endforeach()
