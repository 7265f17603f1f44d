/* park.c: the kernel's side of parking (park.h): the waiters' barrier (membarrier) and
 * the futex calls on words in shared memory (no FUTEX_PRIVATE_FLAG: other processes
 * wait on and wake the same words). No MPI in here. */
#include "park.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static _Atomic int barrier_ok = -1; /* -1: not set up; 1: membarrier; 0: a fence */

int hmpi_park_setup(void)
{
    int ok = atomic_load_explicit(&barrier_ok, memory_order_relaxed);
    if (ok >= 0)
        return ok;
    long have = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    ok = have > 0 && (have & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
         syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    atomic_store_explicit(&barrier_ok, ok, memory_order_relaxed);
    return ok;
}

/* A full barrier on this CPU and on every CPU that runs a registered process now. */
static void park_barrier(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&barrier_ok, memory_order_relaxed) == 1)
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
}

uint32_t hmpi_park_announce(hmpi_park_node_t *n, hmpi_park_slot_t *s, int r)
{
    atomic_fetch_add_explicit(&s->parked, 1, memory_order_seq_cst);
    if (r < HMPI_PARK_MAP_RANKS)
        atomic_fetch_or_explicit(&n->map[r >> 6], (uint64_t)1 << (r & 63), memory_order_seq_cst);
    atomic_fetch_add_explicit(&n->sleepers, 1, memory_order_seq_cst);
    park_barrier();
    return atomic_load_explicit(&s->bell, memory_order_acquire);
}

uint32_t hmpi_park_sleep(hmpi_park_slot_t *s, uint32_t v, uint64_t timeout_ns)
{
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    /* EAGAIN (bell moved), ETIMEDOUT, EINTR (a signal): all mean "look again". */
    syscall(SYS_futex, &s->bell, FUTEX_WAIT, v, &ts, NULL, 0);
    return atomic_load_explicit(&s->bell, memory_order_acquire);
}

void hmpi_park_leave(hmpi_park_node_t *n, hmpi_park_slot_t *s, int r)
{
    atomic_fetch_sub_explicit(&n->sleepers, 1, memory_order_relaxed);
    if (atomic_fetch_sub_explicit(&s->parked, 1, memory_order_seq_cst) != 1 ||
        r >= HMPI_PARK_MAP_RANKS)
        return;
    uint64_t bit = (uint64_t)1 << (r & 63);
    atomic_fetch_and_explicit(&n->map[r >> 6], ~bit, memory_order_seq_cst);
    /* Another thread of this rank announced between the two: its bit again (park.h). */
    if (atomic_load_explicit(&s->parked, memory_order_seq_cst))
        atomic_fetch_or_explicit(&n->map[r >> 6], bit, memory_order_seq_cst);
}

void hmpi_park_ring(hmpi_park_slot_t *s)
{
    atomic_fetch_add_explicit(&s->bell, 1, memory_order_seq_cst);
    syscall(SYS_futex, &s->bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void hmpi_park_wake_slow(hmpi_park_node_t *n, hmpi_park_slot_t *s, int r)
{
    hmpi_park_fence();
    if (hmpi_park_is_parked(n, s, r))
        hmpi_park_ring(s);
}
