/* p2p_modes.c: the send modes and the calls built on them. Ssend/Issend complete
 * only once the receive is matched (a semantic check with a wide margin, not a speed
 * check); Rsend/Irsend with the receive posted first; Bsend/Ibsend through an
 * attached buffer (detach waits, MPI_ERR_BUFFER when it is too small); Sendrecv and
 * Sendrecv_replace in rings and chains; persistent requests restarted many times;
 * Probe/Iprobe/Mprobe/Improbe/Mrecv/Imrecv, specific and wildcard. */
#include "../p2p_common.h"
#include "../same_node.h"

#define SEED 0x30DE5ull
#define RECV_DELAY_MS 200 /* how long a receiver waits before posting */

static int rank, nranks, verbose;
static MPI_Comm comm; /* MPI_ERRORS_RETURN */

#define DONE(name)                          \
    do {                                    \
        p2p_barrier_polite(MPI_COMM_WORLD); \
        if (verbose && rank == 0)           \
            printf("  %s: ok\n", name);     \
    } while (0)

static unsigned char *filled(size_t n, int tag, uint64_t idx)
{
    unsigned char *b = malloc(n + 1);
    CHECK(b, "out of memory");
    p2p_fill(b, n, p2p_key(rank, tag, idx, SEED));
    return b;
}

/* ---- Ssend / Issend: complete only after the receive is matched ---------------- */

/* partner pattern 0: 2i <-> 2i+1; pattern 1: i <-> i+n/2 (remote on 2-rank nodes).
 * Returns the partner and whether this rank sends, or -1 if it sits out. */
static int partner(int pattern, int *sender)
{
    if (pattern == 0) {
        int p = rank ^ 1;
        *sender = !(rank & 1);
        return p < nranks ? p : -1;
    }
    int h = nranks / 2;
    if (h < 1 || rank >= 2 * h)
        return -1;
    *sender = rank < h;
    return rank < h ? rank + h : rank - h;
}

/* The receiver posts its receive RECV_DELAY_MS late and tells the sender when (on the
 * machine-wide monotonic clock): the send may not complete before that instant. No
 * speed is measured; a standard Send of a small message may well return earlier. */
static void synchronous(void)
{
    static const size_t sizes[2] = {8, 1u << 20};
    int npat = nranks >= 4 ? 2 : 1;
    for (int pat = 0; pat < npat; pat++)
        for (int k = 0; k < 2; k++) {
            int sender = 0, p = partner(pat, &sender), tag = 10 + k;
            size_t n = sizes[k];
            MPI_Barrier(MPI_COMM_WORLD);
            if (p < 0)
                continue;
            if (sender) {
                unsigned char *b = filled(n, tag, 0);
                double done, posted = 0, t0 = p2p_mono();
                int tests = 0;
                if (k == 0) { /* blocking Ssend */
                    P2P_OK(MPI_Ssend(b, (int)n, MPI_BYTE, p, tag, comm));
                    done = p2p_mono();
                } else { /* Issend: MPI_Test says false until the receive is posted */
                    MPI_Request rq;
                    int flag = 0;
                    P2P_OK(MPI_Issend(b, (int)n, MPI_BYTE, p, tag, comm, &rq));
                    while (!flag) {
                        P2P_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
                        tests++;
                        if (!flag)
                            p2p_sleep_ms(2);
                    }
                    done = p2p_mono();
                }
                P2P_OK(MPI_Recv(&posted, 1, MPI_DOUBLE, p, tag + 100, comm, MPI_STATUS_IGNORE));
                CHECK(done >= posted,
                      "%s of %zu B to %d completed %.3f s after it started, %.3f s BEFORE the "
                      "receiver posted its receive (after %d MPI_Test)",
                      k ? "Issend" : "Ssend", n, p, done - t0, posted - done, tests);
                free(b);
            } else {
                unsigned char *b = malloc(n + 1);
                CHECK(b, "out of memory");
                p2p_sleep_ms(RECV_DELAY_MS);
                double posted = p2p_mono();
                P2P_OK(MPI_Recv(b, (int)n, MPI_BYTE, p, tag, comm, MPI_STATUS_IGNORE));
                P2P_CHECK_DATA(b, n, p2p_key(p, tag, 0, SEED), "Ssend of %zu B from %d", n, p);
                P2P_OK(MPI_Send(&posted, 1, MPI_DOUBLE, p, tag + 100, comm));
                free(b);
            }
        }
    /* with the receive posted first, Ssend just completes */
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks, v = -1;
    MPI_Request rq;
    P2P_OK(MPI_Irecv(&v, 1, MPI_INT, src, 12, comm, &rq));
    P2P_OK(MPI_Ssend(&rank, 1, MPI_INT, dst, 12, comm));
    P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(v == src, "Ssend ring: got %d from %d", v, src);
}

