/* comm_idup.c: MPI_Comm_idup is nonblocking. MPI-4.1 §7.4.2: it "is a nonblocking
 * variant of MPI_COMM_DUP"; like every nonblocking collective (§6.12) it returns before
 * the other members have called it, and may complete only once they all did. So:
 *  - staggered: rank 0 posts its MPI_Comm_idup only after a message from every other
 *    rank, which each sends (synchronously) after posting its own: a blocking idup
 *    deadlocks here;
 *  - the same on an intercommunicator (two halves of MPI_COMM_WORLD);
 *  - several idups pending at once, overlapped with blocking constructors (dup, split,
 *    create) and a nonblocking allreduce on the parent: every communicator made must
 *    keep its messages apart from the others' (same tags on all of them);
 *  - idup requests completed by MPI_Waitall, MPI_Testany and MPI_Waitsome beside
 *    point-to-point requests, and polled with MPI_Request_get_status;
 *  - a message on the new communicator sent by a member whose idup completed before
 *    the receiver's did;
 *  - MPI_Comm_idup_with_info where the MPI has it (MPI 4; Open MPI 5.0, which says 3.1).
 * Every new communicator is then used (allreduce, a ring of messages) and checked. */
#include "../p2p_common.h"

#include <unistd.h>

#define SEED 0x1D0Bull

static int rank, nranks;

static uint64_t key(int from, int tag, int which)
{
    return p2p_key(from, tag, (uint64_t)which, SEED);
}

/* A ring exchange and an allreduce on c, payloads tagged by which. */
static void use(MPI_Comm c, int which, const char *what)
{
    int r, n, inter = 0;
    MPI_Comm_rank(c, &r);
    MPI_Comm_test_inter(c, &inter);
    if (inter)
        MPI_Comm_remote_size(c, &n);
    else
        MPI_Comm_size(c, &n);
    int lsize;
    MPI_Comm_size(c, &lsize);
    unsigned char s[64], rb[64];
    int to = inter ? r % n : (r + 1) % n, from = inter ? r % n : (r - 1 + n) % n;
    p2p_fill(s, sizeof s, key(r, 7, which));
    MPI_Status st;
    if (!inter || r < n) { /* an intercomm ring pairs local rank r with remote rank r */
        P2P_OK(MPI_Sendrecv(s, 64, MPI_BYTE, to, 7, rb, 64, MPI_BYTE, from, 7, c, &st));
        CHECK(st.MPI_SOURCE == from, "%s: message from %d, expected %d", what, st.MPI_SOURCE, from);
        P2P_CHECK_DATA(rb, 64, key(from, 7, which), "%s: ring message", what);
    }
    long mine = r + 1, sum = 0, want;
    P2P_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, c));
    want = inter ? (long)n * (n + 1) / 2 : (long)lsize * (lsize + 1) / 2;
    CHECK(sum == want, "%s: allreduce gave %ld, expected %ld", what, sum, want);
}

