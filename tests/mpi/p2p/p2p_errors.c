/* p2p_errors.c: the corners of point-to-point semantics an engine gets wrong:
 * MPI_ERR_TRUNCATE (Recv, Wait, Waitall with MPI_ERR_IN_STATUS), MPI_PROC_NULL
 * everywhere, zero counts, MPI_STATUS(ES)_IGNORE, the statuses and indices of
 * Wait/Test{any,some,all} (MPI_UNDEFINED, empty statuses), Get_count/Get_elements on
 * derived types, Request_get_status, Request_free of an active send, and invalid
 * arguments returning the right error class under MPI_ERRORS_RETURN. Zero elements of
 * MPI_DATATYPE_NULL are taken where the MPI below takes them (MPICH) and refused where it
 * refuses them (Open MPI). */
#include "../p2p_common.h"
#include "../below_sym.h" /* BELOW(X): the MPI below's PMPI_X (HMPI exports PMPI_X too) */

#include <limits.h>

#define SEED 0xE7707ull

#ifdef OPEN_MPI
#define OMPI_OVERRUNS_ON_TRUNCATE 1
#else
#define OMPI_OVERRUNS_ON_TRUNCATE 0
#endif

static int rank, nranks, verbose;
static MPI_Comm comm; /* a dup of MPI_COMM_WORLD with MPI_ERRORS_RETURN */

#define SECTION_DONE(name)              \
    do {                                \
        MPI_Barrier(MPI_COMM_WORLD);    \
        if (verbose && rank == 0)       \
            printf("  %s: ok\n", name); \
    } while (0)

/* An empty status (MPI-4 3.7.3): source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0,
 * not cancelled. */
static void check_empty(const MPI_Status *st, const char *what)
{
    int flag = 1;
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
          "%s: empty status expected, got source %d tag %d", what, st->MPI_SOURCE, st->MPI_TAG);
    CHECK(p2p_count(st, MPI_INT) == 0, "%s: empty status has count %d", what,
          p2p_count(st, MPI_INT));
    MPI_Test_cancelled(st, &flag);
    CHECK(!flag, "%s: empty status says cancelled", what);
}

/* Whether the MPI below (PMPI_*, never HMPI) gives a nonblocking receive from
 * MPI_PROC_NULL the standard status. MPICH 4.0.2 (ch4:ucx) does not: source 0, tag 0
 * from every completion call, while its blocking MPI_Recv is right. Where the MPI below
 * fails, that part of the status is not checked for nonblocking receives. */
static int below_irecv_procnull_ok = 1;

/* Does the MPI below take zero elements of MPI_DATATYPE_NULL (MPICH does, Open MPI
 * refuses them)? HMPI must answer as it does. */
static int below_null_empty_ok;

static void probe_below(void)
{
    MPI_Request rq;
    MPI_Status st;
    below_null_empty_ok =
        BELOW(Send)(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 0, comm) == MPI_SUCCESS;
    BELOW(Irecv)(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq);
    BELOW(Wait)(&rq, &st);
    below_irecv_procnull_ok = st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG;
    if (!below_irecv_procnull_ok && rank == 0)
        printf("p2p_errors: note: the MPI below completes Irecv(MPI_PROC_NULL) with source %d "
               "tag %d (not MPI_PROC_NULL, MPI_ANY_TAG); not checked for nonblocking "
               "receives\n",
               st.MPI_SOURCE, st.MPI_TAG);
}

/* The status of a communication with MPI_PROC_NULL: source MPI_PROC_NULL, tag
 * MPI_ANY_TAG, count 0 (what contains "Irecv": a nonblocking receive). */
static void check_procnull(const MPI_Status *st, const char *what)
{
    int e = -1;
    CHECK((st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG) ||
              (!below_irecv_procnull_ok && strstr(what, "Irecv")),
          "%s: PROC_NULL status expected, got source %d tag %d", what, st->MPI_SOURCE, st->MPI_TAG);
    CHECK(p2p_count(st, MPI_INT) == 0, "%s: count %d, expected 0", what, p2p_count(st, MPI_INT));
    MPI_Get_elements(st, MPI_INT, &e);
    CHECK(e == 0, "%s: Get_elements %d, expected 0", what, e);
}

/* Errors of calls not tied to one communicator (MPI_COMM_NULL arguments; request
 * arrays: both MPICH and Open MPI raise the errors of MPI_Waitall on MPI_COMM_WORLD,
 * not on the request's communicator) go to MPI_COMM_WORLD's handler (MPI-3) or
 * MPI_COMM_SELF's (MPI-4): make both return while such errors are provoked. */
static void errors_return_everywhere(int on)
{
    MPI_Errhandler h = on ? MPI_ERRORS_RETURN : MPI_ERRORS_ARE_FATAL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, h);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, h);
}

/* ---- MPI_ERR_TRUNCATE ---------------------------------------------------------- */

static void errors_return_everywhere(int on);