/* ---- Rsend / Irsend --------------------------------------------------------- */

static void ready(void)
{
    static const size_t sizes[3] = {0, 100, 100000};
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks;
    for (int k = 0; k < 3; k++)
        for (int nb = 0; nb < 2; nb++) {
            int tag = 20 + k * 2 + nb;
            size_t n = sizes[k];
            unsigned char *r = malloc(n + 1), *s = filled(n, tag, 0);
            MPI_Request rq, sq;
            MPI_Status st;
            P2P_OK(MPI_Irecv(r, (int)n, MPI_BYTE, src, tag, comm, &rq));
            MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted before any Rsend */
            if (nb) {
                P2P_OK(MPI_Irsend(s, (int)n, MPI_BYTE, dst, tag, comm, &sq));
                P2P_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
            } else {
                P2P_OK(MPI_Rsend(s, (int)n, MPI_BYTE, dst, tag, comm));
            }
            P2P_OK(MPI_Wait(&rq, &st));
            CHECK(st.MPI_SOURCE == src && p2p_count(&st, MPI_BYTE) == (int)n,
                  "%s of %zu B: status source %d count %d", nb ? "Irsend" : "Rsend", n,
                  st.MPI_SOURCE, p2p_count(&st, MPI_BYTE));
            P2P_CHECK_DATA(r, n, p2p_key(src, tag, 0, SEED), "%s of %zu B from %d",
                           nb ? "Irsend" : "Rsend", n, src);
            free(r);
            free(s);
        }
}

/* ---- Bsend / Ibsend -------------------------------------------------------- */

