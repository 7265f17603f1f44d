/* rma_halo.c: a 1-D periodic three-point stencil whose halos move by RMA, in each
 * synchronization style a real code uses, checked bit for bit against the same stencil
 * computed serially on the whole domain:
 *   fence     MPI_Win_fence around two puts per step (window from MPI_Win_allocate);
 *   pscw      post/start/complete/wait with the two neighbours (MPI_Win_create, heap);
 *   lock_all  one lock_all(NOCHECK) epoch: puts, flush_all, barrier, sync per step
 *             (MPI_Win_create over a global array);
 *   lock      a shared lock per neighbour and step, then a barrier;
 *   shm       MPI_Win_allocate_shared on the node's communicator: a neighbour on the node
 *             is read with plain loads through MPI_Win_shared_query, one on another node
 *             through MPI_Sendrecv (the MPI-3 shared-memory style of the seed article);
 *   p2p       a synchronous send whose receiver entered MPI_Win_fence (or MPI_Win_wait)
 *             with the receive already posted: the send completes and both go on. */
#include "rma_common.h"

#include <stdio.h>

enum { N = 96, H = 2, STEPS = 40 }; /* cells per rank, halo width */

typedef enum { FENCE, PSCW, LOCK_ALL, LOCK, SHM, NMODES } mode_t_;
static const char *const names[NMODES] = {"fence", "pscw", "lock_all", "lock", "shm"};

static int rank, nranks, left, right;
static double global_cells[N + 2 * H];

static double init(int g) { return (double)((g * 7919) % 1000) / 7.0; }

/* One step on cells [H, H+N) of u (ghosts filled), into v. */
static void step(const double *u, double *v)
{
    for (int i = H; i < H + N; i++)
        v[i] = (u[i - 1] + u[i] + u[i + 1]) / 3.0;
}

/* The serial reference: my cells after STEPS steps. */
static void reference(double *mine)
{
    int total = N * nranks;
    double *u = malloc(sizeof(double) * (size_t)total), *v = malloc(sizeof(double) * (size_t)total);
    for (int g = 0; g < total; g++)
        u[g] = init(g);
    for (int s = 0; s < STEPS; s++) {
        for (int g = 0; g < total; g++)
            v[g] = (u[(g + total - 1) % total] + u[g] + u[(g + 1) % total]) / 3.0;
        double *t = u;
        u = v, v = t;
    }
    memcpy(mine, u + rank * N, sizeof(double) * N);
    free(u);
    free(v);
}

/* Puts my edge cells into my neighbours' ghosts: my first H cells become my left
 * neighbour's right ghosts, my last H cells my right neighbour's left ghosts. */
static void put_edges(double *u, MPI_Win win)
{
    MPI_Put(u + H, H, MPI_DOUBLE, left, H + N, H, MPI_DOUBLE, win);
    MPI_Put(u + N, H, MPI_DOUBLE, right, 0, H, MPI_DOUBLE, win);
}

