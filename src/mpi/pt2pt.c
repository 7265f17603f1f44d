/* pt2pt.c: the point-to-point entry points. Each validates its arguments as the MPI
 * standard says, then makes one call of the p2p engine (p2p/op.c, p2p/probe.c), which
 * takes the path of the case: the engine for a peer on this node, the bridge for one on
 * another node, the MPI below for a communicator HMPI does not accelerate. MPI_Send and
 * MPI_Recv first try their short way inline (p2p/short.h). */
#include "../core/comm.h"
#include "../core/datatype.h"
#include "../core/check.h"
#include "pt2pt.h"
#include "../p2p/p2p.h"
#include "../p2p/short.h"

#include <limits.h>
#include <string.h>

int hmpi_tag_ub = 32767;

/* ---- argument checks (errors.h: each describes the argument it rejects) ------------ */

static int check_data(const void *buf, int count, MPI_Datatype type, hmpi_layout_t *t)
{
    int err = hmpi_check_count(count, "count");
    if (!err && hmpi_check_null_empty(type, count, t))
        return MPI_SUCCESS;
    if (!err)
        err = hmpi_layout_get(type, count, t);
    if (!err)
        err = hmpi_check_buf_only(buf, count, type, "buf");
    /* Non-contiguous data moves through MPI_Pack/MPI_Unpack, whose sizes are ints. */
    if (!err && !t->contig && t->size > INT_MAX)
        err = hmpi_err_what(MPI_ERR_COUNT,
                            "%zu bytes of non-contiguous data: more than "
                            "MPI_Pack can pack (2 GiB)",
                            t->size);
    return err;
}

static int check_tag(int tag, int any_ok)
{
    if (__builtin_expect(tag >= 0 && tag <= hmpi_tag_ub, 1) || (any_ok && tag == MPI_ANY_TAG))
        return MPI_SUCCESS;
    return hmpi_err_what(MPI_ERR_TAG, "tag %d is outside 0..%d (MPI_TAG_UB)%s", tag, hmpi_tag_ub,
                         any_ok ? " and is not MPI_ANY_TAG" : "");
}

/* The common case's checks: a real rank (peer), a tag in range (or MPI_ANY_TAG when
 * any_tag), count >= 0 elements of a committed datatype that lie in one run of bytes,
 * buf not NULL unless count is 0. When they hold every argument is valid and *t is
 * filled; otherwise the full checks below run and report what is wrong. */
static inline int common_args(const hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type,
                              int peer, int tag, int any_tag, hmpi_layout_t *t)
{
    return (unsigned)peer < (unsigned)c->size && count >= 0 &&
           ((tag >= 0 && tag <= hmpi_tag_ub) || (any_tag && tag == MPI_ANY_TAG)) &&
           hmpi_layout_get(type, count, t) == MPI_SUCCESS && t->contig && (buf || !count);
}

int hmpi_check_send(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type, int dest,
                    int tag, hmpi_layout_t *t)
{
    int err = check_data(buf, count, type, t);
    if (!err)
        err = check_tag(tag, 0);
    if (!err)
        err = hmpi_check_rank(MPI_ERR_RANK, dest, c->size, MPI_PROC_NULL, MPI_PROC_NULL, "dest");
    return err;
}

int hmpi_check_recv(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type, int source,
                    int tag, hmpi_layout_t *t)
{
    int err = check_data(buf, count, type, t);
    if (!err)
        err = check_tag(tag, 1);
    if (!err)
        err =
            hmpi_check_rank(MPI_ERR_RANK, source, c->size, MPI_PROC_NULL, MPI_ANY_SOURCE, "source");
    return err;
}

/* The short ways' checks: a communicator c (not NULL) and common_args' for a packed
 * type, which needs no layout (the run's bytes and where it starts from buf go to *bytes
 * and *lo), a local peer (its local rank to *l). */
static inline int short_args(const hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type,
                             int peer, int tag, int any_tag, size_t *bytes, MPI_Aint *lo, int *l)
{
    return c && (unsigned)peer < (unsigned)c->size &&
           ((tag >= 0 && tag <= hmpi_tag_ub) || (any_tag && tag == MPI_ANY_TAG)) &&
           hmpi_layout_run(type, count, bytes, lo) && (buf || !count) &&
           (*l = c->local_of[peer]) >= 0;
}

