/* lane.c: the lane ring (src/shm/lane.h) without MPI. The table: rings of 1, 2 and 4
 * slots filled until a claim is refused, the skip after a full look (exactly
 * HMPI_LANE_SKIP refusals without a read), slots given back out of order (slot 0 kept
 * back holds the writer however many others are free), one look serving many claims,
 * peeks of unpublished and last-lap slots, counts started just below 2^32 and the
 * ring wrapped many times. Then a writer and a reader as threads and as forked
 * processes over a MAP_SHARED mapping: numbered payloads of every length, each byte
 * checked when taken and again when given back (the reader keeps up to `hold` slots
 * and gives them back in a shuffled order), so a slot the writer reuses too early, a
 * payload seen before its seq, or a message lost or repeated shows as a wrong value. */
#include "shm/lane.h"
#include "../check.h"
#include "procs.h"

#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { PAYLOAD = 37, FREE = 7, BUSY = 3, MAX_K = 64 };

/* A slot: the seq first, the state last, as far from it as the slot allows. */
typedef struct {
    _Atomic uint64_t seq;
    uint64_t n;   /* the message's number */
    uint32_t len; /* payload bytes */
    unsigned char payload[PAYLOAD];
    _Atomic uint32_t state;
} slot_t;

#define STATE offsetof(slot_t, state)
#define SLOT_BYTES ((sizeof(slot_t) + 63) / 64 * 64)

static unsigned char byte_of(uint64_t n, unsigned i)
{
    return (unsigned char)((n * 0x9E3779B97F4A7C15ULL) >> (8 * (i % 8))) ^ (unsigned char)i;
}

static unsigned len_of(uint64_t n) { return (unsigned)(n * 7 % (PAYLOAD + 1)); /* 0 .. PAYLOAD */ }

static void fill(slot_t *s, uint64_t n)
{
    s->n = n;
    s->len = len_of(n);
    for (unsigned i = 0; i < PAYLOAD; i++)
        s->payload[i] = i < s->len ? byte_of(n, i) : 0xEE;
}

/* The number of wrong values slot s shows for message n. */
static long wrong(const slot_t *s, uint64_t n)
{
    long bad = s->n != n || s->len != len_of(n);
    for (unsigned i = 0; i < PAYLOAD; i++)
        bad += s->payload[i] != (i < len_of(n) ? byte_of(n, i) : 0xEE);
    return bad;
}

typedef struct {
    void *ring;
    unsigned k;
    hmpi_lane_tx_t tx;
    hmpi_lane_rx_t rx;
} lane_t;

static void lane_open(lane_t *l, void *ring, unsigned k, uint64_t start)
{
    memset(ring, 0xA5, (size_t)k * SLOT_BYTES); /* init must set the words itself */
    hmpi_lane_init(ring, k, SLOT_BYTES, STATE, FREE);
    *l = (lane_t){ring, k, {start, (uint32_t)start, 0}, {start}};
}

static slot_t *claim(lane_t *l)
{
    return hmpi_lane_claim(&l->tx, l->ring, l->k, SLOT_BYTES, STATE, FREE);
}

static slot_t *slot(lane_t *l, uint64_t n) { return hmpi_lane_slot(l->ring, l->k, SLOT_BYTES, n); }

static slot_t *peek(lane_t *l) { return hmpi_lane_peek(&l->rx, l->ring, l->k, SLOT_BYTES); }

/* Claims, fills and publishes message n; the slot must be the ring's next and free. */
static void send_one(lane_t *l, uint64_t n)
{
    slot_t *s = claim(l);
    CHECK(s == slot(l, l->tx.head), "k=%u: message %llu: claim gave %p, not slot %llu", l->k,
          (unsigned long long)n, (void *)s, (unsigned long long)l->tx.head);
    CHECK(atomic_load(&s->state) == FREE, "k=%u: claimed slot not free", l->k);
    fill(s, n);
    uint64_t h = l->tx.head;
    hmpi_lane_publish(&l->tx, s, STATE, BUSY);
    CHECK(l->tx.head == h + 1 && atomic_load(&s->seq) == h + 1 && atomic_load(&s->state) == BUSY,
          "k=%u: published slot %llu has seq %llu, state %u", l->k, (unsigned long long)h,
          (unsigned long long)atomic_load(&s->seq), atomic_load(&s->state));
}

