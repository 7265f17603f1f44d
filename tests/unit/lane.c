/* lane.c: the lane ring (src/shm/lane.h) without MPI. The table: rings of 1, 2 and 4
 * slots filled until a claim is refused, the skip after a full look (exactly
 * HMPI_LANE_SKIP refusals without a read), slots given back out of order (slot 0 kept
 * back holds the ring's way however many others are free, the writer's last slot is
 * used again as soon as it is given back), one look serving many claims, a ping-pong
 * that keeps to one slot, peeks of unpublished and last-lap slots, counts started just
 * below 2^32 and the ring wrapped many times; the walkers pass after every publish and
 * take of the table, fail on each corruption of what they check, and their assertions
 * abort at their levels. Then a writer and a reader as threads and as forked
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
    *l = (lane_t){ring, k, {start, (uint32_t)start, 0, 0}, {start, 0}};
}

static slot_t *claim(lane_t *l)
{
    return hmpi_lane_claim(&l->tx, l->ring, l->k, SLOT_BYTES, STATE, FREE);
}

static slot_t *slot(lane_t *l, uint64_t n) { return hmpi_lane_slot(l->ring, l->k, SLOT_BYTES, n); }

static slot_t *peek(lane_t *l) { return hmpi_lane_peek(&l->rx, l->ring, l->k, SLOT_BYTES); }

static void publish(lane_t *l, slot_t *s)
{
    hmpi_lane_publish(&l->tx, l->ring, l->k, SLOT_BYTES, s, STATE, BUSY);
}

/* Claims, fills and publishes message n; the slot must be free and the writer's last
 * again (again) or the ring's next. */
static void send_to(lane_t *l, uint64_t n, int again)
{
    uint64_t h = l->tx.head, want = again ? h - 1 : h;
    slot_t *s = claim(l);
    CHECK(s == slot(l, want), "k=%u: message %llu: claim gave %p, not slot %llu (%s)", l->k,
          (unsigned long long)n, (void *)s, (unsigned long long)want, again ? "again" : "next");
    CHECK(atomic_load(&s->state) == FREE, "k=%u: claimed slot not free", l->k);
    fill(s, n);
    uint64_t seq = l->tx.seq;
    publish(l, s);
    CHECK(hmpi_lane_tx_is_valid(&l->tx, l->ring, l->k, SLOT_BYTES),
          "k=%u: message %llu: the writer's walker failed", l->k, (unsigned long long)n);
    CHECK(l->tx.head == (again ? h : h + 1) && l->tx.seq == seq + 1 &&
              atomic_load(&s->seq) == seq + 1 && atomic_load(&s->state) == BUSY,
          "k=%u: published slot %llu has seq %llu, state %u, head %llu", l->k,
          (unsigned long long)want, (unsigned long long)atomic_load(&s->seq),
          atomic_load(&s->state), (unsigned long long)l->tx.head);
}

static void send_one(lane_t *l, uint64_t n) { send_to(l, n, 0); }

/* send_one after a refused claim: the claims until the skip is over find a slot. */
static void send_after_skip(lane_t *l, uint64_t n)
{
    for (int i = 0; !hmpi_lane_known_free(&l->tx) && claim(l) == NULL; i++)
        CHECK(i < HMPI_LANE_SKIP, "k=%u: a free slot not found by %d claims", l->k, i + 1);
    send_one(l, n);
}

/* Peeks, checks and takes message n from the reader's last slot again (again) or its
 * next (not given back). */
