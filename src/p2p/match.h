/* match.h: MPI's matching rules and nothing else: posted receives and unexpected
 * messages, each list in post/arrival order, so the first match found is the one the
 * non-overtaking rule asks for; wildcards; communicator contexts; receives the bridge
 * holds back. Pure bookkeeping on private lists: no MPI, no shared memory, no
 * allocation. The engine (arrival.c) and the fuzzer (tests/fuzz/fuzz_match.c) run this
 * same code; it is inline because it runs for every message. */
#ifndef HMPI_P2P_MATCH_H
#define HMPI_P2P_MATCH_H

#include "../common/assert.h"

#include <stddef.h>
#include <stdint.h>

/* A message's matching key: a private snapshot, never the envelope in shared memory,
 * so a peer that rewrites its envelope cannot change a decision already taken. */
typedef struct hmpi_match_msg_s {
    struct hmpi_match_msg_s *next; /* unexpected list */
    uint32_t ctx;
    int32_t src;
    int32_t tag;
} hmpi_match_msg_t;

/* A posted receive's pattern. */
typedef struct hmpi_match_recv_s {
    struct hmpi_match_recv_s *next, *prev; /* posted list */
    uint32_t ctx;
    int32_t src, tag; /* ignored where any_src / any_tag */
    uint8_t any_src, any_tag;
    uint8_t held;   /* posted but matches nothing (a receive the bridge defers) */
    uint8_t posted; /* in the posted list */
} hmpi_match_recv_t;

typedef struct {
    hmpi_match_recv_t *posted_head, *posted_tail;
    hmpi_match_msg_t *unexp_head, *unexp_tail;
} hmpi_match_t;

static inline int hmpi_match_test(const hmpi_match_recv_t *r, const hmpi_match_msg_t *m)
{
    return m->ctx == r->ctx && (r->any_src || r->src == m->src) &&
           (r->any_tag || r->tag == m->tag) && !r->held;
}

/* The lists' invariants: posted runs from posted_head to posted_tail, linked both ways,
 * every entry marked posted; unexp runs from unexp_head to unexp_tail. A walk of both
 * lists: for HMPI_ASSERT_EXPENSIVE (and the fuzzer, after every step). */
static inline int hmpi_match_valid(const hmpi_match_t *q)
{
    const hmpi_match_recv_t *prev = NULL;
    for (const hmpi_match_recv_t *r = q->posted_head; r; prev = r, r = r->next)
        if (r->prev != prev || !r->posted)
            return 0;
    if (q->posted_tail != prev)
        return 0;
    const hmpi_match_msg_t *last = NULL;
    for (const hmpi_match_msg_t *m = q->unexp_head; m; m = m->next)
        last = m;
    return q->unexp_tail == last;
}

/* Appends r to the posted list. */
static inline void hmpi_match_post(hmpi_match_t *q, hmpi_match_recv_t *r)
{
    HMPI_ASSERT_INTERNAL(!r->posted);
    r->prev = q->posted_tail;
    r->next = NULL;
    if (q->posted_tail)
        q->posted_tail->next = r;
    else
        q->posted_head = r;
    q->posted_tail = r;
    r->posted = 1;
}

static inline void hmpi_match_unpost(hmpi_match_t *q, hmpi_match_recv_t *r)
{
    HMPI_ASSERT_INTERNAL(r->posted);
    if (r->prev)
        r->prev->next = r->next;
    else
        q->posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        q->posted_tail = r->prev;
    r->next = r->prev = NULL;
    r->posted = 0;
}

/* A message arrives: the oldest posted receive it matches, taken off the posted list,
 * or NULL (the caller then parks the message with hmpi_match_park). */
static inline hmpi_match_recv_t *hmpi_match_arrive(hmpi_match_t *q, const hmpi_match_msg_t *m)
{
    for (hmpi_match_recv_t *r = q->posted_head; r; r = r->next) {
        if (hmpi_match_test(r, m)) {
            hmpi_match_unpost(q, r);
            return r;
        }
    }
    return NULL;
}

/* Appends m to the unexpected list. */
static inline void hmpi_match_park(hmpi_match_t *q, hmpi_match_msg_t *m)
{
    m->next = NULL;
    if (q->unexp_tail)
        q->unexp_tail->next = m;
    else
        q->unexp_head = m;
    q->unexp_tail = m;
}

/* The oldest unexpected message r matches (r need not be posted: a probe's pattern),
 * taken off the list when remove; NULL when none. */
static inline hmpi_match_msg_t *hmpi_match_find(hmpi_match_t *q, const hmpi_match_recv_t *r,
                                                int remove)
{
    hmpi_match_msg_t *prev = NULL;
    for (hmpi_match_msg_t *m = q->unexp_head; m; prev = m, m = m->next) {
        if (!hmpi_match_test(r, m))
            continue;
        if (remove) {
            if (prev)
                prev->next = m->next;
            else
                q->unexp_head = m->next;
            if (q->unexp_tail == m)
                q->unexp_tail = prev;
            m->next = NULL;
        }
        return m;
    }
    return NULL;
}

#endif