static void run(mode_t_ mode)
{
    MPI_Win win;
    double *u, *tmp = malloc(sizeof(double) * (N + 2 * H)), *heap = NULL;
    MPI_Aint bytes = sizeof(double) * (N + 2 * H);
    MPI_Comm node = MPI_COMM_NULL;
    int me = rank; /* my rank in the window's group */
    double *lseg = NULL, *rseg = NULL;
    switch (mode) {
    case FENCE:
        MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &u, &win);
        break;
    case PSCW:
    case LOCK:
        u = heap = malloc((size_t)bytes);
        MPI_Win_create(u, bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    case LOCK_ALL:
        u = global_cells;
        MPI_Win_create(u, bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        break;
    default: {
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &me);
        MPI_Win_allocate_shared(bytes, sizeof(double), MPI_INFO_NULL, node, &u, &win);
        MPI_Group wg, ng;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Comm_group(node, &ng);
        int both[2] = {left, right}, there[2];
        MPI_Group_translate_ranks(wg, 2, both, ng, there);
        MPI_Group_free(&wg);
        MPI_Group_free(&ng);
        MPI_Aint sz;
        int du;
        if (there[0] != MPI_UNDEFINED)
            MPI_Win_shared_query(win, there[0], &sz, &du, &lseg);
        if (there[1] != MPI_UNDEFINED)
            MPI_Win_shared_query(win, there[1], &sz, &du, &rseg);
    }
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
    for (int i = 0; i < N; i++)
        u[H + i] = init(rank * N + i);
    MPI_Win_unlock(me, win);

    MPI_Group world, nbrs = MPI_GROUP_NULL;
    MPI_Win_get_group(win, &world);
    int two[2] = {left, right};
    if (mode == PSCW)
        MPI_Group_incl(world, left == right ? 1 : 2, two, &nbrs);
    if (mode == LOCK_ALL || mode == SHM)
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int s = 0; s < STEPS; s++) {
        switch (mode) { /* fill my ghosts with my neighbours' edges */
        case FENCE:
            MPI_Win_fence(0, win);
            put_edges(u, win);
            MPI_Win_fence(0, win);
            break;
        case PSCW:
            MPI_Win_post(nbrs, 0, win);
            MPI_Win_start(nbrs, 0, win);
            put_edges(u, win);
            MPI_Win_complete(win);
            MPI_Win_wait(win);
            break;
        case LOCK_ALL:
            put_edges(u, win);
            MPI_Win_flush_all(win);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Win_sync(win);
            break;
        case LOCK:
            MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
            MPI_Put(u + H, H, MPI_DOUBLE, left, H + N, H, MPI_DOUBLE, win);
            MPI_Win_unlock(left, win);
            MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
            MPI_Put(u + N, H, MPI_DOUBLE, right, 0, H, MPI_DOUBLE, win);
            MPI_Win_unlock(right, win);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win); /* see the ghosts */
            MPI_Win_unlock(rank, win);
            break;
        default: /* shm: loads from neighbours on the node, messages to the others */
            MPI_Win_sync(win);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Win_sync(win);
            if (lseg)
                memcpy(u, lseg + N, sizeof(double) * H);
            if (rseg)
                memcpy(u + H + N, rseg + H, sizeof(double) * H);
            if (!lseg || !rseg) { /* exchange with whichever is off the node */
                MPI_Request rq[4];
                MPI_Status st[4];
                int k = 0;
                if (!lseg) {
                    MPI_Irecv(u, H, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[k++]);
                    MPI_Isend(u + H, H, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &rq[k++]);
                }
                if (!rseg) {
                    MPI_Irecv(u + H + N, H, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &rq[k++]);
                    MPI_Isend(u + N, H, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &rq[k++]);
                }
                MPI_Waitall(k, rq, st);
            }
            MPI_Win_sync(win);
            MPI_Barrier(MPI_COMM_WORLD); /* nobody still reads my edges */
            break;
        }
        step(u, tmp);
        memcpy(u + H, tmp + H, sizeof(double) * N);
        if (mode == LOCK_ALL || mode == LOCK)
            MPI_Barrier(MPI_COMM_WORLD); /* my ghosts are read before they are refilled */
    }
    if (mode == LOCK_ALL || mode == SHM)
        MPI_Win_unlock_all(win);
    double want[N];
    reference(want);
    for (int i = 0; i < N; i++)
        CHECK(u[H + i] == want[i], "%s: cell %d of rank %d: %.17g, want %.17g", names[mode], i,
              rank, u[H + i], want[i]);
    if (nbrs != MPI_GROUP_NULL)
        MPI_Group_free(&nbrs);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    free(heap);
    free(tmp);
}

/* Ranks 2k and 2k+1 (the same node when nodes are simulated with 2 ranks): the even one
 * posts a receive then synchronizes the window, the odd one completes a synchronous send
 * to it before synchronizing. An MPI must progress the receive during the even rank's
 * synchronization call. */
static void p2p_mix(void)
{
    int partner = rank ^ 1, even = !(rank & 1);
    if (partner >= nranks)
        return;
    double *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    MPI_Group world, g;
    MPI_Win_get_group(win, &world);
    MPI_Group_incl(world, 1, &partner, &g);
    for (int round = 0; round < 10; round++) {
        int msg = round, got = -1;
        MPI_Request rq;
        MPI_Status st;
        if (even) {
            MPI_Irecv(&got, 1, MPI_INT, partner, 7, MPI_COMM_WORLD, &rq);
            if (round % 2 == 0) {
                MPI_Win_fence(0, win);
            } else {
                MPI_Win_post(g, 0, win);
                MPI_Win_wait(win);
            }
            MPI_Wait(&rq, &st);
            CHECK(got == round, "p2p: got %d in round %d", got, round);
        } else {
            MPI_Ssend(&msg, 1, MPI_INT, partner, 7, MPI_COMM_WORLD);
            if (round % 2 == 0) {
                MPI_Win_fence(0, win);
            } else {
                MPI_Win_start(g, 0, win);
                MPI_Put(&msg, 1, MPI_INT, partner, 0, 1, MPI_INT, win);
                MPI_Win_complete(win);
            }
        }
    }
    MPI_Group_free(&g);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    left = (rank + nranks - 1) % nranks;
    right = (rank + 1) % nranks;
    for (int m = 0; m < NMODES; m++)
        run((mode_t_)m);
    p2p_mix();
    if (rank == 0)
        printf("rma_halo: %d modes on %d ranks: ok\n", NMODES, nranks);
    MPI_Finalize();
    return 0;
}
