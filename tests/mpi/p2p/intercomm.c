/* intercomm.c: point-to-point on intercommunicators, HMPI's where the members share a
 * node (core/comm.h), every value checked. The world splits into its even and odd ranks,
 * joined by MPI_Intercomm_create, its MPI_Comm_dup, MPI_Comm_split and MPI_Comm_idup, and
 * (MPI 4) MPI_Intercomm_create_from_groups under a session. Rank r of one group talks to
 * rank r of the other (world ranks 2r and 2r+1: one node, simulated or real); on each:
 *  - ping-pong of 8 B, 64 KiB and 4 MiB heap buffers, checked byte by byte, counted by
 *    HMPI's MPI_T counters as messages of the node (when HMPI is active);
 *  - MPI_ANY_SOURCE/MPI_ANY_TAG (MPI_SOURCE is the remote rank), MPI_PROC_NULL, MPI_Ssend,
 *    MPI_Sendrecv, MPI_Isendrecv (MPI 4), persistent requests, MPI_Rsend, MPI_Bsend,
 *    truncation, MPI_Iprobe and MPI_Mprobe;
 *  - a message to remote rank r + 1 (another node under HMPI_NODE_SIZE=2), counted as
 *    remote there;
 *  - MPI_Bcast (MPI_ROOT, MPI_PROC_NULL) and MPI_Allreduce, by the MPI below (HMPI's
 *    collective counters do not move);
 *  - a destination or source equal to the remote size: MPI_ERR_RANK, returned.
 * Then MPI_Intercomm_merge, whose allreduce is HMPI's. */
#define CHECK_WITH_MPI
#include "../../check.h"

#include <hmpi.h>
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../same_node.h"

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define TEST_MPI4 1
#endif

static const char *counters[] = {"hmpi_msgs_immediate", "hmpi_msgs_copy", "hmpi_msgs_synergistic",
                                 "hmpi_msgs_cma",       "hmpi_msgs_pipe", "hmpi_msgs_remote",
                                 "hmpi_coll_allreduce", "hmpi_coll_bcast"};
enum { NMSG = 6, REMOTE = 5, ALLREDUCE = 6, BCAST = 7, NCOUNTERS = 8 };

static MPI_T_pvar_session pvars;
static MPI_T_pvar_handle handles[NCOUNTERS];
static int active, wrank, wsize;

static void counters_start(void)
{
    int provided, idx, n;
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
    CHECK(MPI_T_pvar_session_create(&pvars) == MPI_SUCCESS, "pvar session");
    for (int i = 0; i < NCOUNTERS; i++) {
        CHECK(MPI_T_pvar_get_index(counters[i], MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS,
              "no %s", counters[i]);
        CHECK(MPI_T_pvar_handle_alloc(pvars, idx, NULL, &handles[i], &n) == MPI_SUCCESS && n == 1,
              "handle of %s", counters[i]);
        CHECK(MPI_T_pvar_start(pvars, handles[i]) == MPI_SUCCESS, "start %s", counters[i]);
    }
}

/* What counter i counted since its last read. */
static unsigned long long counter(int i)
{
    unsigned long long v = 0;
    CHECK(MPI_T_pvar_readreset(pvars, handles[i], &v) == MPI_SUCCESS, "read %s", counters[i]);
    return v;
}

/* Messages this rank sent since the last call: by the node's protocols, and remote. */
static void sent(unsigned long long *local, unsigned long long *remote)
{
    *local = *remote = 0;
    for (int i = 0; i < NMSG; i++)
        *(i == REMOTE ? remote : local) += counter(i);
}

static unsigned char pattern(size_t i, int salt) { return (unsigned char)(i * 131 + salt * 7 + 1); }

/* Ping-pong of n bytes between rank r of the low group and rank r of the high one. */
static void pingpong(MPI_Comm ic, int low, int r, size_t n, int salt)
{
    unsigned char *b = malloc(n);
    CHECK(b, "out of memory");
    MPI_Status st;
    int got;
    if (low) {
        for (size_t i = 0; i < n; i++)
            b[i] = pattern(i, salt);
        CHECK(MPI_Send(b, (int)n, MPI_BYTE, r, 1, ic) == MPI_SUCCESS, "Send");
        memset(b, 0, n);
        CHECK(MPI_Recv(b, (int)n, MPI_BYTE, r, 2, ic, &st) == MPI_SUCCESS, "Recv");
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == pattern(i, salt + 1), "back: byte %zu of %zu: %d", i, n, b[i]);
    } else {
        CHECK(MPI_Recv(b, (int)n, MPI_BYTE, r, 1, ic, &st) == MPI_SUCCESS, "Recv");
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == pattern(i, salt), "byte %zu of %zu: %d", i, n, b[i]);
        for (size_t i = 0; i < n; i++)
            b[i] = pattern(i, salt + 1);
        CHECK(MPI_Send(b, (int)n, MPI_BYTE, r, 2, ic) == MPI_SUCCESS, "Send back");
    }
    MPI_Get_count(&st, MPI_BYTE, &got);
    CHECK(st.MPI_SOURCE == r && got == (int)n, "status: source %d, %d bytes", st.MPI_SOURCE, got);
    free(b);
}

