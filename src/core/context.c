/* context.c: how the members of a new communicator agree on its matching context, and
 * what every constructor does around the MPI below's call (mpi/comm.c, and OPI's
 * shadows): the arrival before a blocking constructor and the registration after it in
 * the communicator table (comm.c). Contexts, two disjoint ranges:
 *  - below HMPI_CTX_RANGE_BASE: MPI_COMM_WORLD's is 0, MPI_COMM_SELF's 1, and the
 *    communicators HMPI makes for itself while it sets up (OPI's shadow of
 *    MPI_COMM_WORLD) count up from 2, the same in every rank (hmpi_comm_starting: no
 *    agreement).
 *  - from HMPI_CTX_RANGE_BASE, every other one: rank 0 of the new communicator (of the
 *    parent, for MPI_Comm_idup) hands out a context of its own range (hmpi_comm_ctx_new:
 *    its world rank in the high bits, a count below) and the members learn it from a
 *    broadcast over the new communicator (for MPI_Comm_idup once the MPI below's
 *    duplication is complete, mpi/comm.c; for an intercommunicator, rank 0 of one
 *    group and two broadcasts, inter_ctx). Unique in the whole job with no agreement,
 *    so constructors running at once in several threads of a rank never meet (two
 *    communicators made at once by two threads once took the same context from a MAX
 *    over the members' next values), nor idups pending meanwhile.
 * The waits here move the point-to-point engine through the wait hook (shm/wait.h): a
 * member inside the MPI below's blocking constructor would not, and a local peer may be
 * blocked in a synchronous send until it matches. */
#include "comm.h"
#include "../node/node.h"
#include "../shm/wait.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>

static uint32_t next_ctx = 2;       /* set-up's own constructors: one thread */
static _Atomic uint32_t range_next; /* contexts this rank handed out as a rank 0 */

/* Waits for the MPI below's request q, the engine moving meanwhile (a collective's wait,
 * for the statistics). */
static int below_wait(MPI_Request *q)
{
    hmpi_backoff_t b = {.no_park = 1}; /* the MPI below wakes no futex (shm/wait.h) */
    int flag = 0, err;
    while ((err = PMPI_Test(q, &flag, MPI_STATUS_IGNORE)) == MPI_SUCCESS && !flag)
        hmpi_wait_step(&b, 1);
    hmpi_wait_end(&b, HMPI_WAIT_COLL);
    return err;
}

int hmpi_comm_arrive(MPI_Comm comm)
{
    hmpi_comm_t *c = hmpi_node.active && !hmpi_comm_starting ? hmpi_comm_get(comm) : NULL;
    if (!c || !hmpi_comm_below_nb(c))
        return MPI_SUCCESS;
    MPI_Request q;
    int err = PMPI_Ibarrier(comm, &q);
    return err ? err : below_wait(&q);
}

static int world_ranks(MPI_Group g, MPI_Group world, int *w, int *n);

/* The lowest rank in HMPI's world of a member of g, or INT_MAX when none is in it. */
static int lowest_world_rank(MPI_Group g, MPI_Group world)
{
    int size = 0, n = 0, low = INT_MAX;
    PMPI_Group_size(g, &size);
    int *w = malloc(sizeof *w * (size_t)(size > 0 ? size : 1));
    if (w && world_ranks(g, world, w, &n) == MPI_SUCCESS)
        for (int i = 0; i < n; i++)
            if (w[i] != MPI_UNDEFINED && w[i] < low)
                low = w[i];
    free(w);
    return low;
}

/* The context of the new intercommunicator c, agreed by both groups: rank 0 of the
 * leading group (the one holding the lowest rank of HMPI's world, as every member of
 * both sees alike) hands it out; a broadcast over c takes it to the other group, whose
 * rank 0 takes it back to the leading group by a second (a broadcast over an
 * intercommunicator reaches the remote group only). 0 when none: c stays with the MPI
 * below, in every member alike (the below's failure raises in a member by itself). */