static slot_t *take_from(lane_t *l, uint64_t n, int again)
{
    uint64_t next = l->rx.next, want = again ? next - 1 : next;
    slot_t *s = peek(l);
    CHECK(s == slot(l, want), "k=%u: message %llu not seen in slot %llu (peek %p)", l->k,
          (unsigned long long)n, (unsigned long long)want, (void *)s);
    CHECK(peek(l) == s, "k=%u: a second peek moved", l->k);
    CHECK(wrong(s, n) == 0, "k=%u: message %llu read wrong", l->k, (unsigned long long)n);
    hmpi_lane_take(&l->rx, l->ring, l->k, SLOT_BYTES, s);
    CHECK(l->rx.next == (again && l->k > 1 ? next : next + 1), "k=%u: reader's next after %llu",
          l->k, (unsigned long long)n);
    CHECK(hmpi_lane_rx_is_valid(&l->rx, &l->tx, l->k), "k=%u: message %llu: the reader's walker",
          l->k, (unsigned long long)n);
    return s;
}

static slot_t *take_one(lane_t *l, uint64_t n) { return take_from(l, n, 0); }

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
    if (k == 1) { /* slot 0 is the writer's last too: used again, no look */
        send_to(&l, k, 1);
        CHECK(l.tx.skip == HMPI_LANE_SKIP, "k=1: the last slot again looked");
        CHECK(claim(&l) == NULL, "k=1: full again");
        give(take_from(&l, k, 0)); /* k = 1: the reader's next is its last, and moves */
        CHECK(peek(&l) == NULL, "k=1: peek past the last published slot");
        return;
    }
    for (int i = 0; i < HMPI_LANE_SKIP; i++)
        CHECK(claim(&l) == NULL, "k=%u: claim %d of the skip looked", k, i);
    CHECK(l.tx.skip == 0, "k=%u: skip counted down", k);
    send_one(&l, k); /* looks, finds slot 0 given back */
    CHECK(claim(&l) == NULL, "k=%u: full again", k);
    for (uint64_t n = 1; n <= k; n++)
        give(take_one(&l, n));
    CHECK(peek(&l) == NULL, "k=%u: peek past the last published slot", k);
}

/* Slots given back out of order: with slot 0 held the ring's way reuses none, while
 * the writer's last slot is used again as soon as it is given back. */
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
    give(held[2]);
    for (int i = 0; i <= 3 * (HMPI_LANE_SKIP + 1); i++) /* several looks */
        CHECK(claim(&l) == NULL, "slots 0 and 3 held, 1-2 free: claim %d reused a slot", i);
    give(held[3]); /* the writer's last: used again at once, the ring still held */
    slot_t *last = NULL;
    for (uint64_t n = 100; n < 103; n++) {
        send_to(&l, n, 1);
        CHECK(claim(&l) == NULL, "slot 3 taken again, slot 0 held: a slot claimed");
        last = take_from(&l, n, 1);
        if (n < 102)
            give(last);
    }
    CHECK(wrong(held[0], 0) == 0, "the held slot was written");
    give(held[0]);
    /* Slot 3 (the last) held, the others free: one look sees three, three claims, no
     * look in between. */
    send_after_skip(&l, 4);
    CHECK(l.tx.free == (uint32_t)(l.tx.head + 2), "the look saw %u free, not 3",
          (unsigned)(l.tx.free - (uint32_t)l.tx.head + 1));
    atomic_store(&slot(&l, 6)->state, BUSY); /* known free: the claim does not read it again */
    for (uint64_t n = 5; n < 7; n++) {
        slot_t *s = claim(&l);
        CHECK(s == slot(&l, n), "known-free claim %llu", (unsigned long long)n);
        fill(s, n);
        publish(&l, s);
    }
    CHECK(claim(&l) == NULL, "all four used again");
    /* Part of the ring free: the look stops at the first held slot. */
    give(last);
    for (uint64_t n = 4; n < 7; n++)
        held[n - 4] = take_one(&l, n);
    give(held[0]);
    send_after_skip(&l, 7);
    CHECK(l.tx.free == (uint32_t)l.tx.head + 1, "the look went past held slot 1");
    send_one(&l, 8);
    CHECK(claim(&l) == NULL, "held slot 1 reused");
}

/* A look made while the last slot reads free (the reader gives it back between a
 * claim's read of it and the look: a race, made here by calling the look) stops short
 * of it, so the last slot used again is never the ring's as well. */
