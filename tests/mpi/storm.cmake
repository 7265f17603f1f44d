# Reliability runs across every part at once. Included from tests/mpi/CMakeLists.txt.
#   storm_all    seeded storm: p2p in flight during collectives, OPI and RMA epochs
#   mem_bounded  one million messages (and OPI passes): the resident set stays bounded
# -DHMPI_SOAK=ON adds mpi.storm_all.soak: 8 ranks on 2 simulated nodes for 10 minutes.
hmpi_mpi_test(storm_all SOURCES ${CMAKE_CURRENT_LIST_DIR}/storm_all.c RANKS 2 4 8
  NODE_SIZES 0 2 ENV ${env_mpi} TIMEOUT 240)
hmpi_mpi_test(mem_bounded SOURCES ${CMAKE_CURRENT_LIST_DIR}/mem_bounded.c RANKS 2 4
  NODE_SIZES 0 2 ENV ${env_mpi} TIMEOUT 300)
if(HMPI_SOAK)
  set(_soak_env ${env_mpi} HMPI_NODE_SIZE=4)
  add_test(NAME mpi.storm_all.soak COMMAND ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n 8
    $<TARGET_FILE:storm_all> --seconds=600)
  set_tests_properties(mpi.storm_all.soak PROPERTIES TIMEOUT 900 LABELS "mpi;soak"
    PROCESSORS 2 ENVIRONMENT "${_soak_env}")
endif()