static uint32_t inter_ctx(MPI_Comm c)
{
    MPI_Group local, remote, world;
    PMPI_Comm_group(c, &local);
    PMPI_Comm_remote_group(c, &remote);
    PMPI_Comm_group(hmpi_node.world, &world);
    int mine = lowest_world_rank(local, world), theirs = lowest_world_rank(remote, world);
    PMPI_Group_free(&local);
    PMPI_Group_free(&remote);
    PMPI_Group_free(&world);
    if (mine == theirs) /* (no member in HMPI's world) */
        return 0;
    int lead = mine < theirs, rank = 0;
    PMPI_Comm_rank(c, &rank);
    uint32_t ctx = lead && rank == 0 ? hmpi_comm_ctx_new() : 0;
    int to_other = lead ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int back = lead ? 0 : (rank == 0 ? MPI_ROOT : MPI_PROC_NULL);
    MPI_Request q;
    if (PMPI_Ibcast(&ctx, 1, MPI_UINT32_T, to_other, c, &q) != MPI_SUCCESS ||
        below_wait(&q) != MPI_SUCCESS ||
        PMPI_Ibcast(&ctx, 1, MPI_UINT32_T, back, c, &q) != MPI_SUCCESS ||
        below_wait(&q) != MPI_SUCCESS)
        return 0;
    return ctx;
}

int hmpi_comm_register(MPI_Comm c)
{
    if (!hmpi_node.active || c == MPI_COMM_NULL)
        return 0;
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter) {
        /* (HMPI's own constructors at set-up make none) */
        uint32_t ctx = hmpi_comm_starting ? 0 : inter_ctx(c);
        return ctx ? hmpi_comm_add(c, ctx) : -1;
    }
    uint32_t ctx = 0;
    if (hmpi_comm_starting) {
        ctx = next_ctx++;
    } else {
        int rank = 0, size = 0;
        PMPI_Comm_rank(c, &rank);
        PMPI_Comm_size(c, &size);
        if (rank == 0)
            ctx = hmpi_comm_ctx_new();
        MPI_Request q;
        if (size > 1 && /* (one member: nothing to tell anyone) */
            (PMPI_Ibcast(&ctx, 1, MPI_UINT32_T, 0, c, &q) != MPI_SUCCESS ||
             below_wait(&q) != MPI_SUCCESS))
            return -1; /* the below raised it; c stays with the below */
    }
    return ctx ? hmpi_comm_add(c, ctx) : -1;
}

uint32_t hmpi_comm_ctx_new(void)
{
    int wbits = 0;
    while (wbits < 31 && (1u << wbits) < (uint32_t)hmpi_node.world_size)
        wbits++;
    int cbits = 31 - wbits;
    uint32_t n = atomic_fetch_add(&range_next, 1);
    if (cbits <= 0 || n >= (1u << cbits))
        return 0;
    return HMPI_CTX_RANGE_BASE | ((uint32_t)hmpi_node.world_rank << cbits) | n;
}

void hmpi_comm_contexts_reset(void)
{
    next_ctx = 2;
    atomic_store(&range_next, 0);
}

int hmpi_comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    int err = hmpi_comm_arrive(comm);
    if (err)
        return err;
    if (hmpi_comm_starting) { /* MPI_Init's own (OPI's shadow): waits as MPI_Init's do */
        MPI_Request q;
        err = PMPI_Comm_idup(comm, newcomm, &q);
        if (!err)
            err = hmpi_node_below_wait(1, &q);
    } else {
        err = PMPI_Comm_dup(comm, newcomm);
    }
    if (err == MPI_SUCCESS)
        hmpi_comm_register(*newcomm);
    return err;
}

int hmpi_comm_free(MPI_Comm *comm)
{
    if (comm && *comm != MPI_COMM_WORLD && *comm != MPI_COMM_SELF)
        hmpi_comm_forget(*comm);
    return PMPI_Comm_free(comm); /* (the MPI below reports the errors) */
}

/* ---- arrival into a constructor over groups -------------------------------------- */

