/* part.c: partitioned point-to-point (MPI-4.1 §4) between ranks of a node: the kind
 * HMPI_REQ_PART of the request's table, both sides. The sender lends the receiver a
 * control block in its slice with one ready flag per partition; MPI_Pready sets a flag,
 * and the receiver copies each partition as soon as it sees it marked (an early bird),
 * in any progress of HMPI's (the kind runs in the background while active), in
 * MPI_Parrived and in the Wait/Test family. A send buffer in the heap is read in place;
 * one outside it is copied by MPI_Pready into a bounce in the heap, or read by
 * process_vm_readv where every local rank may. A peer on another node, and a
 * communicator HMPI does not accelerate, get the MPI below's own partitioned request.
 * Every function runs with the engine lock held, but MPI_Pready's marking, which threads
 * of a program may call at once: it touches only the request's own flags and bounce. */
#include "engine.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../core/errors.h"
#include "../heap/heap.h"
#include "../shm/wait.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* Partitioned receives started and not complete (engine.h). */
int hmpi_p2p_part_receiving;

#if HMPI_MPI4_CALLS

/* ---- the sender's control block (shared) -------------------------------------------- */

enum { CTL_MAGIC = 0x3154435452415048u }; /* "HPARTCT1" */

/* One per partitioned send to a local peer, in the sender's slice (one address in every
 * local rank), with its ready flags after it. Protocol:
 *  - magic to help: written by the sender at MPI_Psend_init, before the setup notice that
 *    carries the block's address (the queue's push, a release, publishes them); gen
 *    tells this request's block from a later one at the same address (the sender numbers
 *    its blocks). At the release the sender clears magic, then frees the block.
 *  - ready[i]: the sender stores the round in which it marked partition i (release) once
 *    the partition's bytes lie where data says (the program's heap buffer, or copied into
 *    the bounce), then adds the partitions it marked to marked (release). The receiver
 *    reads marked (acquire); when it moved, it looks for flags of its round and copies
 *    each such partition from data.
 *  - taken: the receiver stores round k (release) once every byte of round k is in its
 *    buffer. The sender's round k completes when it reads taken >= k (acquire): the
 *    program may then write its buffer again, and the next round overwrite the bounce.
 *  - The sender's help (help set: a few large partitions): the receiver cuts a marked
 *    partition into CHUNK-byte chunks and claims them one at a time from claim[i], (round
 *    << 32) | chunks claimed, by a CAS; so does the sender, inside its own MPI calls,
 *    once the receiver said where its buffer is (rbuf, then rround = the round, release:
 *    the receiver says so only in a round it has seen a mark of, while the sender's round
 *    is active, so the block is alive) and that it is in the sender's round. The sender
 *    copies its chunks straight into rbuf and stores (round << 32) | chunks it copied in
 *    sdone[i] (release); the receiver has the partition once its own chunks and sdone's
 *    make all of them. Rounds are below 2^32.
 * Each side numbers its rounds from 1 at its MPI_Start. A send's round completes only
 * after the receiver took it, so the sender is at most one round ahead of the receiver,
 * and a flag of round k is never read as round k + 1's. The receiver trusts none of it:
 * the fields are read once as it pairs and checked (the block and the data lie in the
 * heap, or the data is read from the sender's pid by process_vm_readv), a flag is only
 * compared, a chunk count only bounded, and a bad block fails the receive; the sender
 * checks rbuf against the heap before it writes there. */
typedef struct {
    uint64_t magic;
    uint64_t gen;
    uint64_t parts;      /* send partitions */
    uint64_t part_bytes; /* packed bytes of one */
    const char *data;    /* the packed stream: heap (the buffer, a bounce), or private (cma) */
    uint64_t cma;        /* data is the sender's private memory */
    uint64_t help;       /* claim[] and sdone[] follow ready[]: the sender may help */
    char pad0[HMPI_CACHE_LINE - 56];
    _Atomic uint64_t marked; /* sender: partitions marked so far, every round */
    char pad1[HMPI_CACHE_LINE - 8];
    _Atomic uint64_t taken;  /* receiver: the last round taken whole */
    _Atomic uint64_t rround; /* receiver: its round, once rbuf is said (help) */
    _Atomic uint64_t rbuf;   /* receiver: where its stream goes, in the heap (help) */
    char pad2[HMPI_CACHE_LINE - 24];
    _Atomic uint64_t ready[]; /* sender: [parts], the round each was marked in; with help,
                               * then claim[parts] (both sides) and sdone[parts] (sender) */
} part_ctl_t;

static_assert(offsetof(part_ctl_t, marked) == HMPI_CACHE_LINE &&
                  offsetof(part_ctl_t, taken) == 2 * HMPI_CACHE_LINE &&
                  offsetof(part_ctl_t, ready) == 3 * HMPI_CACHE_LINE,
              "what each side writes is on lines of its own");