/* The communicator of the inline short ways, while MPI runs (else NULL: the way out of
 * line checks everything): MPI_COMM_WORLD's read inline, any other's looked up (the
 * table's lookup takes no lock), so that a communicator of the program's own, from
 * MPI_Comm_dup or MPI_Comm_create_from_group, takes the short ways too (127
 * instructions a send less, callgrind). */
static inline hmpi_comm_t *short_comm(MPI_Comm comm)
{
    if (__builtin_expect(hmpi_mpi_state != HMPI_STATE_RUNNING, 0))
        return NULL;
    return __builtin_expect(comm == MPI_COMM_WORLD, 1) ? hmpi_comm_world : hmpi_comm_find(comm);
}

/* The checks of the entry points below: the common case inline, the full checks
 * (hmpi_check_send/recv) only when it does not hold. */
static inline int check_send(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type,
                             int dest, int tag, hmpi_layout_t *t)
{
    return common_args(c, buf, count, type, dest, tag, 0, t)
               ? MPI_SUCCESS
               : hmpi_check_send(c, buf, count, type, dest, tag, t);
}

static inline int check_recv(hmpi_comm_t *c, const void *buf, int count, MPI_Datatype type,
                             int source, int tag, hmpi_layout_t *t)
{
    return common_args(c, buf, count, type, source, tag, 1, t)
               ? MPI_SUCCESS
               : hmpi_check_recv(c, buf, count, type, source, tag, t);
}

/* How an operation completes: its call blocks, returns a request, or makes a persistent
 * one. */
enum { BLOCKING, NONBLOCKING, PERSISTENT };

/* The arguments of a checked operation on c (NULL: not accelerated). */
static inline hmpi_p2p_args_t args_of(hmpi_comm_t *c, MPI_Comm comm, const void *buf, int count,
                                      MPI_Datatype type, int peer, int tag, int mode)
{
    hmpi_p2p_args_t a;
    a.c = c;
    a.comm = comm;
    a.buf = (void *)buf;
    a.count = count;
    a.type = type;
    a.peer = peer;
    a.tag = tag;
    a.mode = mode;
    return a;
}

/* A communicator HMPI does not accelerate: MPI_ERR_COMM raised for MPI_COMM_NULL while
 * HMPI is active (0 otherwise: the MPI below checks the rest of the call). */
#define UNKNOWN_COMM(c, comm, fn) (!(c) && hmpi_check_comm_null((comm), (fn)))

/* The request argument of a call that makes one. */
static int check_request(int how, const MPI_Request *request)
{
    if (how != BLOCKING && !request)
        return hmpi_err_what(MPI_ERR_ARG, "request is NULL");
    return MPI_SUCCESS;
}

/* A send of any mode, as how says. */
static int send_any(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                    int mode, int how, MPI_Request *request, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (UNKNOWN_COMM(c, comm, fn))
        return MPI_ERR_COMM;
    hmpi_p2p_args_t a = args_of(c, comm, buf, count, type, dest, tag, mode);
    int err = c ? check_send(c, buf, count, type, dest, tag, &a.t) : MPI_SUCCESS;
    if (!err && c)
        err = check_request(how, request);
    if (err)
        return hmpi_raise_in(comm, err, fn);
    return hmpi_p2p_send(&a, how == PERSISTENT, how == BLOCKING ? NULL : request, fn);
}

/* MPI_Send past its inline short way: everything, out of line (a sibling call). */
static __attribute__((noinline)) int send_general(const void *buf, int count, MPI_Datatype type,
                                                  int dest, int tag, MPI_Comm comm)
{
    return send_any(buf, count, type, dest, tag, comm, HMPI_MODE_STANDARD, BLOCKING, NULL,
                    "MPI_Send");
}

/* The short way with no call (p2p/short.h): the common case, a small
 * contiguous message to a local peer whose lane has a slot known free. */
int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    size_t bytes;
    MPI_Aint lo;
    hmpi_comm_t *c = short_comm(comm);
    int l;
    if (short_args(c, buf, count, type, dest, tag, 0, &bytes, &lo, &l) &&
        bytes <= (size_t)hmpi_knobs.IMMEDIATE_MAX &&
        hmpi_p2p_send_short(c, (const char *)buf + lo, bytes, l, tag))
        return MPI_SUCCESS;
    return send_general(buf, count, type, dest, tag, comm);
}
HMPI_PMPI(Send)

