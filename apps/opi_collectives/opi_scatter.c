/* opi_scatter.c: the scatter of the OPI paper, §3.5 (Figure 9), as an example
 * that checks itself. Instead of one send buffer cut in parts (MPI_Scatter), the root
 * packs one OPI buffer per rank and gives each away with OPI_Igive; every rank takes
 * its own part, unpacks it and frees it into its own pool -- no rank waits for any
 * other to be done with a shared buffer. Within a node the parts are never copied.
 *   mpiexec -n 4 ./opi_scatter [count]        (prints "opi_scatter: ok" on success) */
#include "hmpi.h"

#include <stdio.h>
#include <stdlib.h>

enum { SCATTER_TAG = 17 };

/* Scatters count doubles per rank from root's pack(i, k) into recv on every rank. */
static int opi_scatter(double (*pack)(int rank, int k), double *recv, int count, int root,
                       MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Request *gives = NULL;
    if (rank == root) {
        gives = malloc(sizeof *gives * (size_t)size);
        for (int i = 0; i < size; i++) {
            double *buf;
            OPI_Alloc((void **)&buf, sizeof(double) * (size_t)count); /* allocate... */
            for (int k = 0; k < count; k++)                           /* ...pack... */
                buf[k] = pack(i, k);
            OPI_Igive((void **)&buf, count, MPI_DOUBLE, i, SCATTER_TAG, comm, &gives[i]);
        } /* ...and pass it */
    }
    double *mine;
    MPI_Request take;
    OPI_Itake((void **)&mine, count, MPI_DOUBLE, root, SCATTER_TAG, comm, &take);
    int err = MPI_Wait(&take, MPI_STATUS_IGNORE); /* ownership (or the data) arrived */
    for (int k = 0; k < count; k++)               /* unpack */
        recv[k] = mine[k];
    OPI_Free((void **)&mine); /* back to this rank's pool */
    if (rank == root) {
        for (int i = 0; i < size; i++) /* complete already: the library holds the parts */
            MPI_Wait(&gives[i], MPI_STATUS_IGNORE);
        free(gives);
    }
    return err;
}

static double value(int rank, int k) { return rank * 1e6 + k * 0.5; }

static int check(const double *recv, int count, int rank, const char *where)
{
    for (int k = 0; k < count; k++)
        if (recv[k] != value(rank, k)) {
            fprintf(stderr, "opi_scatter: %s: rank %d element %d is %g, expected %g\n", where, rank,
                    k, recv[k], value(rank, k));
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int count = argc > 1 ? atoi(argv[1]) : 10000;
    double *recv = malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));

    /* Every rank in turn is the root, over the whole job... */
    for (int root = 0; root < size; root++) {
        bad |= opi_scatter(value, recv, count, root, MPI_COMM_WORLD) != MPI_SUCCESS;
        bad |= check(recv, count, rank, "MPI_COMM_WORLD");
    }
    /* ...and within each node, as the paper's example does (shared_mem_comm). Any
     * communicator but MPI_COMM_WORLD and MPI_COMM_SELF is enabled for OPI first. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    OPI_Comm_enable(node);
    int nrank;
    MPI_Comm_rank(node, &nrank);
    for (int it = 0; it < 20; it++) {
        bad |= opi_scatter(value, recv, count / 4, 0, node) != MPI_SUCCESS;
        bad |= check(recv, count / 4, nrank, "node communicator");
    }
    MPI_Comm_free(&node);

    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (rank == 0)
        printf("opi_scatter: %s (%d ranks, %d doubles each, HMPI %s)\n", any ? "FAILED" : "ok",
               size, count, HMPI_Active() ? "on" : "off");
    free(recv);
    MPI_Finalize();
    return any;
}
