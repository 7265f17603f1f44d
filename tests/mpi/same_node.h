/* same_node.h: whether a rank of MPI_COMM_WORLD shares this rank's node, as
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) says (under HMPI_NODE_SIZE, the simulated
 * node). For tests whose checks differ where the MPI below carries the traffic. */
#ifndef HMPI_TEST_SAME_NODE_H
#define HMPI_TEST_SAME_NODE_H

#include <mpi.h>

static inline int same_node(int world_rank)
{
    MPI_Comm node;
    MPI_Group wg, ng;
    int in = MPI_UNDEFINED;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    MPI_Group_translate_ranks(wg, 1, &world_rank, ng, &in);
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
    return in != MPI_UNDEFINED;
}

#endif
