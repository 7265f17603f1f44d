/* context.c: how the members of a new communicator agree on its matching context, and
 * what every constructor does around the MPI below's call (mpi/comm.c, and OPI's
 * shadows): the arrival before a blocking constructor and the registration after it in
 * the communicator table (comm.c). Contexts, two disjoint ranges:
 *  - blocking constructors (below HMPI_CTX_IDUP_BASE): each rank counts up; a new
 *    communicator takes the MAX of its members' next values (an allreduce over it), so
 *    all members agree and no two communicators of one rank share a context.
 *    MPI_COMM_WORLD is 0 and MPI_COMM_SELF 1.
 *  - nonblocking ones (MPI_Comm_idup, from HMPI_CTX_IDUP_BASE): rank 0 of the parent
 *    hands out a context of its own range (hmpi_comm_idup_ctx) and the members learn it
 *    from a broadcast over the new communicator (mpi/comm.c). Unique in the whole job,
 *    so several pending at once, or blocking ones made meanwhile, never meet it.
 * The waits here move the point-to-point engine through the wait hook (shm/wait.h): a
 * member inside the MPI below's blocking constructor would not, and a local peer may be
 * blocked in a synchronous send until it matches. */
#include "comm.h"
#include "../node/node.h"
#include "../shm/wait.h"

#include <stdatomic.h>

static uint32_t next_ctx = 2;
static _Atomic uint32_t idup_next; /* contexts this rank handed out as a parent's rank 0 */

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

int hmpi_comm_register(MPI_Comm c)
{
    if (!hmpi_node.active || c == MPI_COMM_NULL)
        return 0;
    int inter = 0;
    PMPI_Comm_test_inter(c, &inter);
    if (inter)
        return 0;
    uint32_t ctx = next_ctx; /* at MPI_Init the same in every rank */
    MPI_Request q;
    if (!hmpi_comm_starting &&
        (PMPI_Iallreduce(&next_ctx, &ctx, 1, MPI_UINT32_T, MPI_MAX, c, &q) != MPI_SUCCESS ||
         below_wait(&q) != MPI_SUCCESS))
        return -1; /* the below raised it; c stays with the below */
    next_ctx = ctx + 1;
    if (ctx >= HMPI_CTX_IDUP_BASE)
        return -1; /* the blocking range is used up (2^31 constructors) */
    return hmpi_comm_add(c, ctx);
}

uint32_t hmpi_comm_idup_ctx(void)
{
    int wbits = 0;
    while (wbits < 31 && (1u << wbits) < (uint32_t)hmpi_node.world_size)
        wbits++;
    int cbits = 31 - wbits;
    uint32_t n = atomic_fetch_add(&idup_next, 1);
    if (cbits <= 0 || n >= (1u << cbits))
        return 0;
    return HMPI_CTX_IDUP_BASE | ((uint32_t)hmpi_node.world_rank << cbits) | n;
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
