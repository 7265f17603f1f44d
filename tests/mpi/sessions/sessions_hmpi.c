/* sessions_hmpi.c: what HMPI does under sessions alone (no MPI_Init), seen from the
 * program through hmpi.h and MPI_T:
 *  - HMPI is active (HMPI_Active), unless HMPI_DISABLE=1;
 *  - messages on a communicator from MPI_Comm_create_from_group go through HMPI: its
 *    counters (the performance variables hmpi_msgs_*) count every one, by a protocol of
 *    the node for a peer on this node, as remote for another (simulated) node; and so do
 *    its collectives (hmpi_coll_allreduce) and a window on it (hmpi_rma_*);
 *  - memory allocated before the first init is private (HMPI_Is_shared 0), is sent and
 *    received correctly and is freed after it; memory allocated after is shared;
 *  - OPI on the communicator: enabled, buffers given and taken around the ring (with
 *    HMPI_DISABLE=1 under sessions alone OPI is not set up: MPI_ERR_OTHER);
 *  - the arrival into the constructors without a parent: a rank posts a receive and
 *    enters MPI_Comm_create_from_group (then MPI_Comm_create_group, then
 *    MPI_Intercomm_create_from_groups) while its peer's MPI_Ssend waits for that receive
 *    to be matched before the peer enters the constructor: it must not hang.
 * Every value is checked. */
#include "sessions_common.h"

#include <hmpi.h>

enum { SMALL = 100, EARLY = 300000 };

static const char *counters[] = {"hmpi_msgs_immediate", "hmpi_msgs_copy", "hmpi_msgs_synergistic",
                                 "hmpi_msgs_cma",       "hmpi_msgs_pipe", "hmpi_msgs_remote"};
enum { NCOUNTERS = 6, REMOTE = 5 };

static const char *others[] = {"hmpi_coll_allreduce", "hmpi_rma_windows", "hmpi_rma_puts_local",
                               "hmpi_rma_puts_remote"};
enum { NOTHERS = 4, ALLREDUCES = 10 };

static MPI_T_pvar_session pvars;
static MPI_T_pvar_handle handles[NCOUNTERS], other_handles[NOTHERS];

/* A started handle of HMPI's counter name. */
static MPI_T_pvar_handle counter_handle(const char *name)
{
    int idx, n;
    MPI_T_pvar_handle h;
    CHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS, "no %s", name);
    CHECK(MPI_T_pvar_handle_alloc(pvars, idx, NULL, &h, &n) == MPI_SUCCESS && n == 1,
          "handle of %s", name);
    CHECK(MPI_T_pvar_start(pvars, h) == MPI_SUCCESS, "start %s", name);
    return h;
}

/* What counter i of others counted since the last read. */
static unsigned long long other_read(int i)
{
    unsigned long long v = 0;
    CHECK(MPI_T_pvar_readreset(pvars, other_handles[i], &v) == MPI_SUCCESS, "read %s", others[i]);
    return v;
}

static void counters_start(void)
{
    int provided;
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
    CHECK(MPI_T_pvar_session_create(&pvars) == MPI_SUCCESS, "pvar session");
    for (int i = 0; i < NCOUNTERS; i++)
        handles[i] = counter_handle(counters[i]);
    for (int i = 0; i < NOTHERS; i++)
        other_handles[i] = counter_handle(others[i]);
}

/* Messages this rank sent since the last call: by the node's protocols, and remote. */
static void counters_read(unsigned long long *local, unsigned long long *remote)
{
    *local = *remote = 0;
    for (int i = 0; i < NCOUNTERS; i++) {
        unsigned long long v = 0;
        CHECK(MPI_T_pvar_readreset(pvars, handles[i], &v) == MPI_SUCCESS, "read %s", counters[i]);
        *(i == REMOTE ? remote : local) += v;
    }
}

/* Whether rank peer of c shares this rank's (simulated) node. */
static int same_node(MPI_Comm c, int peer)
{
    MPI_Comm node;
    CHECK(MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS,
          "split_type");
    MPI_Group g, ng;
    MPI_Comm_group(c, &g);
    MPI_Comm_group(node, &ng);
    int there = MPI_UNDEFINED;
    MPI_Group_translate_ranks(g, 1, &peer, ng, &there);
    MPI_Group_free(&g);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
    return there != MPI_UNDEFINED;
}

/* The arrival: in each pair (2k, 2k+1) of c, the even rank posts a receive from the odd
 * one and enters the constructor, the odd one sends synchronously, then enters it. */
