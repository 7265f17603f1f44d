/* large.c: MPI 4's large-count calls of the functions HMPI defines (MPI_Send_c,
 * MPI_Put_c, MPI_Bcast_c, ...; MPICH 4 has them, Open MPI 4.1 does not). Each runs the
 * int call of the same name: a count that fits an int as it is, a larger one as one
 * element of a type holding all count elements (same type signature, so it matches any
 * receive of the same data), through HMPI's own functions so that a tool above sees one
 * call. Without these, such a call would go to the MPI below and miss HMPI's matching.
 * No algorithm here. */
#include "../core/check.h"
#include "../core/errors.h"
#include "pt2pt.h"

#include <limits.h>
#include <stdlib.h>

#if MPI_VERSION >= 4

typedef struct {
    int count;
    MPI_Datatype type;
    MPI_Datatype made; /* a type made here, freed by unfold (else MPI_DATATYPE_NULL) */
} fold_t;

/* count elements of type as (f->count, f->type) for an int call. A negative count is
 * passed on for the int call to reject. Returns MPI_SUCCESS or an error class. */
static int fold(MPI_Count count, MPI_Datatype type, fold_t *f)
{
    *f = (fold_t){(int)count, type, MPI_DATATYPE_NULL};
    if (count <= INT_MAX)
        return count < INT_MIN ? hmpi_err_what(MPI_ERR_COUNT, "count is negative") : 0;
    int err = hmpi_check_type(type, "datatype");
    if (err)
        return err;
    /* q blocks of 2^30 elements, then r elements right after them. */
    const MPI_Count chunk = (MPI_Count)1 << 30;
    MPI_Count q = count / chunk, r = count % chunk;
    MPI_Aint lb, extent;
    if (q > INT_MAX)
        return hmpi_err_what(MPI_ERR_COUNT, "count %lld is too large", (long long)count);
    MPI_Datatype block, blocks;
    if (PMPI_Type_get_extent(type, &lb, &extent) || PMPI_Type_contiguous((int)chunk, type, &block))
        return MPI_ERR_TYPE;
    err = PMPI_Type_contiguous((int)q, block, &blocks);
    PMPI_Type_free(&block);
    if (err)
        return MPI_ERR_TYPE;
    int lens[2] = {1, (int)r};
    MPI_Aint disps[2] = {0, (MPI_Aint)(q * chunk) * extent};
    MPI_Datatype types[2] = {blocks, type};
    err = PMPI_Type_create_struct(r ? 2 : 1, lens, disps, types, &f->made);
    PMPI_Type_free(&blocks);
    if (err || PMPI_Type_commit(&f->made))
        return MPI_ERR_TYPE;
    hmpi_check_type_committed(f->made);
    f->count = 1;
    f->type = f->made;
    return MPI_SUCCESS;
}

/* After the int call, even a nonblocking or persistent one: the MPI below keeps its own
 * reference to a type in use (freeing it is allowed), HMPI's point-to-point requests and
 * one-sided operations copy what they need (hmpi_layout_t) at the call, the non-contiguous
 * data whose handle HMPI would use later (MPI_Unpack) is refused past 2 GiB by the int
 * call's checks, and HMPI's nonblocking and persistent collectives hold their derived
 * types until their release (coll/nbc.h, hmpi_coll_op_hold): the free only marks the
 * type then, and the last release frees it. */
static int unfold(fold_t *f, int err)
{
    if (f->made != MPI_DATATYPE_NULL)
        hmpi_self_Type_free(&f->made);
    return err;
}

#define FOLD_OR_RAISE(f, count, type, comm, fn)   \
    do {                                          \
        int err_ = fold(count, type, &(f));       \
        if (err_)                                 \
            return hmpi_raise_in(comm, err_, fn); \
    } while (0)

/* fold() of an argument the call reads on this rank; an unread one passes as 0. */
static int fold_if(int read, MPI_Count count, MPI_Datatype type, fold_t *f)
{
    if (read)
        return fold(count, type, f);
    *f = (fold_t){0, type, MPI_DATATYPE_NULL};
    return MPI_SUCCESS;
}

/* Folds (send, recv) of a call with a send and a receive side (MPI_Sendrecv, the
 * collectives' data movers), then runs call; on an error of either fold both are undone
 * and comm's handler is called. */