#define SEND_CALL(NAME, MODE)                                                                   \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,            \
                   MPI_Comm comm)                                                               \
    {                                                                                           \
        return send_any(buf, count, type, dest, tag, comm, MODE, BLOCKING, NULL, "MPI_" #NAME); \
    }                                                                                           \
    HMPI_PMPI(NAME)
#define SEND_REQ_CALL(NAME, MODE, HOW)                                                        \
    int MPI_##NAME(const void *buf, int count, MPI_Datatype type, int dest, int tag,          \
                   MPI_Comm comm, MPI_Request *request)                                       \
    {                                                                                         \
        return send_any(buf, count, type, dest, tag, comm, MODE, HOW, request, "MPI_" #NAME); \
    }                                                                                         \
    HMPI_PMPI(NAME)

SEND_CALL(Ssend, HMPI_MODE_SYNC)
SEND_CALL(Rsend, HMPI_MODE_READY)
SEND_CALL(Bsend, HMPI_MODE_BUFFERED)
SEND_REQ_CALL(Isend, HMPI_MODE_STANDARD, NONBLOCKING)
SEND_REQ_CALL(Issend, HMPI_MODE_SYNC, NONBLOCKING)
SEND_REQ_CALL(Irsend, HMPI_MODE_READY, NONBLOCKING)
SEND_REQ_CALL(Ibsend, HMPI_MODE_BUFFERED, NONBLOCKING)
SEND_REQ_CALL(Send_init, HMPI_MODE_STANDARD, PERSISTENT)
SEND_REQ_CALL(Ssend_init, HMPI_MODE_SYNC, PERSISTENT)
SEND_REQ_CALL(Rsend_init, HMPI_MODE_READY, PERSISTENT)
SEND_REQ_CALL(Bsend_init, HMPI_MODE_BUFFERED, PERSISTENT)

/* A receive, as how says. */
static int recv_any(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                    int how, MPI_Request *request, MPI_Status *status, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (UNKNOWN_COMM(c, comm, fn))
        return MPI_ERR_COMM;
    hmpi_p2p_args_t a = args_of(c, comm, buf, count, type, source, tag, HMPI_MODE_STANDARD);
    int err = c ? check_recv(c, buf, count, type, source, tag, &a.t) : MPI_SUCCESS;
    if (!err && c)
        err = check_request(how, request);
    if (err)
        return hmpi_raise_in(comm, err, fn);
    return hmpi_p2p_recv(&a, how == PERSISTENT, how == BLOCKING ? NULL : request, status, fn);
}

/* MPI_Recv past its inline short way: everything, out of line (a sibling call). */
static __attribute__((noinline)) int recv_general(void *buf, int count, MPI_Datatype type,
                                                  int source, int tag, MPI_Comm comm,
                                                  MPI_Status *status)
{
    return recv_any(buf, count, type, source, tag, comm, BLOCKING, NULL, status, "MPI_Recv");
}

/* The short way with no call (p2p/short.h): the common case, a named
 * local source whose next message is in its lane or comes within a few spins. */
int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    size_t bytes;
    MPI_Aint lo;
    hmpi_comm_t *c = short_comm(comm);
    int l, err;
    if (short_args(c, buf, count, type, source, tag, 1, &bytes, &lo, &l) &&
        hmpi_p2p_recv_short(c, (char *)buf + lo, bytes, source, l, tag, status, &err))
        return hmpi_raise_in(comm, err, "MPI_Recv");
    return recv_general(buf, count, type, source, tag, comm, status);
}
HMPI_PMPI(Recv)

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    return recv_any(buf, count, type, source, tag, comm, NONBLOCKING, request, MPI_STATUS_IGNORE,
                    "MPI_Irecv");
}
HMPI_PMPI(Irecv)

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                  MPI_Request *request)
{
    return recv_any(buf, count, type, source, tag, comm, PERSISTENT, request, MPI_STATUS_IGNORE,
                    "MPI_Recv_init");
}
HMPI_PMPI(Recv_init)

/* ---- send-receive -------------------------------------------------------------------------
 * MPI_Sendrecv and MPI 4's MPI_Isendrecv, and their replace forms: a receive and a send
 * through the same paths as MPI_Irecv's and MPI_Isend's (so a local peer's message is
 * matched by HMPI, never by the MPI below), under one request for the nonblocking ones. */