static void look_spares_last(unsigned k)
{
    static _Alignas(64) unsigned char ring[MAX_K * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, k, 0);
    for (uint64_t n = 0; n < k; n++)
        send_one(&l, n);
    for (uint64_t n = 0; n < k; n++)
        give(take_one(&l, n));
    CHECK(hmpi_lane_look(&l.tx, l.ring, k, SLOT_BYTES, STATE, FREE) == slot(&l, k) &&
              l.tx.free == (uint32_t)(l.tx.head + k - 1),
          "k=%u: the look took %u slots, the last one's too", k,
          (unsigned)(l.tx.free - (uint32_t)l.tx.head));
    send_to(&l, 100, 1); /* the last slot again, not taken */
    for (uint64_t n = 101; n < 100 + k; n++)
        send_one(&l, n); /* the look's k - 1 slots */
    CHECK(claim(&l) == NULL, "k=%u: the ring's way came round to the message in the last slot", k);
    give(take_from(&l, 100, 1));
    for (uint64_t n = 101; n < 100 + k; n++)
        give(take_one(&l, n));
}

/* Peeks that must see nothing: a slot filled but not published (new, and used again),
 * a slot whose seq is its last lap's, a seq one ahead. */
static void unpublished(void)
{
    static _Alignas(64) unsigned char ring[2 * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, 2, 0);
    slot_t *s = claim(&l);
    fill(s, 0);
    CHECK(peek(&l) == NULL, "a claimed, filled, unpublished slot was seen");
    publish(&l, s);
    give(take_one(&l, 0));
    s = claim(&l); /* slot 0 again */
    CHECK(s == slot(&l, 0), "the last slot, given back, not used again");
    fill(s, 1);
    CHECK(peek(&l) == NULL, "a slot filled again, unpublished, was seen");
    publish(&l, s);
    slot_t *h = take_from(&l, 1, 1);
    send_one(&l, 2); /* slot 0 held: slot 1 */
    give(h);
    h = take_one(&l, 2);
    send_one(&l, 3); /* slot 1 held: the ring's next, slot 0 */
    give(take_one(&l, 3));
    give(h);
    /* Slot 0 holds seq 4 (message 3), slot 1 seq 3 (message 2): the reader waits for
     * message 5 in slot 0 (its last) or slot 1 (its next). */
    CHECK(peek(&l) == NULL, "slot 1's last lap seen as message 5");
    atomic_store(&slot(&l, 1)->seq, 6); /* a seq ahead (corrupted): not seq + 1 */
    atomic_store(&slot(&l, 0)->seq, 6);
    CHECK(peek(&l) == NULL, "a seq ahead seen as published");
    atomic_store(&slot(&l, 1)->seq, 5);
    CHECK(peek(&l) == slot(&l, 1), "seq + 1 in the next slot not seen");
    atomic_store(&slot(&l, 1)->seq, 3);
    atomic_store(&slot(&l, 0)->seq, 5);
    CHECK(peek(&l) == slot(&l, 0), "seq + 1 in the last slot not seen");
}

/* A ping-pong's lane: each message given back before the next is sent, which goes into
 * the same slot, k times over and more; then one held, and the ring moves on. */
static void ping_pong(unsigned k)
{
    static _Alignas(64) unsigned char ring[MAX_K * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, k, 0);
    send_one(&l, 0);
    give(take_one(&l, 0));
    for (uint64_t n = 1; n < 3 * k + 2; n++) {
        send_to(&l, n, 1);
        give(take_from(&l, n, 1));
    }
    CHECK(l.tx.head == 1, "k=%u: a ping-pong moved the ring (head %llu)", k,
          (unsigned long long)l.tx.head);
    send_to(&l, 99, 1);
    slot_t *h = take_from(&l, 99, 1);
    if (k > 1) {
        send_one(&l, 100); /* slot 0 held: the ring's next */
        give(take_one(&l, 100));
        send_to(&l, 101, 1); /* slot 1 again, slot 0 still held */
        give(take_from(&l, 101, 1));
    } else {
        CHECK(claim(&l) == NULL, "k=1: the only slot held, a slot claimed");
    }
    give(h);
}