/* send_one after a refused claim: the claims until the skip is over find a slot. */
static void send_after_skip(lane_t *l, uint64_t n)
{
    for (int i = 0; !hmpi_lane_known_free(&l->tx) && claim(l) == NULL; i++)
        CHECK(i < HMPI_LANE_SKIP, "k=%u: a free slot not found by %d claims", l->k, i + 1);
    send_one(l, n);
}

/* Peeks, checks and takes message n (not given back). */
static slot_t *take_one(lane_t *l, uint64_t n)
{
    slot_t *s = peek(l);
    CHECK(s == slot(l, l->rx.next), "k=%u: message %llu not seen (peek %p)", l->k,
          (unsigned long long)n, (void *)s);
    CHECK(peek(l) == s, "k=%u: a second peek moved", l->k);
    CHECK(wrong(s, n) == 0, "k=%u: message %llu read wrong", l->k, (unsigned long long)n);
    hmpi_lane_take(&l->rx);
    return s;
}

static void give(slot_t *s) { hmpi_lane_give_back(s, STATE, FREE); }

/* k slots fill, the next claim is refused, then exactly HMPI_LANE_SKIP claims are
 * refused without a look although a slot is free again; the one after looks. */
static void full_and_skip(unsigned k)
{
    static _Alignas(64) unsigned char ring[MAX_K * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, k, 0);
    for (unsigned i = 0; i < k; i++) {
        slot_t *s = slot(&l, i);
        CHECK(atomic_load(&s->seq) == 0 && atomic_load(&s->state) == FREE, "k=%u: init slot %u", k,
              i);
    }
    CHECK(peek(&l) == NULL, "k=%u: peek of a fresh ring", k);
    for (uint64_t n = 0; n < k; n++)
        send_one(&l, n);
    CHECK(claim(&l) == NULL && l.tx.skip == HMPI_LANE_SKIP, "k=%u: a full ring gave a slot", k);
    give(take_one(&l, 0));
    for (int i = 0; i < HMPI_LANE_SKIP; i++)
        CHECK(claim(&l) == NULL, "k=%u: claim %d of the skip looked", k, i);
    CHECK(l.tx.skip == 0, "k=%u: skip counted down", k);
    send_one(&l, k); /* looks, finds slot 0 given back */
    CHECK(claim(&l) == NULL, "k=%u: full again", k);
    for (uint64_t n = 1; n <= k; n++)
        give(take_one(&l, n));
    CHECK(peek(&l) == NULL, "k=%u: peek past the last published slot", k);
}

/* Slots given back out of order: with slot 0 held the writer reuses none. */
static void out_of_order(void)
{
    static _Alignas(64) unsigned char ring[4 * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, 4, 0);
    slot_t *held[4];
    for (uint64_t n = 0; n < 4; n++)
        send_one(&l, n);
    for (uint64_t n = 0; n < 4; n++)
        held[n] = take_one(&l, n);
    give(held[1]); /* slot 1 before slot 0 */
    give(held[3]);
    give(held[2]);
    for (int i = 0; i <= 3 * (HMPI_LANE_SKIP + 1); i++) /* several looks */
        CHECK(claim(&l) == NULL, "slot 0 held, slots 1-3 free: claim %d reused a slot", i);
    CHECK(wrong(held[0], 0) == 0, "the held slot was written");
    give(held[0]);
    /* One look sees all four free: four claims, no look in between. */
    send_after_skip(&l, 4);
    CHECK(l.tx.free == (uint32_t)(l.tx.head + 3), "the look saw %u free, not 4",
          (unsigned)(l.tx.free - (uint32_t)l.tx.head + 1));
    atomic_store(&slot(&l, 6)->state, BUSY); /* known free: the claim does not read it again */
    for (uint64_t n = 5; n < 8; n++) {
        slot_t *s = claim(&l);
        CHECK(s == slot(&l, n), "known-free claim %llu", (unsigned long long)n);
        fill(s, n);
        hmpi_lane_publish(&l.tx, s, STATE, BUSY);
    }
    CHECK(claim(&l) == NULL, "all four used again");
    /* Part of the ring free: the look stops at the first held slot. */
    for (uint64_t n = 4; n < 8; n++)
        held[n - 4] = take_one(&l, n);
    give(held[0]);
    give(held[1]);
    give(held[3]);
    send_after_skip(&l, 8);
    CHECK(l.tx.free == (uint32_t)l.tx.head + 1, "the look went past held slot 6");
    send_one(&l, 9);
    CHECK(claim(&l) == NULL, "held slot 6 reused");
}

