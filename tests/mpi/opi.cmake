# OPI tests (ownership passing, src/opi): included from tests/mpi/CMakeLists.txt.
# Each runs at 2, 4 and 8 ranks on the real node (local peers: pointers pass), on
# simulated one-rank nodes (every peer remote: contents pass) and two-rank nodes
# (both kinds at once, ANY_SOURCE takes mixing them); some also under
# HMPI_DISABLE=1 and with HMPI's protocols or OPI's pools forced to their limits.
#   opi_basic     give/take local and remote, sizes, self, PROC_NULL, datatypes, comms
#   opi_wildcard  ANY_SOURCE/ANY_TAG takes, per-giver order, isolation from MPI traffic
#   opi_mixed     OPI and ordinary requests in one Waitall/Waitany/Waitsome/Testall
#   opi_trim      1e5 gives to one rank: pools and heap use stay bounded
#   opi_errors    every misuse returns its error class under MPI_ERRORS_RETURN
#   opi_types     a struct type with its blocks declared in reversed order: takes unpack
#   opi_threads   MPI_THREAD_MULTIPLE: threads give, take and free concurrently
#   opi_scatter, opi_alltoall   the collective patterns of apps/opi_collectives
set(_opi_dir ${CMAKE_CURRENT_LIST_DIR})
# The launcher environment of tests/mpi/CMakeLists.txt (Open MPI as root, ASan options).
set(_opi_env ${env_mpi})

# opi_test(name [SOURCES ...] [TIMEOUT s]): built once, run at 2/4/8 ranks on node sizes
# 0, 1 and 2. opi_variant(name suffix RANKS ... NODE_SIZES ... ENV ...): the same binary
# again under other settings.
function(opi_test name)
  cmake_parse_arguments(O "" "TIMEOUT" "SOURCES;ENV" ${ARGN})
  if(NOT O_TIMEOUT)
    set(O_TIMEOUT 90)
  endif()
  if(NOT O_SOURCES)
    set(O_SOURCES ${_opi_dir}/${name}.c)
  endif()
  hmpi_mpi_test(${name} SOURCES ${O_SOURCES} RANKS 2 4 8 NODE_SIZES 0 1 2
    ENV ${_opi_env} ${O_ENV} TIMEOUT ${O_TIMEOUT})
endfunction()

function(opi_variant name suffix)
  cmake_parse_arguments(O "" "TIMEOUT" "RANKS;NODE_SIZES;ENV" ${ARGN})
  if(NOT O_TIMEOUT)
    set(O_TIMEOUT 90)
  endif()
  foreach(np ${O_RANKS})
    foreach(ns ${O_NODE_SIZES})
      set(tname mpi.${name}_${suffix}.np${np})
      set(env ${_opi_env} ${O_ENV})
      if(NOT ns EQUAL 0)
        set(tname ${tname}.ns${ns})
        list(APPEND env HMPI_NODE_SIZE=${ns})
      endif()
      add_test(NAME ${tname}
        COMMAND ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n ${np} $<TARGET_FILE:${name}>)
      set_tests_properties(${tname} PROPERTIES TIMEOUT ${O_TIMEOUT} LABELS mpi
        PROCESSORS 2 ENVIRONMENT "${env}")
    endforeach()
  endforeach()
endfunction()

foreach(t opi_basic opi_wildcard opi_mixed opi_errors opi_types)
  opi_test(${t})
  # Pass-through: every give sends the contents through the MPI below.
  opi_variant(${t} disabled RANKS 2 4 NODE_SIZES 0 ENV HMPI_DISABLE=1)
endforeach()
# The pointer travels by HMPI's copy protocol instead of inline; no pool at all.
opi_variant(opi_basic noimm RANKS 2 4 NODE_SIZES 0 2 ENV HMPI_IMMEDIATE_MAX=0)
opi_variant(opi_mixed nopool RANKS 2 4 NODE_SIZES 0 2 ENV HMPI_OPI_POOL_DEPTH=0)
opi_test(opi_trim TIMEOUT 120 ENV HMPI_OPI_POOL_MAX=256K HMPI_OPI_POOL_DEPTH=16)
opi_test(opi_threads)
target_link_libraries(opi_threads PRIVATE Threads::Threads)
opi_variant(opi_threads disabled RANKS 2 4 NODE_SIZES 0 ENV HMPI_DISABLE=1)

# The collective patterns of the OPI paper, §3.5, as shipped in apps/.
set(_opi_apps ${PROJECT_SOURCE_DIR}/apps/opi_collectives)
opi_test(opi_scatter SOURCES ${_opi_apps}/opi_scatter.c)
opi_test(opi_alltoall SOURCES ${_opi_apps}/opi_alltoall.c)
opi_variant(opi_alltoall disabled RANKS 2 4 NODE_SIZES 0 ENV HMPI_DISABLE=1)