static void buffered(void)
{
    static const size_t sizes[4] = {0, 10, 5000, 200000};
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks;
    int size = 0; /* the standard's sizing: Pack_size + MPI_BSEND_OVERHEAD per message */
    for (int k = 0; k < 4; k++) {
        int ps = 0;
        MPI_Pack_size((int)sizes[k], MPI_BYTE, comm, &ps);
        size += 2 * (ps + MPI_BSEND_OVERHEAD);
    }
    void *buf = malloc((size_t)size), *got = NULL;
    CHECK(buf, "out of memory");
    P2P_OK(MPI_Buffer_attach(buf, size));
    unsigned char *s[8];
    for (int k = 0; k < 4; k++)
        for (int nb = 0; nb < 2; nb++) {
            int tag = 30 + k * 2 + nb;
            s[k * 2 + nb] = filled(sizes[k], tag, 0);
            if (nb) {
                MPI_Request rq;
                P2P_OK(MPI_Ibsend(s[k * 2 + nb], (int)sizes[k], MPI_BYTE, dst, tag, comm, &rq));
                P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE)); /* local: the data is in buf */
            } else {
                P2P_OK(MPI_Bsend(s[k * 2 + nb], (int)sizes[k], MPI_BYTE, dst, tag, comm));
            }
            /* the user buffer may be reused at once */
            memset(s[k * 2 + nb], 0xCD, sizes[k]);
        }
    P2P_OK(MPI_Bsend(&rank, 1, MPI_INT, MPI_PROC_NULL, 39, comm));
    /* nobody receives before every rank has buffered all: Bsend must not wait */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 3; k >= 0; k--)
        for (int nb = 1; nb >= 0; nb--) {
            int tag = 30 + k * 2 + nb;
            unsigned char *r = malloc(sizes[k] + 1);
            MPI_Status st;
            P2P_OK(MPI_Recv(r, (int)sizes[k], MPI_BYTE, src, tag, comm, &st));
            P2P_CHECK_DATA(r, sizes[k], p2p_key(src, tag, 0, SEED), "%s of %zu B from %d",
                           nb ? "Ibsend" : "Bsend", sizes[k], src);
            free(r);
        }
    int gsize = -1;
    P2P_OK(MPI_Buffer_detach(&got, &gsize));
    CHECK(got == buf && gsize == size, "Buffer_detach returned %p/%d, attached %p/%d", got, gsize,
          buf, size);
    for (int i = 0; i < 8; i++)
        free(s[i]);

    /* detach blocks until the buffered messages are delivered: the receiver posts its
     * receive late, and the buffer is overwritten right after detach returns */
    P2P_OK(MPI_Buffer_attach(buf, size));
    unsigned char *m = filled(100000, 40, 1);
    P2P_OK(MPI_Bsend(m, 100000, MPI_BYTE, dst, 40, comm));
    memset(m, 0, 100000);
    unsigned char *r = malloc(100000);
    MPI_Request rq;
    P2P_OK(MPI_Irecv(r, 100000, MPI_BYTE, src, 40, comm, &rq));
    P2P_OK(MPI_Buffer_detach(&got, &gsize));
    memset(buf, 0xAB, (size_t)size);
    P2P_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    P2P_CHECK_DATA(r, 100000, p2p_key(src, 40, 1, SEED), "Bsend then detach, from %d", src);
    free(m);
    free(r);

    /* detach waits for no receiver of HMPI's: every rank detaches and enters a barrier
     * before it receives (the message left the buffer as the send copied it; a detach
     * that waited for the receive hung here). The MPI below may wait for a receiver
     * past its eager size (Open MPI's shared memory above 4 KiB does), which the
     * standard allows: a small message unless every pair is on a node. */
    int dst_local = same_node(dst), src_local = same_node(src); /* collective calls */
    int all_local = dst_local && src_local;
    MPI_Allreduce(MPI_IN_PLACE, &all_local, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    size_t n = all_local ? 5000 : 64;
    P2P_OK(MPI_Buffer_attach(buf, size));
    m = filled(n, 43, 2);
    P2P_OK(MPI_Bsend(m, (int)n, MPI_BYTE, dst, 43, comm));
    P2P_OK(MPI_Buffer_detach(&got, &gsize));
    memset(buf, 0xAB, (size_t)size);
    MPI_Barrier(MPI_COMM_WORLD);
    r = malloc(n);
    P2P_OK(MPI_Recv(r, (int)n, MPI_BYTE, src, 43, comm, MPI_STATUS_IGNORE));
    P2P_CHECK_DATA(r, n, p2p_key(src, 43, 2, SEED), "Bsend, detach, barrier, from %d", src);
    free(m);
    free(r);

    /* a buffer too small, and no buffer at all: MPI_ERR_BUFFER. On a communicator of
     * their own: after a failed Bsend, Open MPI 4.1.4 never delivers another message
     * from that sender to that receiver on that communicator (the failed send keeps
     * its sequence number). */
    MPI_Comm bcomm;
    MPI_Comm_dup(comm, &bcomm);
    int small = 100 + MPI_BSEND_OVERHEAD;
    P2P_OK(MPI_Buffer_attach(buf, small));
    unsigned char big[10000];
    memset(big, 1, sizeof big);
    P2P_FAILS(MPI_ERR_BUFFER, MPI_Bsend(big, (int)sizeof big, MPI_BYTE, dst, 41, bcomm));
    P2P_OK(MPI_Buffer_detach(&got, &gsize));
    CHECK(got == buf && gsize == small, "Buffer_detach returned %p/%d, attached %p/%d", got, gsize,
          buf, small);
    /* (10000 B, since Open MPI 4.1.4 sends messages up to its eager limit without any
     * buffer attached and returns MPI_SUCCESS) */
    P2P_FAILS(MPI_ERR_BUFFER, MPI_Bsend(big, (int)sizeof big, MPI_BYTE, dst, 42, bcomm));
    free(buf);
    MPI_Barrier(MPI_COMM_WORLD);
    int flag;
    MPI_Status st;
    P2P_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, bcomm, &flag, &st));
    CHECK(!flag, "a failed Bsend delivered a message from %d", st.MPI_SOURCE);
    MPI_Comm_free(&bcomm);
}