static void arrival(MPI_Session s, MPI_Comm c, int which)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int peer = rank ^ 1, paired = peer < size, got = -1, mine = rank * 5 + which;
    MPI_Request q = MPI_REQUEST_NULL;
    if (paired && rank % 2 == 0)
        CHECK(MPI_Irecv(&got, 1, MPI_INT, peer, 40 + which, c, &q) == MPI_SUCCESS, "Irecv");
    if (paired && rank % 2 == 1)
        CHECK(MPI_Ssend(&mine, 1, MPI_INT, peer, 40 + which, c) == MPI_SUCCESS, "Ssend");
    MPI_Group all;
    CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &all) == MPI_SUCCESS, "group");
    MPI_Comm made = MPI_COMM_NULL;
    if (which == 0) {
        CHECK(MPI_Comm_create_from_group(all, "org.hmpi.test.arrival", MPI_INFO_NULL,
                                         MPI_ERRORS_RETURN, &made) == MPI_SUCCESS,
              "create_from_group");
        traffic(made, 50);
    } else if (which == 1) {
        CHECK(MPI_Comm_create_group(c, all, 7, &made) == MPI_SUCCESS, "create_group");
        traffic(made, 51);
    } else if (size > 1) {
        /* The even ranks and the odd ones, each group's lowest its leader. */
        MPI_Group mine_g, other_g;
        int evens[1][3] = {{0, size - 1, 2}}, odds[1][3] = {{1, size - 1, 2}};
        MPI_Group_range_incl(all, 1, rank % 2 ? odds : evens, &mine_g);
        MPI_Group_range_incl(all, 1, rank % 2 ? evens : odds, &other_g);
        CHECK(MPI_Intercomm_create_from_groups(mine_g, 0, other_g, 0, "org.hmpi.test.inter",
                                               MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                               &made) == MPI_SUCCESS,
              "intercomm_create_from_groups");
        int remote = 0, x = rank, y = -1;
        MPI_Comm_remote_size(made, &remote);
        CHECK(remote == (rank % 2 ? (size + 1) / 2 : size / 2), "remote size %d", remote);
        /* Leader to leader, across. */
        int lr;
        MPI_Comm_rank(made, &lr);
        if (lr == 0)
            CHECK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 3, &y, 1, MPI_INT, 0, 3, made,
                               MPI_STATUS_IGNORE) == MPI_SUCCESS &&
                      y == (rank % 2 ? 0 : 1),
                  "across the intercommunicator: %d", y);
        MPI_Group_free(&mine_g);
        MPI_Group_free(&other_g);
    }
    MPI_Group_free(&all);
    if (q != MPI_REQUEST_NULL) {
        CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Wait");
        CHECK(got == peer * 5 + which, "arrival %d: got %d", which, got);
    }
    if (made != MPI_COMM_NULL)
        MPI_Comm_free(&made);
}

/* OPI_Give and OPI_Take of a buffer around the ring of c, its bytes checked. */
static void opi_ring(MPI_Comm c, int active)
{
    int rc = OPI_Comm_enable(c), cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (!active) {
        CHECK(cls == MPI_ERR_OTHER, "OPI_Comm_enable without HMPI under sessions: class %d", cls);
        return;
    }
    CHECK(rc == MPI_SUCCESS, "OPI_Comm_enable: class %d", cls);
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    enum { N = 65536 };
    unsigned char *p = NULL, *q = NULL;
    CHECK(OPI_Alloc((void **)&p, N) == MPI_SUCCESS && p, "OPI_Alloc");
    for (int i = 0; i < N; i++)
        p[i] = (unsigned char)(rank * 11 + i);
    CHECK(OPI_Give((void **)&p, N, MPI_BYTE, (rank + 1) % size, 5, c) == MPI_SUCCESS && !p,
          "OPI_Give");
    int prev = (rank + size - 1) % size;
    CHECK(OPI_Take((void **)&q, N, MPI_BYTE, prev, 5, c, MPI_STATUS_IGNORE) == MPI_SUCCESS && q,
          "OPI_Take");
    for (int i = 0; i < N; i++)
        CHECK(q[i] == (unsigned char)(prev * 11 + i), "OPI byte %d: %d", i, q[i]);
    CHECK(OPI_Free((void **)&q) == MPI_SUCCESS, "OPI_Free");
}