static void truncation(void)
{
    static const int msg[] = {100, 20000, 300000}, buf[] = {60, 10000, 100000};
    int shifts[2] = {1, nranks / 2}, nshifts = nranks / 2 == 1 ? 1 : 2;
    unsigned char *s = malloc(300000), *r = malloc(300000 + 64);
    CHECK(s && r, "out of memory");
    for (int sh = 0; sh < nshifts; sh++) {
        int dst = (rank + shifts[sh]) % nranks, src = (rank - shifts[sh] + nranks) % nranks;
        for (int k = 0; k < 3; k++)
            for (int how = 0; how < 3; how++) { /* Recv, Irecv+Wait, Irecv+Waitall */
                int tag = 100 + k * 3 + how, rc;
                char what[128];
                snprintf(what, sizeof what, "%d B into %d B from %d (%s)", msg[k], buf[k], src,
                         how == 0   ? "Recv"
                         : how == 1 ? "Irecv+Wait"
                                    : "Irecv+Waitall");
                MPI_Request sr, rq[2];
                MPI_Status st, sts[2];
                p2p_fill(s, (size_t)msg[k], p2p_key(rank, tag, 0, SEED));
                MPI_Isend(s, msg[k], MPI_BYTE, dst, tag, comm, &sr);
                memset(r, 0x5A, (size_t)buf[k] + 64);
                st.MPI_SOURCE = st.MPI_TAG = -77;
                if (how == 0) {
                    rc = MPI_Recv(r, buf[k], MPI_BYTE, src, tag, comm, &st);
                } else if (how == 1) {
                    P2P_OK(MPI_Irecv(r, buf[k], MPI_BYTE, src, tag, comm, &rq[0]));
                    /* MPICH 4.0.2 may raise this on the default handler, not comm's */
                    errors_return_everywhere(1);
                    rc = MPI_Wait(&rq[0], &st);
                    errors_return_everywhere(0);
                } else {
                    /* a second, good receive beside it: a 4-byte message sent after */
                    int one = 0;
                    P2P_OK(MPI_Irecv(r, buf[k], MPI_BYTE, src, tag, comm, &rq[0]));
                    P2P_OK(MPI_Irecv(&one, 1, MPI_INT, src, tag + 50, comm, &rq[1]));
                    P2P_OK(MPI_Send(&rank, 1, MPI_INT, dst, tag + 50, comm));
                    errors_return_everywhere(1);
                    rc = MPI_Waitall(2, rq, sts);
                    errors_return_everywhere(0);
                    CHECK(rc == MPI_ERR_IN_STATUS,
                          "%s: Waitall returned %d (%s), expected "
                          "MPI_ERR_IN_STATUS",
                          what, rc, p2p_errstr(rc));
                    rc = sts[0].MPI_ERROR;
                    st = sts[0];
                    CHECK(sts[1].MPI_ERROR == MPI_SUCCESS || sts[1].MPI_ERROR == MPI_ERR_PENDING,
                          "%s: the good receive's status has error %d", what, sts[1].MPI_ERROR);
                    if (sts[1].MPI_ERROR == MPI_ERR_PENDING)
                        P2P_OK(MPI_Wait(&rq[1], &sts[1]));
                    CHECK(one == src, "%s: the good receive got %d, expected %d", what, one, src);
                }
                CHECK(rc != MPI_SUCCESS && p2p_class(rc) == MPI_ERR_TRUNCATE,
                      "%s: returned %d (%s), expected class MPI_ERR_TRUNCATE", what, rc,
                      p2p_errstr(rc));
                CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag,
                      "%s: truncated status says source %d tag %d", what, st.MPI_SOURCE,
                      st.MPI_TAG);
                /* The receive buffer must be the only memory written. Open MPI 4.1.4
                 * breaks this above its 4 KiB eager limit (vader single copy, tcp get):
                 * it writes the whole message (r has room for it), so it is only
                 * checked there for the small message. */
                if (!OMPI_OVERRUNS_ON_TRUNCATE || msg[k] < 4096)
                    for (int i = 0; i < 64; i++)
                        CHECK(r[buf[k] + i] == 0x5A, "%s: byte %d past the buffer written", what,
                              buf[k] + i);
                errors_return_everywhere(1); /* the sender's outcome is not specified */
                MPI_Wait(&sr, MPI_STATUS_IGNORE);
                errors_return_everywhere(0);
                /* the truncated message is gone: the next one on the pair arrives intact */
                int next = -1;
                P2P_OK(MPI_Sendrecv(&tag, 1, MPI_INT, dst, tag, &next, 1, MPI_INT, src, tag, comm,
                                    &st));
                CHECK(next == tag && st.MPI_SOURCE == src,
                      "%s: the message after the truncated one is %d from %d", what, next,
                      st.MPI_SOURCE);
            }
        /* truncation inside a derived type: 10 ints into 7 */
        int ten[10], seven[8] = {0}, tag = 190;
        for (int i = 0; i < 10; i++)
            ten[i] = rank * 100 + i;
        seven[7] = -1;
        MPI_Request sr;
        MPI_Status st;
        P2P_OK(MPI_Isend(ten, 10, MPI_INT, dst, tag, comm, &sr));
        int rc = MPI_Recv(seven, 7, MPI_INT, src, tag, comm, &st);
        CHECK(p2p_class(rc) == MPI_ERR_TRUNCATE && rc != MPI_SUCCESS,
              "10 ints into 7: returned %d (%s)", rc, p2p_errstr(rc));
        CHECK(seven[7] == -1, "10 ints into 7: the 8th int was written");
        errors_return_everywhere(1);
        MPI_Wait(&sr, MPI_STATUS_IGNORE);
        errors_return_everywhere(0);
    }
    free(s);
    free(r);
}

