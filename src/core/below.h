/* below.h: how HMPI reaches the MPI below for the calls it defines itself.
 *
 * HMPI is an MPI to the program and to profiling tools: for every MPI_X it defines it
 * also exports PMPI_X (the same function), so a classic PMPI tool linked before HMPI,
 * whose MPI_Send calls PMPI_Send, lands in HMPI. HMPI's own calls to the MPI below
 * therefore cannot use those names; they go through hmpi_below, a table filled at load
 * time with dlsym(RTLD_NEXT, "PMPI_X") (below.c). In HMPI's sources PMPI_X keeps its
 * meaning, "the MPI below": the macros at the end of this header map each name to its
 * slot. Every source of libhmpi is compiled with this header forced first
 * (src/CMakeLists.txt), and the unit test pmpi_names checks that no object of libhmpi
 * refers to PMPI_X by name. PMPI_X that HMPI does not define (PMPI_Comm_rank, ...)
 * are the below's own symbols, called directly. */
#ifndef HMPI_CORE_BELOW_H
#define HMPI_CORE_BELOW_H

/* libhmpi is built with hidden visibility (it is loaded into other people's programs):
 * what it exports is the API, declared here with default visibility, which the
 * definitions inherit (tests/check_exports.py). */
#pragma GCC visibility push(default)
#include <mpi.h>
#pragma GCC visibility pop

/* Every MPI function HMPI defines, without its MPI_ prefix. */
// clang-format off
#define HMPI_BELOW_CALLS(X)                                                                \
    X(Accumulate) X(Allgather) X(Allgatherv) X(Allreduce) X(Alltoall) X(Alltoallv)          \
    X(Alltoallw) X(Barrier) X(Bcast) X(Bsend) X(Bsend_init) X(Buffer_attach)                \
    X(Buffer_detach) X(Cancel) X(Cart_create) X(Cart_sub) X(Comm_create)                    \
    X(Comm_create_group) X(Comm_disconnect) X(Comm_dup) X(Comm_dup_with_info) X(Comm_free)  \
    X(Comm_idup) X(Comm_split) X(Comm_split_type) X(Compare_and_swap)                       \
    X(Dist_graph_create) X(Dist_graph_create_adjacent) X(Exscan) X(Fetch_and_op)            \
    X(Finalize) X(Gather) X(Gatherv) X(Get) X(Get_accumulate) X(Graph_create) X(Group_free) \
    X(Ibsend)                                                                              \
    X(Improbe) X(Imrecv) X(Init) X(Init_thread) X(Intercomm_create) X(Intercomm_merge)     \
    X(Iprobe) X(Irecv) X(Irsend) X(Isend) X(Issend) X(Mprobe) X(Mrecv) X(Neighbor_allgather) \
    X(Neighbor_allgatherv) X(Neighbor_alltoall) X(Neighbor_alltoallv) X(Neighbor_alltoallw)  \
    X(Probe) X(Put) X(Raccumulate) X(Recv)                                                  \
    X(Recv_init) X(Reduce) X(Reduce_scatter) X(Reduce_scatter_block) X(Request_free)        \
    X(Request_get_status) X(Rget) X(Rget_accumulate) X(Rput) X(Rsend) X(Rsend_init)         \
    X(Scan) X(Scatter) X(Scatterv) X(Send) X(Send_init) X(Sendrecv) X(Sendrecv_replace)     \
    X(Ssend) X(Ssend_init) X(Start) X(Startall) X(Test) X(Testall) X(Testany) X(Testsome)   \
    X(Type_commit) X(Type_dup) X(Type_free) X(Wait) X(Waitall) X(Waitany) X(Waitsome)       \
    X(Win_allocate) X(Win_allocate_shared) X(Win_attach) X(Win_complete) X(Win_create)      \
    X(Win_create_dynamic) X(Win_detach) X(Win_fence) X(Win_flush) X(Win_flush_all)          \
    X(Win_flush_local) X(Win_flush_local_all) X(Win_free) X(Win_get_attr) X(Win_lock)       \
    X(Win_lock_all) X(Win_post) X(Win_set_info) X(Win_shared_query) X(Win_start) X(Win_sync) \
    X(Win_test)                                                                            \
    X(Win_unlock) X(Win_unlock_all) X(Win_wait)                                            \
    X(T_init_thread) X(T_finalize) X(T_cvar_get_num) X(T_cvar_get_info) X(T_cvar_get_index) \
    X(T_cvar_handle_alloc) X(T_cvar_handle_free) X(T_cvar_read) X(T_cvar_write)             \
    X(T_pvar_get_num) X(T_pvar_get_info) X(T_pvar_get_index) X(T_pvar_session_create)       \
    X(T_pvar_session_free) X(T_pvar_handle_alloc) X(T_pvar_handle_free) X(T_pvar_start)     \
    X(T_pvar_stop) X(T_pvar_read) X(T_pvar_write) X(T_pvar_reset) X(T_pvar_readreset)       \
    X(T_category_get_num) X(T_category_get_info) X(T_category_get_index)                    \
    X(T_category_get_cvars) X(T_category_get_pvars) X(T_category_get_categories)            \
    X(T_category_changed) X(Ibarrier) X(Ibcast) X(Iallreduce) X(Ireduce)                   \
    X(Ineighbor_allgather) X(Ineighbor_allgatherv) X(Ineighbor_alltoall)                    \
    X(Ineighbor_alltoallv) X(Ineighbor_alltoallw)                                          \
    X(Igather) X(Igatherv) X(Iscatter) X(Iscatterv) X(Iallgather) X(Iallgatherv)           \
    X(Ialltoall) X(Ialltoallv) X(Ialltoallw) X(Ireduce_scatter)                            \
    X(Ireduce_scatter_block) X(Iscan) X(Iexscan)                                           \
    HMPI_BELOW_CALLS_40(X) HMPI_BELOW_CALLS_4(X) HMPI_BELOW_CALLS_41(X)                     \
    HMPI_BELOW_CALLS_C2F(X)

