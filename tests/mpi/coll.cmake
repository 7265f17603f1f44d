# Collective tests (src/coll): every collective against a reference computed locally.
# Standard MPI programs: they pass on pure pass-through and on any correct MPI (where
# they dodge a known bug of the MPI below, the test says which). Each runs at 2, 4 and 8
# ranks, on the real node and on simulated 2-rank nodes (communicators that span nodes:
# hierarchical or passed through). Included from tests/mpi/CMakeLists.txt.
#   coll_bcast      bcast sizes x roots x buffer kinds x layouts; barrier semantics
#   coll_reduce     reduce/allreduce: every predefined op x type, sizes to 4 MiB, in
#                   place, user ops (commutative struct, non-commutative matrices)
#   coll_rs_scan    reduce_scatter(_block), scan, exscan: uneven blocks, in place
#   coll_gather     gather(v), scatter(v), allgather(v): layouts, gaps, in place
#   coll_alltoall   alltoall, alltoallv, alltoallw: layouts, uneven blocks, in place
#   coll_stress     random interleaving with skew on 6 communicators; p2p progress
#                   inside collectives (a rank in MPI_Ssend to one waiting in them)
#   coll_nonblocking  Ibarrier/Ibcast/Ireduce/Iallreduce and the persistent _init forms:
#                   sizes, roots, layouts, many outstanding, out of order, 1,000 starts
#   coll_neighbor   neighbourhood allgather(v)/alltoall(v,w), blocking, nonblocking and
#                   persistent: Cartesian 1-D to 3-D (periodic or not, dimensions of 1
#                   and 2), graph, distributed graphs with repeated, missing and self
#                   edges; 0 to 1.2 MiB blocks, derived types, gaps; 1,000 starts
#   coll_nonblocking_move  the other nonblocking and persistent forms (gather, scatter,
#                   allgather, alltoall and their v/w forms, reduce-scatter, scans) and
#                   every _c form (MPICH), each against the blocking call: sizes to 4 MiB,
#                   layouts, in place, roots, who starts first, many outstanding, a type
#                   freed while pending, every _init form started 1,000 times at once
#   coll_comm_free  2,000 communicators used and freed in opposite orders: their states go
#                   with them (the resident set stays bounded), no member waits
# Variants (the same executables):
#   (the variants run at 2 and 4 ranks: 8 oversubscribed ranks cost minutes)
#   .large    HMPI_COLL_INLINE_MAX=0: no slot copies, every payload by address or staged
#   .tree     HMPI_COLL_FLAT_MAX=1 HMPI_COLL_RADIX=2: barriers, fences and small
#             allreduces go through a binary tree (coll/tree.c; coll_bcast, coll_reduce,
#             coll_stress; at 8 ranks three levels)
#   .topo     .tree's, with HMPI_DOMAIN_SIZE=3: the tree cut at simulated L3 domains of 3
#             ranks (coll/tree.c; at 8 ranks, uneven domains, a non-commutative reduce)
#   .line     HMPI_COLL_LINE_MAX=8: teams of 4 and 8 meet in one line (barrier; 4-byte
#             allreduce at 4 ranks); .noline HMPI_COLL_LINE_MAX=0: 2-rank teams use
#             their slots (coll_bcast, coll_reduce, coll_stress)
#   .below    HMPI_DISABLE=1: the MPI below alone
set(_coll_dir ${CMAKE_CURRENT_LIST_DIR})
set(_coll_env "")
if(HMPI_MPI STREQUAL "openmpi")
  set(_coll_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
endif()
if(HMPI_SANITIZE MATCHES "address") # the MPI libraries leak at exit (see tests/CMakeLists.txt)
  list(APPEND _coll_env ASAN_OPTIONS=detect_leaks=0)
endif()
set(_coll_tests coll_bcast coll_reduce coll_rs_scan coll_gather coll_alltoall coll_stress
  coll_nonblocking coll_nonblocking_move coll_neighbor)

# coll_variant(name suffix RANKS ... NODE_SIZES ... ENV ...): more runs of name's program.
function(coll_variant name suffix)
  cmake_parse_arguments(V "" "" "RANKS;NODE_SIZES;ENV" ${ARGN})
  foreach(np ${V_RANKS})
    foreach(ns ${V_NODE_SIZES})
      set(tname mpi.${name}.${suffix}.np${np})
      set(env ${_coll_env} ${V_ENV})
      if(NOT ns EQUAL 0)
        set(tname ${tname}.ns${ns})
        list(APPEND env HMPI_NODE_SIZE=${ns})
      endif()
      add_test(NAME ${tname}
        COMMAND ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n ${np} $<TARGET_FILE:${name}>)
      set_tests_properties(${tname} PROPERTIES TIMEOUT 120 LABELS mpi PROCESSORS 2
        ENVIRONMENT "${env}")
    endforeach()
  endforeach()
endfunction()

# coll_nonblocking_move and coll_neighbor at 8 ranks on two simulated nodes took 25 s each
# over MPICH on the 2 cores, what every leg of CI repeats: they run at 8 ranks on one
# node only (4 ranks on two nodes cover their paths across nodes).
set(_coll_long coll_nonblocking_move coll_neighbor)
foreach(t ${_coll_tests})
  if(t IN_LIST _coll_long)
    hmpi_mpi_test(${t} SOURCES ${_coll_dir}/${t}.c RANKS 2 4 NODE_SIZES 0 2
      ENV ${_coll_env} TIMEOUT 120 LIBS m)
    add_test(NAME mpi.${t}.np8
      COMMAND ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n 8 $<TARGET_FILE:${t}>)
    set_tests_properties(mpi.${t}.np8 PROPERTIES TIMEOUT 120 LABELS mpi PROCESSORS 2
      ENVIRONMENT "${_coll_env}")
  else()
    hmpi_mpi_test(${t} SOURCES ${_coll_dir}/${t}.c RANKS 2 4 8 NODE_SIZES 0 2
      ENV ${_coll_env} TIMEOUT 120 LIBS m)
  endif()
  coll_variant(${t} large RANKS 2 4 NODE_SIZES 0 2 ENV HMPI_COLL_INLINE_MAX=0)
  coll_variant(${t} below RANKS 2 4 NODE_SIZES 0 ENV HMPI_DISABLE=1)
endforeach()
foreach(t coll_bcast coll_reduce coll_stress)
  coll_variant(${t} tree RANKS 4 NODE_SIZES 0 2 ENV HMPI_COLL_FLAT_MAX=1 HMPI_COLL_RADIX=2)
endforeach()
coll_variant(coll_reduce tree RANKS 8 NODE_SIZES 0 ENV HMPI_COLL_FLAT_MAX=1 HMPI_COLL_RADIX=2)
foreach(t coll_bcast coll_reduce coll_stress)
  coll_variant(${t} topo RANKS 8 NODE_SIZES 0
    ENV HMPI_COLL_FLAT_MAX=1 HMPI_COLL_RADIX=2 HMPI_DOMAIN_SIZE=3)
endforeach()
foreach(t coll_bcast coll_reduce coll_stress)
  coll_variant(${t} line RANKS 4 NODE_SIZES 0 ENV HMPI_COLL_LINE_MAX=8)
  coll_variant(${t} noline RANKS 2 NODE_SIZES 0 ENV HMPI_COLL_LINE_MAX=0)
endforeach()
coll_variant(coll_bcast line RANKS 8 NODE_SIZES 0 ENV HMPI_COLL_LINE_MAX=8)

# coll_large: MPI 4's large-count collectives, _c and int calls mixed in one collective
# (MPICH only: Open MPI 4.1 has none); a 2 GiB MPI_Bcast_c between ranks 0 and 1.
if(HMPI_MPI STREQUAL "mpich")
  hmpi_mpi_test(coll_large SOURCES ${CMAKE_CURRENT_LIST_DIR}/coll_large.c RANKS 2 4 8
    NODE_SIZES 0 2 TIMEOUT 300)
endif()

# Issue 23: buffers at MPI_BOTTOM with absolute-address types (collectives, receives), and
# predefined ops on pairs the standard does not list (what the MPI below takes works,
# what it refuses is MPI_ERR_OP); reductions on the character types give the MPI below's
# results (coll_char). 2 and 4 ranks, and on the MPI below alone.
foreach(t coll_bottom coll_op_ext coll_char)
  hmpi_mpi_test(${t} SOURCES ${_coll_dir}/${t}.c RANKS 2 4 NODE_SIZES 0 2
    ENV ${_coll_env} TIMEOUT 120)
  coll_variant(${t} below RANKS 2 4 NODE_SIZES 0 ENV HMPI_DISABLE=1)
endforeach()
hmpi_mpi_test(coll_comm_free SOURCES ${_coll_dir}/coll_comm_free.c RANKS 2 NODE_SIZES 0 1
  ENV ${_coll_env} TIMEOUT 120)
