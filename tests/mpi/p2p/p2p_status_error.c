/* p2p_status_error.c: who may write the MPI_ERROR field of a status (MPI-4.1 §3.2.5: "In
 * general, message-passing calls do not modify the value of the error code field of
 * status variables. This field may be updated only by the functions in Section 3.7.5
 * that return multiple statuses. The field is updated if and only if such function
 * returns with an error code of MPI_ERR_IN_STATUS."). Every single-completion call
 * (Recv, Wait, Test, Waitany, Testany, Request_get_status, Probe, Iprobe, Mprobe,
 * Improbe, Mrecv, Sendrecv, Sendrecv_replace; from MPI_PROC_NULL, from inactive
 * persistent requests, on truncation) gets a status whose MPI_ERROR holds a sentinel,
 * and must leave it there while filling the other fields right; Waitall, Testall,
 * Waitsome and Testsome leave it when all succeed, and with a truncated receive return
 * MPI_ERR_IN_STATUS with every status's MPI_ERROR set (MPI_SUCCESS for the good one).
 * Partners: rank^1 (same simulated node) and rank^2 (another one under
 * HMPI_NODE_SIZE=2).
 *
 * Where the MPI below serves a call (HMPI off, or a peer on another node) its own
 * habits are accepted as well, MPI_SUCCESS written where the standard says nothing is:
 * MPICH 4.0.2 writes it in MPI_Probe, MPI_Iprobe and MPI_Sendrecv_replace, and both
 * MPICH and Open MPI 4.1 in every status of a successful Waitall, Testall, Waitsome or
 * Testsome, MPICH 4.2 in the empty status of an inactive persistent request (the
 * standard's empty status has error = MPI_SUCCESS, §3.7.3). Where HMPI serves the call
 * itself the standard's rule holds exactly. */
#include "../p2p_common.h"
#include "../same_node.h"

#define SEED 0x57A7E5ull
enum { SENT = 0x5E471 }; /* no MPI's error code */

static int rank, nranks;
static MPI_Comm comm; /* a dup of MPI_COMM_WORLD with MPI_ERRORS_RETURN */
static int hmpi_on;   /* HMPI linked and active */
static int lenient;   /* the current peer's calls may be the MPI below's (see the top) */

static void fresh(MPI_Status *st)
{
    memset(st, 0x7B, sizeof *st);
    st->MPI_ERROR = SENT;
}

/* st must be peer's message of tag with n bytes, MPI_ERROR still the sentinel. */
static void check_st(const MPI_Status *st, int peer, int tag, int n, const char *what)
{
    CHECK(st->MPI_ERROR == SENT, "%s: MPI_ERROR overwritten with %d", what, st->MPI_ERROR);
    CHECK(st->MPI_SOURCE == peer && st->MPI_TAG == tag, "%s: source %d tag %d, expected %d and %d",
          what, st->MPI_SOURCE, st->MPI_TAG, peer, tag);
    CHECK(p2p_count(st, MPI_BYTE) == n, "%s: count %d, expected %d", what, p2p_count(st, MPI_BYTE),
          n);
}

static void check_sentinel(const MPI_Status *st, const char *what)
{
    CHECK(st->MPI_ERROR == SENT, "%s: MPI_ERROR overwritten with %d", what, st->MPI_ERROR);
}

/* The same where the MPI below may have written MPI_SUCCESS (see the top). */
static void check_st_below(const MPI_Status *st, int peer, int tag, int n, const char *what)
{
    MPI_Status copy = *st;
    if (lenient && copy.MPI_ERROR == MPI_SUCCESS)
        copy.MPI_ERROR = SENT;
    check_st(&copy, peer, tag, n, what);
}

static uint64_t key(int from, int tag) { return p2p_key(from, tag, 0, SEED); }

/* Sends the n-byte message (from this rank, tag) to peer, nonblocking. */
static void post_send(int peer, int tag, int n, unsigned char *buf, MPI_Request *rq)
{
    p2p_fill(buf, (size_t)n, key(rank, tag));
    P2P_OK(MPI_Isend(buf, n, MPI_BYTE, peer, tag, comm, rq));
}

enum { BIG = 96 * 1024 };
static unsigned char sbuf[4][BIG], rbuf[4][BIG];

/* Whether the MPI below may serve calls to peer: HMPI off, or peer on another node
 * (HMPI's MPI_Comm_split_type gives the simulated node). */
static int lenient_for(int peer) { return !hmpi_on || !same_node(peer); }