/* MPI 4.0's calls that HMPI defines and Open MPI 5.0 declares too, though its mpi.h says
 * MPI 3.1 (MPI_VERSION 3): MPI_Isendrecv and MPI_Isendrecv_replace (mpi/pt2pt.c),
 * MPI_Comm_idup_with_info (mpi/comm.c), the persistent collectives (coll/), the
 * partitioned calls (mpi/part.c, p2p/part.c), and the sessions: MPI_Session_init and
 * MPI_Session_finalize are HMPI's life (mpi/init.c), the rest its checks of them
 * (mpi/session.c) and the constructors from groups (mpi/comm.c); not Open MPI 4.1.
 * Guarded by MPI_VERSION alone they were passed through there, and MPI_Isendrecv hung as
 * issue 40 tells (tests/check_surface.py). */
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HMPI_MPI4_CALLS 1
#define HMPI_BELOW_CALLS_40(X)                                                             \
    X(Isendrecv) X(Isendrecv_replace) X(Comm_idup_with_info) X(Session_init)               \
    X(Session_finalize) X(Barrier_init) X(Bcast_init) X(Allreduce_init) X(Reduce_init)      \
    X(Psend_init) X(Precv_init) X(Pready) X(Pready_range) X(Pready_list) X(Parrived)        \
    X(Comm_create_from_group) X(Intercomm_create_from_groups) X(Group_from_session_pset)  \
    X(Session_get_num_psets) X(Session_get_nth_pset) X(Session_get_info)                   \
    X(Session_get_pset_info) X(Session_get_errhandler) X(Session_set_errhandler)           \
    X(Session_call_errhandler) X(Neighbor_allgather_init) X(Neighbor_allgatherv_init)      \
    X(Neighbor_alltoall_init) X(Neighbor_alltoallv_init) X(Neighbor_alltoallw_init)        \
    X(Gather_init) X(Gatherv_init) X(Scatter_init) X(Scatterv_init) X(Allgather_init)      \
    X(Allgatherv_init) X(Alltoall_init) X(Alltoallv_init) X(Alltoallw_init)                \
    X(Reduce_scatter_init) X(Reduce_scatter_block_init) X(Scan_init) X(Exscan_init)
#else
#define HMPI_MPI4_CALLS 0
#define HMPI_BELOW_CALLS_40(X)
#endif

/* MPI 4's large-count calls HMPI defines (mpi/large.c, mpi/bsend.c) and MPI_T's events,
 * where the MPI below has them (MPICH 4; not Open MPI 4.1 or 5.0). */
