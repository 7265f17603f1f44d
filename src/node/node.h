/* node.h: who shares this node. Built once at MPI_Init from
 * MPI_COMM_TYPE_SHARED, then split by HMPI_NODE_SIZE into simulated nodes; local
 * ranks need not be numbered contiguously in MPI_COMM_WORLD. */
#ifndef HMPI_NODE_H
#define HMPI_NODE_H

#include <mpi.h>

typedef struct {
    int active;           /* 1: HMPI accelerates this job; 0: pure pass-through */
    MPI_Comm comm;        /* the ranks of this (possibly simulated) node */
    int rank, size;       /* this rank in comm: its local rank and slice */
    int world_rank, world_size;
    int id;               /* the node's number: its lowest world rank */
    int *world_of_local;  /* [size]: world rank of each local rank */
    int *local_of_world;  /* [world_size]: local rank, or -1 off this node */
    int nnodes;           /* nodes in the job */
} hmpi_node_t;

extern hmpi_node_t hmpi_node;

/* Finds the node's ranks (collective over MPI_COMM_WORLD). Returns 0 or -1 (logged). */
int hmpi_node_discover(void);

/* Agrees with the node's ranks on one region, maps it at one address, unlinks its
 * file and attaches this rank's slice to the heap (collective over the node).
 * Returns 0, or -1 when the node must pass through (every local rank gets the same
 * answer, and the first to know has logged why). */
int hmpi_node_region_setup(void);

/* Frees what discovery made (not the region: it stays mapped for the process). */
void hmpi_node_release(void);

#endif