/* Each single-completion call against peer. Both sides run the same sequence. */
static void singles(int peer)
{
    MPI_Status st;
    MPI_Request sq[4], rq;
    char what[96];
    const int sizes[3] = {8, 4000, BIG};

    /* MPI_Recv of each size (8 bytes: the short way), then MPI_Wait on the send. */
    for (int i = 0; i < 3; i++) {
        int tag = 10 + i;
        post_send(peer, tag, sizes[i], sbuf[0], &sq[0]);
        fresh(&st);
        P2P_OK(MPI_Recv(rbuf[0], sizes[i], MPI_BYTE, peer, tag, comm, &st));
        snprintf(what, sizeof what, "MPI_Recv of %d bytes from %d", sizes[i], peer);
        check_st(&st, peer, tag, sizes[i], what);
        P2P_CHECK_DATA(rbuf[0], (size_t)sizes[i], key(peer, tag), "%s", what);
        fresh(&st);
        P2P_OK(MPI_Wait(&sq[0], &st));
        check_sentinel(&st, "MPI_Wait on an Isend");
    }

    /* A non-contiguous receive type, and MPI_ANY_SOURCE with MPI_ANY_TAG. */
    MPI_Datatype vec;
    MPI_Type_vector(100, 4, 8, MPI_BYTE, &vec);
    MPI_Type_commit(&vec);
    post_send(peer, 20, 400, sbuf[0], &sq[0]);
    fresh(&st);
    P2P_OK(MPI_Recv(rbuf[0], 1, vec, peer, 20, comm, &st));
    check_st(&st, peer, 20, 400, "MPI_Recv into a vector type");
    MPI_Type_free(&vec);
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));
    MPI_Barrier(comm); /* the wildcard receive below sees peer's message only */
    post_send(peer, 21, 16, sbuf[0], &sq[0]);
    fresh(&st);
    P2P_OK(MPI_Recv(rbuf[0], 16, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st));
    check_st(&st, peer, 21, 16, "MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG)");
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));
    MPI_Barrier(comm);

    /* MPI_Irecv completed by MPI_Wait, by MPI_Test, by MPI_Request_get_status. */
    post_send(peer, 30, 64, sbuf[0], &sq[0]);
    P2P_OK(MPI_Irecv(rbuf[0], 64, MPI_BYTE, peer, 30, comm, &rq));
    fresh(&st);
    P2P_OK(MPI_Wait(&rq, &st));
    check_st(&st, peer, 30, 64, "MPI_Wait on an Irecv");
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));

    post_send(peer, 31, 64, sbuf[0], &sq[0]);
    P2P_OK(MPI_Irecv(rbuf[0], 64, MPI_BYTE, peer, 31, comm, &rq));
    int flag = 0;
    while (!flag) { /* (with flag false the status is undefined: MPI-4.1 §3.7.3) */
        fresh(&st);
        P2P_OK(MPI_Test(&rq, &flag, &st));
    }
    check_st(&st, peer, 31, 64, "MPI_Test on an Irecv");
    flag = 0;
    while (!flag) {
        fresh(&st);
        P2P_OK(MPI_Test(&sq[0], &flag, &st));
    }
    check_sentinel(&st, "MPI_Test on an Isend");

    post_send(peer, 32, 64, sbuf[0], &sq[0]);
    P2P_OK(MPI_Irecv(rbuf[0], 64, MPI_BYTE, peer, 32, comm, &rq));
    flag = 0;
    while (!flag) {
        fresh(&st);
        P2P_OK(MPI_Request_get_status(rq, &flag, &st));
    }
    check_st(&st, peer, 32, 64, "MPI_Request_get_status on an Irecv");
    fresh(&st);
    P2P_OK(MPI_Wait(&rq, &st));
    check_st(&st, peer, 32, 64, "MPI_Wait after MPI_Request_get_status");
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));

    /* Waitany and Testany: one status. */
    post_send(peer, 33, 24, sbuf[0], &sq[0]);
    MPI_Request two[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    P2P_OK(MPI_Irecv(rbuf[0], 24, MPI_BYTE, peer, 33, comm, &two[1]));
    int idx = -1;
    fresh(&st);
    P2P_OK(MPI_Waitany(2, two, &idx, &st));
    CHECK(idx == 1, "MPI_Waitany index %d", idx);
    check_st(&st, peer, 33, 24, "MPI_Waitany");
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));
    post_send(peer, 34, 24, sbuf[0], &sq[0]);
    P2P_OK(MPI_Irecv(rbuf[0], 24, MPI_BYTE, peer, 34, comm, &two[0]));
    flag = 0;
    while (!flag) {
        fresh(&st);
        P2P_OK(MPI_Testany(2, two, &idx, &flag, &st));
    }
    CHECK(idx == 0, "MPI_Testany index %d", idx);
    check_st(&st, peer, 34, 24, "MPI_Testany");
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));

    /* Persistent: started and waited for, then waited for while inactive (an empty
     * status, MPI_ERROR still not written). */
    MPI_Request pr;
    P2P_OK(MPI_Recv_init(rbuf[0], 48, MPI_BYTE, peer, 35, comm, &pr));
    post_send(peer, 35, 48, sbuf[0], &sq[0]);
    P2P_OK(MPI_Start(&pr));
    fresh(&st);
    P2P_OK(MPI_Wait(&pr, &st));
    check_st(&st, peer, 35, 48, "MPI_Wait on a persistent receive");
    fresh(&st);
    P2P_OK(MPI_Wait(&pr, &st));
    if (!(lenient && st.MPI_ERROR == MPI_SUCCESS)) /* MPICH 4.2 writes it in an empty status */
        check_sentinel(&st, "MPI_Wait on an inactive persistent request");
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "inactive request: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    P2P_OK(MPI_Request_free(&pr));
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));

    /* Probes. */
    post_send(peer, 40, 32, sbuf[0], &sq[0]);
    fresh(&st);
    P2P_OK(MPI_Probe(peer, 40, comm, &st));
    check_st_below(&st, peer, 40, 32, "MPI_Probe");
    P2P_OK(MPI_Recv(rbuf[0], 32, MPI_BYTE, peer, 40, comm, MPI_STATUS_IGNORE));
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));
    post_send(peer, 41, 32, sbuf[0], &sq[0]);
    flag = 0;
    while (!flag) {
        fresh(&st);
        P2P_OK(MPI_Iprobe(peer, 41, comm, &flag, &st));
    }
    check_st_below(&st, peer, 41, 32, "MPI_Iprobe");
    P2P_OK(MPI_Recv(rbuf[0], 32, MPI_BYTE, peer, 41, comm, MPI_STATUS_IGNORE));
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));

    MPI_Message msg;
    post_send(peer, 42, 32, sbuf[0], &sq[0]);
    fresh(&st);
    P2P_OK(MPI_Mprobe(peer, 42, comm, &msg, &st));
    check_st(&st, peer, 42, 32, "MPI_Mprobe");
    fresh(&st);
    P2P_OK(MPI_Mrecv(rbuf[0], 32, MPI_BYTE, &msg, &st));
    check_st(&st, peer, 42, 32, "MPI_Mrecv");
    P2P_CHECK_DATA(rbuf[0], 32, key(peer, 42), "MPI_Mrecv");
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));
    post_send(peer, 43, 32, sbuf[0], &sq[0]);
    flag = 0;
    while (!flag) {
        fresh(&st);
        P2P_OK(MPI_Improbe(peer, 43, comm, &flag, &msg, &st));
    }
    check_st(&st, peer, 43, 32, "MPI_Improbe");
    P2P_OK(MPI_Imrecv(rbuf[0], 32, MPI_BYTE, &msg, &rq));
    fresh(&st);
    P2P_OK(MPI_Wait(&rq, &st));
    check_st(&st, peer, 43, 32, "MPI_Wait on an Imrecv");
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));

    /* Sendrecv and Sendrecv_replace. */
    p2p_fill(sbuf[0], 40, key(rank, 50));
    fresh(&st);
    P2P_OK(
        MPI_Sendrecv(sbuf[0], 40, MPI_BYTE, peer, 50, rbuf[0], 40, MPI_BYTE, peer, 50, comm, &st));
    check_st(&st, peer, 50, 40, "MPI_Sendrecv");
    P2P_CHECK_DATA(rbuf[0], 40, key(peer, 50), "MPI_Sendrecv");
    p2p_fill(rbuf[0], 40, key(rank, 51));
    fresh(&st);
    P2P_OK(MPI_Sendrecv_replace(rbuf[0], 40, MPI_BYTE, peer, 51, peer, 51, comm, &st));
    lenient |= !hmpi_on; /* HMPI's own path even to another node */
    check_st_below(&st, peer, 51, 40, "MPI_Sendrecv_replace");
    lenient = lenient_for(peer);
    P2P_CHECK_DATA(rbuf[0], 40, key(peer, 51), "MPI_Sendrecv_replace");

    /* Truncation: the call returns MPI_ERR_TRUNCATE, the status's field stays. */
    post_send(peer, 60, 16, sbuf[0], &sq[0]);
    fresh(&st);
    P2P_FAILS(MPI_ERR_TRUNCATE, MPI_Recv(rbuf[0], 8, MPI_BYTE, peer, 60, comm, &st));
    check_sentinel(&st, "a truncated MPI_Recv");
    MPI_Wait(&sq[0], MPI_STATUS_IGNORE); /* the sender's outcome is not specified */
    post_send(peer, 61, 16, sbuf[0], &sq[0]);
    P2P_OK(MPI_Irecv(rbuf[0], 8, MPI_BYTE, peer, 61, comm, &rq));
    fresh(&st);
    P2P_FAILS(MPI_ERR_TRUNCATE, MPI_Wait(&rq, &st));
    check_sentinel(&st, "MPI_Wait on a truncated Irecv");
    MPI_Wait(&sq[0], MPI_STATUS_IGNORE);
    MPI_Barrier(comm);
}