/* ---- Sendrecv, Sendrecv_replace --------------------------------------------- */

static void sendrecv(void)
{
    static const size_t sizes[3] = {0, 1000, 100000};
    int shifts[2] = {1, nranks / 2}, nshifts = nranks / 2 == 1 ? 1 : 2;
    for (int sh = 0; sh < nshifts; sh++)
        for (int k = 0; k < 3; k++) {
            int dst = (rank + shifts[sh]) % nranks, src = (rank - shifts[sh] + nranks) % nranks;
            int tag = 50 + k;
            size_t n = sizes[k];
            unsigned char *s = filled(n, tag, (uint64_t)sh), *r = malloc(n + 1);
            MPI_Status st;
            P2P_OK(MPI_Sendrecv(s, (int)n, MPI_BYTE, dst, tag, r, (int)n, MPI_BYTE, src, tag, comm,
                                &st));
            CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag && p2p_count(&st, MPI_BYTE) == (int)n,
                  "Sendrecv ring +%d: status %d/%d/%d", shifts[sh], st.MPI_SOURCE, st.MPI_TAG,
                  p2p_count(&st, MPI_BYTE));
            P2P_CHECK_DATA(r, n, p2p_key(src, tag, (uint64_t)sh, SEED), "Sendrecv ring +%d, %zu B",
                           shifts[sh], n);
            /* replace: the buffer goes around the ring by one */
            P2P_OK(
                MPI_Sendrecv_replace(s, (int)n, MPI_BYTE, dst, tag + 10, src, tag + 10, comm, &st));
            CHECK(st.MPI_SOURCE == src && p2p_count(&st, MPI_BYTE) == (int)n,
                  "Sendrecv_replace ring: status %d/%d", st.MPI_SOURCE, p2p_count(&st, MPI_BYTE));
            P2P_CHECK_DATA(s, n, p2p_key(src, tag, (uint64_t)sh, SEED),
                           "Sendrecv_replace ring +%d, %zu B", shifts[sh], n);
            free(s);
            free(r);
        }
    /* a chain: rank 0 receives from PROC_NULL, the last sends to PROC_NULL */
    int right = rank + 1 < nranks ? rank + 1 : MPI_PROC_NULL;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int v[100];
    for (int i = 0; i < 100; i++)
        v[i] = rank * 1000 + i;
    MPI_Status st;
    P2P_OK(MPI_Sendrecv_replace(v, 100, MPI_INT, right, 60, left, 60, comm, &st));
    for (int i = 0; i < 100; i++)
        CHECK(v[i] == (left == MPI_PROC_NULL ? rank * 1000 + i : left * 1000 + i),
              "Sendrecv_replace chain: v[%d] = %d", i, v[i]);
    CHECK(st.MPI_SOURCE == left, "Sendrecv_replace chain: source %d, expected %d", st.MPI_SOURCE,
          left);
    /* one derived type on the send side, another on the receive side */
    MPI_Datatype vec;
    MPI_Type_vector(10, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int out[20], in[10] = {0};
    for (int i = 0; i < 20; i++)
        out[i] = rank * 100 + i;
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks;
    P2P_OK(MPI_Sendrecv(out, 1, vec, dst, 61, in, 10, MPI_INT, src, 61, comm, &st));
    for (int i = 0; i < 10; i++)
        CHECK(in[i] == src * 100 + 2 * i, "Sendrecv vector -> ints: in[%d] = %d", i, in[i]);
    MPI_Type_free(&vec);
}

/* ---- persistent requests ------------------------------------------------------ */