#if MPI_VERSION >= 4
#define HMPI_BELOW_CALLS_4(X)                                                              \
    X(Send_c) X(Ssend_c) X(Rsend_c) X(Bsend_c) X(Isend_c) X(Issend_c) X(Irsend_c)          \
    X(Ibsend_c) X(Irecv_c) X(Recv_c) X(Send_init_c) X(Ssend_init_c) X(Rsend_init_c)         \
    X(Bsend_init_c) X(Recv_init_c) X(Sendrecv_c) X(Sendrecv_replace_c) X(Mrecv_c)           \
    X(Imrecv_c) X(Buffer_attach_c) X(Buffer_detach_c) X(Put_c) X(Get_c) X(Accumulate_c)  \
    X(Get_accumulate_c) X(Rput_c) X(Rget_c) X(Raccumulate_c) X(Rget_accumulate_c)           \
    X(Win_create_c) X(Win_allocate_c) X(Win_allocate_shared_c) X(Win_shared_query_c)       \
    X(Bcast_c) X(Gather_c) X(Scatter_c) X(Allgather_c) X(Alltoall_c) X(Reduce_c)             \
    X(Allreduce_c) X(Scan_c) X(Exscan_c) X(Reduce_scatter_block_c) X(Reduce_scatter_c)      \
    X(Gatherv_c) X(Scatterv_c) X(Allgatherv_c) X(Alltoallv_c) X(Alltoallw_c)                \
    X(T_category_get_num_events) X(T_category_get_events) X(Isendrecv_c)                   \
    X(Isendrecv_replace_c) X(Neighbor_allgather_c) X(Neighbor_allgatherv_c)                 \
    X(Neighbor_alltoall_c) X(Neighbor_alltoallv_c) X(Neighbor_alltoallw_c)                 \
    X(Ibcast_c) X(Igather_c) X(Igatherv_c) X(Iscatter_c) X(Iscatterv_c)                    \
    X(Iallgather_c) X(Iallgatherv_c) X(Ialltoall_c) X(Ialltoallv_c) X(Ialltoallw_c)        \
    X(Ireduce_c) X(Iallreduce_c) X(Ireduce_scatter_c) X(Ireduce_scatter_block_c)           \
    X(Iscan_c) X(Iexscan_c) X(Bcast_init_c) X(Gather_init_c) X(Gatherv_init_c)             \
    X(Scatter_init_c) X(Scatterv_init_c) X(Allgather_init_c) X(Allgatherv_init_c)          \
    X(Alltoall_init_c) X(Alltoallv_init_c) X(Alltoallw_init_c) X(Reduce_init_c)            \
    X(Allreduce_init_c) X(Reduce_scatter_init_c) X(Reduce_scatter_block_init_c)            \
    X(Scan_init_c) X(Exscan_init_c)
#else
#define HMPI_BELOW_CALLS_4(X)
#endif

/* MPI 4.1's calls HMPI defines, where the MPI below has them (MPICH 4.2; not Open MPI 5.0):
 * MPI_Request_get_status_any, _all and _some (mpi/request.c), whose arrays may hold HMPI's
 * requests; the buffers of communicators and sessions and the flushes (mpi/bsend.c), which
 * HMPI's buffered local messages count against. */
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define HMPI_MPI41_CALLS 1
#define HMPI_BELOW_CALLS_41(X)                                                             \
    X(Request_get_status_any) X(Request_get_status_all) X(Request_get_status_some)         \
    X(Comm_attach_buffer) X(Comm_attach_buffer_c) X(Session_attach_buffer)                 \
    X(Session_attach_buffer_c) X(Comm_detach_buffer) X(Comm_detach_buffer_c)               \
    X(Session_detach_buffer) X(Session_detach_buffer_c) X(Buffer_flush)                    \
    X(Comm_flush_buffer) X(Session_flush_buffer) X(Buffer_iflush) X(Comm_iflush_buffer)    \
    X(Session_iflush_buffer)
#else
#define HMPI_MPI41_CALLS 0
#define HMPI_BELOW_CALLS_41(X)
#endif

/* The C-Fortran conversions of requests and messages (mpi/fortran.c), where mpi.h declares
 * them as functions (Open MPI; MPICH from 4.1): HMPI's requests and messages are not the
 * MPI below's, and Open MPI's would read one as its own object (issue 40's surface table).
 * MPICH 4.0's are macros, casts of integer handles, which HMPI's survive. */
#if !defined(MPI_Request_c2f)
#define HMPI_BELOW_CALLS_C2F(X) X(Request_c2f) X(Request_f2c) X(Message_c2f) X(Message_f2c)
#else
#define HMPI_BELOW_CALLS_C2F(X)
#endif
#if defined(MPI_Request_c2f) != defined(MPI_Message_c2f) ||                                 \
    defined(MPI_Request_c2f) != defined(MPI_Request_f2c) ||                                 \
    defined(MPI_Message_c2f) != defined(MPI_Message_f2c)
#error "mpi.h makes some of MPI_Request_c2f/f2c and MPI_Message_c2f/f2c macros, not all"
#endif
// clang-format on

/* One slot per call, typed as the below's PMPI_X. Filled before main (below.c). */
struct hmpi_below_table {
#define HMPI_BELOW_SLOT(name) __typeof__(PMPI_##name) *name;
    HMPI_BELOW_CALLS(HMPI_BELOW_SLOT)
#undef HMPI_BELOW_SLOT
};
extern struct hmpi_below_table hmpi_below;

/* HMPI's own MPI_name under another name, for an entry point that runs another one of
 * HMPI's (a tool above then sees only the call the program made). */
#define HMPI_SELF_DECL(name) extern __typeof__(PMPI_##name) hmpi_self_##name;
HMPI_BELOW_CALLS(HMPI_SELF_DECL)
#undef HMPI_SELF_DECL

/* Written once after the definition of MPI_name: defines PMPI_name (the assembler name
 * keeps the macros below away) and hmpi_self_name as the same function, and makes
 * MPI_name weak, as an MPI library does, so a tool defining MPI_name links statically
 * against libhmpi.a too. */