#define MOVER(fn, sread, scount, stype, rread, rcount, rtype, call) \
    do {                                                            \
        fold_t s, r;                                                \
        int err = fold_if(sread, scount, stype, &s);                \
        if (!err && (err = fold_if(rread, rcount, rtype, &r)) != 0) \
            unfold(&s, 0);                                          \
        if (err)                                                    \
            return hmpi_raise_in(comm, err, fn);                    \
        err = (call);                                               \
        return unfold(&r, unfold(&s, err));                         \
    } while (0)

/* The send family: (buf, count, type, dest, tag, comm). */
#define LARGE_SEND(name)                                                                       \
    int MPI_##name##_c(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag, \
                       MPI_Comm comm)                                                          \
    {                                                                                          \
        fold_t f;                                                                              \
        FOLD_OR_RAISE(f, count, type, comm, "MPI_" #name "_c");                                \
        return unfold(&f, hmpi_self_##name(buf, f.count, f.type, dest, tag, comm));            \
    }                                                                                          \
    HMPI_PMPI(name##_c)

/* Calls that make a request: (buf, count, type, peer, tag, comm, request). */
#define LARGE_REQ(name, constness)                                                                 \
    int MPI_##name##_c(constness void *buf, MPI_Count count, MPI_Datatype type, int peer, int tag, \
                       MPI_Comm comm, MPI_Request *request)                                        \
    {                                                                                              \
        fold_t f;                                                                                  \
        FOLD_OR_RAISE(f, count, type, comm, "MPI_" #name "_c");                                    \
        return unfold(&f, hmpi_self_##name(buf, f.count, f.type, peer, tag, comm, request));       \
    }                                                                                              \
    HMPI_PMPI(name##_c)

LARGE_SEND(Send)
LARGE_SEND(Ssend)
LARGE_SEND(Rsend)
LARGE_SEND(Bsend)
LARGE_REQ(Isend, const)
LARGE_REQ(Issend, const)
LARGE_REQ(Irsend, const)
LARGE_REQ(Ibsend, const)
LARGE_REQ(Irecv, )
LARGE_REQ(Send_init, const)
LARGE_REQ(Ssend_init, const)
LARGE_REQ(Rsend_init, const)
LARGE_REQ(Bsend_init, const)
LARGE_REQ(Recv_init, )

int MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
               MPI_Status *status)
{
    fold_t f;
    FOLD_OR_RAISE(f, count, type, comm, "MPI_Recv_c");
    return unfold(&f, hmpi_self_Recv(buf, f.count, f.type, source, tag, comm, status));
}
HMPI_PMPI(Recv_c)

/* The send-receive family, blocking (Out: MPI_Status, out: status) and nonblocking
 * (MPI_Request, request). */
#define LARGE_SENDRECV(name, Out, out)                                                            \
    int MPI_##name##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, \
                       int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,    \
                       int source, int recvtag, MPI_Comm comm, Out *out)                          \
    {                                                                                             \
        MOVER("MPI_" #name "_c", 1, sendcount, sendtype, 1, recvcount, recvtype,                  \
              hmpi_self_##name(sendbuf, s.count, s.type, dest, sendtag, recvbuf, r.count, r.type, \
                               source, recvtag, comm, out));                                      \
    }                                                                                             \
    HMPI_PMPI(name##_c)

#define LARGE_SENDRECV_REPLACE(name, Out, out)                                                   \
    int MPI_##name##_c(void *buf, MPI_Count count, MPI_Datatype type, int dest, int sendtag,     \
                       int source, int recvtag, MPI_Comm comm, Out *out)                         \
    {                                                                                            \
        fold_t f;                                                                                \
        FOLD_OR_RAISE(f, count, type, comm, "MPI_" #name "_c");                                  \
        return unfold(&f, hmpi_self_##name(buf, f.count, f.type, dest, sendtag, source, recvtag, \
                                           comm, out));                                          \
    }                                                                                            \
    HMPI_PMPI(name##_c)

LARGE_SENDRECV(Sendrecv, MPI_Status, status)
LARGE_SENDRECV(Isendrecv, MPI_Request, request)
LARGE_SENDRECV_REPLACE(Sendrecv_replace, MPI_Status, status)
LARGE_SENDRECV_REPLACE(Isendrecv_replace, MPI_Request, request)

/* Matched receives: an error of the count goes to MPI_COMM_WORLD's handler (the message's
 * communicator is known only to the int call). */
int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message,
                MPI_Status *status)
{
    fold_t f;
    FOLD_OR_RAISE(f, count, type, MPI_COMM_WORLD, "MPI_Mrecv_c");
    return unfold(&f, hmpi_self_Mrecv(buf, f.count, f.type, message, status));
}
HMPI_PMPI(Mrecv_c)

int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype type, MPI_Message *message,
                 MPI_Request *request)
{
    fold_t f;
    FOLD_OR_RAISE(f, count, type, MPI_COMM_WORLD, "MPI_Imrecv_c");
    return unfold(&f, hmpi_self_Imrecv(buf, f.count, f.type, message, request));
}
HMPI_PMPI(Imrecv_c)

/* ---- one-sided -------------------------------------------------------------------- */

/* Folds the origin and target counts of a one-sided call; on an error both are undone
 * and the window's handler is called. */
#define FOLD2_OR_RAISE(o, oc, ot, t, tc, tt, win, fn)  \
    do {                                               \
        int err_ = fold(oc, ot, &(o));                 \
        if (!err_ && (err_ = fold(tc, tt, &(t))) != 0) \
            unfold(&(o), 0);                           \
        if (err_)                                      \
            return hmpi_err_win(win, err_, fn);        \
    } while (0)

int MPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win)
{
    fold_t o, t;
    FOLD2_OR_RAISE(o, origin_count, origin_datatype, t, target_count, target_datatype, win,
                   "MPI_Put_c");
    int err =
        hmpi_self_Put(origin_addr, o.count, o.type, target_rank, target_disp, t.count, t.type, win);
    return unfold(&t, unfold(&o, err));
}
HMPI_PMPI(Put_c)

int MPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
              MPI_Datatype target_datatype, MPI_Win win)
{
    fold_t o, t;
    FOLD2_OR_RAISE(o, origin_count, origin_datatype, t, target_count, target_datatype, win,
                   "MPI_Get_c");
    int err =
        hmpi_self_Get(origin_addr, o.count, o.type, target_rank, target_disp, t.count, t.type, win);
    return unfold(&t, unfold(&o, err));
}
HMPI_PMPI(Get_c)

int MPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    fold_t o, t;
    FOLD2_OR_RAISE(o, origin_count, origin_datatype, t, target_count, target_datatype, win,
                   "MPI_Accumulate_c");
    int err = hmpi_self_Accumulate(origin_addr, o.count, o.type, target_rank, target_disp, t.count,
                                   t.type, op, win);
    return unfold(&t, unfold(&o, err));
}
HMPI_PMPI(Accumulate_c)

int MPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                         MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                         MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win)
{
    fold_t o, t, r;
    FOLD2_OR_RAISE(o, origin_count, origin_datatype, t, target_count, target_datatype, win,
                   "MPI_Get_accumulate_c");
    int err = fold(result_count, result_datatype, &r);
    if (err)
        return hmpi_err_win(win, unfold(&t, unfold(&o, err)), "MPI_Get_accumulate_c");
    err = hmpi_self_Get_accumulate(origin_addr, o.count, o.type, result_addr, r.count, r.type,
                                   target_rank, target_disp, t.count, t.type, op, win);
    return unfold(&r, unfold(&t, unfold(&o, err)));
}
HMPI_PMPI(Get_accumulate_c)

int MPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    fold_t o, t;
    FOLD2_OR_RAISE(o, origin_count, origin_datatype, t, target_count, target_datatype, win,
                   "MPI_Rput_c");
    int err = hmpi_self_Rput(origin_addr, o.count, o.type, target_rank, target_disp, t.count,
                             t.type, win, request);
    return unfold(&t, unfold(&o, err));
}
HMPI_PMPI(Rput_c)

int MPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    fold_t o, t;
    FOLD2_OR_RAISE(o, origin_count, origin_datatype, t, target_count, target_datatype, win,
                   "MPI_Rget_c");
    int err = hmpi_self_Rget(origin_addr, o.count, o.type, target_rank, target_disp, t.count,
                             t.type, win, request);
    return unfold(&t, unfold(&o, err));
}
HMPI_PMPI(Rget_c)

int MPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    fold_t o, t;
    FOLD2_OR_RAISE(o, origin_count, origin_datatype, t, target_count, target_datatype, win,
                   "MPI_Raccumulate_c");
    int err = hmpi_self_Raccumulate(origin_addr, o.count, o.type, target_rank, target_disp, t.count,
                                    t.type, op, win, request);
    return unfold(&t, unfold(&o, err));
}
HMPI_PMPI(Raccumulate_c)

int MPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win, MPI_Request *request)
{
    fold_t o, t, r;
    FOLD2_OR_RAISE(o, origin_count, origin_datatype, t, target_count, target_datatype, win,
                   "MPI_Rget_accumulate_c");
    int err = fold(result_count, result_datatype, &r);
    if (err)
        return hmpi_err_win(win, unfold(&t, unfold(&o, err)), "MPI_Rget_accumulate_c");
    err = hmpi_self_Rget_accumulate(origin_addr, o.count, o.type, result_addr, r.count, r.type,
                                    target_rank, target_disp, t.count, t.type, op, win, request);
    return unfold(&r, unfold(&t, unfold(&o, err)));
}
HMPI_PMPI(Rget_accumulate_c)

/* Window constructors: a displacement unit past INT_MAX is refused (MPI_ERR_ARG on the
 * communicator): HMPI's windows keep it as an int. */
static int disp_unit_ok(MPI_Aint disp_unit, MPI_Comm comm, const char *fn)
{
    if (disp_unit >= INT_MIN && disp_unit <= INT_MAX)
        return MPI_SUCCESS;
    return hmpi_raise_in(comm,
                         hmpi_err_what(MPI_ERR_ARG,
                                       "disp_unit %lld is larger than "
                                       "HMPI's windows take (INT_MAX)",
                                       (long long)disp_unit),
                         fn);
}

int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                     MPI_Win *win)
{
    int err = disp_unit_ok(disp_unit, comm, "MPI_Win_create_c");
    return err ? err : hmpi_self_Win_create(base, size, (int)disp_unit, info, comm, win);
}
HMPI_PMPI(Win_create_c)

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                       void *baseptr, MPI_Win *win)
{
    int err = disp_unit_ok(disp_unit, comm, "MPI_Win_allocate_c");
    return err ? err : hmpi_self_Win_allocate(size, (int)disp_unit, info, comm, baseptr, win);
}
HMPI_PMPI(Win_allocate_c)

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                              void *baseptr, MPI_Win *win)
{
    int err = disp_unit_ok(disp_unit, comm, "MPI_Win_allocate_shared_c");
    return err ? err
               : hmpi_self_Win_allocate_shared(size, (int)disp_unit, info, comm, baseptr, win);
}
HMPI_PMPI(Win_allocate_shared_c)

int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                           void *baseptr)
{
    int du = 0;
    int err = hmpi_self_Win_shared_query(win, rank, size, disp_unit ? &du : NULL, baseptr);
    if (err == MPI_SUCCESS && disp_unit)
        *disp_unit = du;
    return err;
}
HMPI_PMPI(Win_shared_query_c)

/* ---- collectives ------------------------------------------------------------------- */
/* Three kinds, each decided the same way on every rank of the collective:
 * - data movers with one count per side (Bcast, Gather, Scatter, Allgather, Alltoall):
 *   the significant counts fold into HMPI's int call, always (ranks may even mix the
 *   int and _c calls);
 * - reductions (Reduce, Allreduce, Scan, Exscan, Reduce_scatter(_block)): a predefined
 *   op applies to predefined types only, so nothing folds: counts that fit an int go to
 *   HMPI's int call, larger ones (the same on every rank) to the MPI below's _c call;
 * - the v and w forms, whose counts only the root or each rank alone knows: always the
 *   MPI below's _c call. */

/* This rank in comm; -1 in an intercommunicator (roots are MPI_ROOT there) or when comm
 * is null (the int call raises that). */
