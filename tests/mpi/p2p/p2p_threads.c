/* p2p_threads.c: point-to-point from several threads. Asks MPI_THREAD_MULTIPLE
 * (or the level given by --level=funneled|serialized|multiple). With MULTIPLE, three
 * threads per rank exchange messages at once: two on MPI_COMM_WORLD with distinct tags
 * (one with MPI_ANY_SOURCE, one with Mprobe/Mrecv on the side) and one on a dup'ed
 * communicator with the first one's tag and MPI_ANY_TAG. At any level of at least
 * FUNNELED, the main thread communicates while another thread allocates, frees and
 * computes without MPI. */
#include "../p2p_common.h"

#include <pthread.h>

#define SEED 0x7EADull
#define ITERS 40

static int rank, nranks, right, left;
static const size_t sizes[4] = {8, 300, 10000, 70000};

typedef struct {
    int role, tag;
    MPI_Comm comm;
    long messages;
} role_t;

static void *play(void *arg)
{
    role_t *r = arg;
    for (int it = 0; it < ITERS; it++) {
        size_t n = sizes[(it + r->role) % 4];
        uint64_t idx = (uint64_t)it * 3 + (uint64_t)r->role;
        unsigned char *s = malloc(n), *b = malloc(n);
        CHECK(s && b, "role %d: out of memory", r->role);
        p2p_fill(s, n, p2p_key(rank, r->tag, idx, SEED));
        MPI_Request rq[2];
        MPI_Status st;
        int src = r->role == 1 ? MPI_ANY_SOURCE : left, tag = r->role == 2 ? MPI_ANY_TAG : r->tag;
        MPI_Irecv(b, (int)n, MPI_BYTE, src, tag, r->comm, &rq[0]);
        MPI_Isend(s, (int)n, MPI_BYTE, right, r->tag, r->comm, &rq[1]);
        if (it % 3 == 0) {
            MPI_Status sts[2];
            MPI_Waitall(2, rq, sts);
            st = sts[0];
        } else if (it % 3 == 1) {
            MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
            MPI_Wait(&rq[0], &st);
        } else {
            for (int flag = 0; !flag;) {
                MPI_Test(&rq[0], &flag, &st);
                if (!flag)
                    p2p_nap();
            }
            MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
        }
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == r->tag && p2p_count(&st, MPI_BYTE) == (int)n,
              "thread role %d iteration %d: status %d/%d/%d, expected %d/%d/%zu", r->role, it,
              st.MPI_SOURCE, st.MPI_TAG, p2p_count(&st, MPI_BYTE), left, r->tag, n);
        P2P_CHECK_DATA(b, n, p2p_key(left, r->tag, idx, SEED),
                       "thread role %d iteration %d (%zu B)", r->role, it, n);
        r->messages++;
        if (r->role == 1) { /* requests to and from MPI_PROC_NULL beside the others' */
            MPI_Request nq[2];
            MPI_Status ns[2];
            MPI_Isend(s, (int)n, MPI_BYTE, MPI_PROC_NULL, r->tag, r->comm, &nq[0]);
            MPI_Irecv(b, (int)n, MPI_BYTE, MPI_PROC_NULL, r->tag, r->comm, &nq[1]);
            MPI_Waitall(2, nq, ns);
            CHECK(nq[0] == MPI_REQUEST_NULL && nq[1] == MPI_REQUEST_NULL &&
                      ns[1].MPI_SOURCE == MPI_PROC_NULL && ns[1].MPI_TAG == MPI_ANY_TAG &&
                      p2p_count(&ns[1], MPI_BYTE) == 0,
                  "thread role 1 iteration %d: MPI_PROC_NULL receive status %d/%d/%d", it,
                  ns[1].MPI_SOURCE, ns[1].MPI_TAG, p2p_count(&ns[1], MPI_BYTE));
        }
        if (r->role == 0 && it % 10 == 0) { /* a matched probe beside the stream */
            int v = rank * 1000 + it, got = -1;
            MPI_Message msg;
            MPI_Request sq;
            MPI_Isend(&v, 1, MPI_INT, right, r->tag + 2, r->comm, &sq);
            MPI_Mprobe(MPI_ANY_SOURCE, r->tag + 2, r->comm, &msg, &st);
            MPI_Mrecv(&got, 1, MPI_INT, &msg, &st);
            MPI_Wait(&sq, MPI_STATUS_IGNORE);
            CHECK(got == left * 1000 + it && st.MPI_SOURCE == left,
                  "thread role 0: Mprobe/Mrecv got %d from %d", got, st.MPI_SOURCE);
            r->messages++;
        }
        free(s);
        free(b);
    }
    return NULL;
}

