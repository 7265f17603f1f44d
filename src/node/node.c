/* node.c: node discovery. The shared-memory communicator of MPI_COMM_WORLD gives the
 * physical node; HMPI_NODE_SIZE=k cuts it into simulated nodes of k consecutive world
 * ranks so the inter-node path can be tested on one machine. */
#include "node.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../heap/heap.h"

#include <stdlib.h>

hmpi_node_t hmpi_node = {.comm = MPI_COMM_NULL};

int hmpi_node_discover(void)
{
    hmpi_node_t *n = &hmpi_node;
    MPI_Comm phys;
    PMPI_Comm_rank(MPI_COMM_WORLD, &n->world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &n->world_size);
    if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, n->world_rank,
                             MPI_INFO_NULL, &phys) != MPI_SUCCESS) {
        hmpi_log_error("MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) failed");
        return -1;
    }
    if (hmpi_knobs.NODE_SIZE > 0) {
        int color = (int)(n->world_rank / hmpi_knobs.NODE_SIZE);
        PMPI_Comm_split(phys, color, n->world_rank, &n->comm);
        PMPI_Comm_free(&phys);
    } else {
        n->comm = phys;
    }
    PMPI_Comm_rank(n->comm, &n->rank);
    PMPI_Comm_size(n->comm, &n->size);

    n->world_of_local = hmpi_heap_malloc(sizeof(int) * (size_t)n->size);
    n->local_of_world = hmpi_heap_malloc(sizeof(int) * (size_t)n->world_size);
    int *leader_of_world = hmpi_heap_malloc(sizeof(int) * (size_t)n->world_size);
    if (!n->world_of_local || !n->local_of_world || !leader_of_world) {
        hmpi_log_error("out of memory for the node tables");
        hmpi_heap_free(leader_of_world);
        return -1;
    }
    PMPI_Allgather(&n->world_rank, 1, MPI_INT, n->world_of_local, 1, MPI_INT, n->comm);
    n->id = n->world_of_local[0];
    for (int i = 1; i < n->size; i++)
        if (n->world_of_local[i] < n->id)
            n->id = n->world_of_local[i];
    for (int w = 0; w < n->world_size; w++)
        n->local_of_world[w] = -1;
    for (int i = 0; i < n->size; i++)
        n->local_of_world[n->world_of_local[i]] = i;

    PMPI_Allgather(&n->id, 1, MPI_INT, leader_of_world, 1, MPI_INT, MPI_COMM_WORLD);
    n->nnodes = 0;
    for (int w = 0; w < n->world_size; w++)
        n->nnodes += leader_of_world[w] == w;
    hmpi_heap_free(leader_of_world);
    return 0;
}

void hmpi_node_release(void)
{
    hmpi_node_t *n = &hmpi_node;
    if (n->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&n->comm);
    hmpi_heap_free(n->world_of_local);
    hmpi_heap_free(n->local_of_world);
    n->world_of_local = n->local_of_world = NULL;
}