/* MPI_PROC_NULL: source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0, MPI_ERROR kept. */
static void proc_null(void)
{
    MPI_Status st;
    MPI_Request rq;
    fresh(&st);
    P2P_OK(MPI_Recv(rbuf[0], 8, MPI_BYTE, MPI_PROC_NULL, 0, comm, &st));
    check_st(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "MPI_Recv(MPI_PROC_NULL)");
    fresh(&st);
    P2P_OK(MPI_Probe(MPI_PROC_NULL, 0, comm, &st));
    check_st(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "MPI_Probe(MPI_PROC_NULL)");
    P2P_OK(MPI_Irecv(rbuf[0], 8, MPI_BYTE, MPI_PROC_NULL, 0, comm, &rq));
    fresh(&st);
    P2P_OK(MPI_Wait(&rq, &st));
    check_sentinel(&st, "MPI_Wait on an Irecv(MPI_PROC_NULL)");
    P2P_OK(MPI_Isend(sbuf[0], 8, MPI_BYTE, MPI_PROC_NULL, 0, comm, &rq));
    fresh(&st);
    P2P_OK(MPI_Wait(&rq, &st));
    check_sentinel(&st, "MPI_Wait on an Isend(MPI_PROC_NULL)");
}

/* Waitall, Testall, Waitsome, Testsome: untouched on success; on a truncated receive
 * MPI_ERR_IN_STATUS and every status's field set. */