/* Counts started at `start`, n messages through a ring of k, the reader following
 * one message behind (and holding one slot, so each message takes the ring's next;
 * with k = 1 none is held and each goes into the last slot again): every seq the full
 * 64-bit count. */
static void laps(unsigned k, uint64_t start, uint64_t count)
{
    static _Alignas(64) unsigned char ring[MAX_K * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, k, start);
    slot_t *held = NULL;
    uint64_t looks = 0;
    for (uint64_t n = start; n != start + count; n++) {
        int again = k == 1 && n != start;
        looks += !again && !hmpi_lane_known_free(&l.tx);
        send_to(&l, n, again);
        CHECK(atomic_load(&slot(&l, again ? l.tx.head - 1 : n)->seq) == n - start + 1,
              "seq of %llu", (unsigned long long)n);
        slot_t *s = take_from(&l, n, again);
        if (held)
            give(held);
        held = k > 1 ? s : NULL;
        if (!held)
            give(s);
    }
    CHECK(peek(&l) == NULL && l.tx.head == (k == 1 ? start + 1 : start + count) &&
              l.rx.next == start + count && l.tx.seq == count && l.rx.seq == count,
          "k=%u from %llu: cursors at the end", k, (unsigned long long)start);
    CHECK(looks <= count / (k > 1 ? k - 1 : 1) + 1, "k=%u: %llu looks for %llu messages", k,
          (unsigned long long)looks, (unsigned long long)count);
}

/* ---- the walkers ------------------------------------------------------------------------- */

static int tx_ok(const lane_t *l, const hmpi_lane_tx_t *tx)
{
    return hmpi_lane_tx_is_valid(tx, l->ring, l->k, SLOT_BYTES);
}

/* A claim on a cursor that skips more than HMPI_LANE_SKIP claims (the child's). */
static void claim_past_skip(void *arg)
{
    lane_t *l = arg;
    l->tx.skip = HMPI_LANE_SKIP + 1;
    claim(l);
}

/* A publish after the seq word of an older slot was overwritten with a later number. */
static void publish_over_bad_seq(void *arg)
{
    (void)arg;
    static _Alignas(64) unsigned char ring[4 * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, 4, 0);
    send_one(&l, 0);
    atomic_store(&slot(&l, 0)->seq, 9);
    slot_t *s = claim(&l);
    fill(s, 1);
    publish(&l, s);
}

/* hmpi_lane_tx_is_valid and hmpi_lane_rx_is_valid on a ring of 4 wrapped by 6 messages
 * (the reader holding one slot, so each took the ring's next): it passes; each
 * corruption of what they check fails it (a copy of a cursor, or a seq word put back
 * after); a state word, the reader's to write, is never read. Then the assertions that
 * call them: a claim on a cursor past its skip aborts from level 1 on, a publish over an
 * older slot's wrong number at level 2. */