/* A dissemination barrier among the members, by the MPI below's point-to-point on a
 * private copy of HMPI's world (meet, used for nothing else): the members in world rank
 * order, so that every member numbers them alike whatever order its groups list them in;
 * in round k (of ceil(log2 n)) the member at position i sends an empty message to
 * position i + 2^k and receives one from i - 2^k, modulo n. The tag is the round plus a
 * hash of the construction's key times 32: constructions that run at once in different
 * threads meet apart. Two with equal hashes only meet a little early: every (source, tag)
 * pair carries as many messages in one as in the other, so none is left over and
 * neither hangs. Successive constructions over the same members are told apart by the
 * order of their messages (the MPI below keeps it per source and tag), since the
 * members construct in one order. Cost: ceil(log2 n) message latencies of the MPI
 * below, n log n for sorting the members. */

enum { MEET_ROUNDS = 32, MEET_KEYS = 1024 }; /* tags below 32768, MPI_TAG_UB's least */

static MPI_Comm meet = MPI_COMM_NULL;

int hmpi_comm_meet_start(void)
{
    MPI_Request q;
    if (hmpi_node.world_size <= 1) /* nobody to meet */
        return 0;
    if (PMPI_Comm_idup(hmpi_node.world, &meet, &q) != MPI_SUCCESS ||
        hmpi_node_below_wait(1, &q) != MPI_SUCCESS)
        return -1;
    return 0;
}

void hmpi_comm_meet_end(void)
{
    if (meet != MPI_COMM_NULL)
        PMPI_Comm_free(&meet);
}

static uint32_t meet_key(const char *name, int key)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *p = name; p && *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    h = (h ^ (uint32_t)key) * 16777619u;
    return h % MEET_KEYS;
}

static int by_rank(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Appends the world ranks of g's members to w[*n...]; returns the below's error code. */
static int world_ranks(MPI_Group g, MPI_Group world, int *w, int *n)
{
    int size = 0, err = PMPI_Group_size(g, &size);
    int *in = malloc(sizeof *in * (size_t)(size > 0 ? size : 1));
    if (!in)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < size; i++)
        in[i] = i;
    if (!err)
        err = PMPI_Group_translate_ranks(g, size, in, world, w + *n);
    free(in);
    if (!err)
        *n += size;
    return err;
}

int hmpi_comm_arrive_group(MPI_Group a, MPI_Group b, const char *name, int key)
{
    if (!hmpi_node.active || hmpi_comm_starting || meet == MPI_COMM_NULL)
        return MPI_SUCCESS;
    int sa = 0, sb = 0;
    if (PMPI_Group_size(a, &sa) != MPI_SUCCESS ||
        (b != MPI_GROUP_NULL && PMPI_Group_size(b, &sb) != MPI_SUCCESS))
        return MPI_SUCCESS; /* a bad group: the MPI below's constructor raises it */
    int *w = malloc(sizeof *w * (size_t)(sa + sb + 1));
    if (!w)
        return MPI_ERR_NO_MEM;
    MPI_Group world;
    int n = 0, err = PMPI_Comm_group(meet, &world);
    if (!err)
        err = world_ranks(a, world, w, &n);
    if (!err && b != MPI_GROUP_NULL)
        err = world_ranks(b, world, w, &n);
    PMPI_Group_free(&world);
    qsort(w, (size_t)n, sizeof *w, by_rank);
    int m = 0, me = -1; /* the members once each (a and b may share some), and my place */
    for (int i = 0; i < n; i++) {
        if (w[i] == MPI_UNDEFINED || (m > 0 && w[m - 1] == w[i]))
            continue;
        if (w[i] == hmpi_node.world_rank)
            me = m;
        w[m++] = w[i];
    }
    int tag0 = (int)meet_key(name, key) * MEET_ROUNDS;
    for (int k = 0, step = 1; !err && me >= 0 && step < m && k < MEET_ROUNDS; k++, step *= 2) {
        MPI_Request q[2];
        err = PMPI_Irecv(NULL, 0, MPI_BYTE, w[(me - step + m) % m], tag0 + k, meet, &q[0]);
        if (!err && (err = PMPI_Isend(NULL, 0, MPI_BYTE, w[(me + step) % m], tag0 + k, meet,
                                      &q[1])) != MPI_SUCCESS) {
            PMPI_Cancel(&q[0]);
            PMPI_Request_free(&q[0]);
        }
        for (int i = 0; i < 2 && !err; i++)
            err = below_wait(&q[i]);
    }
    free(w);
    return err;
}