/* Everything on intercommunicator ic (this rank in the low group or not); accel: its
 * point-to-point is HMPI's where the peer shares the node. */
static void exercise(MPI_Comm ic, int low, int accel, const char *what)
{
    int inter = 0, r, lsize, rsize;
    CHECK(MPI_Comm_test_inter(ic, &inter) == MPI_SUCCESS && inter, "%s: not inter", what);
    MPI_Comm_rank(ic, &r);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    CHECK(lsize == rsize && r < rsize, "%s: sizes %d and %d", what, lsize, rsize);
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    int partner_world = low ? 2 * r + 1 : 2 * r; /* (the groups split by parity) */
    unsigned long long local, remote;

    /* Ping-pong across the protocols: HMPI's messages of the node. */
    sent(&local, &remote);
    static const size_t sizes[] = {8, 64 << 10, 4 << 20};
    for (int k = 0; k < 3; k++)
        pingpong(ic, low, r, sizes[k], k);
    sent(&local, &remote);
    int near = same_node(partner_world);
    unsigned long long want = active && accel ? 3 : 0;
    CHECK(local == (near ? want : 0) && remote == (near ? 0 : want),
          "%s: 3 messages to world rank %d: HMPI counted %llu local, %llu remote", what,
          partner_world, local, remote);

    /* Wildcards: the source is the remote rank. */
    int v = -1;
    MPI_Status st;
    if (low) {
        CHECK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &st) == MPI_SUCCESS,
              "Recv any");
        CHECK(v == 1000 + r && st.MPI_SOURCE == r && st.MPI_TAG == 5, "%s: any: %d from %d tag %d",
              what, v, st.MPI_SOURCE, st.MPI_TAG);
    } else {
        v = 1000 + r;
        CHECK(MPI_Send(&v, 1, MPI_INT, r, 5, ic) == MPI_SUCCESS, "Send");
    }

    /* MPI_PROC_NULL. */
    CHECK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, ic) == MPI_SUCCESS, "Send PROC_NULL");
    CHECK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, ic, &st) == MPI_SUCCESS, "Recv PROC_NULL");
    int got = -1;
    MPI_Get_count(&st, MPI_INT, &got);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && got == 0,
          "%s: PROC_NULL status %d/%d/%d", what, st.MPI_SOURCE, st.MPI_TAG, got);

    /* Ssend, Sendrecv, Isendrecv. */
    if (low) {
        v = 2000 + r;
        CHECK(MPI_Ssend(&v, 1, MPI_INT, r, 6, ic) == MPI_SUCCESS, "Ssend");
    } else {
        CHECK(MPI_Recv(&v, 1, MPI_INT, r, 6, ic, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Recv");
        CHECK(v == 2000 + r, "%s: Ssend's %d", what, v);
    }
    int out = 3000 + 2 * r + low, in = -1;
    CHECK(MPI_Sendrecv(&out, 1, MPI_INT, r, 7, &in, 1, MPI_INT, r, 7, ic, &st) == MPI_SUCCESS,
          "Sendrecv");
    CHECK(in == 3000 + 2 * r + !low && st.MPI_SOURCE == r, "%s: Sendrecv %d from %d", what, in,
          st.MPI_SOURCE);
#ifdef TEST_MPI4
    MPI_Request q;
    in = -1;
    CHECK(MPI_Isendrecv(&out, 1, MPI_INT, r, 8, &in, 1, MPI_INT, r, 8, ic, &q) == MPI_SUCCESS,
          "Isendrecv");
    CHECK(MPI_Wait(&q, &st) == MPI_SUCCESS, "Wait");
    CHECK(in == 3000 + 2 * r + !low && st.MPI_SOURCE == r, "%s: Isendrecv %d from %d", what, in,
          st.MPI_SOURCE);
#endif

    /* Persistent requests (twice), MPI_Rsend to a posted receive, MPI_Bsend, and a
     * message longer than its receive: MPI_ERR_TRUNCATE. */
    int pv[2] = {-1, -1};
    MPI_Request pq;
    if (low)
        CHECK(MPI_Send_init(pv, 2, MPI_INT, r, 11, ic, &pq) == MPI_SUCCESS, "Send_init");
    else
        CHECK(MPI_Recv_init(pv, 2, MPI_INT, r, 11, ic, &pq) == MPI_SUCCESS, "Recv_init");
    for (int k = 0; k < 2; k++) {
        pv[0] = low ? 4000 + r + k : -1;
        pv[1] = low ? 5000 + r + k : -1;
        CHECK(MPI_Start(&pq) == MPI_SUCCESS && MPI_Wait(&pq, &st) == MPI_SUCCESS, "persistent");
        CHECK(low || (pv[0] == 4000 + r + k && pv[1] == 5000 + r + k && st.MPI_SOURCE == r),
              "%s: persistent round %d: %d %d from %d", what, k, pv[0], pv[1], st.MPI_SOURCE);
    }
    MPI_Request_free(&pq);
    if (low) {
        CHECK(MPI_Recv(NULL, 0, MPI_INT, r, 12, ic, MPI_STATUS_IGNORE) == MPI_SUCCESS, "ready?");
        v = 6000 + r;
        CHECK(MPI_Rsend(&v, 1, MPI_INT, r, 13, ic) == MPI_SUCCESS, "Rsend");
        int bsz = 1024 + MPI_BSEND_OVERHEAD;
        void *bb = malloc((size_t)bsz);
        CHECK(bb && MPI_Buffer_attach(bb, bsz) == MPI_SUCCESS, "Buffer_attach");
        v = 7000 + r;
        CHECK(MPI_Bsend(&v, 1, MPI_INT, r, 14, ic) == MPI_SUCCESS, "Bsend");
        CHECK(MPI_Buffer_detach(&bb, &bsz) == MPI_SUCCESS, "Buffer_detach");
        free(bb);
        CHECK(MPI_Send(pv, 2, MPI_INT, r, 15, ic) == MPI_SUCCESS, "Send 2");
    } else {
        MPI_Request rq;
        CHECK(MPI_Irecv(&v, 1, MPI_INT, r, 13, ic, &rq) == MPI_SUCCESS, "Irecv");
        CHECK(MPI_Send(NULL, 0, MPI_INT, r, 12, ic) == MPI_SUCCESS, "ready");
        CHECK(MPI_Wait(&rq, &st) == MPI_SUCCESS && v == 6000 + r, "%s: Rsend's %d", what, v);
        CHECK(MPI_Recv(&v, 1, MPI_INT, r, 14, ic, &st) == MPI_SUCCESS && v == 7000 + r,
              "%s: Bsend's %d", what, v);
        int err = MPI_Recv(&v, 1, MPI_INT, r, 15, ic, &st), cls = -1;
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "%s: 2 ints into 1: class %d", what, cls);
    }

    /* Iprobe, then Mprobe and Mrecv. */
    enum { N = 100 };
    int buf[N];
    if (low) {
        int flag = 0;
        while (!flag)
            CHECK(MPI_Iprobe(r, 9, ic, &flag, &st) == MPI_SUCCESS, "Iprobe");
        MPI_Get_count(&st, MPI_INT, &got);
        CHECK(st.MPI_SOURCE == r && st.MPI_TAG == 9 && got == N, "%s: Iprobe %d/%d/%d", what,
              st.MPI_SOURCE, st.MPI_TAG, got);
        MPI_Message m;
        CHECK(MPI_Mprobe(MPI_ANY_SOURCE, 9, ic, &m, &st) == MPI_SUCCESS && st.MPI_SOURCE == r,
              "Mprobe");
        CHECK(MPI_Mrecv(buf, N, MPI_INT, &m, &st) == MPI_SUCCESS, "Mrecv");
        for (int i = 0; i < N; i++)
            CHECK(buf[i] == r * N + i, "%s: Mrecv element %d: %d", what, i, buf[i]);
    } else {
        for (int i = 0; i < N; i++)
            buf[i] = r * N + i;
        CHECK(MPI_Send(buf, N, MPI_INT, r, 9, ic) == MPI_SUCCESS, "Send");
    }

    /* Low rank r to high rank r + 1: on another node under HMPI_NODE_SIZE=2. */
    int to = (r + 1) % rsize, from = (r + rsize - 1) % rsize;
    sent(&local, &remote);
    if (low) {
        for (int i = 0; i < N; i++)
            buf[i] = -r * N - i;
        CHECK(MPI_Send(buf, N, MPI_INT, to, 10, ic) == MPI_SUCCESS, "Send across");
    } else {
        CHECK(MPI_Recv(buf, N, MPI_INT, from, 10, ic, &st) == MPI_SUCCESS, "Recv across");
        for (int i = 0; i < N; i++)
            CHECK(buf[i] == -from * N - i, "%s: across element %d: %d", what, i, buf[i]);
    }
    sent(&local, &remote);
    near = same_node(2 * to + 1); /* (collective over MPI_COMM_WORLD) */
    if (low) {
        want = active && accel ? 1 : 0;
        CHECK(local == (near ? want : 0) && remote == (near ? 0 : want),
              "%s: 1 message to world rank %d: HMPI counted %llu local, %llu remote", what,
              2 * to + 1, local, remote);
    }

    /* Collectives: the MPI below's. */
    counter(ALLREDUCE);
    counter(BCAST);
    long b = low && r == 0 ? 4242 : -1;
    int root = low ? (r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    CHECK(MPI_Bcast(&b, 1, MPI_LONG, root, ic) == MPI_SUCCESS, "Bcast");
    CHECK(b == (low && r == 0 ? 4242 : low ? -1 : 4242), "%s: Bcast gave %ld", what, b);
    long mine = low ? r + 1 : 100 * (r + 1), sum = 0;
    CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, ic) == MPI_SUCCESS, "Allreduce");
    long n = rsize, want_sum = low ? 100 * n * (n + 1) / 2 : n * (n + 1) / 2;
    CHECK(sum == want_sum, "%s: Allreduce gave %ld, not %ld", what, sum, want_sum);
    CHECK(counter(ALLREDUCE) == 0 && counter(BCAST) == 0, "%s: HMPI counted its own collective",
          what);

    /* A rank past the remote group. */
    int err = MPI_Send(&v, 1, MPI_INT, rsize, 0, ic), cls = -1;
    MPI_Error_class(err, &cls);
    CHECK(err != MPI_SUCCESS && cls == MPI_ERR_RANK, "%s: Send to %d: class %d", what, rsize, cls);
    err = MPI_Recv(&v, 1, MPI_INT, rsize, 0, ic, MPI_STATUS_IGNORE);
    MPI_Error_class(err, &cls);
    CHECK(err != MPI_SUCCESS && cls == MPI_ERR_RANK, "%s: Recv from %d: class %d", what, rsize,
          cls);
}