static int comm_rank(MPI_Comm comm)
{
    int me = -1, inter = 1;
    if (comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter)
        PMPI_Comm_rank(comm, &me);
    return me;
}

int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    fold_t f;
    FOLD_OR_RAISE(f, count, datatype, comm, "MPI_Bcast_c");
    return unfold(&f, hmpi_self_Bcast(buffer, f.count, f.type, root, comm));
}
HMPI_PMPI(Bcast_c)

int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int at_root = comm_rank(comm) == root || root == MPI_ROOT;
    MOVER("MPI_Gather_c", sendbuf != MPI_IN_PLACE && root != MPI_ROOT, sendcount, sendtype, at_root,
          recvcount, recvtype,
          hmpi_self_Gather(sendbuf, s.count, s.type, recvbuf, r.count, r.type, root, comm));
}
HMPI_PMPI(Gather_c)

int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int at_root = comm_rank(comm) == root || root == MPI_ROOT;
    MOVER("MPI_Scatter_c", at_root, sendcount, sendtype,
          recvbuf != MPI_IN_PLACE && root != MPI_ROOT, recvcount, recvtype,
          hmpi_self_Scatter(sendbuf, s.count, s.type, recvbuf, r.count, r.type, root, comm));
}
HMPI_PMPI(Scatter_c)

int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MOVER("MPI_Allgather_c", sendbuf != MPI_IN_PLACE, sendcount, sendtype, 1, recvcount, recvtype,
          hmpi_self_Allgather(sendbuf, s.count, s.type, recvbuf, r.count, r.type, comm));
}
HMPI_PMPI(Allgather_c)

int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    MOVER("MPI_Alltoall_c", sendbuf != MPI_IN_PLACE, sendcount, sendtype, 1, recvcount, recvtype,
          hmpi_self_Alltoall(sendbuf, s.count, s.type, recvbuf, r.count, r.type, comm));
}
HMPI_PMPI(Alltoall_c)

#define FITS(count) ((count) >= 0 && (count) <= INT_MAX)

int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, int root, MPI_Comm comm)
{
    return FITS(count) ? hmpi_self_Reduce(sendbuf, recvbuf, (int)count, datatype, op, root, comm)
                       : PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm);
}
HMPI_PMPI(Reduce_c)

int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm)
{
    return FITS(count) ? hmpi_self_Allreduce(sendbuf, recvbuf, (int)count, datatype, op, comm)
                       : PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm);
}
HMPI_PMPI(Allreduce_c)

int MPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm)
{
    return FITS(count) ? hmpi_self_Scan(sendbuf, recvbuf, (int)count, datatype, op, comm)
                       : PMPI_Scan_c(sendbuf, recvbuf, count, datatype, op, comm);
}
HMPI_PMPI(Scan_c)

int MPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm)
{
    return FITS(count) ? hmpi_self_Exscan(sendbuf, recvbuf, (int)count, datatype, op, comm)
                       : PMPI_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm);
}
HMPI_PMPI(Exscan_c)

int MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return FITS(recvcount)
               ? hmpi_self_Reduce_scatter_block(sendbuf, recvbuf, (int)recvcount, datatype, op,
                                                comm)
               : PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm);
}
HMPI_PMPI(Reduce_scatter_block_c)

/* recvcounts is the same on every rank: all fit an int or none is HMPI's. */
int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int n = 0, inter = 1;
    if (comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter)
        PMPI_Comm_size(comm, &n);
    int *counts = !inter && recvcounts && n > 0 ? malloc((size_t)n * sizeof *counts) : NULL;
    for (int i = 0; counts && i < n; i++) {
        if (!FITS(recvcounts[i])) {
            free(counts);
            counts = NULL;
        } else {
            counts[i] = (int)recvcounts[i];
        }
    }
    int err = counts ? hmpi_self_Reduce_scatter(sendbuf, recvbuf, counts, datatype, op, comm)
                     : PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    free(counts);
    return err;
}
HMPI_PMPI(Reduce_scatter_c)

int MPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    return PMPI_Gatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                          comm);
}
HMPI_PMPI(Gatherv_c)

int MPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                   MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm)
{
    return PMPI_Scatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                           root, comm);
}
HMPI_PMPI(Scatterv_c)

