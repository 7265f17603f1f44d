/* queue.h: the incoming queue of a rank: many local senders push, one receiver takes
 * everything at once. Lives in the shared region, so the links are plain pointers into
 * the shared heap (one address in every rank of the node).
 *
 * Protocol (lock-free, no ABA):
 *  - push: a sender links its node in front of the current head and publishes it with a
 *    CAS (release), so the node's contents are visible before the node is.
 *  - take: the owner swaps the head with NULL (acquire) and gets a LIFO chain of every
 *    node pushed so far; it reverses the chain to arrival order. Pushes are linearized
 *    at their CAS, and a take removes a prefix of that order, so messages of one sender
 *    stay in the order it pushed them, across takes too.
 *  - nodes are never popped one by one, so a node cannot be recycled under a pusher.
 * The links are written by other processes: a receiver that must survive a corrupted
 * one takes with hmpi_queue_take_within, which follows a link only into the range its
 * nodes may lie in (the shared heap) and never to a node it has taken already (a link
 * that closes a loop), and then reads the links with hmpi_queue_next.
 * No MPI in here. */
#ifndef HMPI_SHM_QUEUE_H
#define HMPI_SHM_QUEUE_H

#include "../common/assert.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A single read of a field another process may be writing: the compiler may neither
 * repeat it nor merge it with a later one (the queue's links, the envelopes of p2p/). */
#define HMPI_READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))

typedef struct hmpi_qnode_s {
    struct hmpi_qnode_s *next;
} hmpi_qnode_t;

typedef struct {
    _Atomic(hmpi_qnode_t *) head;
} hmpi_queue_t;

static inline void hmpi_queue_push(hmpi_queue_t *q, hmpi_qnode_t *n)
{
    /* A node is aligned, so the link to it never has HMPI_QUEUE_TAKEN set. */
    HMPI_ASSERT_INTERNAL((uintptr_t)n % alignof(hmpi_qnode_t) == 0);
    hmpi_qnode_t *old = atomic_load_explicit(&q->head, memory_order_relaxed);
    do {
        n->next = old;
    } while (!atomic_compare_exchange_weak_explicit(&q->head, &old, n, memory_order_release,
                                                    memory_order_relaxed));
}

/* Cheap test, for polling without taking a cache line exclusively. */
static inline int hmpi_queue_empty(hmpi_queue_t *q)
{
    return atomic_load_explicit(&q->head, memory_order_relaxed) == NULL;
}

/* Everything pushed so far, oldest first (NULL when empty). */
static inline hmpi_qnode_t *hmpi_queue_take(hmpi_queue_t *q)
{
    if (hmpi_queue_empty(q))
        return NULL;
    hmpi_qnode_t *n = atomic_exchange_explicit(&q->head, NULL, memory_order_acquire);
    hmpi_qnode_t *fifo = NULL;
    while (n) {
        hmpi_qnode_t *next = n->next;
        n->next = fifo;
        fifo = n;
        n = next;
    }
    return fifo;
}

/* How a chain taken by hmpi_queue_take_within ended early (*broken_p). */
enum { HMPI_QUEUE_WHOLE, HMPI_QUEUE_OUTSIDE, HMPI_QUEUE_LOOP };

/* The low bit of a link hmpi_queue_take_within wrote: the node is taken. A pushed
 * node's link is a node or NULL, aligned, so the bit is clear until a take sets it. */
#define HMPI_QUEUE_TAKEN ((uintptr_t)1)

/* The next node of a chain from hmpi_queue_take_within. */
static inline hmpi_qnode_t *hmpi_queue_next(const hmpi_qnode_t *n)
{
    return (hmpi_qnode_t *)((uintptr_t)HMPI_READ_ONCE(n->next) & ~HMPI_QUEUE_TAKEN);
}

/* hmpi_queue_take for nodes that must lie, aligned and whole, in [lo, lo + len) with
 * node_size bytes each: a link outside ends the chain there (the nodes pushed before
 * it cannot be reached), *broken_p = HMPI_QUEUE_OUTSIDE. So does a link back to a node
 * of this chain (HMPI_QUEUE_LOOP): reversing the chain marks each node taken, so the
 * walk stops where it would go round, and the chain it returns has no loop. Its links
 * are read with hmpi_queue_next. One subtraction and three compares a node. */
static inline hmpi_qnode_t *hmpi_queue_take_within(hmpi_queue_t *q, uintptr_t lo, size_t len,
                                                   size_t node_size, int *broken_p)
{
    if (hmpi_queue_empty(q))
        return NULL;
    hmpi_qnode_t *n = atomic_exchange_explicit(&q->head, NULL, memory_order_acquire);
    hmpi_qnode_t *fifo = NULL;
    while (n) {
        uintptr_t off = (uintptr_t)n - lo;
        if (off >= len || node_size > len - off || (uintptr_t)n % alignof(hmpi_qnode_t)) {
            *broken_p = HMPI_QUEUE_OUTSIDE;
            break;
        }
        hmpi_qnode_t *next = n->next;
        if ((uintptr_t)next & HMPI_QUEUE_TAKEN) {
            *broken_p = HMPI_QUEUE_LOOP;
            break;
        }
        n->next = (hmpi_qnode_t *)((uintptr_t)fifo | HMPI_QUEUE_TAKEN);
        fifo = n;
        n = next;
    }
    return fifo;
}

#endif