/* ---- MPI_PROC_NULL ------------------------------------------------------------- */

static void proc_null(void)
{
    int buf[4] = {1, 2, 3, 4}, flag = 0;
    MPI_Status st;
    MPI_Request rq;
    MPI_Message msg;

    P2P_OK(MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm));
    P2P_OK(MPI_Ssend(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm));
    P2P_OK(MPI_Rsend(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm));
    P2P_OK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm, &st));
    check_procnull(&st, "Recv(PROC_NULL)");
    CHECK(buf[0] == 1 && buf[3] == 4, "Recv(PROC_NULL) wrote the buffer");
    P2P_OK(MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, comm, MPI_STATUS_IGNORE));

    P2P_OK(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm, &rq));
    P2P_OK(MPI_Wait(&rq, &st));
    CHECK(rq == MPI_REQUEST_NULL, "Wait(Isend to PROC_NULL) left the request");
    P2P_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm, &rq));
    for (int i = 0; !flag; i++) {
        CHECK(i < 1000000, "Irecv(PROC_NULL) never completes under MPI_Test");
        P2P_OK(MPI_Test(&rq, &flag, &st));
    }
    check_procnull(&st, "Irecv(PROC_NULL)+Test");
    P2P_OK(MPI_Issend(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm, &rq));
    P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    P2P_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm, &rq));
    P2P_OK(MPI_Wait(&rq, &st));
    check_procnull(&st, "Irecv(PROC_NULL)+Wait");

    /* Several at once, as a halo exchange at a boundary posts them (HMPI answers each
     * kind with one shared complete request): each completes with its status in any
     * completion call, and freeing or cancelling one leaves the others whole. */
    MPI_Request pn[6];
    MPI_Status pst[6];
    for (int i = 0; i < 3; i++) {
        P2P_OK(MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, i, comm, &pn[2 * i]));
        P2P_OK(MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, i, comm, &pn[2 * i + 1]));
    }
    P2P_OK(MPI_Request_free(&pn[5]));
    CHECK(pn[5] == MPI_REQUEST_NULL, "Request_free(Isend to PROC_NULL) left the handle");
    P2P_OK(MPI_Cancel(&pn[4]));
    P2P_OK(MPI_Wait(&pn[4], &st));
    check_procnull(&st, "Irecv(PROC_NULL), cancelled once complete, +Wait");
    flag = 1;
    P2P_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag, "a complete Irecv(PROC_NULL) was cancelled");
    flag = 0;
    P2P_OK(MPI_Testall(4, pn, &flag, pst));
    CHECK(flag, "Testall of Irecv/Isend with PROC_NULL: not all complete");
    check_procnull(&pst[0], "Irecv(PROC_NULL) 1 of 3 +Testall");
    check_procnull(&pst[2], "Irecv(PROC_NULL) 2 of 3 +Testall");
    for (int i = 0; i < 4; i++)
        CHECK(pn[i] == MPI_REQUEST_NULL, "Testall left request %d of PROC_NULL", i);
    CHECK(buf[0] == 1 && buf[3] == 4, "Irecv(PROC_NULL) wrote the buffer");

    P2P_OK(MPI_Probe(MPI_PROC_NULL, 5, comm, &st));
    check_procnull(&st, "Probe(PROC_NULL)");
    flag = 0;
    P2P_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, comm, &flag, &st));
    CHECK(flag, "Iprobe(PROC_NULL) returned flag false");
    check_procnull(&st, "Iprobe(PROC_NULL)");
    P2P_OK(MPI_Mprobe(MPI_PROC_NULL, 5, comm, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    check_procnull(&st, "Mprobe(PROC_NULL)");
    P2P_OK(MPI_Mrecv(buf, 4, MPI_INT, &msg, &st));
    check_procnull(&st, "Mrecv(MPI_MESSAGE_NO_PROC)");
    CHECK(msg == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) did not set MPI_MESSAGE_NULL");

    /* Sendrecv with both ends PROC_NULL, and with one real end */
    P2P_OK(MPI_Sendrecv(buf, 4, MPI_INT, MPI_PROC_NULL, 5, buf + 2, 2, MPI_INT, MPI_PROC_NULL, 5,
                        comm, &st));
    check_procnull(&st, "Sendrecv(PROC_NULL, PROC_NULL)");
    P2P_OK(MPI_Sendrecv_replace(buf, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_PROC_NULL, 5, comm, &st));
    check_procnull(&st, "Sendrecv_replace(PROC_NULL, PROC_NULL)");
    CHECK(buf[0] == 1 && buf[3] == 4, "Sendrecv_replace(PROC_NULL) changed the buffer");
    /* a chain 0 -> 1 -> ... -> n-1: the ends talk to PROC_NULL */
    int right = rank + 1 < nranks ? rank + 1 : MPI_PROC_NULL;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, got = -5;
    P2P_OK(MPI_Sendrecv(&rank, 1, MPI_INT, right, 6, &got, 1, MPI_INT, left, 6, comm, &st));
    if (left == MPI_PROC_NULL) {
        check_procnull(&st, "Sendrecv chain, first rank");
        CHECK(got == -5, "Sendrecv from PROC_NULL wrote the buffer (%d)", got);
    } else {
        CHECK(got == left && st.MPI_SOURCE == left && st.MPI_TAG == 6,
              "Sendrecv chain: got %d from %d tag %d, expected %d", got, st.MPI_SOURCE, st.MPI_TAG,
              left);
    }
    /* PROC_NULL requests mixed into arrays */
    MPI_Request rqs[3];
    MPI_Status sts[3];
    int a = 0, b = 0;
    P2P_OK(MPI_Irecv(&a, 1, MPI_INT, MPI_PROC_NULL, 7, comm, &rqs[0]));
    P2P_OK(MPI_Irecv(&b, 1, MPI_INT, left, 7, comm, &rqs[1]));
    P2P_OK(MPI_Isend(&rank, 1, MPI_INT, right, 7, comm, &rqs[2]));
    P2P_OK(MPI_Waitall(3, rqs, sts));
    check_procnull(&sts[0], "Waitall: Irecv(PROC_NULL)");
    if (left == MPI_PROC_NULL)
        check_procnull(&sts[1], "Waitall: Irecv(left = PROC_NULL)");
    else
        CHECK(b == left && sts[1].MPI_SOURCE == left, "Waitall: got %d from %d", b,
              sts[1].MPI_SOURCE);
}

/* ---- zero counts and MPI_STATUS(ES)_IGNORE ------------------------------------- */

static void zero_and_ignore(void)
{
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks, x = 42, y = 0;
    MPI_Status st;
    MPI_Request rq[2];

    /* count 0 with NULL buffers, and a 0-byte message into a real buffer */
    P2P_OK(MPI_Irecv(NULL, 0, MPI_INT, src, 1, comm, &rq[0]));
    P2P_OK(MPI_Isend(NULL, 0, MPI_INT, dst, 1, comm, &rq[1]));
    P2P_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    y = -3;
    P2P_OK(MPI_Irecv(&y, 1, MPI_INT, src, 2, comm, &rq[0]));
    P2P_OK(MPI_Send(&x, 0, MPI_INT, dst, 2, comm));
    P2P_OK(MPI_Wait(&rq[0], &st));
    CHECK(p2p_count(&st, MPI_INT) == 0 && y == -3, "0-int message: count %d, buffer %d",
          p2p_count(&st, MPI_INT), y);
    /* a 0-count message of a derived type */
    MPI_Datatype vec;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    P2P_OK(MPI_Sendrecv(&x, 0, vec, dst, 3, &y, 0, vec, src, 3, comm, &st));
    CHECK(p2p_count(&st, vec) == 0 && st.MPI_SOURCE == src, "0 vectors: count %d from %d",
          p2p_count(&st, vec), st.MPI_SOURCE);
    MPI_Type_free(&vec);
    /* zero elements of MPI_DATATYPE_NULL, as the MPI below takes them or not (MPICH's own
     * suite sends such messages: part/nonblocking_pready) */
    if (below_null_empty_ok) {
        P2P_OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, src, 14, comm, &rq[0]));
        P2P_OK(MPI_Send(NULL, 0, MPI_DATATYPE_NULL, dst, 14, comm));
        P2P_OK(MPI_Wait(&rq[0], &st));
        CHECK(st.MPI_SOURCE == src && p2p_count(&st, MPI_BYTE) == 0,
              "0 of MPI_DATATYPE_NULL: source %d, %d bytes", st.MPI_SOURCE,
              p2p_count(&st, MPI_BYTE));
        P2P_OK(MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, dst, 15, comm, &rq[1]));
        P2P_OK(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, src, 15, comm, &st));
        P2P_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 15, "0 of MPI_DATATYPE_NULL: from %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
    } else {
        P2P_FAILS(MPI_ERR_TYPE, MPI_Send(NULL, 0, MPI_DATATYPE_NULL, dst, 14, comm));
        P2P_FAILS(MPI_ERR_TYPE, MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, src, 14, comm, &st));
    }

    /* every call that takes a status, with MPI_STATUS_IGNORE */
    int flag = 0, idx = -1, outc = -1, indices[2];
    MPI_Message msg;
    P2P_OK(
        MPI_Sendrecv(&rank, 1, MPI_INT, dst, 4, &y, 1, MPI_INT, src, 4, comm, MPI_STATUS_IGNORE));
    CHECK(y == src, "Sendrecv with STATUS_IGNORE got %d", y);
    y = rank;
    P2P_OK(MPI_Sendrecv_replace(&y, 1, MPI_INT, dst, 5, src, 5, comm, MPI_STATUS_IGNORE));
    CHECK(y == src, "Sendrecv_replace with STATUS_IGNORE got %d", y);
    P2P_OK(MPI_Isend(&rank, 1, MPI_INT, dst, 6, comm, &rq[1]));
    P2P_OK(MPI_Probe(src, 6, comm, MPI_STATUS_IGNORE));
    do
        P2P_OK(MPI_Iprobe(src, 6, comm, &flag, MPI_STATUS_IGNORE));
    while (!flag);
    P2P_OK(MPI_Recv(&y, 1, MPI_INT, src, 6, comm, MPI_STATUS_IGNORE));
    CHECK(y == src, "Recv with STATUS_IGNORE got %d", y);
    P2P_OK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
    P2P_OK(MPI_Isend(&rank, 1, MPI_INT, dst, 7, comm, &rq[1]));
    P2P_OK(MPI_Mprobe(src, 7, comm, &msg, MPI_STATUS_IGNORE));
    P2P_OK(MPI_Mrecv(&y, 1, MPI_INT, &msg, MPI_STATUS_IGNORE));
    CHECK(y == src, "Mrecv with STATUS_IGNORE got %d", y);
    flag = 0;
    while (!flag)
        P2P_OK(MPI_Test(&rq[1], &flag, MPI_STATUS_IGNORE));
    P2P_OK(MPI_Isend(&rank, 1, MPI_INT, dst, 8, comm, &rq[1]));
    do
        P2P_OK(MPI_Improbe(src, 8, comm, &flag, &msg, MPI_STATUS_IGNORE));
    while (!flag);
    P2P_OK(MPI_Imrecv(&y, 1, MPI_INT, &msg, &rq[0]));
    P2P_OK(MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE));
    P2P_OK(MPI_Waitany(2, rq, &idx, MPI_STATUS_IGNORE));
    CHECK(y == src && rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL,
          "Imrecv/Waitany with STATUS_IGNORE got %d", y);
    P2P_OK(MPI_Irecv(&y, 1, MPI_INT, src, 9, comm, &rq[0]));
    P2P_OK(MPI_Isend(&rank, 1, MPI_INT, dst, 9, comm, &rq[1]));
    for (int done = 0; done < 2; done += outc == MPI_UNDEFINED ? 0 : outc)
        P2P_OK(MPI_Waitsome(2, rq, &outc, indices, MPI_STATUSES_IGNORE));
    P2P_OK(MPI_Irecv(&y, 1, MPI_INT, src, 10, comm, &rq[0]));
    P2P_OK(MPI_Isend(&rank, 1, MPI_INT, dst, 10, comm, &rq[1]));
    for (flag = 0; !flag;)
        P2P_OK(MPI_Testall(2, rq, &flag, MPI_STATUSES_IGNORE));
    P2P_OK(MPI_Irecv(&y, 1, MPI_INT, src, 11, comm, &rq[0]));
    P2P_OK(MPI_Isend(&rank, 1, MPI_INT, dst, 11, comm, &rq[1]));
    for (int done = 0; done < 2;) {
        P2P_OK(MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE));
        done += flag && idx != MPI_UNDEFINED;
    }
    P2P_OK(MPI_Irecv(&y, 1, MPI_INT, src, 12, comm, &rq[0]));
    P2P_OK(MPI_Isend(&rank, 1, MPI_INT, dst, 12, comm, &rq[1]));
    for (int done = 0; done < 2;) {
        P2P_OK(MPI_Testsome(2, rq, &outc, indices, MPI_STATUSES_IGNORE));
        done += outc == MPI_UNDEFINED ? 0 : outc;
    }
    P2P_OK(MPI_Irecv(&y, 1, MPI_INT, src, 13, comm, &rq[0]));
    P2P_OK(MPI_Send(&rank, 1, MPI_INT, dst, 13, comm));
    for (flag = 0; !flag;)
        P2P_OK(MPI_Request_get_status(rq[0], &flag, MPI_STATUS_IGNORE));
    P2P_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
    CHECK(y == src, "the last STATUS_IGNORE receive got %d", y);
}