int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                     MPI_Comm comm)
{
    return PMPI_Allgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                             comm);
}
HMPI_PMPI(Allgatherv_c)

int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return PMPI_Alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                            recvtype, comm);
}
HMPI_PMPI(Alltoallv_c)

int MPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return PMPI_Alltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                            recvtypes, comm);
}
HMPI_PMPI(Alltoallw_c)

/* ---- nonblocking and persistent collectives ------------------------------------------ */
/* The same three kinds as the blocking ones above, each decided alike on every rank. The
 * reduce-scatter with counts is coll/reduce_scatter.c's (its int copy of the counts lives
 * with the operation). */

int MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    fold_t f;
    FOLD_OR_RAISE(f, count, datatype, comm, "MPI_Ibcast_c");
    return unfold(&f, hmpi_self_Ibcast(buffer, f.count, f.type, root, comm, request));
}
HMPI_PMPI(Ibcast_c)

int MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    fold_t f;
    FOLD_OR_RAISE(f, count, datatype, comm, "MPI_Bcast_init_c");
    return unfold(&f, hmpi_self_Bcast_init(buffer, f.count, f.type, root, comm, info, request));
}
HMPI_PMPI(Bcast_init_c)

int MPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    int at_root = comm_rank(comm) == root || root == MPI_ROOT;
    MOVER(
        "MPI_Igather_c", sendbuf != MPI_IN_PLACE && root != MPI_ROOT, sendcount, sendtype, at_root,
        recvcount, recvtype,
        hmpi_self_Igather(sendbuf, s.count, s.type, recvbuf, r.count, r.type, root, comm, request));
}
HMPI_PMPI(Igather_c)

int MPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int at_root = comm_rank(comm) == root || root == MPI_ROOT;
    MOVER("MPI_Gather_init_c", sendbuf != MPI_IN_PLACE && root != MPI_ROOT, sendcount, sendtype,
          at_root, recvcount, recvtype,
          hmpi_self_Gather_init(sendbuf, s.count, s.type, recvbuf, r.count, r.type, root, comm,
                                info, request));
}
HMPI_PMPI(Gather_init_c)

int MPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    int at_root = comm_rank(comm) == root || root == MPI_ROOT;
    MOVER("MPI_Iscatter_c", at_root, sendcount, sendtype,
          recvbuf != MPI_IN_PLACE && root != MPI_ROOT, recvcount, recvtype,
          hmpi_self_Iscatter(sendbuf, s.count, s.type, recvbuf, r.count, r.type, root, comm,
                             request));
}
HMPI_PMPI(Iscatter_c)

int MPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int at_root = comm_rank(comm) == root || root == MPI_ROOT;
    MOVER("MPI_Scatter_init_c", at_root, sendcount, sendtype,
          recvbuf != MPI_IN_PLACE && root != MPI_ROOT, recvcount, recvtype,
          hmpi_self_Scatter_init(sendbuf, s.count, s.type, recvbuf, r.count, r.type, root, comm,
                                 info, request));
}
HMPI_PMPI(Scatter_init_c)

int MPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    MOVER("MPI_Iallgather_c", sendbuf != MPI_IN_PLACE, sendcount, sendtype, 1, recvcount, recvtype,
          hmpi_self_Iallgather(sendbuf, s.count, s.type, recvbuf, r.count, r.type, comm, request));
}
HMPI_PMPI(Iallgather_c)

int MPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request *request)
{
    MOVER("MPI_Allgather_init_c", sendbuf != MPI_IN_PLACE, sendcount, sendtype, 1, recvcount,
          recvtype,
          hmpi_self_Allgather_init(sendbuf, s.count, s.type, recvbuf, r.count, r.type, comm, info,
                                   request));
}
HMPI_PMPI(Allgather_init_c)

int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    MOVER("MPI_Ialltoall_c", sendbuf != MPI_IN_PLACE, sendcount, sendtype, 1, recvcount, recvtype,
          hmpi_self_Ialltoall(sendbuf, s.count, s.type, recvbuf, r.count, r.type, comm, request));
}
HMPI_PMPI(Ialltoall_c)

int MPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    MOVER("MPI_Alltoall_init_c", sendbuf != MPI_IN_PLACE, sendcount, sendtype, 1, recvcount,
          recvtype,
          hmpi_self_Alltoall_init(sendbuf, s.count, s.type, recvbuf, r.count, r.type, comm, info,
                                  request));
}
HMPI_PMPI(Alltoall_init_c)

int MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    return FITS(count)
               ? hmpi_self_Ireduce(sendbuf, recvbuf, (int)count, datatype, op, root, comm, request)
               : PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}
HMPI_PMPI(Ireduce_c)

int MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return FITS(count) ? hmpi_self_Reduce_init(sendbuf, recvbuf, (int)count, datatype, op, root,
                                               comm, info, request)
                       : PMPI_Reduce_init_c(sendbuf, recvbuf, count, datatype, op, root, comm, info,
                                            request);
}
HMPI_PMPI(Reduce_init_c)

int MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return FITS(count)
               ? hmpi_self_Iallreduce(sendbuf, recvbuf, (int)count, datatype, op, comm, request)
               : PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}
HMPI_PMPI(Iallreduce_c)

int MPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return FITS(count)
               ? hmpi_self_Allreduce_init(sendbuf, recvbuf, (int)count, datatype, op, comm, info,
                                          request)
               : PMPI_Allreduce_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}
HMPI_PMPI(Allreduce_init_c)

int MPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return FITS(count) ? hmpi_self_Iscan(sendbuf, recvbuf, (int)count, datatype, op, comm, request)
                       : PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}
HMPI_PMPI(Iscan_c)

int MPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return FITS(count)
               ? hmpi_self_Scan_init(sendbuf, recvbuf, (int)count, datatype, op, comm, info,
                                     request)
               : PMPI_Scan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}
HMPI_PMPI(Scan_init_c)

int MPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return FITS(count)
               ? hmpi_self_Iexscan(sendbuf, recvbuf, (int)count, datatype, op, comm, request)
               : PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}
HMPI_PMPI(Iexscan_c)

int MPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return FITS(count)
               ? hmpi_self_Exscan_init(sendbuf, recvbuf, (int)count, datatype, op, comm, info,
                                       request)
               : PMPI_Exscan_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}
HMPI_PMPI(Exscan_init_c)

int MPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request *request)
{
    return FITS(recvcount) ? hmpi_self_Ireduce_scatter_block(sendbuf, recvbuf, (int)recvcount,
                                                             datatype, op, comm, request)
                           : PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op,
                                                          comm, request);
}
HMPI_PMPI(Ireduce_scatter_block_c)

int MPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    return FITS(recvcount) ? hmpi_self_Reduce_scatter_block_init(sendbuf, recvbuf, (int)recvcount,
                                                                 datatype, op, comm, info, request)
                           : PMPI_Reduce_scatter_block_init_c(sendbuf, recvbuf, recvcount, datatype,
                                                              op, comm, info, request);
}
HMPI_PMPI(Reduce_scatter_block_init_c)

int MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    return PMPI_Igatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           root, comm, request);
}
HMPI_PMPI(Igatherv_c)

int MPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    return PMPI_Gatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                               root, comm, info, request);
}
HMPI_PMPI(Gatherv_init_c)

int MPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return PMPI_Iscatterv_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                            root, comm, request);
}
HMPI_PMPI(Iscatterv_c)

int MPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    return PMPI_Scatterv_init_c(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                                root, comm, info, request);
}
HMPI_PMPI(Scatterv_init_c)

int MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return PMPI_Iallgatherv_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                              comm, request);
}
HMPI_PMPI(Iallgatherv_c)

int MPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return PMPI_Allgatherv_init_c(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                  recvtype, comm, info, request);
}
HMPI_PMPI(Allgatherv_init_c)

int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    return PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                             recvtype, comm, request);
}
HMPI_PMPI(Ialltoallv_c)

int MPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return PMPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, info, request);
}
HMPI_PMPI(Alltoallv_init_c)

int MPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                     MPI_Request *request)
{
    return PMPI_Ialltoallw_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                             recvtypes, comm, request);
}
HMPI_PMPI(Ialltoallw_c)

int MPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    return PMPI_Alltoallw_init_c(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                                 rdispls, recvtypes, comm, info, request);
}
HMPI_PMPI(Alltoallw_init_c)
#endif