/* A collective on ic does not hold back a send and a receive that match (MPI-4.1 §3.5,
 * as tests/mpi/p2p/p2p_behind_coll.c on intracommunicators): the low rank posts a receive
 * from its partner and enters the collective; the partner sends with MPI_Ssend, which
 * returns only once the receive is matched, and only then enters it. The MPI below
 * carries the intercommunicator's collectives while HMPI carries its messages: a rank
 * inside the below's blocking call, not moving HMPI's engine, would hang here. One
 * collective of each kind, with its result checked. */
enum {
    K_BARRIER,
    K_BCAST,
    K_GATHER,
    K_GATHERV,
    K_SCATTER,
    K_SCATTERV,
    K_ALLGATHER,
    K_ALLGATHERV,
    K_ALLTOALL,
    K_ALLTOALLV,
    K_ALLTOALLW,
    K_REDUCE,
    K_ALLREDUCE,
    K_REDUCE_SCATTER,
    K_REDUCE_SCATTER_BLOCK,
    NKINDS
};

static void behind(MPI_Comm ic, int low)
{
    int r, n;
    MPI_Comm_rank(ic, &r);
    MPI_Comm_remote_size(ic, &n);
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    int *ones = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int i = 0; i < n; i++) {
        ones[i] = 1;
        displs[i] = i;
        types[i] = MPI_INT;
    }
    int *wdispls = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        wdispls[i] = i * (int)sizeof(int);
    /* Rooted calls: the low group's rank 0 is the root. */
    int root = low ? (r == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int mine = (low ? 1000 : 2000) + r; /* what this rank gives */
    for (int k = 0; k < NKINDS; k++) {
        int msg = -1, got = 0;
        MPI_Request q = MPI_REQUEST_NULL;
        if (low)
            CHECK(MPI_Irecv(&msg, 1, MPI_INT, r, 50 + k, ic, &q) == MPI_SUCCESS, "Irecv");
        else
            CHECK(MPI_Ssend(&k, 1, MPI_INT, r, 50 + k, ic) == MPI_SUCCESS, "Ssend");
        for (int i = 0; i < n; i++) {
            in[i] = mine;
            out[i] = -1;
        }
        int err = MPI_SUCCESS, one = -1, want = 0;
        /* want: what out[i] (or one) must hold from remote rank i, -1 where nothing. */
        switch (k) {
        case K_BARRIER: err = MPI_Barrier(ic); break;
        case K_BCAST:
            one = low && r == 0 ? 77 : -1;
            err = MPI_Bcast(&one, 1, MPI_INT, root, ic);
            got = one == (low && r == 0 ? 77 : low ? -1 : 77);
            break;
        case K_GATHER:
        case K_GATHERV:
            err = k == K_GATHER
                      ? MPI_Gather(&mine, 1, MPI_INT, out, 1, MPI_INT, root, ic)
                      : MPI_Gatherv(&mine, 1, MPI_INT, out, ones, displs, MPI_INT, root, ic);
            got = 1;
            for (int i = 0; i < n; i++)
                got &= out[i] == (low && r == 0 ? 2000 + i : -1);
            break;
        case K_SCATTER:
        case K_SCATTERV:
            for (int i = 0; i < n; i++)
                in[i] = 3000 + i;
            err = k == K_SCATTER
                      ? MPI_Scatter(in, 1, MPI_INT, &one, 1, MPI_INT, root, ic)
                      : MPI_Scatterv(in, ones, displs, MPI_INT, &one, 1, MPI_INT, root, ic);
            got = one == (low ? -1 : 3000 + r);
            break;
        case K_ALLGATHER:
        case K_ALLGATHERV:
            err = k == K_ALLGATHER
                      ? MPI_Allgather(&mine, 1, MPI_INT, out, 1, MPI_INT, ic)
                      : MPI_Allgatherv(&mine, 1, MPI_INT, out, ones, displs, MPI_INT, ic);
            got = 1;
            for (int i = 0; i < n; i++)
                got &= out[i] == (low ? 2000 : 1000) + i;
            break;
        case K_ALLTOALL:
        case K_ALLTOALLV:
        case K_ALLTOALLW:
            for (int i = 0; i < n; i++)
                in[i] = (low ? 1000 : 2000) * 10 + r * 100 + i; /* to remote rank i */
            err = k == K_ALLTOALL ? MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, ic)
                  : k == K_ALLTOALLV
                      ? MPI_Alltoallv(in, ones, displs, MPI_INT, out, ones, displs, MPI_INT, ic)
                      : MPI_Alltoallw(in, ones, wdispls, types, out, ones, wdispls, types, ic);
            got = 1;
            for (int i = 0; i < n; i++)
                got &= out[i] == (low ? 2000 : 1000) * 10 + i * 100 + r;
            break;
        case K_REDUCE:
            err = MPI_Reduce(&mine, &one, 1, MPI_INT, MPI_SUM, root, ic);
            want = 2000 * n + n * (n - 1) / 2;
            got = one == (low && r == 0 ? want : -1);
            break;
        case K_ALLREDUCE:
            err = MPI_Allreduce(&mine, &one, 1, MPI_INT, MPI_SUM, ic);
            got = one == (low ? 2000 : 1000) * n + n * (n - 1) / 2;
            break;
        case K_REDUCE_SCATTER:
        case K_REDUCE_SCATTER_BLOCK:
            /* n elements a side, one to each member of the other group. */
            for (int i = 0; i < n; i++)
                in[i] = (low ? 1 : 100) * (i + 1);
            err = k == K_REDUCE_SCATTER
                      ? MPI_Reduce_scatter(in, &one, ones, MPI_INT, MPI_SUM, ic)
                      : MPI_Reduce_scatter_block(in, &one, 1, MPI_INT, MPI_SUM, ic);
            got = one == (low ? 100 : 1) * (r + 1) * n;
            break;
        }
        CHECK(err == MPI_SUCCESS, "behind: collective %d: error %d", k, err);
        CHECK(k == K_BARRIER || got, "behind: collective %d: wrong result (rank %d, low %d)", k, r,
              low);
        if (low) {
            CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS && msg == k,
                  "behind: collective %d: message %d", k, msg);
        }
    }
    free(in);
    free(out);
    free(ones);
    free(displs);
    free(wdispls);
    free(types);
}