int main(void)
{
    const char *d = getenv("HMPI_DISABLE");
    int active = !(d && strcmp(d, "0") != 0);
    int *early = malloc(sizeof(int) * EARLY);
    CHECK(early, "out of memory");
    for (int i = 0; i < EARLY; i++)
        early[i] = i * 7;

    MPI_Session s;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "init");
    CHECK(HMPI_Active() == active, "HMPI_Active() is %d under sessions", HMPI_Active());
    CHECK(!HMPI_Is_shared(early), "memory allocated before the first init is shared");
    int *late = malloc(sizeof(int) * EARLY);
    CHECK(late, "out of memory");
    CHECK(HMPI_Is_shared(late) == active, "memory allocated after it: shared %d",
          HMPI_Is_shared(late));
    MPI_Comm c = comm_of(s, "mpi://WORLD", "org.hmpi.test.hmpi");
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* Every small message counted by HMPI, local or remote as the peer is. */
    counters_start();
    unsigned long long local, remote;
    counters_read(&local, &remote);
    for (int i = 0; i < SMALL; i++) {
        long out = rank * 1000L + i, in = -1;
        CHECK(MPI_Sendrecv(&out, 1, MPI_LONG, next, i, &in, 1, MPI_LONG, prev, i, c,
                           MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "Sendrecv");
        CHECK(in == prev * 1000L + i, "message %d: %ld", i, in);
    }
    counters_read(&local, &remote);
    int near = same_node(c, next);
    unsigned long long want = active ? SMALL : 0;
    CHECK(local == (near ? want : 0) && remote == (near ? 0 : want),
          "%d small messages to rank %d (%s): HMPI counted %llu local, %llu remote", SMALL, next,
          near ? "this node" : "another node", local, remote);

    /* The early buffer: sent (bounced or read across, not shared), received into shared
     * memory, and back into it; freed after the init. */
    CHECK(MPI_Sendrecv(early, EARLY, MPI_INT, next, 1, late, EARLY, MPI_INT, prev, 1, c,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "Sendrecv early");
    for (int i = 0; i < EARLY; i++)
        CHECK(late[i] == i * 7, "early element %d: %d", i, late[i]);
    memset(early, 0, sizeof(int) * EARLY);
    CHECK(MPI_Sendrecv(late, EARLY, MPI_INT, next, 2, early, EARLY, MPI_INT, prev, 2, c,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "Sendrecv late");
    for (int i = 0; i < EARLY; i++)
        CHECK(early[i] == i * 7, "back element %d: %d", i, early[i]);
    counters_read(&local, &remote);
    CHECK(local + remote == (active ? 2 : 0), "the two large messages: %llu counted",
          local + remote);
    free(early);
    free(late);

    /* The collectives and a window on the communicator are HMPI's too. */
    for (int i = 0; i < NOTHERS; i++)
        other_read(i);
    for (int i = 0; i < ALLREDUCES; i++) {
        long v = rank + i, sum = 0;
        CHECK(MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, c) == MPI_SUCCESS, "Allreduce");
        CHECK(sum == (long)size * (size - 1) / 2 + (long)size * i, "sum %ld", sum);
    }
    CHECK(other_read(0) == (unsigned long long)(active ? ALLREDUCES : 0),
          "HMPI did %llu of %d allreduces", other_read(0), ALLREDUCES);
    int *base, one = rank + 1;
    MPI_Win win;
    CHECK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, c, &base, &win) == MPI_SUCCESS,
          "Win_allocate");
    *base = 0;
    MPI_Win_fence(0, win);
    CHECK(MPI_Put(&one, 1, MPI_INT, next, 0, 1, MPI_INT, win) == MPI_SUCCESS, "Put");
    MPI_Win_fence(0, win);
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
    int put_known = active; /* MPICH 4.0.2 alone puts one int into the wrong window here */
#else
    int put_known = 1;
#endif
    CHECK(!put_known || *base == prev + 1, "put: %d", *base);
    MPI_Win_free(&win);
    unsigned long long wins = other_read(1), puts_local = other_read(2),
                       puts_remote = other_read(3);
    CHECK(wins == (unsigned long long)active, "HMPI accelerates %llu windows", wins);
    CHECK(puts_local == (unsigned long long)(active && near) &&
              puts_remote == (unsigned long long)(active && !near),
          "the put to rank %d: %llu local, %llu remote", next, puts_local, puts_remote);

    /* Open MPI 5.0.7 alone hangs here: its MPI_Comm_create_from_group does not match
     * the receive a peer's MPI_Ssend waits for. HMPI's arrival lets it through. */
#ifdef OPEN_MPI
    if (active)
#endif
        for (int which = 0; which < 3; which++)
            arrival(s, c, which);
    opi_ring(c, active);

    for (int i = 0; i < NCOUNTERS; i++)
        MPI_T_pvar_handle_free(pvars, &handles[i]);
    for (int i = 0; i < NOTHERS; i++)
        MPI_T_pvar_handle_free(pvars, &other_handles[i]);
    MPI_T_pvar_session_free(&pvars);
    MPI_T_finalize();
    MPI_Comm_free(&c);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "finalize");
    if (rank == 0)
        printf("sessions_hmpi: ok\n");
    return 0;
}