static void walkers(void)
{
    static _Alignas(64) unsigned char ring[4 * SLOT_BYTES];
    lane_t l;
    lane_open(&l, ring, 4, 0);
    slot_t *held = NULL;
    for (uint64_t n = 0; n < 6; n++) {
        send_one(&l, n);
        slot_t *s = take_one(&l, n);
        if (held)
            give(held);
        held = s;
    }
    CHECK(l.tx.head == 6 && l.tx.seq == 6 && tx_ok(&l, &l.tx) &&
              hmpi_lane_rx_is_valid(&l.rx, &l.tx, 4),
          "six messages through a ring of 4: walkers failed");

    /* The writer's cursor. */
    hmpi_lane_tx_t tx = l.tx;
    CHECK(!hmpi_lane_tx_cursor_is_valid(&tx, 3) && !hmpi_lane_tx_cursor_is_valid(&tx, 0) &&
              !hmpi_lane_rx_is_valid(&l.rx, &l.tx, 6),
          "a ring of k slots, k no power of two, passed");
    tx.free = (uint32_t)tx.head + 3;
    CHECK(tx_ok(&l, &tx), "k - 1 slots known free failed");
    tx.free = (uint32_t)tx.head + 4;
    CHECK(!tx_ok(&l, &tx), "the last slot known free (k of them) once published passed");
    tx.free = (uint32_t)tx.head - 1;
    CHECK(!tx_ok(&l, &tx), "free behind head passed");
    tx.free = (uint32_t)tx.head;
    tx.skip = HMPI_LANE_SKIP;
    CHECK(tx_ok(&l, &tx), "a full skip with no slot known free failed");
    tx.skip = HMPI_LANE_SKIP + 1;
    CHECK(!tx_ok(&l, &tx), "a skip past HMPI_LANE_SKIP passed");
    tx.skip = 1;
    tx.free = (uint32_t)tx.head + 1;
    CHECK(!tx_ok(&l, &tx), "a skip with a slot known free passed");
    hmpi_lane_tx_t fresh = {8, 8 + 4, 0, 0};
    CHECK(hmpi_lane_tx_cursor_is_valid(&fresh, 4), "k slots known free before a message failed");
    fresh.free++;
    CHECK(!hmpi_lane_tx_cursor_is_valid(&fresh, 4), "k + 1 slots known free passed");
    tx = l.tx;
    tx.seq++;
    CHECK(!tx_ok(&l, &tx), "a cursor numbered past its last slot's message passed");
    tx.seq -= 2;
    CHECK(!tx_ok(&l, &tx), "a cursor numbered behind its last slot's message passed");

    /* The seq words, newest first: slots 1, 0, 3, 2 hold 6, 5, 4, 3. */
    _Atomic uint64_t *before = &slot(&l, 4)->seq, *oldest = &slot(&l, 2)->seq;
    uint64_t keep = atomic_load(before);
    atomic_store(before, 6);
    CHECK(!tx_ok(&l, &l.tx), "two slots with one number passed");
    atomic_store(before, 7);
    CHECK(!tx_ok(&l, &l.tx), "an older slot with a larger number passed");
    atomic_store(before, 0);
    CHECK(!tx_ok(&l, &l.tx), "a slot never used before used ones passed");
    atomic_store(before, keep);
    keep = atomic_load(oldest);
    atomic_store(oldest, 0);
    CHECK(tx_ok(&l, &l.tx), "a cursor started at position 3 (slot 2 never used) failed");
    atomic_store(oldest, 9);
    CHECK(!tx_ok(&l, &l.tx), "a slot numbered past the cursor passed");
    atomic_store(oldest, keep);
    atomic_store(&slot(&l, 3)->state, 0xBAD);
    CHECK(tx_ok(&l, &l.tx), "a state word (the reader's) was read");
    atomic_store(&slot(&l, 3)->state, FREE);

    /* The reader's cursor against the writer's. */
    hmpi_lane_rx_t rx = l.rx;
    rx.seq++;
    CHECK(!hmpi_lane_rx_is_valid(&rx, &l.tx, 4), "a reader past the last message passed");
    rx = (hmpi_lane_rx_t){l.tx.head + 1, l.tx.seq};
    CHECK(!hmpi_lane_rx_is_valid(&rx, &l.tx, 4), "a reader past the writer's head passed");
    rx = (hmpi_lane_rx_t){l.tx.head - 1, l.tx.seq};
    CHECK(!hmpi_lane_rx_is_valid(&rx, &l.tx, 4), "all taken, next short of head, passed");
    rx = (hmpi_lane_rx_t){l.tx.head - 2, l.tx.seq - 2};
    CHECK(hmpi_lane_rx_is_valid(&rx, &l.tx, 4), "two messages not taken failed");
    rx = (hmpi_lane_rx_t){l.tx.head - 2, l.tx.seq - 1};
    CHECK(!hmpi_lane_rx_is_valid(&rx, &l.tx, 4), "two positions behind for one message passed");
    rx = (hmpi_lane_rx_t){l.tx.head - 5, l.tx.seq - 5};
    CHECK(!hmpi_lane_rx_is_valid(&rx, &l.tx, 4), "five slots not taken in a ring of 4 passed");

    /* The assertions calling them. */
    int level = HMPI_ASSERT_LEVEL;
    CHECK(proc_aborts(claim_past_skip, &l) == (level >= 1),
          "a claim past the skip: aborted %d at level %d", !(level >= 1), level);
    CHECK(proc_aborts(publish_over_bad_seq, NULL) == (level >= 2),
          "a publish over a wrong number: aborted %d at level %d", !(level >= 2), level);
    give(held);
}

