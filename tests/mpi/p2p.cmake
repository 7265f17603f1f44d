# Point-to-point tests: the semantics the intra-node engine (src/p2p) must keep.
# Standard MPI programs: they pass on pure pass-through and on any correct MPI.
# Each runs at 2, 4 and 8 ranks, on the real node and on simulated 2-rank nodes (so
# some peers are remote); the ones marked PLAIN also run as unmodified mpicc binaries
# under hmpirun. Included from tests/mpi/CMakeLists.txt.
#   p2p_boundaries      sizes at every protocol threshold x buffer kinds x modes
#   p2p_ordering        non-overtaking per (sender, tag), wildcards, mixed protocols
#   p2p_storm           seeded random storm: probes, cancels, wildcards, checksums
#   p2p_errors          error classes, truncation, PROC_NULL, statuses, Request_*
#   p2p_datatypes       different layouts of one type signature on both sides
#   p2p_modes           Ssend/Rsend/Bsend, Sendrecv(_replace), persistent, mprobe
#   p2p_mixed_requests  p2p and collective requests in one Wait*/Test* array
#   p2p_comms           matching is per communicator; intercommunicators
#   p2p_threads         MPI_THREAD_MULTIPLE (or FUNNELED) traffic
#   p2p_large           MPI 4's _c calls against int calls; messages past 2 GiB
#   p2p_pipe            static send buffers: the pipelined bounce (HMPI_PIPE_CHUNK)
#   p2p_short           blocking small Send/Recv: what stands in the short way's way
#   p2p_lanes           a neighbour exchange: lanes opened on a pair's first message
#   p2p_isendrecv       MPI_Isendrecv(_replace)(_c) against every send and receive form
#   p2p_status_error    single-completion calls leave a status's MPI_ERROR alone
#   p2p_get_status      a loop polling MPI_Request_get_status alone ends (progress)
#   p2p_handles         requests and messages through MPI_Request_c2f/f2c, Message_c2f/f2c
#   p2p_status_arrays   MPI 4.1's MPI_Request_get_status_any/all/some over mixed arrays
#   p2p_buffers         MPI 4.1's buffers: a communicator's, a session's, automatic; flushes
#   p2p_type_free       datatypes freed while operations with them are pending
#   comm_idup           MPI_Comm_idup is nonblocking: staggered, intercomms, overlapped
#   intercomm           point-to-point on intercommunicators (created, dup, split, idup,
#                       from groups under a session), HMPI's on a node; merged
#   p2p_reclaim         send buffers rewritten between sends, or sent again unchanged
#   p2p_behind_coll     a collective call (first on its comm, constructors, windows,
#                       neighbourhood collectives, MPI_Win_set_info) lets a receive
#                       posted before it match a peer's MPI_Ssend (progress)
set(_p2p_dir ${CMAKE_CURRENT_LIST_DIR})
set(_p2p_ranks 2 4 8)
set(_p2p_nodes 0 2)
# Open MPI refuses to start as root unless told; harmless otherwise.
set(_p2p_env "")
if(HMPI_MPI STREQUAL "openmpi")
  set(_p2p_env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
endif()
# PLAIN variants preload an uninstrumented libhmpi: not under allocator-owning sanitizers.
set(_p2p_plain ON)
if(HMPI_SANITIZE MATCHES "address|thread|memory")
  set(_p2p_plain OFF)
endif()

# p2p_test(name TIMEOUT s [PLAIN]): name.c at every rank count and node size, and with
# PLAIN also as name_plain (plain mpicc, run under hmpirun).
function(p2p_test name)
  cmake_parse_arguments(P "PLAIN" "TIMEOUT" "" ${ARGN})
  hmpi_mpi_test(${name} SOURCES ${_p2p_dir}/${name}.c RANKS ${_p2p_ranks}
    NODE_SIZES ${_p2p_nodes} ENV ${_p2p_env} TIMEOUT ${P_TIMEOUT} LIBS Threads::Threads)
  if(P_PLAIN AND _p2p_plain)
    hmpi_mpi_test(${name}_plain PLAIN SOURCES ${_p2p_dir}/${name}.c RANKS ${_p2p_ranks}
      NODE_SIZES ${_p2p_nodes} ENV ${_p2p_env} TIMEOUT ${P_TIMEOUT} LIBS Threads::Threads)
  endif()
endfunction()

p2p_test(p2p_boundaries     TIMEOUT 120 PLAIN)
p2p_test(p2p_ordering       TIMEOUT 120 PLAIN)
p2p_test(p2p_storm          TIMEOUT 120 PLAIN)
p2p_test(p2p_errors         TIMEOUT 60)
target_link_libraries(p2p_errors PRIVATE ${CMAKE_DL_LIBS}) # below_sym.h
target_compile_definitions(p2p_errors PRIVATE _GNU_SOURCE)
# 2 GiB messages between ranks 0 and 1: on the real node and on 1-rank nodes (every peer
# through the MPI below).
hmpi_mpi_test(p2p_large SOURCES ${_p2p_dir}/p2p_large.c RANKS 2 4 NODE_SIZES 0 1
  ENV ${_p2p_env} TIMEOUT 300)
p2p_test(p2p_datatypes      TIMEOUT 60)
p2p_test(p2p_modes          TIMEOUT 90)
p2p_test(p2p_mixed_requests TIMEOUT 90)
p2p_test(p2p_comms          TIMEOUT 90)
p2p_test(p2p_threads        TIMEOUT 90)
p2p_test(p2p_pipe           TIMEOUT 60  PLAIN)
p2p_test(p2p_short          TIMEOUT 60  PLAIN)
p2p_test(p2p_lanes          TIMEOUT 60  PLAIN)
p2p_test(p2p_handles        TIMEOUT 60  PLAIN)
# MPI 4's calls (MPI_Isendrecv, sessions): where the MPI below's mpi.h has them.
if(HMPI_MPI4_CALLS)
  p2p_test(p2p_isendrecv    TIMEOUT 90  PLAIN)
endif()
if(HMPI_MPI41_CALLS)
  p2p_test(p2p_status_arrays TIMEOUT 60 PLAIN)
  p2p_test(p2p_buffers      TIMEOUT 60  PLAIN)
endif()
# New tests of issue 23 (2 and 4 ranks), and each on the MPI below alone, which must
# agree (the test is the standard's, not HMPI's).
function(p2p_test24 name)
  cmake_parse_arguments(P "" "TIMEOUT" "" ${ARGN})
  hmpi_mpi_test(${name} SOURCES ${_p2p_dir}/${name}.c RANKS 2 4 NODE_SIZES 0 2
    ENV ${_p2p_env} TIMEOUT ${P_TIMEOUT})
  hmpi_mpi_test(${name}_disabled SOURCES ${_p2p_dir}/${name}.c RANKS 2 4
    ENV ${_p2p_env} HMPI_DISABLE=1 TIMEOUT ${P_TIMEOUT})
endfunction()
p2p_test24(p2p_status_error TIMEOUT 60)
p2p_test24(p2p_get_status   TIMEOUT 60)
p2p_test24(p2p_type_free    TIMEOUT 60)
p2p_test24(comm_idup        TIMEOUT 60)
p2p_test24(p2p_behind_coll  TIMEOUT 60)
# Intercommunicators: HMPI's point-to-point between members on one node (its counters
# checked), the MPI below's collectives; also with HMPI_DISABLE=1.
hmpi_mpi_test(intercomm SOURCES ${_p2p_dir}/intercomm.c RANKS 2 4 8 NODE_SIZES 0 2
  ENV ${_p2p_env} TIMEOUT 90)
hmpi_mpi_test(intercomm_disabled SOURCES ${_p2p_dir}/intercomm.c RANKS 2
  ENV ${_p2p_env} HMPI_DISABLE=1 TIMEOUT 90)

# The tests below are registered by add_test itself (counters checked, repeated runs):
# their environment is what hmpi_mpi_test would give them.
set(_stats_env ${_p2p_env})
if(HMPI_SANITIZE MATCHES "address") # as hmpi_mpi_test: the MPIs leak from unloaded modules
  list(APPEND _stats_env ASAN_OPTIONS=detect_leaks=0)
endif()

# Lanes and the queue keep one order: p2p_ordering sends each phase's streams in one
# burst of Isends, so the first small messages of a phase fill the lanes (64 slots to
# each of at least two receivers, three phases) and the rest go on by the queue; the
# counters must show both ways taken (docs/design.md, "Lanes"). Real node only.
foreach(np 2 4)
  add_test(NAME mpi.p2p_ordering_lanes.np${np} COMMAND ${HMPI_PYTHON3}
    ${PROJECT_SOURCE_DIR}/tests/fortran/stats_check.py --ranks ${np} --timeout 110
    --each=msgs_lane>=100 --each=msgs_immediate>msgs_lane+1000 --each=msgs_remote==0
    --output=p2p_ordering:\ OK --
    ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n ${np} $<TARGET_FILE:p2p_ordering>)
  set_tests_properties(mpi.p2p_ordering_lanes.np${np} PROPERTIES TIMEOUT 120 LABELS mpi
    PROCESSORS 2 ENVIRONMENT "${_stats_env}")
endforeach()
# The same at 8 ranks, five runs in a row: in phase 0 receives are pre-posted, slots free
# at once and small messages keep changing way; a receiver that once let a lane
# message overtake one still in the queue failed here about once in 30 runs.
add_test(NAME mpi.p2p_ordering_lanes.np8x5 COMMAND sh -c
  "for i in 1 2 3 4 5; do \"$0\" \"$@\" || exit 1; done"
  ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n 8 $<TARGET_FILE:p2p_ordering>)
set_tests_properties(mpi.p2p_ordering_lanes.np8x5 PROPERTIES TIMEOUT 200 LABELS mpi
  PROCESSORS 2 ENVIRONMENT "${_stats_env}")
# Smaller lanes keep the order too: one slot, four (HMPI_LANE_TOTAL=32 halves the 64
# slots down to 4 at 8 ranks, as the default total does on nodes of 256 ranks and more)
# and none (every message by the queue), each way counted. And with the summary word
# that nodes of HMPI_LANE_SUMMARY ranks use (progress looks only at the lanes that rang):
# with the default lanes and with one slot each (the queue taken between two rings).
foreach(v "slots1|HMPI_LANE_SLOTS=1|--each=msgs_lane>=1"
          "total32|HMPI_LANE_TOTAL=32|--each=msgs_lane>=1|--output=lanes: 4 slots"
          "slots0|HMPI_LANE_SLOTS=0|--each=msgs_lane==0"
          "summary|HMPI_LANE_SUMMARY=2|--each=msgs_lane>=100|--output=a summary bit per sender"
          "summary.slots1|HMPI_LANE_SUMMARY=2 HMPI_LANE_SLOTS=1|--each=msgs_lane>=1|--output=a summary bit per sender")
  string(REPLACE "|" ";" v "${v}")
  list(GET v 0 name)
  list(GET v 1 knob)
  string(REPLACE " " ";" knob "${knob}")
  list(SUBLIST v 2 -1 want)
  add_test(NAME mpi.p2p_ordering_lanes.${name}.np8 COMMAND ${HMPI_PYTHON3}
    ${PROJECT_SOURCE_DIR}/tests/fortran/stats_check.py --ranks 8 --timeout 110
    ${want} --each=msgs_remote==0 --output=p2p_ordering:\ OK --
    ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n 8 $<TARGET_FILE:p2p_ordering>)
  set_tests_properties(mpi.p2p_ordering_lanes.${name}.np8 PROPERTIES TIMEOUT 120 LABELS mpi
    PROCESSORS 2 ENVIRONMENT "${_stats_env};${knob};HMPI_VERBOSE=2")
endforeach()

# Lanes open on a pair's first small message: each rank of p2p_lanes talks to two
# peers, so it opens two lanes whatever the node's size; with HMPI_LANE_TOTAL=4 and 4
# slots a rank may open one (its other peer's messages go by the queue, in order); with
# the summary word forced at 8 ranks (lanes attached while bits ring; the one ordering
# where the attach's own ring matters, a bit answered before the announcement is taken,
# is not forced); with no slots, none. Real node only.
foreach(v "np4|4||--each=lanes_opened==2|--each=msgs_lane>=300"
          "np8|8||--each=lanes_opened==2|--each=msgs_lane>=300"
          "cap1.np8|8|HMPI_LANE_TOTAL=4 HMPI_LANE_SLOTS=4|--each=lanes_opened==1|--each=msgs_lane>=1|--output=at most 1 a rank"
          "summary.np8|8|HMPI_LANE_SUMMARY=2|--each=lanes_opened==2|--output=a summary bit per sender"
          "slots0.np4|4|HMPI_LANE_SLOTS=0|--each=lanes_opened==0|--each=msgs_lane==0")
  string(REPLACE "|" ";" v "${v}")
  list(GET v 0 name)
  list(GET v 1 np)
  list(GET v 2 knob)
  string(REPLACE " " ";" knob "${knob}")
  list(SUBLIST v 3 -1 want)
  add_test(NAME mpi.p2p_lanes_opened.${name} COMMAND ${HMPI_PYTHON3}
    ${PROJECT_SOURCE_DIR}/tests/fortran/stats_check.py --ranks ${np} --timeout 110
    ${want} --each=msgs_remote==0 --output=p2p_lanes:\ ${np}\ ranks\ ok --
    ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n ${np} $<TARGET_FILE:p2p_lanes>)
  set_tests_properties(mpi.p2p_lanes_opened.${name} PROPERTIES TIMEOUT 120 LABELS mpi
    PROCESSORS 2 ENVIRONMENT "${_stats_env};${knob};HMPI_VERBOSE=2")
endforeach()

# The pipelined bounce at an odd chunk and without process_vm_readv, so every size of
# p2p_pipe (to 1 MiB + 3) goes by it, chunk boundaries falling anywhere; the counters
# must show it taken on every rank (every rank sends its ring, truncation, holes and
# self messages from static buffers). Real node only.
foreach(np 2 4)
  add_test(NAME mpi.p2p_pipe_chunks.np${np} COMMAND ${HMPI_PYTHON3}
    ${PROJECT_SOURCE_DIR}/tests/fortran/stats_check.py --ranks ${np} --timeout 50
    --each=msgs_pipe>=70 --each=msgs_cma==0 --each=msgs_remote==0
    --output=p2p_pipe:\ OK --
    ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n ${np} $<TARGET_FILE:p2p_pipe>)
  set_tests_properties(mpi.p2p_pipe_chunks.np${np} PROPERTIES TIMEOUT 60 LABELS mpi
    PROCESSORS 2 ENVIRONMENT "${_stats_env};HMPI_PIPE_CHUNK=1000;HMPI_CMA=0")
endforeach()

# A completed heap send takes its buffer's cache lines back (HMPI_RECLAIM_MAX, shm/cache.h):
# p2p_boundaries with every heap size up to 64 MiB eligible, each send buffer checked
# unchanged after its send and every message byte for byte, the counter showing it done
# on every rank (only for a buffer the program rewrote since its last send: a heap
# buffer malloc'ed again at an address sent from before: 9 to 16 times a rank here);
# and with 0, never. No eager copies (EAGER_MAX=0), so that every heap send
# of more than 256 B reads the user's buffer in place however late its receiver is.
# Real node only. Under a sanitizer that owns malloc the heap is private, nothing is read
# in place and nothing taken back: only the 0 variant runs there.
set(_reclaim_maxes 0)
if(NOT HMPI_SANITIZE MATCHES "address|thread|memory")
  list(APPEND _reclaim_maxes 1G)
endif()
foreach(np 2 4)
  foreach(max IN LISTS _reclaim_maxes)
    if(max STREQUAL "0")
      set(want "reclaimed==0")
    else()
      set(want "reclaimed>=3")
    endif()
    add_test(NAME mpi.p2p_boundaries_reclaim${max}.np${np} COMMAND ${HMPI_PYTHON3}
      ${PROJECT_SOURCE_DIR}/tests/fortran/stats_check.py --ranks ${np} --timeout 110
      --each=${want} --each=msgs_remote==0 --output=p2p_boundaries:\ OK --
      ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n ${np} $<TARGET_FILE:p2p_boundaries>)
    set_tests_properties(mpi.p2p_boundaries_reclaim${max}.np${np} PROPERTIES TIMEOUT 120
      LABELS mpi PROCESSORS 2 ENVIRONMENT "${_stats_env};HMPI_RECLAIM_MAX=${max};HMPI_EAGER_MAX=0")
  endforeach()
endforeach()

# A completed heap send takes its buffer's lines back only when the program rewrote the
# buffer since its last send (the default HMPI_RECLAIM_MAX, p2p/send.c "rewritten"):
# p2p_reclaim's pairs exchange 16 KiB 20 times, refilled each time (every send after
# the first taken back, on every rank) or filled once (none). No eager copies, so every
# send is read in place however late its receiver. Real node only; the rewrite case not
# under a sanitizer that owns malloc (private heap: nothing read in place).
hmpi_mpi_test(p2p_reclaim SOURCES ${_p2p_dir}/p2p_reclaim.c RANKS 2 3 NODE_SIZES 0 2
  ENV ${_p2p_env} TIMEOUT 60 ARGS rewrite)
set(_reclaim_cases "same:reclaimed==0")
if(NOT HMPI_SANITIZE MATCHES "address|thread|memory")
  list(APPEND _reclaim_cases "rewrite:reclaimed>=19")
endif()
foreach(np 2 4)
  foreach(case IN LISTS _reclaim_cases)
    string(REPLACE ":" ";" case "${case}")
    list(GET case 0 mode)
    list(GET case 1 want)
    add_test(NAME mpi.p2p_reclaim_${mode}.np${np} COMMAND ${HMPI_PYTHON3}
      ${PROJECT_SOURCE_DIR}/tests/fortran/stats_check.py --ranks ${np} --timeout 50
      --each=${want} --each=msgs_remote==0 --output=p2p_reclaim:\ OK --
      ${HMPI_MPIEXEC} ${HMPI_MPIEXEC_FLAGS} -n ${np} $<TARGET_FILE:p2p_reclaim> ${mode})
    set_tests_properties(mpi.p2p_reclaim_${mode}.np${np} PROPERTIES TIMEOUT 60 LABELS mpi
      PROCESSORS 2 ENVIRONMENT "${_stats_env};HMPI_EAGER_MAX=0")
  endforeach()
endforeach()