/* Peeks that must see nothing: a slot filled but not published, a slot whose seq is
 * its last lap's, a seq one ahead. */
static void unpublished(void)
{
    static _Alignas(64) unsigned char ring[2 * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, 2, 0);
    slot_t *s = claim(&l);
    fill(s, 0);
    CHECK(peek(&l) == NULL, "a claimed, filled, unpublished slot was seen");
    hmpi_lane_publish(&l.tx, s, STATE, BUSY);
    give(take_one(&l, 0));
    send_one(&l, 1);
    give(take_one(&l, 1));
    /* Slot 0 holds seq 1 (message 0): the reader now waits for message 2 there. */
    CHECK(peek(&l) == NULL, "slot 0's last lap seen as message 2");
    atomic_store(&slot(&l, 2)->seq, 4); /* a seq ahead (corrupted): not next + 1 */
    CHECK(peek(&l) == NULL, "a seq ahead seen as published");
    atomic_store(&slot(&l, 2)->seq, 3);
    CHECK(peek(&l) == slot(&l, 2), "seq next + 1 not seen");
}

/* Counts started at `start`, n messages through a ring of k, the reader following
 * one message behind (and holding one slot): every seq the full 64-bit count + 1. */
static void laps(unsigned k, uint64_t start, uint64_t count)
{
    static _Alignas(64) unsigned char ring[MAX_K * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, k, start);
    slot_t *held = NULL;
    uint64_t looks = 0;
    for (uint64_t n = start; n != start + count; n++) {
        looks += !hmpi_lane_known_free(&l.tx);
        send_one(&l, n);
        CHECK(atomic_load(&slot(&l, n)->seq) == n + 1, "seq of %llu", (unsigned long long)n);
        slot_t *s = take_one(&l, n);
        if (held)
            give(held);
        held = k > 1 ? s : NULL;
        if (!held)
            give(s);
    }
    CHECK(peek(&l) == NULL && l.tx.head == start + count && l.rx.next == start + count,
          "k=%u from %llu: cursors at the end", k, (unsigned long long)start);
    CHECK(looks <= count / (k > 1 ? k - 1 : 1) + 1, "k=%u: %llu looks for %llu messages", k,
          (unsigned long long)looks, (unsigned long long)count);
}

/* ---- a writer and a reader at once -------------------------------------------------- */

typedef struct {
    void *ring;
    unsigned k, hold; /* slots; most slots the reader keeps taken at once */
    uint64_t count;   /* messages */
} shared_t;

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static long writer(shared_t *sh)
{
    hmpi_lane_tx_t tx = {0};
    long bad = 0;
    for (uint64_t n = 0; n < sh->count; n++) {
        slot_t *s;
        while (!(s = hmpi_lane_claim(&tx, sh->ring, sh->k, SLOT_BYTES, STATE, FREE)))
            sched_yield();
        bad += s != hmpi_lane_slot(sh->ring, sh->k, SLOT_BYTES, n);
        bad += atomic_load_explicit(&s->state, memory_order_relaxed) != FREE;
        fill(s, n);
        hmpi_lane_publish(&tx, s, STATE, BUSY);
    }
    return bad;
}