/* ---- a writer and a reader at once -------------------------------------------------- */

typedef struct {
    void *ring;
    unsigned k, hold;        /* slots; most slots the reader keeps taken at once */
    uint64_t count;          /* messages */
    _Atomic uint64_t *again; /* the writer's messages into its last slot again */
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
        /* the ring's next, or the last again (none before the first message) */
        bad += s != hmpi_lane_slot(sh->ring, sh->k, SLOT_BYTES, tx.head) &&
               (!n || s != hmpi_lane_slot(sh->ring, sh->k, SLOT_BYTES, tx.head - 1));
        bad += atomic_load_explicit(&s->state, memory_order_relaxed) != FREE;
        fill(s, n);
        uint64_t h = tx.head;
        hmpi_lane_publish(&tx, sh->ring, sh->k, SLOT_BYTES, s, STATE, BUSY);
        if (tx.head == h)
            atomic_fetch_add(sh->again, 1);
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
            hmpi_lane_take(&rx, sh->ring, sh->k, SLOT_BYTES, s);
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
    _Atomic uint64_t again = 0;
    shared_t sh = {NULL, k, hold, count, &again};
    CHECK(posix_memalign(&sh.ring, 64, (size_t)k * SLOT_BYTES) == 0, "out of memory");
    hmpi_lane_init(sh.ring, k, SLOT_BYTES, STATE, FREE);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, thread_main, &sh) == 0, "pthread_create");
    long bad = reader(&sh);
    void *wbad;
    pthread_join(t, &wbad);
    CHECK(bad == 0 && wbad == NULL, "threads, k=%u hold %u: reader %ld, writer %ld wrong values", k,
          hold, bad, (long)(intptr_t)wbad);
    CHECK(again > 0 && again < count,
          "threads, k=%u: %llu of %llu messages into the last slot "
          "again: not both ways",
          k, (unsigned long long)again, (unsigned long long)count);
    free(sh.ring);
}

static void with_processes(unsigned k, unsigned hold, uint64_t count)
{
    size_t bytes = (size_t)k * SLOT_BYTES + 64;
    void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(map != MAP_FAILED, "mmap");
    hmpi_lane_init(map, k, SLOT_BYTES, STATE, FREE);
    shared_t sh = {map, k, hold, count, (_Atomic uint64_t *)(void *)((char *)map + bytes - 64)};
    PROCS_RUN(2, member, &sh, "read wrong values");
    uint64_t again = atomic_load(sh.again);
    CHECK(again > 0 && again < count,
          "processes, k=%u: %llu of %llu messages into the last slot "
          "again: not both ways",
          k, (unsigned long long)again, (unsigned long long)count);
    munmap(map, bytes);
}

int main(void)
{
    for (unsigned k = 1; k <= 4; k *= 2)
        full_and_skip(k);
    full_and_skip(MAX_K);
    out_of_order();
    unpublished();
    for (unsigned k = 1; k <= 4; k *= 2)
        ping_pong(k);
    for (unsigned k = 2; k <= MAX_K; k *= 2)
        look_spares_last(k);
    walkers();
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
    printf("lane: table k=1,2,4,64; walkers; a writer and a reader as threads and processes, "
           "k=1,2,4,64: ok\n");
    return 0;
}