#define HMPI_PRAGMA_(text) _Pragma(#text)
#define HMPI_PMPI(name)                                                                  \
    extern __typeof__(MPI_##name) hmpi_pmpi_##name __asm__("PMPI_" #name)                \
        __attribute__((alias("MPI_" #name), visibility("default")));                     \
    extern __typeof__(MPI_##name) hmpi_self_##name __attribute__((alias("MPI_" #name))); \
    HMPI_PRAGMA_(weak MPI_##name)

#define PMPI_Accumulate hmpi_below.Accumulate
#define PMPI_Allgather hmpi_below.Allgather
#define PMPI_Allgatherv hmpi_below.Allgatherv
#define PMPI_Allreduce hmpi_below.Allreduce
#define PMPI_Alltoall hmpi_below.Alltoall
#define PMPI_Alltoallv hmpi_below.Alltoallv
#define PMPI_Alltoallw hmpi_below.Alltoallw
#define PMPI_Barrier hmpi_below.Barrier
#define PMPI_Bcast hmpi_below.Bcast
#define PMPI_Bsend hmpi_below.Bsend
#define PMPI_Bsend_init hmpi_below.Bsend_init
#define PMPI_Buffer_attach hmpi_below.Buffer_attach
#define PMPI_Buffer_detach hmpi_below.Buffer_detach
#define PMPI_Cancel hmpi_below.Cancel
#define PMPI_Cart_create hmpi_below.Cart_create
#define PMPI_Cart_sub hmpi_below.Cart_sub
#define PMPI_Comm_create hmpi_below.Comm_create
#define PMPI_Comm_create_group hmpi_below.Comm_create_group
#define PMPI_Comm_disconnect hmpi_below.Comm_disconnect
#define PMPI_Comm_dup hmpi_below.Comm_dup
#define PMPI_Comm_dup_with_info hmpi_below.Comm_dup_with_info
#define PMPI_Comm_free hmpi_below.Comm_free
#define PMPI_Comm_idup hmpi_below.Comm_idup
#define PMPI_Comm_split hmpi_below.Comm_split
#define PMPI_Comm_split_type hmpi_below.Comm_split_type
#define PMPI_Compare_and_swap hmpi_below.Compare_and_swap
#define PMPI_Dist_graph_create hmpi_below.Dist_graph_create
#define PMPI_Dist_graph_create_adjacent hmpi_below.Dist_graph_create_adjacent
#define PMPI_Exscan hmpi_below.Exscan
#define PMPI_Fetch_and_op hmpi_below.Fetch_and_op
#define PMPI_Finalize hmpi_below.Finalize
#define PMPI_Gather hmpi_below.Gather
#define PMPI_Gatherv hmpi_below.Gatherv
#define PMPI_Get hmpi_below.Get
#define PMPI_Get_accumulate hmpi_below.Get_accumulate
#define PMPI_Graph_create hmpi_below.Graph_create
#define PMPI_Group_free hmpi_below.Group_free
#define PMPI_Ibsend hmpi_below.Ibsend
#define PMPI_Improbe hmpi_below.Improbe
#define PMPI_Imrecv hmpi_below.Imrecv
#define PMPI_Init hmpi_below.Init
#define PMPI_Init_thread hmpi_below.Init_thread
#define PMPI_Intercomm_create hmpi_below.Intercomm_create
#define PMPI_Intercomm_merge hmpi_below.Intercomm_merge
#define PMPI_Iprobe hmpi_below.Iprobe
#define PMPI_Irecv hmpi_below.Irecv
#define PMPI_Irsend hmpi_below.Irsend
#define PMPI_Isend hmpi_below.Isend
#define PMPI_Issend hmpi_below.Issend
#define PMPI_Mprobe hmpi_below.Mprobe
#define PMPI_Mrecv hmpi_below.Mrecv
#define PMPI_Neighbor_allgather hmpi_below.Neighbor_allgather
#define PMPI_Neighbor_allgatherv hmpi_below.Neighbor_allgatherv
#define PMPI_Neighbor_alltoall hmpi_below.Neighbor_alltoall
#define PMPI_Neighbor_alltoallv hmpi_below.Neighbor_alltoallv
#define PMPI_Neighbor_alltoallw hmpi_below.Neighbor_alltoallw
#define PMPI_Ineighbor_allgather hmpi_below.Ineighbor_allgather
#define PMPI_Ineighbor_allgatherv hmpi_below.Ineighbor_allgatherv
#define PMPI_Ineighbor_alltoall hmpi_below.Ineighbor_alltoall
#define PMPI_Ineighbor_alltoallv hmpi_below.Ineighbor_alltoallv
#define PMPI_Ineighbor_alltoallw hmpi_below.Ineighbor_alltoallw
#define PMPI_Probe hmpi_below.Probe
#define PMPI_Put hmpi_below.Put
#define PMPI_Raccumulate hmpi_below.Raccumulate
#define PMPI_Recv hmpi_below.Recv
#define PMPI_Recv_init hmpi_below.Recv_init
#define PMPI_Reduce hmpi_below.Reduce
#define PMPI_Reduce_scatter hmpi_below.Reduce_scatter
#define PMPI_Reduce_scatter_block hmpi_below.Reduce_scatter_block
#define PMPI_Request_free hmpi_below.Request_free
#define PMPI_Request_get_status hmpi_below.Request_get_status
#define PMPI_Rget hmpi_below.Rget
#define PMPI_Rget_accumulate hmpi_below.Rget_accumulate
#define PMPI_Rput hmpi_below.Rput
#define PMPI_Rsend hmpi_below.Rsend
#define PMPI_Rsend_init hmpi_below.Rsend_init
#define PMPI_Scan hmpi_below.Scan
#define PMPI_Scatter hmpi_below.Scatter
#define PMPI_Scatterv hmpi_below.Scatterv
#define PMPI_Send hmpi_below.Send
#define PMPI_Send_init hmpi_below.Send_init
#define PMPI_Sendrecv hmpi_below.Sendrecv
#define PMPI_Sendrecv_replace hmpi_below.Sendrecv_replace
#define PMPI_Ssend hmpi_below.Ssend
#define PMPI_Ssend_init hmpi_below.Ssend_init
#define PMPI_Start hmpi_below.Start
#define PMPI_Startall hmpi_below.Startall
#define PMPI_Test hmpi_below.Test
#define PMPI_Testall hmpi_below.Testall
#define PMPI_Testany hmpi_below.Testany
#define PMPI_Testsome hmpi_below.Testsome
#define PMPI_Type_commit hmpi_below.Type_commit
#define PMPI_Type_dup hmpi_below.Type_dup
#define PMPI_Type_free hmpi_below.Type_free
#define PMPI_Wait hmpi_below.Wait
#define PMPI_Waitall hmpi_below.Waitall
#define PMPI_Waitany hmpi_below.Waitany
#define PMPI_Waitsome hmpi_below.Waitsome
#define PMPI_Win_allocate hmpi_below.Win_allocate
#define PMPI_Win_allocate_shared hmpi_below.Win_allocate_shared
#define PMPI_Win_attach hmpi_below.Win_attach
#define PMPI_Win_complete hmpi_below.Win_complete
#define PMPI_Win_create hmpi_below.Win_create
#define PMPI_Win_create_dynamic hmpi_below.Win_create_dynamic
#define PMPI_Win_detach hmpi_below.Win_detach
#define PMPI_Win_fence hmpi_below.Win_fence
#define PMPI_Win_flush hmpi_below.Win_flush
#define PMPI_Win_flush_all hmpi_below.Win_flush_all
#define PMPI_Win_flush_local hmpi_below.Win_flush_local
#define PMPI_Win_flush_local_all hmpi_below.Win_flush_local_all
#define PMPI_Win_free hmpi_below.Win_free
#define PMPI_Win_get_attr hmpi_below.Win_get_attr
#define PMPI_Win_lock hmpi_below.Win_lock
#define PMPI_Win_lock_all hmpi_below.Win_lock_all
#define PMPI_Win_post hmpi_below.Win_post
#define PMPI_Win_set_info hmpi_below.Win_set_info
#define PMPI_Win_shared_query hmpi_below.Win_shared_query
#define PMPI_Win_start hmpi_below.Win_start
#define PMPI_Win_sync hmpi_below.Win_sync
#define PMPI_Win_test hmpi_below.Win_test
#define PMPI_Win_unlock hmpi_below.Win_unlock
#define PMPI_Win_unlock_all hmpi_below.Win_unlock_all
#define PMPI_Win_wait hmpi_below.Win_wait
#define PMPI_T_init_thread hmpi_below.T_init_thread
#define PMPI_T_finalize hmpi_below.T_finalize
#define PMPI_T_cvar_get_num hmpi_below.T_cvar_get_num
#define PMPI_T_cvar_get_info hmpi_below.T_cvar_get_info
#define PMPI_T_cvar_get_index hmpi_below.T_cvar_get_index
#define PMPI_T_cvar_handle_alloc hmpi_below.T_cvar_handle_alloc
#define PMPI_T_cvar_handle_free hmpi_below.T_cvar_handle_free
#define PMPI_T_cvar_read hmpi_below.T_cvar_read
#define PMPI_T_cvar_write hmpi_below.T_cvar_write
#define PMPI_T_pvar_get_num hmpi_below.T_pvar_get_num
#define PMPI_T_pvar_get_info hmpi_below.T_pvar_get_info
#define PMPI_T_pvar_get_index hmpi_below.T_pvar_get_index
#define PMPI_T_pvar_session_create hmpi_below.T_pvar_session_create
#define PMPI_T_pvar_session_free hmpi_below.T_pvar_session_free
#define PMPI_T_pvar_handle_alloc hmpi_below.T_pvar_handle_alloc
#define PMPI_T_pvar_handle_free hmpi_below.T_pvar_handle_free
#define PMPI_T_pvar_start hmpi_below.T_pvar_start
#define PMPI_T_pvar_stop hmpi_below.T_pvar_stop
#define PMPI_T_pvar_read hmpi_below.T_pvar_read
#define PMPI_T_pvar_write hmpi_below.T_pvar_write
#define PMPI_T_pvar_reset hmpi_below.T_pvar_reset
#define PMPI_T_pvar_readreset hmpi_below.T_pvar_readreset
#define PMPI_T_category_get_num hmpi_below.T_category_get_num
#define PMPI_T_category_get_info hmpi_below.T_category_get_info
#define PMPI_T_category_get_index hmpi_below.T_category_get_index
#define PMPI_T_category_get_cvars hmpi_below.T_category_get_cvars
#define PMPI_T_category_get_pvars hmpi_below.T_category_get_pvars
#define PMPI_T_category_get_categories hmpi_below.T_category_get_categories
#define PMPI_T_category_changed hmpi_below.T_category_changed
#define PMPI_Ibarrier hmpi_below.Ibarrier
#define PMPI_Ibcast hmpi_below.Ibcast
#define PMPI_Iallreduce hmpi_below.Iallreduce
#define PMPI_Ireduce hmpi_below.Ireduce
#define PMPI_Igather hmpi_below.Igather
#define PMPI_Igatherv hmpi_below.Igatherv
#define PMPI_Iscatter hmpi_below.Iscatter
#define PMPI_Iscatterv hmpi_below.Iscatterv
#define PMPI_Iallgather hmpi_below.Iallgather
#define PMPI_Iallgatherv hmpi_below.Iallgatherv
#define PMPI_Ialltoall hmpi_below.Ialltoall
#define PMPI_Ialltoallv hmpi_below.Ialltoallv
#define PMPI_Ialltoallw hmpi_below.Ialltoallw
#define PMPI_Ireduce_scatter hmpi_below.Ireduce_scatter
#define PMPI_Ireduce_scatter_block hmpi_below.Ireduce_scatter_block
#define PMPI_Iscan hmpi_below.Iscan
#define PMPI_Iexscan hmpi_below.Iexscan
#if MPI_VERSION >= 4
#define PMPI_T_category_get_num_events hmpi_below.T_category_get_num_events
#define PMPI_T_category_get_events hmpi_below.T_category_get_events
#define PMPI_Send_c hmpi_below.Send_c
#define PMPI_Ssend_c hmpi_below.Ssend_c
#define PMPI_Rsend_c hmpi_below.Rsend_c
#define PMPI_Bsend_c hmpi_below.Bsend_c
#define PMPI_Isend_c hmpi_below.Isend_c
#define PMPI_Issend_c hmpi_below.Issend_c
#define PMPI_Irsend_c hmpi_below.Irsend_c
#define PMPI_Ibsend_c hmpi_below.Ibsend_c
#define PMPI_Irecv_c hmpi_below.Irecv_c
#define PMPI_Recv_c hmpi_below.Recv_c
#define PMPI_Send_init_c hmpi_below.Send_init_c
#define PMPI_Ssend_init_c hmpi_below.Ssend_init_c
#define PMPI_Rsend_init_c hmpi_below.Rsend_init_c
#define PMPI_Bsend_init_c hmpi_below.Bsend_init_c
#define PMPI_Recv_init_c hmpi_below.Recv_init_c
#define PMPI_Sendrecv_c hmpi_below.Sendrecv_c
#define PMPI_Sendrecv_replace_c hmpi_below.Sendrecv_replace_c
#define PMPI_Mrecv_c hmpi_below.Mrecv_c
#define PMPI_Imrecv_c hmpi_below.Imrecv_c
#define PMPI_Buffer_attach_c hmpi_below.Buffer_attach_c
#define PMPI_Buffer_detach_c hmpi_below.Buffer_detach_c
#define PMPI_Put_c hmpi_below.Put_c
#define PMPI_Get_c hmpi_below.Get_c
#define PMPI_Accumulate_c hmpi_below.Accumulate_c
#define PMPI_Get_accumulate_c hmpi_below.Get_accumulate_c
#define PMPI_Rput_c hmpi_below.Rput_c
#define PMPI_Rget_c hmpi_below.Rget_c
#define PMPI_Raccumulate_c hmpi_below.Raccumulate_c
#define PMPI_Rget_accumulate_c hmpi_below.Rget_accumulate_c
#define PMPI_Win_create_c hmpi_below.Win_create_c
#define PMPI_Win_allocate_c hmpi_below.Win_allocate_c
#define PMPI_Win_allocate_shared_c hmpi_below.Win_allocate_shared_c
#define PMPI_Win_shared_query_c hmpi_below.Win_shared_query_c
#define PMPI_Bcast_c hmpi_below.Bcast_c
#define PMPI_Gather_c hmpi_below.Gather_c
#define PMPI_Scatter_c hmpi_below.Scatter_c
#define PMPI_Allgather_c hmpi_below.Allgather_c
#define PMPI_Alltoall_c hmpi_below.Alltoall_c
#define PMPI_Reduce_c hmpi_below.Reduce_c
#define PMPI_Allreduce_c hmpi_below.Allreduce_c
#define PMPI_Scan_c hmpi_below.Scan_c
#define PMPI_Exscan_c hmpi_below.Exscan_c
#define PMPI_Reduce_scatter_block_c hmpi_below.Reduce_scatter_block_c
#define PMPI_Reduce_scatter_c hmpi_below.Reduce_scatter_c
#define PMPI_Gatherv_c hmpi_below.Gatherv_c
#define PMPI_Scatterv_c hmpi_below.Scatterv_c
#define PMPI_Allgatherv_c hmpi_below.Allgatherv_c
#define PMPI_Alltoallv_c hmpi_below.Alltoallv_c
#define PMPI_Alltoallw_c hmpi_below.Alltoallw_c
#define PMPI_Isendrecv_c hmpi_below.Isendrecv_c
#define PMPI_Neighbor_allgather_c hmpi_below.Neighbor_allgather_c
#define PMPI_Neighbor_allgatherv_c hmpi_below.Neighbor_allgatherv_c
#define PMPI_Neighbor_alltoall_c hmpi_below.Neighbor_alltoall_c
#define PMPI_Neighbor_alltoallv_c hmpi_below.Neighbor_alltoallv_c
#define PMPI_Neighbor_alltoallw_c hmpi_below.Neighbor_alltoallw_c
#define PMPI_Isendrecv_replace_c hmpi_below.Isendrecv_replace_c
#define PMPI_Ibcast_c hmpi_below.Ibcast_c
#define PMPI_Igather_c hmpi_below.Igather_c
#define PMPI_Igatherv_c hmpi_below.Igatherv_c
#define PMPI_Iscatter_c hmpi_below.Iscatter_c
#define PMPI_Iscatterv_c hmpi_below.Iscatterv_c
#define PMPI_Iallgather_c hmpi_below.Iallgather_c
#define PMPI_Iallgatherv_c hmpi_below.Iallgatherv_c
#define PMPI_Ialltoall_c hmpi_below.Ialltoall_c
#define PMPI_Ialltoallv_c hmpi_below.Ialltoallv_c
#define PMPI_Ialltoallw_c hmpi_below.Ialltoallw_c
#define PMPI_Ireduce_c hmpi_below.Ireduce_c
#define PMPI_Iallreduce_c hmpi_below.Iallreduce_c
#define PMPI_Ireduce_scatter_c hmpi_below.Ireduce_scatter_c
#define PMPI_Ireduce_scatter_block_c hmpi_below.Ireduce_scatter_block_c
#define PMPI_Iscan_c hmpi_below.Iscan_c
#define PMPI_Iexscan_c hmpi_below.Iexscan_c
#define PMPI_Bcast_init_c hmpi_below.Bcast_init_c
#define PMPI_Gather_init_c hmpi_below.Gather_init_c
#define PMPI_Gatherv_init_c hmpi_below.Gatherv_init_c
#define PMPI_Scatter_init_c hmpi_below.Scatter_init_c
#define PMPI_Scatterv_init_c hmpi_below.Scatterv_init_c
#define PMPI_Allgather_init_c hmpi_below.Allgather_init_c
#define PMPI_Allgatherv_init_c hmpi_below.Allgatherv_init_c
#define PMPI_Alltoall_init_c hmpi_below.Alltoall_init_c
#define PMPI_Alltoallv_init_c hmpi_below.Alltoallv_init_c
#define PMPI_Alltoallw_init_c hmpi_below.Alltoallw_init_c
#define PMPI_Reduce_init_c hmpi_below.Reduce_init_c
#define PMPI_Allreduce_init_c hmpi_below.Allreduce_init_c
#define PMPI_Reduce_scatter_init_c hmpi_below.Reduce_scatter_init_c
#define PMPI_Reduce_scatter_block_init_c hmpi_below.Reduce_scatter_block_init_c
#define PMPI_Scan_init_c hmpi_below.Scan_init_c
#define PMPI_Exscan_init_c hmpi_below.Exscan_init_c
#endif
#if HMPI_MPI41_CALLS
#define PMPI_Request_get_status_any hmpi_below.Request_get_status_any
#define PMPI_Request_get_status_all hmpi_below.Request_get_status_all
#define PMPI_Request_get_status_some hmpi_below.Request_get_status_some
#define PMPI_Comm_attach_buffer hmpi_below.Comm_attach_buffer
#define PMPI_Comm_attach_buffer_c hmpi_below.Comm_attach_buffer_c
#define PMPI_Session_attach_buffer hmpi_below.Session_attach_buffer
#define PMPI_Session_attach_buffer_c hmpi_below.Session_attach_buffer_c
#define PMPI_Comm_detach_buffer hmpi_below.Comm_detach_buffer
#define PMPI_Comm_detach_buffer_c hmpi_below.Comm_detach_buffer_c
#define PMPI_Session_detach_buffer hmpi_below.Session_detach_buffer
#define PMPI_Session_detach_buffer_c hmpi_below.Session_detach_buffer_c
#define PMPI_Buffer_flush hmpi_below.Buffer_flush
#define PMPI_Comm_flush_buffer hmpi_below.Comm_flush_buffer
#define PMPI_Session_flush_buffer hmpi_below.Session_flush_buffer
#define PMPI_Buffer_iflush hmpi_below.Buffer_iflush
#define PMPI_Comm_iflush_buffer hmpi_below.Comm_iflush_buffer
#define PMPI_Session_iflush_buffer hmpi_below.Session_iflush_buffer
#endif
#if !defined(MPI_Request_c2f)
#define PMPI_Request_c2f hmpi_below.Request_c2f
#define PMPI_Request_f2c hmpi_below.Request_f2c
#define PMPI_Message_c2f hmpi_below.Message_c2f
#define PMPI_Message_f2c hmpi_below.Message_f2c
#endif
#if HMPI_MPI4_CALLS
#define PMPI_Comm_idup_with_info hmpi_below.Comm_idup_with_info
#define PMPI_Isendrecv hmpi_below.Isendrecv
#define PMPI_Isendrecv_replace hmpi_below.Isendrecv_replace
#define PMPI_Session_init hmpi_below.Session_init
#define PMPI_Session_finalize hmpi_below.Session_finalize
#define PMPI_Barrier_init hmpi_below.Barrier_init
#define PMPI_Bcast_init hmpi_below.Bcast_init
#define PMPI_Allreduce_init hmpi_below.Allreduce_init
#define PMPI_Reduce_init hmpi_below.Reduce_init
#define PMPI_Psend_init hmpi_below.Psend_init
#define PMPI_Precv_init hmpi_below.Precv_init
#define PMPI_Pready hmpi_below.Pready
#define PMPI_Pready_range hmpi_below.Pready_range
#define PMPI_Pready_list hmpi_below.Pready_list
#define PMPI_Parrived hmpi_below.Parrived
#define PMPI_Comm_create_from_group hmpi_below.Comm_create_from_group
#define PMPI_Intercomm_create_from_groups hmpi_below.Intercomm_create_from_groups
#define PMPI_Group_from_session_pset hmpi_below.Group_from_session_pset
#define PMPI_Session_get_num_psets hmpi_below.Session_get_num_psets
#define PMPI_Session_get_nth_pset hmpi_below.Session_get_nth_pset
#define PMPI_Session_get_info hmpi_below.Session_get_info
#define PMPI_Session_get_pset_info hmpi_below.Session_get_pset_info
#define PMPI_Session_get_errhandler hmpi_below.Session_get_errhandler
#define PMPI_Session_set_errhandler hmpi_below.Session_set_errhandler
#define PMPI_Session_call_errhandler hmpi_below.Session_call_errhandler
#define PMPI_Neighbor_allgather_init hmpi_below.Neighbor_allgather_init
#define PMPI_Neighbor_allgatherv_init hmpi_below.Neighbor_allgatherv_init
#define PMPI_Neighbor_alltoall_init hmpi_below.Neighbor_alltoall_init
#define PMPI_Neighbor_alltoallv_init hmpi_below.Neighbor_alltoallv_init
#define PMPI_Neighbor_alltoallw_init hmpi_below.Neighbor_alltoallw_init
#define PMPI_Gather_init hmpi_below.Gather_init
#define PMPI_Gatherv_init hmpi_below.Gatherv_init
#define PMPI_Scatter_init hmpi_below.Scatter_init
#define PMPI_Scatterv_init hmpi_below.Scatterv_init
#define PMPI_Allgather_init hmpi_below.Allgather_init
#define PMPI_Allgatherv_init hmpi_below.Allgatherv_init
#define PMPI_Alltoall_init hmpi_below.Alltoall_init
#define PMPI_Alltoallv_init hmpi_below.Alltoallv_init
#define PMPI_Alltoallw_init hmpi_below.Alltoallw_init
#define PMPI_Reduce_scatter_init hmpi_below.Reduce_scatter_init
#define PMPI_Reduce_scatter_block_init hmpi_below.Reduce_scatter_block_init
#define PMPI_Scan_init hmpi_below.Scan_init
#define PMPI_Exscan_init hmpi_below.Exscan_init
#endif

#endif
