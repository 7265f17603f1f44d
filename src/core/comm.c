/* comm.c: the communicator table: HMPI's state beside each intracommunicator of the MPI
 * below (comm.h), found by handle in a hash table; MPI_COMM_WORLD's read inline. Knows
 * nothing of how contexts are agreed (mpi/comm.c, the constructors) and makes no
 * collective call: making a state asks the MPI below local questions only. */
#include "comm.h"
#include "../heap/heap.h"
#include "../node/node.h"

enum { NBUCKETS = 256 };

static hmpi_comm_t *buckets[NBUCKETS];
hmpi_comm_t *hmpi_comm_world;
int hmpi_comm_starting;

static unsigned bucket_of(MPI_Comm c)
{
    uintptr_t v = (uintptr_t)c;
    v ^= v >> 17;
    v *= 0x9E3779B97F4A7C15ULL;
    return (unsigned)(v >> 56) % NBUCKETS;
}

hmpi_comm_t *hmpi_comm_find(MPI_Comm c)
{
    for (hmpi_comm_t *s = buckets[bucket_of(c)]; s; s = s->next)
        if (s->handle == c)
            return s;
    return NULL;
}

static hmpi_comm_t *make_state(MPI_Comm c, uint32_t ctx)
{
    hmpi_comm_t *s = hmpi_heap_calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->handle = c;
    s->ctx = ctx;
    s->refs = 1;
    PMPI_Comm_rank(c, &s->rank);
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
    PMPI_Comm_group(c, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &wg);
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
    unsigned b = bucket_of(s->handle);
    s->next = buckets[b];
    buckets[b] = s;
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
    hmpi_comm_t **pp = &buckets[bucket_of(c)];
    for (; *pp; pp = &(*pp)->next) {
        if ((*pp)->handle == c) {
            hmpi_comm_t *s = *pp;
            *pp = s->next;
            hmpi_comm_unref(s);
            return;
        }
    }
}

void hmpi_comm_unref(hmpi_comm_t *s)
{
    if (--s->refs == 0)
        destroy(s);
}

int hmpi_comm_init(void)
{
    hmpi_comm_world = make_state(MPI_COMM_WORLD, 0);
    hmpi_comm_t *self = make_state(MPI_COMM_SELF, 1);
    if (!hmpi_comm_world || !self)
        return -1;
    insert(self);
    return 0;
}

void hmpi_comm_finalize(void)
{
    for (int b = 0; b < NBUCKETS; b++) {
        while (buckets[b]) {
            hmpi_comm_t *s = buckets[b];
            buckets[b] = s->next;
            destroy(s);
        }
    }
    if (hmpi_comm_world)
        destroy(hmpi_comm_world);
    hmpi_comm_world = NULL;
}