/* ---- statuses of Wait/Test{any,some,all} --------------------------------------- */

static void multi_completion(void)
{
    /* all-null arrays */
    MPI_Request nul[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st, sts[4];
    int idx = -5, flag = 0, outc = -5, indices[4];
    P2P_OK(MPI_Wait(&nul[0], &st));
    check_empty(&st, "Wait(MPI_REQUEST_NULL)");
    P2P_OK(MPI_Test(&nul[0], &flag, &st));
    CHECK(flag, "Test(MPI_REQUEST_NULL): flag false");
    check_empty(&st, "Test(MPI_REQUEST_NULL)");
    P2P_OK(MPI_Waitany(3, nul, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany(all null): index %d", idx);
    check_empty(&st, "Waitany(all null)");
    flag = 0;
    idx = -5;
    P2P_OK(MPI_Testany(3, nul, &idx, &flag, &st));
    CHECK(flag && idx == MPI_UNDEFINED, "Testany(all null): flag %d index %d", flag, idx);
    check_empty(&st, "Testany(all null)");
    P2P_OK(MPI_Waitsome(3, nul, &outc, indices, sts));
    CHECK(outc == MPI_UNDEFINED, "Waitsome(all null): outcount %d", outc);
    outc = -5;
    P2P_OK(MPI_Testsome(3, nul, &outc, indices, sts));
    CHECK(outc == MPI_UNDEFINED, "Testsome(all null): outcount %d", outc);
    flag = 0;
    P2P_OK(MPI_Testall(3, nul, &flag, sts));
    CHECK(flag, "Testall(all null): flag false");
    for (int i = 0; i < 3; i++)
        check_empty(&sts[i], "Testall(all null)");
    P2P_OK(MPI_Waitall(3, nul, sts));
    for (int i = 0; i < 3; i++)
        check_empty(&sts[i], "Waitall(all null)");
    P2P_OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
    P2P_OK(MPI_Waitany(0, NULL, &idx, &st));
    CHECK(idx == MPI_UNDEFINED, "Waitany(0 requests): index %d", idx);
    flag = 0;
    P2P_OK(MPI_Testall(0, NULL, &flag, MPI_STATUSES_IGNORE));
    CHECK(flag, "Testall(0 requests): flag false");

    /* four receives from two sources with distinct tags and sizes; nothing is sent
     * until every rank has tested its unmatched receives */
    int left = (rank - 1 + nranks) % nranks, right = (rank + 1) % nranks;
    int far = (rank + nranks / 2) % nranks, farsrc = (rank - nranks / 2 + nranks) % nranks;
    int srcs[4] = {left, farsrc, left, farsrc}, tags[4] = {21, 22, 23, 24}, cnt[4] = {1, 7, 300, 0};
    int dsts[4] = {right, far, right, far};
    int *rb[4], *sb[4];
    MPI_Request rq[5], srq[4];
    for (int i = 0; i < 4; i++) {
        rb[i] = calloc(301, sizeof(int));
        sb[i] = malloc(301 * sizeof(int));
        CHECK(rb[i] && sb[i], "out of memory");
        for (int j = 0; j < cnt[i]; j++)
            sb[i][j] = rank * 1000 + i * 301 + j;
    }
    for (int i = 0; i < 4; i++)
        P2P_OK(MPI_Irecv(rb[i], 301, MPI_INT, srcs[i], tags[i], comm, &rq[i]));
    rq[4] = MPI_REQUEST_NULL;
    flag = 1;
    idx = -5;
    P2P_OK(MPI_Testany(5, rq, &idx, &flag, &st));
    CHECK(!flag && idx == MPI_UNDEFINED, "Testany(nothing sent): flag %d index %d", flag, idx);
    P2P_OK(MPI_Testsome(5, rq, &outc, indices, sts));
    CHECK(outc == 0, "Testsome(nothing sent): outcount %d, expected 0", outc);
    flag = 1;
    P2P_OK(MPI_Testall(5, rq, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "Testall(nothing sent): flag true");
    MPI_Barrier(MPI_COMM_WORLD);
    /* send in reverse order; receive with Waitany, then Waitsome, then Testsome */
    for (int i = 3; i >= 0; i--)
        P2P_OK(MPI_Isend(sb[i], cnt[i], MPI_INT, dsts[i], tags[i], comm, &srq[i]));
    int seen[5] = {0};
    for (int left_ = 4, round = 0; left_ > 0; round++) {
        MPI_Status s5[5];
        int n = 0;
        if (round == 0) {
            P2P_OK(MPI_Waitany(5, rq, &idx, &s5[0]));
            indices[0] = idx;
            n = 1;
        } else if (round % 2) {
            P2P_OK(MPI_Waitsome(5, rq, &n, indices, s5));
        } else {
            P2P_OK(MPI_Testsome(5, rq, &n, indices, s5));
        }
        CHECK(n != MPI_UNDEFINED, "Wait/Testsome: MPI_UNDEFINED with %d receives left", left_);
        for (int k = 0; k < n; k++) {
            int i = indices[k];
            CHECK(i >= 0 && i < 4 && !seen[i], "index %d reported (twice or out of range)", i);
            seen[i] = 1;
            left_--;
            CHECK(rq[i] == MPI_REQUEST_NULL, "completed request %d not freed", i);
            CHECK(s5[k].MPI_SOURCE == srcs[i] && s5[k].MPI_TAG == tags[i] &&
                      p2p_count(&s5[k], MPI_INT) == cnt[i],
                  "request %d: status source %d tag %d count %d, expected %d %d %d", i,
                  s5[k].MPI_SOURCE, s5[k].MPI_TAG, p2p_count(&s5[k], MPI_INT), srcs[i], tags[i],
                  cnt[i]);
            for (int j = 0; j < cnt[i]; j++)
                CHECK(rb[i][j] == srcs[i] * 1000 + i * 301 + j, "request %d: int %d is %d", i, j,
                      rb[i][j]);
        }
    }
    /* sends complete: Testall until true, statuses of sends are not inspected */
    for (flag = 0; !flag;)
        P2P_OK(MPI_Testall(4, srq, &flag, sts));
    for (int i = 0; i < 4; i++) {
        CHECK(srq[i] == MPI_REQUEST_NULL, "Testall left send request %d", i);
        free(rb[i]);
        free(sb[i]);
    }

    /* Testany finds the one ready request among nulls and reports its status */
    int v = -1;
    MPI_Request mix[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    P2P_OK(MPI_Irecv(&v, 1, MPI_INT, left, 25, comm, &mix[2]));
    P2P_OK(MPI_Send(&rank, 1, MPI_INT, right, 25, comm));
    for (flag = 0; !flag;)
        P2P_OK(MPI_Testany(4, mix, &idx, &flag, &st));
    CHECK(idx == 2 && st.MPI_SOURCE == left && st.MPI_TAG == 25 && v == left,
          "Testany: index %d source %d tag %d value %d", idx, st.MPI_SOURCE, st.MPI_TAG, v);
}

/* ---- Get_count / Get_elements on derived types --------------------------------- */

static void counts(void)
{
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks;
    struct rec {
        int i;
        double d;
    } out[3], in[3];
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(struct rec, i), offsetof(struct rec, d)};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, rec, pair;
    MPI_Type_create_struct(2, bl, disp, types, &rec);
    MPI_Type_commit(&rec);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    for (int i = 0; i < 3; i++)
        out[i] = (struct rec){rank + i, rank * 0.5 + i};
    MPI_Status st;
    P2P_OK(MPI_Sendrecv(out, 3, rec, dst, 30, in, 3, rec, src, 30, comm, &st));
    int c = -1, e = -1;
    MPI_Get_count(&st, rec, &c);
    MPI_Get_elements(&st, rec, &e);
    CHECK(c == 3 && e == 6, "3 structs {int, double}: Get_count %d (3), Get_elements %d (6)", c, e);
    MPI_Get_count(&st, MPI_BYTE, &c);
    CHECK(c == 3 * (int)(sizeof(int) + sizeof(double)), "3 structs: %d bytes", c);
    for (int i = 0; i < 3; i++)
        CHECK(in[i].i == src + i && in[i].d == src * 0.5 + i, "struct %d: {%d, %g}", i, in[i].i,
              in[i].d);
    /* 5 ints received as pairs of ints: 2 whole pairs and a half */
    int five[5] = {1, 2, 3, 4, 5}, got[6] = {0};
    P2P_OK(MPI_Sendrecv(five, 5, MPI_INT, dst, 31, got, 3, pair, src, 31, comm, &st));
    MPI_Get_count(&st, pair, &c);
    MPI_Get_elements(&st, pair, &e);
    CHECK(c == MPI_UNDEFINED && e == 5,
          "5 ints as pairs: Get_count %d (MPI_UNDEFINED), Get_elements %d (5)", c, e);
    CHECK(got[4] == 5 && got[5] == 0, "5 ints as pairs: got[4] %d got[5] %d", got[4], got[5]);
    /* 1 int received as a struct {int, double}: not one whole struct, 1 element */
    P2P_OK(MPI_Sendrecv(five, 1, MPI_INT, dst, 32, in, 1, rec, src, 32, comm, &st));
    MPI_Get_count(&st, rec, &c);
    MPI_Get_elements(&st, rec, &e);
    CHECK(c == MPI_UNDEFINED && e == 1, "1 int as a struct: Get_count %d, Get_elements %d", c, e);
    MPI_Type_free(&rec);
    MPI_Type_free(&pair);
}

/* ---- Request_get_status, Request_free ------------------------------------------ */

static void request_calls(void)
{
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks, v = -1, flag = 0;
    MPI_Request rq;
    MPI_Status st, st2;
    P2P_OK(MPI_Irecv(&v, 1, MPI_INT, src, 40, comm, &rq));
    P2P_OK(MPI_Request_get_status(rq, &flag, &st));
    MPI_Barrier(MPI_COMM_WORLD); /* nobody has sent: the receive cannot be complete */
    CHECK(!flag, "Request_get_status: complete before anything was sent");
    P2P_OK(MPI_Send(&rank, 1, MPI_INT, dst, 40, comm));
    while (!flag)
        P2P_OK(MPI_Request_get_status(rq, &flag, &st));
    CHECK(rq != MPI_REQUEST_NULL, "Request_get_status freed the request");
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 40 && p2p_count(&st, MPI_INT) == 1,
          "Request_get_status: status %d/%d/%d", st.MPI_SOURCE, st.MPI_TAG,
          p2p_count(&st, MPI_INT));
    P2P_OK(MPI_Request_get_status(rq, &flag, &st2)); /* again: still there, still done */
    CHECK(flag && rq != MPI_REQUEST_NULL, "Request_get_status twice: flag %d", flag);
    P2P_OK(MPI_Wait(&rq, &st2));
    CHECK(rq == MPI_REQUEST_NULL && st2.MPI_SOURCE == src && st2.MPI_TAG == 40 && v == src,
          "Wait after Request_get_status: source %d tag %d value %d", st2.MPI_SOURCE, st2.MPI_TAG,
          v);
    rq = MPI_REQUEST_NULL;
    P2P_OK(MPI_Request_get_status(rq, &flag, &st));
    CHECK(flag, "Request_get_status(MPI_REQUEST_NULL): flag false");
    check_empty(&st, "Request_get_status(MPI_REQUEST_NULL)");

    /* Request_free of active sends (small and large): the messages still arrive; the
     * buffers stay untouched until the receiver says it has them */
    static const int sizes[3] = {4, 5000, 200000};
    unsigned char *sb[3], *rb[3];
    for (int k = 0; k < 3; k++) {
        sb[k] = malloc((size_t)sizes[k]);
        rb[k] = malloc((size_t)sizes[k]);
        CHECK(sb[k] && rb[k], "out of memory");
        p2p_fill(sb[k], (size_t)sizes[k], p2p_key(rank, 41 + k, 0, SEED));
        P2P_OK(MPI_Isend(sb[k], sizes[k], MPI_BYTE, dst, 41 + k, comm, &rq));
        P2P_OK(MPI_Request_free(&rq));
        CHECK(rq == MPI_REQUEST_NULL, "Request_free did not set MPI_REQUEST_NULL");
    }
    for (int k = 2; k >= 0; k--) {
        P2P_OK(MPI_Recv(rb[k], sizes[k], MPI_BYTE, src, 41 + k, comm, &st));
        P2P_CHECK_DATA(rb[k], (size_t)sizes[k], p2p_key(src, 41 + k, 0, SEED),
                       "message of a freed send request (%d B from %d)", sizes[k], src);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 3; k++) {
        free(sb[k]);
        free(rb[k]);
    }
}

/* ---- invalid arguments --------------------------------------------------------- */

static void invalid_args(void)
{
    int buf[4] = {0}, *tag_ub = NULL, flag = 0;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Status st;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && tag_ub && *tag_ub >= 32767, "MPI_TAG_UB is missing or below 32767");
    errors_return_everywhere(1);

    P2P_FAILS(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, nranks, 0, comm));
    P2P_FAILS(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, -5, 0, comm));
    P2P_FAILS(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, comm));
    P2P_FAILS(MPI_ERR_RANK, MPI_Isend(buf, 1, MPI_INT, nranks + 3, 0, comm, &rq));
    P2P_FAILS(MPI_ERR_RANK, MPI_Ssend(buf, 1, MPI_INT, nranks, 0, comm));
    P2P_FAILS(MPI_ERR_RANK, MPI_Recv(buf, 1, MPI_INT, nranks, 0, comm, &st));
    P2P_FAILS(MPI_ERR_RANK, MPI_Irecv(buf, 1, MPI_INT, nranks, 0, comm, &rq));
    P2P_FAILS(MPI_ERR_RANK, MPI_Iprobe(nranks, 0, comm, &flag, &st));

    P2P_FAILS(MPI_ERR_COUNT, MPI_Send(buf, -1, MPI_INT, 0, 0, comm));
    P2P_FAILS(MPI_ERR_COUNT, MPI_Isend(buf, -1, MPI_INT, 0, 0, comm, &rq));
    P2P_FAILS(MPI_ERR_COUNT, MPI_Recv(buf, -1, MPI_INT, 0, 0, comm, &st));
    P2P_FAILS(MPI_ERR_COUNT, MPI_Irecv(buf, -1, MPI_INT, 0, 0, comm, &rq));

    P2P_FAILS(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, 0, -5, comm));
    P2P_FAILS(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, 0, MPI_ANY_TAG, comm));
    P2P_FAILS(MPI_ERR_TAG, MPI_Isend(buf, 1, MPI_INT, 0, -1, comm, &rq));
    if (*tag_ub < INT_MAX)
        P2P_FAILS(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, 0, *tag_ub + 1, comm));
    P2P_FAILS(MPI_ERR_TAG, MPI_Recv(buf, 1, MPI_INT, 0, -5, comm, &st));
    P2P_FAILS(MPI_ERR_TAG, MPI_Irecv(buf, 1, MPI_INT, 0, -5, comm, &rq));

    P2P_FAILS(MPI_ERR_COMM, MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL));
    P2P_FAILS(MPI_ERR_COMM, MPI_Isend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &rq));
    P2P_FAILS(MPI_ERR_COMM, MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st));
    P2P_FAILS(MPI_ERR_COMM, MPI_Irecv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &rq));