static long reader(shared_t *sh)
{
    hmpi_lane_rx_t rx = {0};
    slot_t *held[MAX_K];
    uint64_t held_n[MAX_K], x = 0x2545F4914F6CDD1DULL ^ sh->k;
    unsigned nheld = 0;
    long bad = 0;
    for (uint64_t n = 0; n < sh->count || nheld;) {
        slot_t *s = n < sh->count ? hmpi_lane_peek(&rx, sh->ring, sh->k, SLOT_BYTES) : NULL;
        if (s) {
            bad += wrong(s, n);
            hmpi_lane_take(&rx);
            held[nheld] = s;
            held_n[nheld++] = n++;
        }
        /* Give back a random held slot when the hand is full, the stream is over, or at
         * random: out of order, never more than `hold` kept. */
        if (nheld && (nheld == sh->hold || n == sh->count || rnd(&x) % 4 == 0)) {
            unsigned i = (unsigned)(rnd(&x) % nheld);
            bad += wrong(held[i], held_n[i]); /* not rewritten while held */
            hmpi_lane_give_back(held[i], STATE, FREE);
            held[i] = held[--nheld];
            held_n[i] = held_n[nheld];
        }
        if (!s)
            sched_yield();
    }
    return bad;
}

static long member(shared_t *sh, int i) { return i == 0 ? writer(sh) : reader(sh); }

static void *thread_main(void *arg) { return (void *)(intptr_t)writer(arg); }

static void with_threads(unsigned k, unsigned hold, uint64_t count)
{
    shared_t sh = {NULL, k, hold, count};
    CHECK(posix_memalign(&sh.ring, 64, (size_t)k * SLOT_BYTES) == 0, "out of memory");
    hmpi_lane_init(sh.ring, k, SLOT_BYTES, STATE, FREE);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_main, &sh) == 0, "pthread_create");
    long bad = reader(&sh);
    void *wbad;
    pthread_join(t, &wbad);
    CHECK(bad == 0 && wbad == NULL, "threads, k=%u hold %u: reader %ld, writer %ld wrong values", k,
          hold, bad, (long)(intptr_t)wbad);
    free(sh.ring);
}

static void with_processes(unsigned k, unsigned hold, uint64_t count)
{
    size_t bytes = (size_t)k * SLOT_BYTES;
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED, "mmap");
    hmpi_lane_init(map, k, SLOT_BYTES, STATE, FREE);
    shared_t sh = {map, k, hold, count};
    PROCS_RUN(2, member, &sh, "read wrong values");
    munmap(map, bytes);
}

int main(void)
{
    for (unsigned k = 1; k <= 4; k *= 2)
        full_and_skip(k);
    full_and_skip(MAX_K);
    out_of_order();
    unpublished();
    for (unsigned k = 1; k <= 4; k *= 2) {
        laps(k, 0, 1000 * k + 3);                     /* the ring wrapped many times */
        laps(k, (1ULL << 32) - 2 * k - 1, 4 * k + 5); /* the low 32 bits of head wrap */
        laps(k, UINT64_MAX / 2, 2 * k + 1);
    }
    /* Slots, most held, messages: a small ring moves in lock step (a switch a message
     * or two when the two share a core, milliseconds on a loaded machine), so it
     * carries fewer. */
    static const struct {
        unsigned k, hold, count;
    } runs[] = {{1, 1, 3000}, {2, 2, 10000}, {4, 3, 30000}, {64, 17, 200000}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        with_threads(runs[i].k, runs[i].hold, runs[i].count);
        with_processes(runs[i].k, runs[i].hold, runs[i].count);
    }
    printf("lane: table k=1,2,4,64; a writer and a reader as threads and processes, k=1,2,4,64: "
           "ok\n");
    return 0;
}
