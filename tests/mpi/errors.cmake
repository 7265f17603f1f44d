# Argument checking (issue 8): included from tests/mpi/CMakeLists.txt.
#   errors_args          one row per case (function, bad argument, error class) under
#                        MPI_ERRORS_RETURN (partitioned calls' rows where the MPI has
#                        them); the program goes on; user handlers on a
#                        communicator and a window are called once per error
#   errors_args_disabled the same rows against the MPI below alone (HMPI_DISABLE=1)
#   errors_args_nocheck  HMPI_CHECK=0: the checks HMPI keeps, and valid arguments
#   errors.fatal.*       errors_fatal.py: under MPI_ERRORS_ARE_FATAL the job ends
#                        non-zero in bounded time with a line naming the function and
#                        the argument; calls before MPI_Init and after MPI_Finalize;
#                        under sessions alone (MPI 4), on a session's communicator and
#                        with an error of no object
#   errors_sessions      MPI 4: a finalized session, a pset that does not exist, a
#                        group of a finalized session, MPI_GROUP_NULL: the class and the
#                        handler the standard names (also with HMPI_DISABLE=1)
set(_err_dir ${CMAKE_CURRENT_LIST_DIR})
set(_err_env "")
if(HMPI_MPI STREQUAL "openmpi")
  set(_err_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
endif()
if(HMPI_SANITIZE MATCHES "address")
  list(APPEND _err_env ASAN_OPTIONS=detect_leaks=0)
endif()

hmpi_mpi_test(errors_args SOURCES ${_err_dir}/errors_args.c RANKS 2 4 NODE_SIZES 0 2
  ENV ${_err_env} TIMEOUT 60)
hmpi_mpi_test(errors_args_disabled SOURCES ${_err_dir}/errors_args.c RANKS 2 4
  ENV ${_err_env} HMPI_DISABLE=1 TIMEOUT 60)
hmpi_mpi_test(errors_args_nocheck SOURCES ${_err_dir}/errors_args.c RANKS 2 4 NODE_SIZES 0 2
  ENV ${_err_env} HMPI_CHECK=0 TIMEOUT 60)

add_executable(errors_fatal ${_err_dir}/errors_fatal.c)
target_include_directories(errors_fatal PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_link_libraries(errors_fatal PRIVATE hmpi)
find_program(HMPI_PYTHON3 python3 REQUIRED)
set(_fatal_cases send_rank bcast_root send_type acc_op before_init after_finalize)
if(HMPI_MPI_PART)
  list(APPEND _fatal_cases pready_range) # partitioned (MPICH 4, Open MPI 5)
endif()
if(HMPI_MPI4_CALLS)
  list(APPEND _fatal_cases session_rank session_group)
  hmpi_mpi_test(errors_sessions SOURCES ${_err_dir}/errors_sessions.c RANKS 2 4 NODE_SIZES 0 2
    ENV ${_err_env} TIMEOUT 60)
  hmpi_mpi_test(errors_sessions_disabled SOURCES ${_err_dir}/errors_sessions.c RANKS 2
    ENV ${_err_env} HMPI_DISABLE=1 TIMEOUT 60)
endif()
foreach(case ${_fatal_cases})
  set(_args --mpiexec ${HMPI_MPIEXEC} --program $<TARGET_FILE:errors_fatal> ${HMPI_EXIT_LOST})
  foreach(f ${HMPI_MPIEXEC_FLAGS})
    list(APPEND _args --launcher-flag=${f})
  endforeach()
  add_test(NAME mpi.errors.fatal.${case}
    COMMAND ${HMPI_PYTHON3} ${_err_dir}/errors_fatal.py ${case} --np 2 ${_args})
  set_tests_properties(mpi.errors.fatal.${case} PROPERTIES TIMEOUT 90 LABELS mpi PROCESSORS 2
    ENVIRONMENT "${_err_env}")
endforeach()