static void staggered(MPI_Comm parent, const char *what)
{
    int r, inter = 0, n;
    MPI_Comm_rank(parent, &r);
    MPI_Comm_test_inter(parent, &inter);
    if (inter)
        MPI_Comm_remote_size(parent, &n);
    else
        MPI_Comm_size(parent, &n);
    MPI_Comm nc;
    MPI_Request rq;
    if (r == 0) {
        for (int i = 1; i < n; i++) {
            int v = -1;
            P2P_OK(MPI_Recv(&v, 1, MPI_INT, i, 1, parent, MPI_STATUS_IGNORE));
            CHECK(v == i, "%s: the message before the idup says %d, not %d", what, v, i);
        }
        P2P_OK(MPI_Comm_idup(parent, &nc, &rq));
        P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        P2P_OK(MPI_Comm_idup(parent, &nc, &rq));
        if (!inter || r < n)
            P2P_OK(MPI_Ssend(&r, 1, MPI_INT, 0, 1, parent));
        P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    CHECK(rq == MPI_REQUEST_NULL, "%s: MPI_Wait left the request", what);
    use(nc, 1, what);
    MPI_Comm_free(&nc);
}

/* Several pending idups, blocking constructors and an Iallreduce on the parent between
 * them, completed in another order than posted. */
static void overlapped(void)
{
    enum { K = 4 };
    MPI_Comm ic[K], d, sp, cr;
    MPI_Request rq[K + 1];
    for (int i = 0; i < K; i++)
        P2P_OK(MPI_Comm_idup(MPI_COMM_WORLD, &ic[i], &rq[i]));
    long one = 1, total = 0;
    P2P_OK(MPI_Iallreduce(&one, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &rq[K]));
    P2P_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    P2P_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, nranks - rank, &sp));
    MPI_Group wg, hg;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int range[1][3] = {{0, nranks - 1, 1}};
    MPI_Group_range_incl(wg, 1, range, &hg);
    P2P_OK(MPI_Comm_create(MPI_COMM_WORLD, hg, &cr));
    MPI_Group_free(&hg);
    MPI_Group_free(&wg);
    /* the blocking ones work while the idups are pending */
    use(d, 10, "MPI_Comm_dup beside pending idups");
    use(sp, 11, "MPI_Comm_split beside pending idups");
    for (int i = K; i >= 0; i--) /* last posted first */
        P2P_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
    CHECK(total == nranks, "the Iallreduce between the idups gave %ld", total);
    /* Every communicator at once: the same tag on each, receives posted on all of them
     * before any send, so a message delivered on the wrong one is seen. */
    MPI_Comm all[K + 3] = {ic[0], ic[1], ic[2], ic[3], d, sp, cr};
    MPI_Request r2[2 * (K + 3)];
    unsigned char sb[K + 3][32], rb[K + 3][32];
    int from[K + 3];
    for (int i = 0; i < K + 3; i++) {
        int r, n;
        MPI_Comm_rank(all[i], &r);
        MPI_Comm_size(all[i], &n);
        from[i] = (r - 1 + n) % n;
        P2P_OK(MPI_Irecv(rb[i], 32, MPI_BYTE, from[i], 9, all[i], &r2[i]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < K + 3; i++) {
        int r, n;
        MPI_Comm_rank(all[i], &r);
        MPI_Comm_size(all[i], &n);
        p2p_fill(sb[i], 32, key(r, 9, 100 + i));
        P2P_OK(MPI_Isend(sb[i], 32, MPI_BYTE, (r + 1) % n, 9, all[i], &r2[K + 3 + i]));
    }
    P2P_OK(MPI_Waitall(2 * (K + 3), r2, MPI_STATUSES_IGNORE));
    for (int i = 0; i < K + 3; i++)
        P2P_CHECK_DATA(rb[i], 32, key(from[i], 9, 100 + i), "communicator %d of %d", i, K + 3);
    for (int i = 0; i < K; i++) {
        use(ic[i], 20 + i, "an idup overlapped with others");
        MPI_Comm_free(&ic[i]);
    }
    MPI_Comm_free(&d);
    MPI_Comm_free(&sp);
    MPI_Comm_free(&cr);
}

/* idup requests in arrays with point-to-point ones, and polled alone. */
static void in_arrays(void)
{
    int peer = rank ^ 1;
    MPI_Comm nc[3];
    MPI_Request rq[4];
    int in = -1;
    /* Waitall */
    P2P_OK(MPI_Irecv(&in, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[0]));
    P2P_OK(MPI_Comm_idup(MPI_COMM_WORLD, &nc[0], &rq[1]));
    P2P_OK(MPI_Isend(&rank, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq[2]));
    P2P_OK(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE));
    CHECK(in == peer, "Waitall: the receive beside the idup got %d", in);
    /* Testany until both are done */
    P2P_OK(MPI_Comm_idup(nc[0], &nc[1], &rq[0]));
    P2P_OK(MPI_Irecv(&in, 1, MPI_INT, peer, 3, nc[0], &rq[1]));
    P2P_OK(MPI_Send(&rank, 1, MPI_INT, peer, 3, nc[0]));
    for (int done = 0; done < 2;) {
        int idx = -1, flag = 0;
        P2P_OK(MPI_Testany(2, rq, &idx, &flag, MPI_STATUS_IGNORE));
        if (flag) {
            CHECK(idx == 0 || idx == 1, "Testany index %d", idx);
            done++;
        }
    }
    /* Waitsome */
    P2P_OK(MPI_Comm_idup(nc[1], &nc[2], &rq[0]));
    P2P_OK(MPI_Irecv(&in, 1, MPI_INT, peer, 4, nc[1], &rq[1]));
    P2P_OK(MPI_Send(&rank, 1, MPI_INT, peer, 4, nc[1]));
    for (int done = 0; done < 2;) {
        int out, idx[2];
        P2P_OK(MPI_Waitsome(2, rq, &out, idx, MPI_STATUSES_IGNORE));
        done += out;
    }
    for (int i = 0; i < 3; i++)
        use(nc[i], 30 + i, "an idup completed in an array");
    /* MPI_Request_get_status alone until the flag is set, then MPI_Test frees it */
    MPI_Comm pc;
    MPI_Request pq;
    P2P_OK(MPI_Comm_idup(nc[2], &pc, &pq));
    for (int flag = 0; !flag;)
        P2P_OK(MPI_Request_get_status(pq, &flag, MPI_STATUS_IGNORE));
    int flag = 0;
    P2P_OK(MPI_Test(&pq, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && pq == MPI_REQUEST_NULL, "MPI_Test after MPI_Request_get_status: flag %d", flag);
    use(pc, 40, "an idup polled with MPI_Request_get_status");
    MPI_Comm_free(&pc);
    for (int i = 2; i >= 0; i--)
        MPI_Comm_free(&nc[i]);
}

/* Rank 0 completes first and sends on the new communicator at once; the others wait a
 * while before they complete theirs. */
static void early_message(void)
{
    MPI_Comm nc;
    MPI_Request rq;
    P2P_OK(MPI_Comm_idup(MPI_COMM_WORLD, &nc, &rq));
    unsigned char b[48];
    if (rank == 0) {
        P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int i = 1; i < nranks; i++) {
            p2p_fill(b, sizeof b, key(0, 5, i));
            P2P_OK(MPI_Send(b, 48, MPI_BYTE, i, 5, nc));
        }
    } else {
        usleep(100000);
        P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        /* the same tag on the parent, sent after: must not be taken for it */
        P2P_OK(MPI_Recv(b, 48, MPI_BYTE, 0, 5, nc, MPI_STATUS_IGNORE));
        P2P_CHECK_DATA(b, 48, key(0, 5, rank), "the message sent before this idup completed");
    }
    use(nc, 50, "an idup that completed at different times");
    MPI_Comm_free(&nc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    CHECK(nranks % 2 == 0, "needs an even number of ranks");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    staggered(MPI_COMM_WORLD, "staggered idup of MPI_COMM_WORLD");
    MPI_Comm half, ic;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 77, &ic);
    staggered(half, "staggered idup of a split");
    staggered(ic, "staggered idup of an intercommunicator");
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    overlapped();
    in_arrays();
    early_message();
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
    MPI_Comm wi;
    MPI_Request rq;
    if (rank == 0) { /* posted after a message rank 1 sends after posting its own */
        int v = -1;
        P2P_OK(MPI_Recv(&v, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(v == 1, "the message before idup_with_info says %d", v);
        P2P_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &wi, &rq));
    } else {
        P2P_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &wi, &rq));
        if (rank == 1)
            P2P_OK(MPI_Ssend(&rank, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
    }
    P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    use(wi, 60, "MPI_Comm_idup_with_info");
    MPI_Comm_free(&wi);
#endif
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_idup: OK\n");
    MPI_Finalize();
    return 0;
}