static void persistent(void)
{
    enum { ITERS = 60 };
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks;
    int far = (rank + nranks / 2) % nranks, farsrc = (rank - nranks / 2 + nranks) % nranks;
    static const size_t sizes[3] = {16, 3000, 40000};
    unsigned char *sb[3], *rb[3];
    MPI_Request rq[6];
    for (int k = 0; k < 3; k++) {
        sb[k] = malloc(sizes[k]);
        rb[k] = malloc(sizes[k]);
        CHECK(sb[k] && rb[k], "out of memory");
    }
    /* a standard, a synchronous and a second standard send to the far peer */
    P2P_OK(MPI_Send_init(sb[0], (int)sizes[0], MPI_BYTE, dst, 70, comm, &rq[0]));
    P2P_OK(MPI_Ssend_init(sb[1], (int)sizes[1], MPI_BYTE, dst, 71, comm, &rq[1]));
    P2P_OK(MPI_Send_init(sb[2], (int)sizes[2], MPI_BYTE, far, 72, comm, &rq[2]));
    P2P_OK(MPI_Recv_init(rb[0], (int)sizes[0], MPI_BYTE, src, 70, comm, &rq[3]));
    P2P_OK(MPI_Recv_init(rb[1], (int)sizes[1], MPI_BYTE, MPI_ANY_SOURCE, 71, comm, &rq[4]));
    /* ANY_TAG only where no other stream comes from that source */
    P2P_OK(MPI_Recv_init(rb[2], (int)sizes[2], MPI_BYTE, farsrc, farsrc == src ? 72 : MPI_ANY_TAG,
                         comm, &rq[5]));

    /* inactive persistent requests: Wait and Test return at once, with empty status */
    MPI_Status st;
    int flag = 0;
    P2P_OK(MPI_Wait(&rq[3], &st));
    CHECK(rq[3] != MPI_REQUEST_NULL && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "Wait on an inactive persistent request: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    P2P_OK(MPI_Test(&rq[4], &flag, &st));
    CHECK(flag && rq[4] != MPI_REQUEST_NULL, "Test on an inactive persistent request: flag %d",
          flag);

    for (int it = 0; it < ITERS; it++) {
        for (int k = 0; k < 3; k++)
            p2p_fill(sb[k], sizes[k], p2p_key(rank, 70 + k, (uint64_t)it, SEED));
        MPI_Status sts[6];
        if (it % 3 == 0) {
            P2P_OK(MPI_Startall(6, rq));
        } else if (it % 3 == 1) {
            for (int i = 5; i >= 0; i--)
                P2P_OK(MPI_Start(&rq[i]));
        } else {
            P2P_OK(MPI_Startall(3, rq + 3));
            P2P_OK(MPI_Startall(3, rq));
        }
        if (it % 4 == 1)
            P2P_OK(MPI_Waitall(6, rq, sts));
        else if (it % 4 == 3)
            for (int flag2 = 0; !flag2;) { /* Testall, politely */
                P2P_OK(MPI_Testall(6, rq, &flag2, sts));
                if (!flag2)
                    p2p_nap();
            }
        else
            for (int done = 0, idx; done < 6; done++) {
                P2P_OK(MPI_Waitany(6, rq, &idx, &sts[0]));
                CHECK(idx >= 0 && idx < 6, "Waitany on persistent requests: index %d", idx);
                sts[idx] = sts[0];
            }
        for (int i = 0; i < 6; i++)
            CHECK(rq[i] != MPI_REQUEST_NULL, "iteration %d: a persistent request was freed", it);
        int from[3] = {src, src, farsrc};
        for (int k = 0; k < 3; k++) {
            CHECK(sts[3 + k].MPI_SOURCE == from[k] && sts[3 + k].MPI_TAG == 70 + k,
                  "iteration %d, persistent receive %d: source %d tag %d", it, k,
                  sts[3 + k].MPI_SOURCE, sts[3 + k].MPI_TAG);
            P2P_CHECK_DATA(rb[k], sizes[k], p2p_key(from[k], 70 + k, (uint64_t)it, SEED),
                           "iteration %d, persistent %zu B from %d", it, sizes[k], from[k]);
        }
    }
    /* free them inactive */
    for (int i = 0; i < 6; i++) {
        P2P_OK(MPI_Request_free(&rq[i]));
        CHECK(rq[i] == MPI_REQUEST_NULL, "Request_free of a persistent request left the handle");
    }
    /* Bsend_init and Rsend_init, a few times */
    int bsize = 2 * (64 + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsize);
    P2P_OK(MPI_Buffer_attach(bbuf, bsize));
    int out = 0, in = -1;
    MPI_Request pr[3];
    P2P_OK(MPI_Bsend_init(&out, 1, MPI_INT, dst, 73, comm, &pr[0]));
    P2P_OK(MPI_Rsend_init(&out, 1, MPI_INT, dst, 74, comm, &pr[1]));
    for (int it = 0; it < 10; it++) {
        int tag = it % 2 ? 74 : 73;
        out = rank * 1000 + it;
        P2P_OK(MPI_Irecv(&in, 1, MPI_INT, src, tag, comm, &pr[2]));
        p2p_barrier_polite(MPI_COMM_WORLD); /* for Rsend: the receive is posted */
        P2P_OK(MPI_Start(&pr[it % 2]));
        P2P_OK(MPI_Wait(&pr[it % 2], MPI_STATUS_IGNORE));
        P2P_OK(MPI_Wait(&pr[2], MPI_STATUS_IGNORE));
        CHECK(in == src * 1000 + it, "%s iteration %d: got %d",
              it % 2 ? "Rsend_init" : "Bsend_init", it, in);
    }
    P2P_OK(MPI_Request_free(&pr[0]));
    P2P_OK(MPI_Request_free(&pr[1]));
    void *got;
    P2P_OK(MPI_Buffer_detach(&got, &bsize));
    free(bbuf);
    for (int k = 0; k < 3; k++) {
        free(sb[k]);
        free(rb[k]);
    }
}

/* ---- probes and matched probes ---------------------------------------------- */

static void probes(void)
{
    int dst = (rank + 1) % nranks, src = (rank - 1 + nranks) % nranks;
    MPI_Status st, st2;
    MPI_Message msg;
    int flag;
    /* two messages with one tag: Mprobe takes the first out of matching, so a later
     * Recv gets the second and Mrecv the first */
    int a[2] = {rank, 1}, b[2] = {rank, 2}, x[2], y[2];
    MPI_Request sq[2];
    P2P_OK(MPI_Isend(a, 2, MPI_INT, dst, 80, comm, &sq[0]));
    P2P_OK(MPI_Isend(b, 2, MPI_INT, dst, 80, comm, &sq[1]));
    P2P_OK(MPI_Mprobe(src, 80, comm, &msg, &st));
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 80 && p2p_count(&st, MPI_INT) == 2,
          "Mprobe: %d/%d/%d", st.MPI_SOURCE, st.MPI_TAG, p2p_count(&st, MPI_INT));
    P2P_OK(MPI_Recv(y, 2, MPI_INT, src, 80, comm, &st2));
    CHECK(y[0] == src && y[1] == 2, "Recv after Mprobe got message %d (expected the second)", y[1]);
    P2P_OK(MPI_Mrecv(x, 2, MPI_INT, &msg, &st));
    CHECK(x[0] == src && x[1] == 1 && msg == MPI_MESSAGE_NULL,
          "Mrecv got message %d (expected the first)", x[1]);
    P2P_OK(MPI_Waitall(2, sq, MPI_STATUSES_IGNORE));

    /* Improbe with wildcards, Imrecv; a matched message is invisible to Iprobe */
    P2P_OK(MPI_Isend(a, 2, MPI_INT, dst, 81, comm, &sq[0]));
    for (flag = 0; !flag;)
        P2P_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &msg, &st));
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 81, "Improbe(any, any): %d/%d", st.MPI_SOURCE,
          st.MPI_TAG);
    P2P_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st2));
    CHECK(!flag, "Iprobe sees a message already taken by Improbe (%d/%d)", st2.MPI_SOURCE,
          st2.MPI_TAG);
    MPI_Request rq;
    P2P_OK(MPI_Imrecv(x, 2, MPI_INT, &msg, &rq));
    CHECK(msg == MPI_MESSAGE_NULL, "Imrecv did not set MPI_MESSAGE_NULL");
    P2P_OK(MPI_Wait(&rq, &st));
    CHECK(x[0] == src && st.MPI_SOURCE == src && st.MPI_TAG == 81, "Imrecv: %d from %d tag %d",
          x[0], st.MPI_SOURCE, st.MPI_TAG);
    P2P_OK(MPI_Wait(&sq[0], MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);

    /* MPI_PROC_NULL */
    P2P_OK(MPI_Mprobe(MPI_PROC_NULL, 82, comm, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL, "Mprobe(PROC_NULL)");
    P2P_OK(MPI_Mrecv(x, 2, MPI_INT, &msg, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && p2p_count(&st, MPI_INT) == 0, "Mrecv(NO_PROC)");
    flag = 0;
    P2P_OK(MPI_Improbe(MPI_PROC_NULL, 82, comm, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL): flag %d", flag);
    P2P_OK(MPI_Imrecv(x, 2, MPI_INT, &msg, &rq));
    P2P_OK(MPI_Wait(&rq, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG, "Imrecv(NO_PROC)");

    /* every rank sends to every other; the receiver probes with ANY_SOURCE and specific
     * sources, sizes from 0 to 64 KiB, and receives exactly what it probed */
    int nmsg = nranks - 1;
    MPI_Request *rqs = malloc(sizeof(MPI_Request) * (nranks + 1));
    unsigned char **bufs = malloc(sizeof(void *) * (nranks + 1));
    for (int i = 1; i <= nmsg; i++) {
        int to = (rank + i) % nranks;
        size_t n = (size_t)(to * 7919 + rank * 104729) % 65536;
        bufs[i] = filled(n, 83, (uint64_t)to);
        P2P_OK(MPI_Isend(bufs[i], (int)n, MPI_BYTE, to, 83, comm, &rqs[i - 1]));
    }
    char *done = calloc((size_t)nranks, 1);
    for (int got = 0; got < nmsg; got++) {
        int how = got % 4, from = -1;
        for (int i = 1; i <= nmsg && from < 0; i++) /* a source not yet received from */
            if (!done[(rank - i + nranks) % nranks])
                from = (rank - i + nranks) % nranks;
        if (how == 0)
            P2P_OK(MPI_Probe(MPI_ANY_SOURCE, 83, comm, &st));
        else if (how == 1)
            P2P_OK(MPI_Probe(from, MPI_ANY_TAG, comm, &st));
        else if (how == 2)
            for (flag = 0; !flag;)
                P2P_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st));
        else
            for (flag = 0; !flag;)
                P2P_OK(MPI_Iprobe(from, 83, comm, &flag, &st));
        int s = st.MPI_SOURCE, n = p2p_count(&st, MPI_BYTE);
        CHECK(how % 2 == 0 || s == from, "probe of source %d says %d", from, s);
        CHECK(s >= 0 && s < nranks && s != rank && !done[s], "probe: a second message from %d", s);
        done[s] = 1;
        CHECK(n == (int)((size_t)(rank * 7919 + s * 104729) % 65536),
              "probe: %d B from %d, expected %zu", n, s,
              (size_t)(rank * 7919 + s * 104729) % 65536);
        unsigned char *r = malloc((size_t)n + 1);
        P2P_OK(MPI_Recv(r, n, MPI_BYTE, s, st.MPI_TAG, comm, &st2));
        CHECK(st2.MPI_SOURCE == s && p2p_count(&st2, MPI_BYTE) == n, "Recv after probe");
        P2P_CHECK_DATA(r, (size_t)n, p2p_key(s, 83, (uint64_t)rank, SEED), "probed %d B from %d", n,
                       s);
        free(r);
    }
    P2P_OK(MPI_Waitall(nmsg, rqs, MPI_STATUSES_IGNORE));
    free(done);
    for (int i = 1; i <= nmsg; i++)
        free(bufs[i]);
    free(rqs);
    free(bufs);
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
    synchronous();
    DONE("Ssend/Issend wait for the match");
    ready();
    DONE("Rsend/Irsend");
    buffered();
    DONE("Bsend/Ibsend, attach/detach, MPI_ERR_BUFFER");
    sendrecv();
    DONE("Sendrecv, Sendrecv_replace");
    persistent();
    DONE("persistent requests");
    probes();
    DONE("Probe/Iprobe/Mprobe/Improbe/Mrecv/Imrecv");
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("p2p_modes: OK on %d ranks in %.2f s\n", nranks, MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