/* MPI_Intercomm_merge of ic, the low group first: an intracommunicator of the world's
 * size whose allreduce HMPI does. */
static void merged(MPI_Comm ic, int low)
{
    MPI_Comm m;
    CHECK(MPI_Intercomm_merge(ic, !low, &m) == MPI_SUCCESS, "Intercomm_merge");
    int r, size;
    MPI_Comm_rank(m, &r);
    MPI_Comm_size(m, &size);
    CHECK(size == wsize && r == (low ? wrank / 2 : wsize / 2 + wrank / 2), "merged rank %d of %d",
          r, size);
    counter(ALLREDUCE);
    long v = r, sum = 0;
    CHECK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, m) == MPI_SUCCESS, "Allreduce");
    CHECK(sum == (long)size * (size - 1) / 2, "merged sum %ld", sum);
    CHECK(counter(ALLREDUCE) == (unsigned long long)active, "merged: HMPI's allreduce %d", active);
    MPI_Comm_free(&m);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize % 2 == 0, "an even number of ranks");
    active = HMPI_Active();
    counters_start();
    int low = wrank % 2 == 0;

    MPI_Comm half, ic, dup, split, idup;
    MPI_Comm_split(MPI_COMM_WORLD, !low, wrank, &half);
    CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? 1 : 0, 77, &ic) == MPI_SUCCESS,
          "Intercomm_create");
    exercise(ic, low, 1, "Intercomm_create");
    behind(ic, low);
    CHECK(MPI_Comm_dup(ic, &dup) == MPI_SUCCESS, "dup");
    exercise(dup, low, 1, "dup");
    /* One color, the same order: rank r stays rank r (the pairs stay). */
    CHECK(MPI_Comm_split(ic, 0, wrank, &split) == MPI_SUCCESS, "split");
    exercise(split, low, 1, "split");
    /* An idup of an intercommunicator stays the MPI below's (mpi/comm.c). */
    MPI_Request q;
    CHECK(MPI_Comm_idup(ic, &idup, &q) == MPI_SUCCESS && MPI_Wait(&q, MPI_STATUS_IGNORE) == 0,
          "idup");
    exercise(idup, low, 0, "idup");
    merged(ic, low);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);

#ifdef TEST_MPI4
    /* From groups, under a session: mpi://WORLD's even and odd ranks. */
    MPI_Session s;
    MPI_Group world, even, odd;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "Session_init");
    CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world) == MPI_SUCCESS, "pset");
    int range[1][3] = {{0, wsize - 1, 2}};
    MPI_Group_range_incl(world, 1, range, &even);
    range[0][0] = 1;
    MPI_Group_range_incl(world, 1, range, &odd);
    CHECK(MPI_Intercomm_create_from_groups(low ? even : odd, 0, low ? odd : even, 0,
                                           "org.hmpi.test.intercomm", MPI_INFO_NULL,
                                           MPI_ERRORS_RETURN, &ic) == MPI_SUCCESS,
          "Intercomm_create_from_groups");
    exercise(ic, low, 1, "from groups");
    behind(ic, low);
    merged(ic, low);
    MPI_Comm_free(&ic);
    MPI_Group_free(&even);
    MPI_Group_free(&odd);
    MPI_Group_free(&world);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "Session_finalize");
#endif

    MPI_T_pvar_session_free(&pvars);
    MPI_T_finalize();
    MPI_Finalize();
    return 0;
}
