/* neighbor.c: the blocking neighbourhood collectives of MPI 4's large counts (the _c
 * forms; the int ones are coll/neighbor.c's, by direct access on a node). The MPI below
 * carries them. Called blocking, the MPI below would wait for the neighbours without
 * moving HMPI's engine, so a local peer's synchronous send to a receive this rank posted
 * before the call hung until the call returned, forever when that peer must first join
 * it (MPI-4.1 §3.5 says it completes). So each goes as its nonblocking form, waited for
 * with HMPI's progress (hmpi_p2p_below_wait), over a communicator HMPI knows: every member
 * alike, since a blocking and a nonblocking collective do not match. Elsewhere, and where
 * Open MPI's pending MPI_Comm_idup forbids nonblocking collectives HMPI did not see coming
 * (p2p.h, hmpi_p2p_below_nb), the blocking call. No algorithm here. */
#include "../core/comm.h"
#include "../core/errors.h"
#include "../node/node.h"
#include "../p2p/p2p.h"

#if MPI_VERSION >= 4 /* (Open MPI 4.1 and 5.0 have no _c forms) */

/* Whether the blocking collective on comm goes as its nonblocking form (every member of
 * comm answers alike). */
static int nonblocking(MPI_Comm comm)
{
    hmpi_comm_t *c = hmpi_node.active ? hmpi_comm_get(comm) : NULL;
    return c && hmpi_comm_below_nb(c);
}

/* The nonblocking form started with err and request q: waited for. */
static int waited(int err, MPI_Request *q)
{
    return err != MPI_SUCCESS ? err : hmpi_p2p_below_wait(q, MPI_STATUS_IGNORE, HMPI_WAIT_COLL);
}

/* One entry point: MPI_NAME(PARAMS) calls the MPI below's INAME with ARGS and a request q,
 * and waits for it, or NAME with ARGS. */
#define WITH_Q(...) (__VA_ARGS__, &q)
#define NEIGHBOR(NAME, INAME, PARAMS, ARGS)          \
    int MPI_##NAME PARAMS                            \
    {                                                \
        HMPI_ENTER("MPI_" #NAME);                    \
        if (!nonblocking(comm))                      \
            return PMPI_##NAME ARGS;                 \
        MPI_Request q;                               \
        return waited(PMPI_##INAME WITH_Q ARGS, &q); \
    }                                                \
    HMPI_PMPI(NAME)

NEIGHBOR(Neighbor_allgather_c, Ineighbor_allgather_c,
         (const void *sb, MPI_Count sc, MPI_Datatype st, void *rb, MPI_Count rc, MPI_Datatype rt,
          MPI_Comm comm),
         (sb, sc, st, rb, rc, rt, comm))
NEIGHBOR(Neighbor_allgatherv_c, Ineighbor_allgatherv_c,
         (const void *sb, MPI_Count sc, MPI_Datatype st, void *rb, const MPI_Count rc[],
          const MPI_Aint rd[], MPI_Datatype rt, MPI_Comm comm),
         (sb, sc, st, rb, rc, rd, rt, comm))
NEIGHBOR(Neighbor_alltoall_c, Ineighbor_alltoall_c,
         (const void *sb, MPI_Count sc, MPI_Datatype st, void *rb, MPI_Count rc, MPI_Datatype rt,
          MPI_Comm comm),
         (sb, sc, st, rb, rc, rt, comm))
NEIGHBOR(Neighbor_alltoallv_c, Ineighbor_alltoallv_c,
         (const void *sb, const MPI_Count sc[], const MPI_Aint sd[], MPI_Datatype st, void *rb,
          const MPI_Count rc[], const MPI_Aint rd[], MPI_Datatype rt, MPI_Comm comm),
         (sb, sc, sd, st, rb, rc, rd, rt, comm))
NEIGHBOR(Neighbor_alltoallw_c, Ineighbor_alltoallw_c,
         (const void *sb, const MPI_Count sc[], const MPI_Aint sd[], const MPI_Datatype st[],
          void *rb, const MPI_Count rc[], const MPI_Aint rd[], const MPI_Datatype rt[],
          MPI_Comm comm),
         (sb, sc, sd, st, rb, rc, rd, rt, comm))
#endif
