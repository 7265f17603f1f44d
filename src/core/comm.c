/* comm.c: the communicator table: HMPI's state beside each communicator of the MPI
 * below (comm.h), found by handle in a hash table (looked up inline, comm.h);
 * MPI_COMM_WORLD's read inline. Knows nothing of how contexts are agreed (mpi/comm.c,
 * the constructors) and makes no collective call: making a state asks the MPI below
 * local questions only.
 * Threads (MPI_THREAD_MULTIPLE) may construct and free communicators at once while
 * others look theirs up: writers take a lock, and a chain's head is published with a
 * release store after the entry is whole, so a lookup without the lock sees the old
 * chain or the new one. */
#include "comm.h"
#include "../heap/heap.h"
#include "../node/node.h"

#include <pthread.h>

hmpi_comm_t *hmpi_comm_buckets[HMPI_COMM_BUCKETS];
static pthread_mutex_t writers = PTHREAD_MUTEX_INITIALIZER;
hmpi_comm_t *hmpi_comm_world;
int hmpi_comm_starting;

static hmpi_comm_t *make_state(MPI_Comm c, uint32_t ctx)
{
    hmpi_comm_t *s = hmpi_heap_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->handle = c;
    s->ctx = ctx;
    s->refs = 1;
    if (c != MPI_COMM_WORLD && c != MPI_COMM_SELF)
        PMPI_Comm_test_inter(c, &s->inter);
    PMPI_Comm_rank(c, &s->rank);
    /* An intercommunicator's members are its remote group's (comm.h). */
    if (s->inter)
        PMPI_Comm_remote_size(c, &s->size);
    else
        PMPI_Comm_size(c, &s->size);
    s->local_of = hmpi_heap_malloc(sizeof(int) * (size_t)s->size);
    s->rank_of_local = hmpi_heap_malloc(sizeof(int) * (size_t)hmpi_node.size);
    int *mine = hmpi_heap_malloc(sizeof(int) * (size_t)s->size);
    int *inworld = hmpi_heap_malloc(sizeof(int) * (size_t)s->size);
    if (!s->local_of || !s->rank_of_local || !mine || !inworld) {
        hmpi_heap_free(mine);
        hmpi_heap_free(inworld);
        hmpi_heap_free(s->local_of);
        hmpi_heap_free(s->rank_of_local);
        hmpi_heap_free(s);
        return NULL;
    }
    MPI_Group g, wg;
    if (s->inter)
        PMPI_Comm_remote_group(c, &g);
    else
        PMPI_Comm_group(c, &g);
    PMPI_Comm_group(hmpi_node.world, &wg);
    for (int i = 0; i < s->size; i++)
        mine[i] = i;
    PMPI_Group_translate_ranks(g, s->size, mine, wg, inworld);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    for (int l = 0; l < hmpi_node.size; l++)
        s->rank_of_local[l] = -1;
    for (int i = 0; i < s->size; i++) {
        int w = inworld[i];
        int l = (w == MPI_UNDEFINED) ? -1 : hmpi_node.local_of_world[w];
        s->local_of[i] = l;
        if (l >= 0) {
            s->rank_of_local[l] = i;
            s->nlocal++;
        } else {
            s->has_remote = 1;
        }
    }
    hmpi_heap_free(mine);
    hmpi_heap_free(inworld);
    return s;
}

static void insert(hmpi_comm_t *s)
{
    unsigned b = hmpi_comm_bucket_of(s->handle);
    pthread_mutex_lock(&writers);
    s->next = hmpi_comm_buckets[b];
    __atomic_store_n(&hmpi_comm_buckets[b], s, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&writers);
}

int hmpi_comm_add(MPI_Comm c, uint32_t ctx)
{
    hmpi_comm_t *s = make_state(c, ctx);
    if (!s)
        return -1;
    insert(s);
    return 0;
}

void (*hmpi_comm_part_free)(hmpi_comm_t *s);

static void destroy(hmpi_comm_t *s)
{
    if (s->coll && hmpi_comm_part_free)
        hmpi_comm_part_free(s);
    hmpi_heap_free(s->local_of);
    hmpi_heap_free(s->rank_of_local);
    hmpi_heap_free(s->coll); /* (nothing when the part took it) */
    hmpi_heap_free(s);
}

void hmpi_comm_forget(MPI_Comm c)
{
    if (c == MPI_COMM_WORLD || c == MPI_COMM_NULL)
        return;
    hmpi_comm_t *gone = NULL, **pp = &hmpi_comm_buckets[hmpi_comm_bucket_of(c)];
    pthread_mutex_lock(&writers);
    for (; *pp; pp = &(*pp)->next) {
        if ((*pp)->handle == c) {
            gone = *pp;
            __atomic_store_n(pp, gone->next, __ATOMIC_RELEASE);
            break;
        }
    }
    pthread_mutex_unlock(&writers);
    if (gone)
        hmpi_comm_unref(gone);
}

void hmpi_comm_unref(hmpi_comm_t *s)
{
    if (--s->refs == 0)
        destroy(s);
}

int hmpi_comm_world_start(void)
{
    hmpi_comm_t *world = make_state(MPI_COMM_WORLD, 0);
    hmpi_comm_t *self = make_state(MPI_COMM_SELF, 1);
    if (!world || !self) {
        if (world)
            destroy(world);
        if (self)
            destroy(self);
        return -1;
    }
    insert(self);
    hmpi_comm_world = world;
    return 0;
}

void hmpi_comm_world_end(void)
{
    hmpi_comm_t *world = hmpi_comm_world;
    hmpi_comm_world = NULL;
    if (world)
        hmpi_comm_unref(world);
    hmpi_comm_forget(MPI_COMM_SELF);
}

void hmpi_comm_finalize(void)
{
    for (int b = 0; b < HMPI_COMM_BUCKETS; b++) {
        while (hmpi_comm_buckets[b]) {
            hmpi_comm_t *s = hmpi_comm_buckets[b];
            hmpi_comm_buckets[b] = s->next;
            destroy(s);
        }
    }
    if (hmpi_comm_world)
        destroy(hmpi_comm_world);
    hmpi_comm_world = NULL;
}