/* No MPI in here: allocation and arithmetic beside the main thread's traffic. */
typedef struct {
    int stop; /* set by the main thread, read with atomics */
    long rounds;
} busy_t;

static void *busy(void *arg)
{
    busy_t *w = arg;
    p2p_rng_t g;
    p2p_rng_init(&g, SEED, 77 + (uint64_t)rank);
    unsigned char *keep[16] = {0};
    size_t len[16] = {0};
    while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE) || w->rounds < 100) {
        int i = (int)p2p_rng_below(&g, 16);
        if (keep[i]) {
            P2P_CHECK_DATA(keep[i], len[i], p2p_key(rank, i, len[i], SEED),
                           "funneled: the worker's block %d (%zu B) changed", i, len[i]);
            free(keep[i]);
        }
        len[i] = (size_t)1 << p2p_rng_below(&g, 18);
        keep[i] = malloc(len[i]);
        CHECK(keep[i], "worker: out of memory");
        p2p_fill(keep[i], len[i], p2p_key(rank, i, len[i], SEED));
        w->rounds++;
    }
    for (int i = 0; i < 16; i++)
        free(keep[i]);
    return NULL;
}

static void funneled(void)
{
    busy_t w = {0, 0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, busy, &w) == 0, "pthread_create failed");
    for (int it = 0; it < 40; it++) {
        size_t n = sizes[it % 4];
        unsigned char *s = malloc(n), *b = malloc(n);
        p2p_fill(s, n, p2p_key(rank, 50, (uint64_t)it, SEED));
        MPI_Request rq[2];
        MPI_Irecv(b, (int)n, MPI_BYTE, left, 50, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(s, (int)n, MPI_BYTE, right, 50, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        P2P_CHECK_DATA(b, n, p2p_key(left, 50, (uint64_t)it, SEED), "funneled iteration %d", it);
        free(s);
        free(b);
    }
    __atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
    pthread_join(th, NULL);
}

int main(int argc, char **argv)
{
    int want = MPI_THREAD_MULTIPLE, provided = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--level=funneled") == 0)
            want = MPI_THREAD_FUNNELED;
        else if (strcmp(argv[i], "--level=serialized") == 0)
            want = MPI_THREAD_SERIALIZED;
    }
    MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    double t0 = MPI_Wtime();
    right = (rank + 1) % nranks;
    left = (rank - 1 + nranks) % nranks;
    CHECK(provided >= MPI_THREAD_FUNNELED && provided <= MPI_THREAD_MULTIPLE,
          "MPI_Init_thread provided %d, below MPI_THREAD_FUNNELED", provided);
    int level = -1, is_main = 0;
    MPI_Query_thread(&level);
    MPI_Is_thread_main(&is_main);
    CHECK(level == provided && is_main, "MPI_Query_thread %d (provided %d), main %d", level,
          provided, is_main);

    long messages = 0;
    if (provided == MPI_THREAD_MULTIPLE) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        role_t roles[3] = {{0, 7, MPI_COMM_WORLD, 0}, {1, 8, MPI_COMM_WORLD, 0}, {2, 7, dup, 0}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            CHECK(pthread_create(&th[i], NULL, play, &roles[i + 1]) == 0, "pthread_create failed");
        play(&roles[0]);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        for (int i = 0; i < 3; i++)
            messages += roles[i].messages;
        MPI_Comm_free(&dup);
    }
    funneled();
    messages += 40;
    long total = 0;
    MPI_Reduce(&messages, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    p2p_barrier_polite(MPI_COMM_WORLD);
    if (rank == 0)
        printf("p2p_threads: OK, thread level %d (asked %d), %ld messages on %d ranks in %.2f s\n",
               provided, want, total, nranks, MPI_Wtime() - t0);
    MPI_Finalize();
    return 0;
}
