# Hostile shared state: a sender corrupts its own envelope in flight (size, data
# pointer, source, protocol, tag, local rank); the receive fails with MPI_ERR_INTERN,
# guard bytes stay intact, the next messages arrive; a wrong sequence number loses
# nothing. Built against the internal headers and libhmpi.a (it reaches the envelope
# through the request). Included from
# tests/mpi/CMakeLists.txt; 2 ranks on the real node only (the envelope must exist).
hmpi_mpi_test(corrupt_envelope SOURCES ${CMAKE_CURRENT_LIST_DIR}/corrupt_envelope.c
  RANKS 2 ENV ${env_mpi} TIMEOUT 60 STATIC LIBS ${CMAKE_DL_LIBS})
target_compile_definitions(corrupt_envelope PRIVATE _GNU_SOURCE)