/* The sender helps copy partitions of at least two chunks, when there are at most
 * HELP_PARTS of them (its look for marked partitions it may help with reads every flag):
 * a large partition marked last is then copied by both cores, the time from its mark to
 * the receiver's completion about half a copy's. */
enum { CHUNK = 32 << 10, HELP_PARTS = 64 };

static size_t ctl_bytes(uint64_t parts, int help)
{
    return sizeof(part_ctl_t) + parts * sizeof(uint64_t) * (help ? 3 : 1);
}

static _Atomic uint64_t *claims_of(part_ctl_t *c) { return c->ready + c->parts; }
static _Atomic uint64_t *sdone_of(part_ctl_t *c) { return c->ready + 2 * c->parts; }

static uint32_t chunks_of(size_t bytes) { return (uint32_t)((bytes + CHUNK - 1) / CHUNK); }

/* A chunk of partition i of round (its index), or -1 when all n are claimed. */
static int claim(_Atomic uint64_t *w, uint64_t round, uint32_t n)
{
    uint64_t v = atomic_load_explicit(w, memory_order_relaxed);
    for (;;) {
        uint32_t k = v >> 32 == round ? (uint32_t)v : 0;
        if (k >= n)
            return -1;
        if (atomic_compare_exchange_weak_explicit(w, &v, round << 32 | (k + 1),
                                                  memory_order_relaxed, memory_order_relaxed))
            return (int)k;
    }
}

/* ---- a request's own state (private) ---------------------------------------------------- */

typedef struct part_s {
    uint8_t send;
    uint8_t contig;    /* this side's whole buffer is one run of bytes */
    uint8_t paired;    /* receive: its sender's block is known (or dead) */
    int dead;          /* receive: each round fails with this error: MPI_ERR_OTHER when the
                        * block was freed (the sender freed its request), MPI_ERR_INTERN
                        * when it is corrupted, MPI_ERR_NO_MEM */
    int parts;         /* partitions on this side */
    MPI_Count count;   /* elements of one */
    size_t part_bytes; /* packed bytes of one */
    size_t total;
    MPI_Aint stride; /* count * extent: partition i starts at buf + i * stride */
    uint64_t round;  /* rounds started */
    int local;       /* the peer's local rank (wakes) */
    /* the sender */
    part_ctl_t *ctl;
    char *bounce;    /* the packed stream in the heap, when the receiver cannot read the buffer */
    uint32_t *hdone; /* help: [parts], chunks this side copied of each this round */
    uint64_t hseen;  /* help: the marks looked at by the last look that found nothing */
    /* the receiver */
    struct part_s *pnext; /* the receives waiting for their sender's setup, oldest first */
    uint8_t posted;       /* in that list */
    uint32_t ctx;         /* its key there: the context, source and tag */
    int peer, tag;
    hmpi_req_t *req;        /* NULL once freed: the setup meant for it is still taken (below) */
    const part_ctl_t *sctl; /* the sender's block, as paired */
    const char *src;        /* the sender's stream */
    uint64_t gen;
    int cma, pid;
    int sparts;
    size_t spart_bytes;
    uint64_t seen;       /* marks taken in so far (every round) */
    int first;           /* no send partition below it is left this round */
    int sleft, left;     /* send partitions to take, receive partitions to arrive */
    int err;             /* this round's error, set as it begins */
    uint64_t *took;      /* [sparts]: the round send partition i was taken in */
    uint32_t *remaining; /* [parts]: send partitions still to take of each */
    uint8_t *arrived;    /* [parts]: MPI_Parrived's flags */
    /* the sender's help (both sides' chunks of a partition: the control block's protocol) */
    int help;         /* the sender may copy into this buffer (rbuf said at each round) */
    uint64_t said;    /* the last round rround was stored for */
    uint32_t *mine;   /* [sparts]: chunks this side copied of each this round */
    int *pend, npend; /* partitions taken whose chunks the sender still copies */
} part_t;

static uint64_t gens; /* the sender's blocks, numbered */

/* A setup notice no receive has matched yet (its key, and what it carries). */
typedef struct notice_s {
    struct notice_s *next;
    uint32_t ctx;
    int src, tag, src_local;
    const part_ctl_t *ctl;
    uint64_t gen;
} notice_t;

/* Partitioned receives waiting for their setup, and setups waiting for their receive,
 * each in order (MPI-4.1 §4.2.2: in the order of the initialization calls). */
static part_t *posted_head, **posted_tail = &posted_head;
static notice_t *notices_head, **notices_tail = &notices_head;