static void multiples(int peer)
{
    MPI_Status sts[4];
    MPI_Request rq[4];
    for (int method = 0; method < 4; method++) {
        int tag = 70 + 2 * method;
        for (int i = 0; i < 2; i++) {
            post_send(peer, tag + i, 32, sbuf[i], &rq[2 + i]);
            P2P_OK(MPI_Irecv(rbuf[i], 32, MPI_BYTE, peer, tag + i, comm, &rq[i]));
        }
        for (int i = 0; i < 4; i++)
            fresh(&sts[i]);
        int flag = 0, done = 0, out, idx[4];
        switch (method) {
        case 0:
            P2P_OK(MPI_Waitall(4, rq, sts));
            done = 4;
            break;
        case 1:
            while (!flag) {
                for (int i = 0; i < 4; i++)
                    fresh(&sts[i]);
                P2P_OK(MPI_Testall(4, rq, &flag, sts));
            }
            done = 4;
            break;
        default:
            while (done < 4) {
                MPI_Status part[4];
                for (int i = 0; i < 4; i++)
                    fresh(&part[i]);
                if (method == 2)
                    P2P_OK(MPI_Waitsome(4, rq, &out, idx, part));
                else
                    P2P_OK(MPI_Testsome(4, rq, &out, idx, part));
                for (int k = 0; k < out; k++) {
                    sts[idx[k]] = part[k];
                    done++;
                }
                for (int k = out; k < 4 && !lenient; k++)
                    check_sentinel(&part[k], "an unused status of Waitsome/Testsome");
            }
        }
        static const char *const names[4] = {"MPI_Waitall", "MPI_Testall", "MPI_Waitsome",
                                             "MPI_Testsome"};
        for (int i = 0; i < 2; i++)
            check_st_below(&sts[i], peer, tag + i, 32, names[method]);
        for (int i = 2; i < 4; i++) {
            if (lenient && sts[i].MPI_ERROR == MPI_SUCCESS)
                continue;
            check_sentinel(&sts[i], names[method]);
        }
    }

    /* One good receive, one truncated one. */
    for (int method = 0; method < 4; method++) {
        int tag = 90 + 2 * method;
        post_send(peer, tag, 32, sbuf[0], &rq[2]);
        post_send(peer, tag + 1, 64, sbuf[1], &rq[3]);
        P2P_OK(MPI_Irecv(rbuf[0], 32, MPI_BYTE, peer, tag, comm, &rq[0]));
        P2P_OK(MPI_Irecv(rbuf[1], 16, MPI_BYTE, peer, tag + 1, comm, &rq[1]));
        MPI_Waitall(2, rq + 2, MPI_STATUSES_IGNORE); /* sent: both arrive (the truncated
                                                        one's outcome is not specified) */
        MPI_Barrier(comm);
        for (int i = 0; i < 2; i++)
            fresh(&sts[i]);
        const char *name = method == 0   ? "MPI_Waitall"
                           : method == 1 ? "MPI_Testall"
                           : method == 2 ? "MPI_Waitsome"
                                         : "MPI_Testsome";
        int rc, flag = 0;
        if (method < 2) {
            if (method == 0)
                rc = MPI_Waitall(2, rq, sts);
            else
                while ((rc = MPI_Testall(2, rq, &flag, sts)) == MPI_SUCCESS && !flag)
                    ;
            CHECK(p2p_class(rc) == MPI_ERR_IN_STATUS, "%s returned class %d, not MPI_ERR_IN_STATUS",
                  name, p2p_class(rc));
            CHECK(sts[0].MPI_ERROR == MPI_SUCCESS,
                  "%s: the good receive's status has %d, not MPI_SUCCESS", name, sts[0].MPI_ERROR);
            CHECK(p2p_class(sts[1].MPI_ERROR) == MPI_ERR_TRUNCATE,
                  "%s: the truncated receive's status has %d", name, sts[1].MPI_ERROR);
            continue;
        }
        /* Waitsome/Testsome may complete one or both per call: a call that returns
         * MPI_SUCCESS leaves its statuses' field alone, one that returns
         * MPI_ERR_IN_STATUS sets it in each status it fills. */
        int seen_bad = 0;
        for (int done = 0; done < 2;) {
            int out = 0, idx[2];
            for (int i = 0; i < 2; i++)
                fresh(&sts[i]);
            rc = method == 2 ? MPI_Waitsome(2, rq, &out, idx, sts)
                             : MPI_Testsome(2, rq, &out, idx, sts);
            CHECK(rc == MPI_SUCCESS || p2p_class(rc) == MPI_ERR_IN_STATUS, "%s returned class %d",
                  name, p2p_class(rc));
            for (int k = 0; k < out; k++) {
                if (rc == MPI_SUCCESS) {
                    CHECK(idx[k] == 0, "%s: the truncated receive completed without an error",
                          name);
                    if (!lenient || sts[k].MPI_ERROR != MPI_SUCCESS)
                        check_sentinel(&sts[k], name);
                } else if (idx[k] == 0) {
                    CHECK(sts[k].MPI_ERROR == MPI_SUCCESS,
                          "%s: the good receive's status has %d, not MPI_SUCCESS", name,
                          sts[k].MPI_ERROR);
                } else {
                    CHECK(p2p_class(sts[k].MPI_ERROR) == MPI_ERR_TRUNCATE,
                          "%s: the truncated receive's status has %d", name, sts[k].MPI_ERROR);
                    seen_bad = 1;
                }
            }
            for (int k = out; k < 2 && !lenient; k++)
                check_sentinel(&sts[k], "an unused status of Waitsome/Testsome");
            done += out;
        }
        CHECK(seen_bad, "%s: the truncation was never reported", name);
    }
    MPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* MPICH 4.0.2 raises some errors of requests on the default handler, not comm's */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK(nranks % 2 == 0, "needs an even number of ranks");
    hmpi_on = HMPI_Active && HMPI_Active();
    proc_null();
    for (int d = 1; d < nranks && d <= 2; d *= 2) { /* rank^2: another simulated node */
        lenient = lenient_for(rank ^ d);
        singles(rank ^ d);
        multiples(rank ^ d);
    }
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("p2p_status_error: OK\n");
    MPI_Finalize();
    return 0;
}
