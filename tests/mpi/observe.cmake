# What HMPI did, visible to people and tools (docs/observability.md). Included from
# tests/mpi/CMakeLists.txt.
#   mpit_client   a generic MPI_T tool: the below's variables at their indices, HMPI's
#                 after them, counters that follow the messages, a cvar that changes the
#                 protocol, the MPI_T_ERR_* of the standard; before MPI_Init too
#   stats_wait    a rank that waits 200 ms for a message reports at least that, one that
#                 never waits about nothing (MPI_T and the report)
#   stats_report  the finalize report: table totals = the ranks' counters in the JSON,
#                 tools/hmpi-stats prints the same table, per-rank lines, pass-through
set(_obs_dir ${CMAKE_CURRENT_LIST_DIR})
set(_obs_env "")
if(HMPI_MPI STREQUAL "openmpi")
  set(_obs_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
endif()
if(HMPI_SANITIZE MATCHES "address")
  list(APPEND _obs_env ASAN_OPTIONS=detect_leaks=0)
endif()

hmpi_mpi_test(mpit_client SOURCES ${_obs_dir}/mpit_client.c RANKS 2 4 8 NODE_SIZES 0 1
  ENV ${_obs_env} TIMEOUT 120 LIBS ${CMAKE_DL_LIBS})
hmpi_mpi_test(mpit_client_disabled SOURCES ${_obs_dir}/mpit_client.c RANKS 2
  ENV ${_obs_env} HMPI_DISABLE=1 ARGS --expect=off TIMEOUT 120 LIBS ${CMAKE_DL_LIBS})
if(NOT HMPI_SANITIZE MATCHES "address|thread|memory")
  # The same client built with the plain MPI wrapper, HMPI preloaded by hmpirun.
  hmpi_mpi_test(mpit_client_plain PLAIN SOURCES ${_obs_dir}/mpit_client.c RANKS 2 4
    NODE_SIZES 0 1 ENV ${_obs_env} TIMEOUT 120 LIBS ${CMAKE_DL_LIBS})
endif()

# The wait counters through MPI_T, on the real node and with rank 0 and 1 on two nodes.
hmpi_mpi_test(stats_wait SOURCES ${_obs_dir}/stats_wait.c RANKS 2 3 NODE_SIZES 0 1
  ENV ${_obs_env} TIMEOUT 60)
hmpi_mpi_test(stats_job SOURCES ${_obs_dir}/stats_job.c RANKS 2 ENV ${_obs_env} TIMEOUT 60)

# The finalize report, judged by stats_report.py: MODE ranks node-size, ...
set(_obs_driver ${HMPI_PYTHON3} ${_obs_dir}/stats_report.py --mpiexec ${HMPI_MPIEXEC}
  --program $<TARGET_FILE:stats_job> --wait-program $<TARGET_FILE:stats_wait>
  --hmpi-stats ${PROJECT_SOURCE_DIR}/tools/hmpi-stats)
foreach(f ${HMPI_MPIEXEC_FLAGS})
  list(APPEND _obs_driver --launcher-flag=${f})
endforeach()
set(_obs_runs json 2 0  json 2 1  json 4 0  json 4 2  json 8 0  json 8 2  table 4 2
  per-rank 4 0  disabled 2 0  disabled 4 2  wait 2 0  wait 2 1  wait 4 2)
while(_obs_runs)
  list(POP_FRONT _obs_runs mode np ns)
  set(tname mpi.stats_report.${mode}.np${np})
  if(NOT ns EQUAL 0)
    set(tname ${tname}.ns${ns})
  endif()
  add_test(NAME ${tname} COMMAND ${_obs_driver} ${mode} --np ${np} --node-size ${ns})
  set_tests_properties(${tname} PROPERTIES TIMEOUT 240 LABELS mpi PROCESSORS 2
    ENVIRONMENT "${_obs_env}")
endwhile()