/* Send partition i and receive partition j overlap. The two sides' partitions cut one
 * stream of bytes into equal parts: send i is [i/S, (i+1)/S) of it and receive j is
 * [j/R, (j+1)/R) (the sizes are equal; as fractions, zero-byte partitions still map). */
static void overlap_of_send(const part_t *p, int i, int *lo_p, int *hi_p)
{
    uint64_t S = (uint64_t)p->sparts, R = (uint64_t)p->parts;
    *lo_p = (int)((uint64_t)i * R / S);
    *hi_p = (int)(((uint64_t)i * R + R + S - 1) / S) - 1;
}

static int overlaps_of_recv(const part_t *p, int j)
{
    uint64_t S = (uint64_t)p->sparts, R = (uint64_t)p->parts;
    int lo = (int)((uint64_t)j * S / R);
    int hi = (int)(((uint64_t)j * S + S + R - 1) / R) - 1;
    return hi - lo + 1;
}

/* ---- the receiver ------------------------------------------------------------------ */

/* Reads n bytes of the sender's stream at off into dst; returns the bytes read. */
static size_t fetch(const part_t *p, char *dst, size_t off, size_t n)
{
    if (!p->cma) {
        memcpy(dst, p->src + off, n);
        return n;
    }
    size_t got = 0;
    while (got < n) {
        struct iovec local = {dst + got, n - got};
        struct iovec remote = {(char *)(uintptr_t)p->src + off + got, n - got};
        ssize_t k = process_vm_readv(p->pid, &local, 1, &remote, 1, 0);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    return got;
}

/* Receive partition j, whose bytes have all been marked, into a buffer with holes. */
static int unpack_part(hmpi_req_t *r, part_t *p, int j)
{
    size_t off = (size_t)j * p->part_bytes, n = p->part_bytes;
    char *tmp = NULL;
    const char *from = p->src + off;
    if (p->cma) {
        if (!(tmp = malloc(n ? n : 1)) || fetch(p, tmp, off, n) != n) {
            free(tmp);
            return MPI_ERR_OTHER;
        }
        from = tmp;
    }
    int pos = 0;
    int err = hmpi_type_unpack(from, (int)n, &pos, (char *)r->buf + (MPI_Aint)j * p->stride,
                               (int)p->count, r->type);
    free(tmp);
    return err;
}

/* Send partition i is in the buffer: the receive partitions it completes arrive. */
static void took_whole(hmpi_req_t *r, part_t *p, int i)
{
    p->sleft--;
    int lo, hi;
    overlap_of_send(p, i, &lo, &hi);
    for (int j = lo; j <= hi; j++) {
        if (--p->remaining[j])
            continue;
        if (!p->err && !p->contig && p->part_bytes) {
            int e = unpack_part(r, p, j);
            if (e)
                p->err = e;
        }
        p->arrived[j] = 1;
        p->left--;
    }
}

/* Chunks of send partition i that the sender copied in this round (bounded: another
 * process's word). */
static uint32_t sender_chunks(const part_t *p, int i, uint32_t n)
{
    uint64_t v = atomic_load_explicit(&sdone_of((part_ctl_t *)p->sctl)[i], memory_order_acquire);
    uint32_t k = v >> 32 == p->round ? (uint32_t)v : 0;
    return k < n ? k : n;
}

/* Send partition i is marked in this round: its bytes into the buffer (a contiguous one
 * takes them at once, chunk by chunk beside the sender where it helps), and the receive
 * partitions it completes arrive; a partition the sender still copies chunks of waits in
 * pend. */
static void take(hmpi_req_t *r, part_t *p, int i)
{
    p->took[i] = p->round;
    if (p->err || !p->contig || !p->spart_bytes) {
        took_whole(r, p, i);
        return;
    }
    char *to = (char *)r->buf + r->t.lo;
    size_t off = (size_t)i * p->spart_bytes;
    if (!p->help) {
        if (fetch(p, to + off, off, p->spart_bytes) != p->spart_bytes)
            p->err = MPI_ERR_OTHER;
        took_whole(r, p, i);
        return;
    }
    if (p->said != p->round) { /* the sender may copy into this round's buffer from now on */
        atomic_store_explicit((_Atomic uint64_t *)&p->sctl->rbuf, (uint64_t)(uintptr_t)to,
                              memory_order_relaxed);
        atomic_store_explicit((_Atomic uint64_t *)&p->sctl->rround, p->round, memory_order_release);
        p->said = p->round;
    }
    uint32_t n = chunks_of(p->spart_bytes), mine = 0;
    _Atomic uint64_t *w = &claims_of((part_ctl_t *)p->sctl)[i];
    for (int k; (k = claim(w, p->round, n)) >= 0; mine++) {
        size_t at = off + (size_t)k * CHUNK, len = p->spart_bytes - (size_t)k * CHUNK;
        len = len < CHUNK ? len : CHUNK;
        if (fetch(p, to + at, at, len) != len)
            p->err = MPI_ERR_OTHER;
    }
    p->mine[i] = mine;
    if (mine + sender_chunks(p, i, n) >= n)
        took_whole(r, p, i);
    else
        p->pend[p->npend++] = i;
}

/* The partitions whose chunks the sender was copying: those it finished are taken. */
static void take_pending(hmpi_req_t *r, part_t *p)
{
    uint32_t n = chunks_of(p->spart_bytes);
    for (int k = 0; k < p->npend;) {
        int i = p->pend[k];
        if (p->mine[i] + sender_chunks(p, i, n) < n) {
            k++;
            continue;
        }
        p->pend[k] = p->pend[--p->npend];
        took_whole(r, p, i);
    }
}

/* Takes every partition marked since the last look (their count says how many). */
static void take_marked(hmpi_req_t *r, part_t *p, uint64_t marked)
{
    uint64_t want = marked - p->seen, found = 0;
    for (int i = p->first; i < p->sparts && found < want; i++) {
        if (p->took[i] == p->round ||
            atomic_load_explicit(&p->sctl->ready[i], memory_order_acquire) != p->round)
            continue;
        take(r, p, i);
        found++;
    }
    while (p->first < p->sparts && p->took[p->first] == p->round)
        p->first++;
    /* What was not found (a count running ahead of its flags: a program that marked a
     * partition twice) is looked for again at the next look. */
    p->seen += found;
}

/* A round of a paired receive begins: nothing taken, nothing arrived. */
static void begin_round(hmpi_req_t *r, part_t *p)
{
    p->first = 0;
    p->sleft = p->sparts;
    p->left = p->parts;
    p->npend = 0;
    p->err = MPI_SUCCESS;
    if (p->dead) {
        if (p->dead == MPI_ERR_OTHER)
            hmpi_log_error("MPI_Start: the partitioned send matched by this receive (source "
                           "%d, tag %d) was freed; the receive fails",
                           r->peer, r->tag);
        p->err = p->dead;
        p->sleft = 0;
    } else if ((uint64_t)p->sparts * p->spart_bytes != p->total) {
        p->err = MPI_ERR_TRUNCATE; /* MPI-4.1 §4.2.2: the sizes must be equal */
    }
    for (int j = 0; j < p->parts; j++)
        p->remaining[j] = (uint32_t)overlaps_of_recv(p, j);
}

static int recv_progress(hmpi_req_t *r)
{
    part_t *p = r->arg;
    if (!p->paired)
        return 0;
    if (p->sleft) {
        uint64_t m = atomic_load_explicit(&p->sctl->marked, memory_order_acquire);
        if (m != p->seen)
            take_marked(r, p, m);
        if (p->npend)
            take_pending(r, p);
        if (p->sleft)
            return 0;
    }
    if (p->err)
        memset(p->arrived, 1, (size_t)p->parts); /* (the round is over all the same) */
    if (!p->dead) {
        atomic_store_explicit((_Atomic uint64_t *)&p->sctl->taken, p->round, memory_order_release);
        hmpi_wait_wake(p->local); /* a sender waiting for its buffer back may sleep */
    }
    hmpi_status_set(&r->status, r->peer, r->tag, p->err, p->err ? 0 : p->total);
    hmpi_p2p_part_receiving--;
    return 1;
}

/* Pairs receive p with the setup of its sender at local rank src: the block, read once
 * and checked. A block that is not (or no longer) the one announced means the sender
 * freed its request; a receive then started fails. 0, or -1 for a corrupted one. */
static int pair(part_t *p, const part_ctl_t *ctl, uint64_t gen, int src)
{
    p->paired = 1;
    p->sctl = ctl;
    p->gen = gen;
    size_t head = sizeof(part_ctl_t);
    if (hmpi_heap_owner(ctl) != src || !hmpi_heap_is_shared_range(ctl, head) ||
        HMPI_READ_ONCE(ctl->magic) != CTL_MAGIC || HMPI_READ_ONCE(ctl->gen) != gen) {
        p->dead = MPI_ERR_OTHER;
        return 0;
    }
    uint64_t parts = HMPI_READ_ONCE(ctl->parts), pb = HMPI_READ_ONCE(ctl->part_bytes);
    const char *data = HMPI_READ_ONCE(ctl->data);
    int cma = HMPI_READ_ONCE(ctl->cma) != 0, help = HMPI_READ_ONCE(ctl->help) != 0;
    const char *bad = NULL;
    if (parts < 1 || parts > INT32_MAX ||
        hmpi_heap_owner((const char *)ctl + ctl_bytes(parts, help) - 1) != src)
        bad = "parts";
    else if (pb && parts > SIZE_MAX / pb)
        bad = "part_bytes";
    else if (pb && !cma && !hmpi_heap_is_shared_range(data, parts * pb))
        bad = "data";
    else if (cma && !hmpi_p2p_engine.cma_ok)
        bad = "cma";
    if (bad) {
        hmpi_log_error("partitioned send of local rank %d: its control block %p has a bad "
                       "field '%s'; the receive fails with MPI_ERR_INTERN",
                       src, (const void *)ctl, bad);
        p->dead = MPI_ERR_INTERN;
        return -1;
    }
    p->sparts = (int)parts;
    p->spart_bytes = pb;
    p->src = data;
    p->cma = cma;
    p->pid = cma ? hmpi_ctrl()->rank[src].pid : 0;
    /* Every mark so far is of the first round (the sender's first round completes only
     * once this receive took it): counted from the block's start. */
    p->seen = 0;
    p->took = calloc((size_t)parts, sizeof *p->took);
    /* The sender may help where it made room for it and this side's buffer, in the heap,
     * takes the stream as it is. */
    const char *to = (const char *)p->req->buf + p->req->t.lo;
    p->help = help && parts <= HELP_PARTS && chunks_of(pb) >= 2 && p->contig &&
              parts * pb == p->total && hmpi_heap_is_shared_range(to, p->total);
    if (p->help) {
        p->mine = calloc((size_t)parts, sizeof *p->mine);
        p->pend = calloc((size_t)parts, sizeof *p->pend);
    }
    if (!p->took || (p->help && (!p->mine || !p->pend))) {
        hmpi_log_error("out of memory for a partitioned receive");
        p->dead = MPI_ERR_NO_MEM;
        return -1;
    }
    if (p->req->active && !p->req->complete)
        begin_round(p->req, p);
    return 0;
}

void hmpi_p2p_part_arrive(hmpi_env_t *e, int src)
{
    notice_t n = {NULL,
                  HMPI_READ_ONCE(e->ctx),
                  HMPI_READ_ONCE(e->src),
                  HMPI_READ_ONCE(e->tag),
                  src,
                  (const part_ctl_t *)HMPI_READ_ONCE(e->data),
                  HMPI_READ_ONCE(e->size)};
    atomic_store_explicit(&e->state, HMPI_ENV_DONE, memory_order_release);
    for (part_t **pp = &posted_head; *pp; pp = &(*pp)->pnext) {
        part_t *p = *pp;
        if (p->ctx != n.ctx || p->peer != n.src || p->tag != n.tag)
            continue;
        if (p->local != src) {
            hmpi_log_error("a partitioned send's setup from local rank %d names source %d, "
                           "which is not that rank: ignored",
                           src, n.src);
            return;
        }
        if (!(*pp = p->pnext))
            posted_tail = pp;
        p->posted = 0;
        if (p->req)
            pair(p, n.ctl, n.gen, src);
        else
            free(p); /* its receive was freed: the setup was its, and goes with it */
        return;
    }
    notice_t *k = malloc(sizeof *k);
    if (!k) {
        hmpi_log_error("out of memory for a partitioned send's setup: it is lost");
        return;
    }
    *k = n;
    *notices_tail = k;
    notices_tail = &k->next;
}

/* ---- the sender ---------------------------------------------------------------------- */

/* The request is a partitioned send to a local peer: its round is complete once the
 * receiver took it. */
/* The sender's help, inside its own MPI calls: chunks of the partitions it marked, copied
 * straight into the receiver's buffer beside the receiver (the control block's protocol).
 * Looks again only once more partitions were marked. */
static void help(hmpi_req_t *r, part_t *p)
{
    part_ctl_t *c = p->ctl;
    uint64_t m = atomic_load_explicit(&c->marked, memory_order_relaxed);
    if (m == p->hseen || atomic_load_explicit(&c->rround, memory_order_acquire) != p->round)
        return;
    char *to = (char *)(uintptr_t)atomic_load_explicit(&c->rbuf, memory_order_relaxed);
    const char *from = p->bounce ? p->bounce : (const char *)r->buf + r->t.lo;
    uint32_t n = chunks_of(p->part_bytes);
    if (hmpi_heap_is_shared_range(to, p->total)) { /* (another process's word) */
        for (int i = 0; i < p->parts; i++) {
            if (atomic_load_explicit(&c->ready[i], memory_order_acquire) != p->round)
                continue;
            for (int k; (k = claim(&claims_of(c)[i], p->round, n)) >= 0;) {
                size_t at = (size_t)i * p->part_bytes + (size_t)k * CHUNK;
                size_t len = p->part_bytes - (size_t)k * CHUNK;
                memcpy(to + at, from + at, len < CHUNK ? len : CHUNK);
                atomic_store_explicit(&sdone_of(c)[i], p->round << 32 | ++p->hdone[i],
                                      memory_order_release);
                hmpi_stat_add(HMPI_STAT_part_chunks_by_sender, 1);
            }
        }
    }
    p->hseen = m;
}

static int send_progress(hmpi_req_t *r)
{
    part_t *p = r->arg;
    if (p->hdone)
        help(r, p);
    if (atomic_load_explicit(&p->ctl->taken, memory_order_acquire) < p->round)
        return 0;
    hmpi_status_set(&r->status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0);
    return 1;
}

/* ---- the kind ---------------------------------------------------------------------------- */

static int part_progress(hmpi_req_t *r)
{
    part_t *p = r->arg;
    return p->send ? send_progress(r) : recv_progress(r);
}

static int part_start(hmpi_req_t *r)
{
    part_t *p = r->arg;
    p->round++;
    if (r->peer == MPI_PROC_NULL) {
        hmpi_status_set(&r->status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        hmpi_req_finish(r);
        return MPI_SUCCESS;
    }
    if (p->send) {
        if (p->hdone) {
            memset(p->hdone, 0, (size_t)p->parts * sizeof *p->hdone);
            p->hseen = UINT64_MAX;
        }
        return MPI_SUCCESS;
    }
    memset(p->arrived, 0, (size_t)p->parts);
    hmpi_p2p_part_receiving++;
    hmpi_stat_add(HMPI_STAT_part_rounds, 1);
    hmpi_stat_add(HMPI_STAT_part_bytes, p->total);
    if (p->paired)
        begin_round(r, p);
    if (recv_progress(r)) /* everything may be marked already */
        hmpi_req_finish(r);
    return MPI_SUCCESS;
}

static void part_release(hmpi_req_t *r)
{
    part_t *p = r->arg;
    if (!p)
        return;
    if (p->send) {
        if (p->ctl) {
            /* A receiver that pairs with the block later finds it gone. */
            atomic_store_explicit((_Atomic uint64_t *)&p->ctl->magic, 0, memory_order_release);
            hmpi_heap_free(p->ctl);
        }
        hmpi_heap_free(p->bounce);
    }
    free(p->took);
    free(p->remaining);
    free(p->arrived);
    free(p->mine);
    free(p->pend);
    free(p->hdone);
    p->took = NULL, p->remaining = NULL, p->arrived = NULL;
    p->mine = NULL, p->hdone = NULL, p->pend = NULL;
    r->arg = NULL;
    /* A receive freed before its sender's setup came stays in the list without its
     * request: that setup matched it (the order of initialization) and must not go to
     * the next receive of the same source and tag. */
    if (p->posted)
        p->req = NULL;
    else
        free(p);
}

const hmpi_req_ops_t hmpi_p2p_part_ops = {
    .name = "partitioned",
    .start = part_start,
    .progress = part_progress,
    .release = part_release,
    .status_error = 1,
    .background = 1,
};

/* ---- the operations ---------------------------------------------------------------- */

/* The sender's block and where its stream lies; engine lock held. The setup notice goes
 * to the receiver at once: matching keeps the order of initialization. */
static int send_setup(hmpi_req_t *r, part_t *p)
{
    const char *at = (const char *)r->buf + r->t.lo;
    int help = p->parts <= HELP_PARTS && chunks_of(p->part_bytes) >= 2;
    p->ctl = hmpi_heap_shared_alloc(ctl_bytes((uint64_t)p->parts, help));
    if (!p->ctl || (help && !(p->hdone = calloc((size_t)p->parts, sizeof *p->hdone))))
        return MPI_ERR_NO_MEM;
    const char *data = at;
    int cma = 0;
    if (!p->total) {
        data = NULL;
    } else if (!p->contig || !hmpi_heap_is_shared_range(at, p->total)) {
        if (p->contig && hmpi_p2p_engine.cma_ok && p->total >= (size_t)hmpi_knobs.CMA_MIN) {
            cma = 1;
        } else {
            if (!(p->bounce = hmpi_heap_shared_alloc(p->total)))
                return MPI_ERR_NO_MEM;
            data = p->bounce;
        }
    }
    part_ctl_t *c = p->ctl;
    memset(c, 0, ctl_bytes((uint64_t)p->parts, help));
    c->magic = CTL_MAGIC;
    c->gen = ++gens;
    c->parts = (uint64_t)p->parts;
    c->part_bytes = p->part_bytes;
    c->data = data;
    c->cma = (uint64_t)cma;
    c->help = (uint64_t)help;
    if (hmpi_p2p_send_notice(p->local, HMPI_P2P_PART_SETUP, r->comm->ctx, r->comm->rank, r->tag, c,
                             c->gen) != 0)
        return MPI_ERR_NO_MEM;
    return MPI_SUCCESS;
}

/* The receiver's arrays, and its setup if it came first. */
static int recv_setup(hmpi_req_t *r, part_t *p)
{
    p->remaining = calloc((size_t)p->parts, sizeof *p->remaining);
    p->arrived = calloc((size_t)p->parts, 1);
    if (!p->remaining || !p->arrived)
        return MPI_ERR_NO_MEM;
    p->req = r;
    p->ctx = r->comm->ctx;
    p->peer = r->peer;
    p->tag = r->tag;
    for (notice_t **kk = &notices_head; *kk; kk = &(*kk)->next) {
        notice_t *k = *kk;
        if (k->ctx != p->ctx || k->src != p->peer || k->tag != p->tag)
            continue;
        if (!(*kk = k->next))
            notices_tail = kk;
        int src = k->src_local;
        const part_ctl_t *ctl = k->ctl;
        uint64_t gen = k->gen;
        free(k);
        if (p->local != src) {
            hmpi_log_error("a partitioned send's setup from local rank %d names source %d, "
                           "which is not that rank: ignored",
                           src, r->peer);
            break;
        }
        pair(p, ctl, gen, src);
        return MPI_SUCCESS;
    }
    p->pnext = NULL;
    p->posted = 1;
    *posted_tail = p;
    posted_tail = &p->pnext;
    return MPI_SUCCESS;
}

int hmpi_p2p_part_init(const hmpi_p2p_args_t *a, int send, int partitions, MPI_Count count,
                       MPI_Info info, MPI_Request *req, const char *fn)
{
    if (!a->c || (a->peer != MPI_PROC_NULL && a->c->local_of[a->peer] < 0))
        return send ? PMPI_Psend_init(a->buf, partitions, count, a->type, a->peer, a->tag, a->comm,
                                      info, req)
                    : PMPI_Precv_init(a->buf, partitions, count, a->type, a->peer, a->tag, a->comm,
                                      info, req);
    part_t *p = calloc(1, sizeof *p);
    if (!p)
        return hmpi_raise_in(a->comm, MPI_ERR_NO_MEM, fn);
    const hmpi_layout_t *one = &a->t;
    p->send = (uint8_t)send;
    p->parts = partitions;
    p->count = count;
    p->part_bytes = one->size * (size_t)count;
    p->total = p->part_bytes * (size_t)partitions;
    p->stride = (MPI_Aint)count * one->extent;
    uint64_t n = (uint64_t)partitions * (uint64_t)count; /* elements in all */
    p->contig = n <= 1 ? (uint8_t)one->contig : one->contig && one->extent == (MPI_Aint)one->size;
    p->local = a->peer == MPI_PROC_NULL ? -1 : a->c->local_of[a->peer];
    hmpi_p2p_lock();
    hmpi_req_t *r = hmpi_req_new(HMPI_REQ_PART);
    int err = r ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (r) {
        r->comm = a->c;
        r->buf = a->buf;
        r->count = 0;
        r->type = a->type;
        r->t = *one;
        r->peer = a->peer;
        r->tag = a->tag;
        r->persistent = 1;
        r->complete = 1; /* inactive */
        r->arg = p;
        hmpi_req_bind(r, a->c);
        if (a->peer != MPI_PROC_NULL)
            err = send ? send_setup(r, p) : recv_setup(r, p);
        else if (!send && !(p->arrived = calloc((size_t)partitions, 1)))
            err = MPI_ERR_NO_MEM;
    } else {
        free(p);
    }
    if (err == MPI_SUCCESS)
        *req = hmpi_req_handle(r);
    else if (r)
        hmpi_req_release(r); /* (its release frees p) */
    hmpi_p2p_unlock();
    return hmpi_raise_in(a->comm, err, fn);
}

/* The partitioned request of handle h, of the side asked for, or NULL with the error
 * described. */
static hmpi_req_t *part_of(MPI_Request h, int send, int *err)
{
    hmpi_req_t *r = hmpi_req_obj(h);
    part_t *p = r->kind == HMPI_REQ_PART ? r->arg : NULL;
    if (!p || p->send != send) {
        *err = hmpi_err_what(MPI_ERR_REQUEST, "request is not a partitioned %s request",
                             send ? "send" : "receive");
        return NULL;
    }
    return r;
}

/* Marks partition i of r's round (the sender; no lock): its bytes to the bounce when
 * the receiver cannot read the buffer, then its flag. */
static int mark(hmpi_req_t *r, part_t *p, int i)
{
    part_ctl_t *c = p->ctl;
    if (atomic_load_explicit(&c->ready[i], memory_order_relaxed) == p->round)
        return hmpi_err_what(MPI_ERR_ARG, "partition %d is marked ready already in this round", i);
    if (p->bounce && p->part_bytes) {
        char *to = p->bounce + (size_t)i * p->part_bytes;
        if (p->contig) {
            memcpy(to, (const char *)r->buf + r->t.lo + (size_t)i * p->part_bytes, p->part_bytes);
        } else {
            int pos = 0;
            int err = hmpi_type_pack((const char *)r->buf + (MPI_Aint)i * p->stride, (int)p->count,
                                     r->type, to, (int)p->part_bytes, &pos);
            if (err)
                return err;
        }
    }
    atomic_store_explicit(&c->ready[i], p->round, memory_order_release);
    return MPI_SUCCESS;
}

int hmpi_p2p_pready(MPI_Request h, int how, int low, int high, const int list[], const char *fn)
{
    if (h != MPI_REQUEST_NULL && !hmpi_req_is_ours(h)) {
        if (how == HMPI_P2P_PREADY_LIST)
            return PMPI_Pready_list(high, (int *)(uintptr_t)list, h);
        return how == HMPI_P2P_PREADY_ONE ? PMPI_Pready(low, h) : PMPI_Pready_range(low, high, h);
    }
    int err = MPI_SUCCESS;
    hmpi_req_t *r = h == MPI_REQUEST_NULL ? NULL : part_of(h, 1, &err);
    MPI_Comm comm = r ? r->comm->handle : MPI_COMM_WORLD;
    if (h == MPI_REQUEST_NULL)
        err = hmpi_err_what(MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
    if (err)
        return hmpi_raise_in(comm, err, fn);
    part_t *p = r->arg;
    int n = how == HMPI_P2P_PREADY_LIST ? high : high - low + 1;
    if (!r->active)
        err = hmpi_err_what(MPI_ERR_REQUEST, "request is not active");
    else if (how == HMPI_P2P_PREADY_RANGE && low > high)
        err = hmpi_err_what(MPI_ERR_ARG, "partition_low %d is above partition_high %d", low, high);
    else if (how == HMPI_P2P_PREADY_LIST && (n < 0 || (n > 0 && !list)))
        err = n < 0 ? hmpi_err_what(MPI_ERR_ARG, "length %d is negative", n)
                    : hmpi_err_what(MPI_ERR_ARG, "array_of_partitions is NULL");
    if (err)
        return hmpi_raise_in(comm, err, fn);
    for (int k = 0; k < n; k++) {
        int i = list ? list[k] : low + k;
        if (i < 0 || i >= p->parts)
            return hmpi_raise_in(
                comm, hmpi_err_what(MPI_ERR_ARG, "partition %d is outside 0..%d", i, p->parts - 1),
                fn);
    }
    if (r->peer == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int marked = 0;
    for (int k = 0; k < n && !err; k++)
        if ((err = mark(r, p, list ? list[k] : low + k)) == MPI_SUCCESS)
            marked++;
    if (marked) {
        atomic_fetch_add_explicit(&p->ctl->marked, (uint64_t)marked, memory_order_release);
        hmpi_wait_wake(p->local);
    }
    return hmpi_raise_in(comm, err, fn);
}

int hmpi_p2p_parrived(MPI_Request h, int partition, int *flag, const char *fn)
{
    if (h == MPI_REQUEST_NULL) { /* MPI-4.1 §4.2.3 */
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (!hmpi_req_is_ours(h))
        return PMPI_Parrived(h, partition, flag);
    int err = MPI_SUCCESS;
    hmpi_p2p_lock();
    hmpi_req_t *r = part_of(h, 0, &err);
    if (r && !flag)
        err = hmpi_err_what(MPI_ERR_ARG, "flag is NULL");
    MPI_Comm comm = r ? r->comm->handle : MPI_COMM_WORLD;
    part_t *p = r ? r->arg : NULL;
    if (!err && (partition < 0 || partition >= p->parts))
        err = hmpi_err_what(MPI_ERR_ARG, "partition %d is outside 0..%d", partition, p->parts - 1);
    if (!err) {
        if (r->active && !r->complete && !p->arrived[partition]) {
            hmpi_p2p_check(r);
            if (!r->complete && !p->arrived[partition])
                hmpi_p2p_progress();
        }
        /* An inactive request (MPI-4.1 §4.2.3), or PROC_NULL's, says true. */
        *flag = !r->active || r->complete || p->arrived[partition];
    }
    hmpi_p2p_unlock();
    return hmpi_raise_in(comm, err, fn);
}

#endif