#ifndef OPEN_MPI
    /* Open MPI 4.1.4 raises this one on MPI_COMM_NULL's handler, which is always fatal
     * (its Send/Recv/Isend/Irecv use MPI_COMM_WORLD's, as the standard asks) */
    P2P_FAILS(MPI_ERR_COMM, MPI_Iprobe(0, 0, MPI_COMM_NULL, &flag, &st));
#endif

    P2P_FAILS(MPI_ERR_TYPE, MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, comm));
    P2P_FAILS(MPI_ERR_TYPE, MPI_Isend(buf, 1, MPI_DATATYPE_NULL, 0, 0, comm, &rq));
    P2P_FAILS(MPI_ERR_TYPE, MPI_Recv(buf, 1, MPI_DATATYPE_NULL, 0, 0, comm, &st));
    P2P_FAILS(MPI_ERR_TYPE, MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, 0, 0, comm, &rq));

    /* none of it sent anything */
    MPI_Barrier(MPI_COMM_WORLD);
    P2P_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
    CHECK(!flag, "a failed call sent a message (source %d tag %d)", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(rq == MPI_REQUEST_NULL, "a failed call returned a request");
    MPI_Barrier(MPI_COMM_WORLD);
    errors_return_everywhere(0);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    verbose = getenv("P2P_VERBOSE") != NULL;
    double t0 = MPI_Wtime();
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);

    probe_below();
    truncation();
    SECTION_DONE("MPI_ERR_TRUNCATE");
    proc_null();
    SECTION_DONE("MPI_PROC_NULL");
    zero_and_ignore();
    SECTION_DONE("zero counts, MPI_STATUS(ES)_IGNORE");
    multi_completion();
    SECTION_DONE("Wait/Test any/some/all statuses");
    counts();
    SECTION_DONE("Get_count/Get_elements");
    request_calls();
    SECTION_DONE("Request_get_status, Request_free");
    invalid_args();
    SECTION_DONE("invalid arguments");

    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("p2p_errors: OK on %d ranks in %.2f s\n", nranks, MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