static int sendrecv_any(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                        int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                        int source, int recvtag, MPI_Comm comm, int replace, int how,
                        MPI_Request *request, MPI_Status *status, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (UNKNOWN_COMM(c, comm, fn))
        return MPI_ERR_COMM;
    hmpi_p2p_args_t s =
        args_of(c, comm, sendbuf, sendcount, sendtype, dest, sendtag, HMPI_MODE_STANDARD);
    hmpi_p2p_args_t r =
        args_of(c, comm, recvbuf, recvcount, recvtype, source, recvtag, HMPI_MODE_STANDARD);
    int err = c ? check_send(c, sendbuf, sendcount, sendtype, dest, sendtag, &s.t) : MPI_SUCCESS;
    if (!err && c)
        err = check_recv(c, recvbuf, recvcount, recvtype, source, recvtag, &r.t);
    if (!err && c)
        err = check_request(how, request);
    if (err)
        return hmpi_raise_in(comm, err, fn);
    return hmpi_p2p_sendrecv(&s, &r, replace, how == BLOCKING ? NULL : request, status, fn);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_any(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                        source, recvtag, comm, 0, BLOCKING, NULL, status, "MPI_Sendrecv");
}
HMPI_PMPI(Sendrecv)

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source,
                         int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_any(buf, count, type, dest, sendtag, buf, count, type, source, recvtag, comm, 1,
                        BLOCKING, NULL, status, "MPI_Sendrecv_replace");
}
HMPI_PMPI(Sendrecv_replace)

#if HMPI_MPI4_CALLS
int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Request *request)
{
    return sendrecv_any(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                        source, recvtag, comm, 0, NONBLOCKING, request, MPI_STATUS_IGNORE,
                        "MPI_Isendrecv");
}
HMPI_PMPI(Isendrecv)

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return sendrecv_any(buf, count, type, dest, sendtag, buf, count, type, source, recvtag, comm, 1,
                        NONBLOCKING, request, MPI_STATUS_IGNORE, "MPI_Isendrecv_replace");
}
HMPI_PMPI(Isendrecv_replace)
#endif

/* ---- probes ------------------------------------------------------------------------------
 * MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe. A remote source's probe is the MPI
 * below's, which checks it; the others are checked here. */
static int probe_any(int source, int tag, MPI_Comm comm, int block, int *flag, MPI_Message *message,
                     MPI_Status *status, const char *fn)
{
    HMPI_ENTER(fn);
    hmpi_comm_t *c = hmpi_comm_get(comm);
    if (!c && hmpi_check_comm_null(comm, fn))
        return MPI_ERR_COMM;
    if (c && !(source >= 0 && source < c->size && c->local_of[source] < 0)) {
        hmpi_layout_t t;
        int err = check_recv(c, NULL, 0, MPI_BYTE, source, tag, &t);
        if (err)
            return hmpi_raise_in(comm, err, fn);
    }
    return hmpi_p2p_probe(c, comm, source, tag, block, flag, message, status, fn);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return probe_any(source, tag, comm, 1, NULL, NULL, status, "MPI_Probe");
}
HMPI_PMPI(Probe)

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe_any(source, tag, comm, 0, flag, NULL, status, "MPI_Iprobe");
}
HMPI_PMPI(Iprobe)

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    return probe_any(source, tag, comm, 1, NULL, message, status, "MPI_Mprobe");
}
HMPI_PMPI(Mprobe)

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                MPI_Status *status)
{
    return probe_any(source, tag, comm, 0, flag, message, status, "MPI_Improbe");
}
HMPI_PMPI(Improbe)

/* Matched receives: the message knows its communicator (p2p/probe.c checks the buffer). */
int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    HMPI_ENTER("MPI_Mrecv");
    return hmpi_p2p_mrecv(buf, count, type, message, NULL, status, "MPI_Mrecv");
}
HMPI_PMPI(Mrecv)

int MPI_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Request *request)
{
    HMPI_ENTER("MPI_Imrecv");
    return hmpi_p2p_mrecv(buf, count, type, message, request, MPI_STATUS_IGNORE, "MPI_Imrecv");
}
HMPI_PMPI(Imrecv)
