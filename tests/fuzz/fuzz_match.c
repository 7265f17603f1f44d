/* fuzz_match.c: libFuzzer harness of the matching rules (src/p2p/match.h, the code the
 * engine runs). Each input is a program of operations on one receiver: a message
 * arrives (context, source, tag), a receive is posted (wildcards allowed, or held back
 * as the bridge does), probe, matched probe, cancel of a posted receive. Every decision
 * is compared with a reference model written here from the MPI rules (plain arrays in
 * post/arrival order, scanned from the oldest), and after every operation the engine's
 * lists must hold the same elements in the same order. Small value ranges make matches,
 * wildcards and same-key sequences (non-overtaking) frequent. No MPI. */
#include "p2p/match.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CAP = 48, NCTX = 3, NSRC = 4, NTAG = 4, ANY = -1 };

#define FAIL(...)                                    \
    do {                                             \
        fprintf(stderr, "fuzz_match: " __VA_ARGS__); \
        fputc('\n', stderr);                         \
        abort();                                     \
    } while (0)

/* ---- the engine's side: match.h on objects that carry an id ------------------------ */

typedef struct {
    hmpi_match_msg_t m; /* first: lists link this */
    int id;
} msg_t;

typedef struct {
    hmpi_match_recv_t r;
    int id;
    int in_use;
} recv_t;

/* ---- the reference model ------------------------------------------------------------ */

typedef struct {
    int id;
    int ctx, src, tag; /* src/tag ANY for a wildcard (receives only) */
    int held;
} item_t;

typedef struct {
    item_t posted[CAP];
    int nposted;
    item_t unexp[CAP];
    int nunexp;
} model_t;

/* MPI's rule, spelt out independently of match.h. */
static int model_matches(const item_t *recv, const item_t *msg)
{
    if (recv->held)
        return 0;
    if (recv->ctx != msg->ctx)
        return 0;
    if (recv->src != ANY && recv->src != msg->src)
        return 0;
    if (recv->tag != ANY && recv->tag != msg->tag)
        return 0;
    return 1;
}

static void model_remove(item_t *list, int *n, int i)
{
    memmove(&list[i], &list[i + 1], (size_t)(*n - i - 1) * sizeof list[0]);
    (*n)--;
}

/* ---- state of one run ------------------------------------------------------------ */

static hmpi_match_t q;
static model_t model;
static msg_t msgs[CAP]; /* unexpected messages live here, by slot */
static int msg_slot_used[CAP];
static recv_t recvs[CAP];
static int next_id;

static msg_t *msg_alloc(void)
{
    for (int i = 0; i < CAP; i++)
        if (!msg_slot_used[i]) {
            msg_slot_used[i] = 1;
            return &msgs[i];
        }
    return NULL;
}

static void msg_free(msg_t *m) { msg_slot_used[m - msgs] = 0; }

static recv_t *recv_alloc(void)
{
    for (int i = 0; i < CAP; i++)
        if (!recvs[i].in_use) {
            recvs[i].in_use = 1;
            return &recvs[i];
        }
    return NULL;
}

static void pattern(hmpi_match_recv_t *r, const item_t *it)
{
    memset(r, 0, sizeof *r);
    r->ctx = (uint32_t)it->ctx;
    /* The engine keeps the wildcard value in src/tag too: make it collide with a real
     * source or tag value, so only the any_* flags can make it match. */
    r->src = it->src == ANY ? 0 : it->src;
    r->tag = it->tag == ANY ? 0 : it->tag;
    r->any_src = it->src == ANY;
    r->any_tag = it->tag == ANY;
    r->held = (uint8_t)it->held;
}

/* The engine's lists must be the model's, element by element, with sound links. */
static void compare_lists(void)
{
    int i = 0;
    hmpi_match_recv_t *prev = NULL;
    for (hmpi_match_recv_t *r = q.posted_head; r; prev = r, r = r->next, i++) {
        if (i >= model.nposted)
            FAIL("posted list longer than the model's %d", model.nposted);
        if (((recv_t *)(void *)r)->id != model.posted[i].id)
            FAIL("posted[%d] is receive %d, model says %d", i, ((recv_t *)(void *)r)->id,
                 model.posted[i].id);
        if (r->prev != prev || !r->posted)
            FAIL("posted[%d]: bad prev link or flag", i);
    }
    if (i != model.nposted || q.posted_tail != prev)
        FAIL("posted list has %d, model %d, or a stale tail", i, model.nposted);
    i = 0;
    hmpi_match_msg_t *last = NULL;
    for (hmpi_match_msg_t *m = q.unexp_head; m; last = m, m = m->next, i++) {
        if (i >= model.nunexp)
            FAIL("unexpected list longer than the model's %d", model.nunexp);
        if (((msg_t *)(void *)m)->id != model.unexp[i].id)
            FAIL("unexp[%d] is message %d, model says %d", i, ((msg_t *)(void *)m)->id,
                 model.unexp[i].id);
    }
    if (i != model.nunexp || q.unexp_tail != last)
        FAIL("unexpected list has %d, model %d, or a stale tail", i, model.nunexp);
    /* The walker the engine asserts with agrees with this model's verdict. */
    if (!hmpi_match_valid(&q))
        FAIL("hmpi_match_valid rejects lists the model accepts");
}

/* A message arrives: the oldest matching posted receive takes it, else it waits. */
static void op_arrive(item_t it)
{
    if (model.nunexp == CAP)
        return;
    msg_t *m = msg_alloc();
    m->id = it.id;
    m->m.ctx = (uint32_t)it.ctx;
    m->m.src = it.src;
    m->m.tag = it.tag;
    hmpi_match_recv_t *got = hmpi_match_arrive(&q, &m->m);
    int want = -1;
    for (int i = 0; i < model.nposted && want < 0; i++)
        if (model_matches(&model.posted[i], &it))
            want = i;
    if (want < 0) {
        if (got)
            FAIL("message %d matched receive %d, model: none", it.id, ((recv_t *)(void *)got)->id);
        hmpi_match_park(&q, &m->m);
        model.unexp[model.nunexp++] = it;
        return;
    }
    if (!got || ((recv_t *)(void *)got)->id != model.posted[want].id)
        FAIL("message %d: engine chose receive %d, model %d", it.id,
             got ? ((recv_t *)(void *)got)->id : -1, model.posted[want].id);
    ((recv_t *)(void *)got)->in_use = 0;
    model_remove(model.posted, &model.nposted, want);
    msg_free(m);
}

/* The oldest unexpected message the pattern matches, per the model; -1 when none. */
static int model_find(const item_t *pat)
{
    for (int i = 0; i < model.nunexp; i++)
        if (model_matches(pat, &model.unexp[i]))
            return i;
    return -1;
}

/* Probe (remove = 0), matched probe (remove = 1), or the first step of a receive. */
static hmpi_match_msg_t *op_find(const item_t *pat, int remove)
{
    hmpi_match_recv_t p;
    pattern(&p, pat);
    hmpi_match_msg_t *got = hmpi_match_find(&q, &p, remove);
    int want = model_find(pat);
    int got_id = got ? ((msg_t *)(void *)got)->id : -1;
    int want_id = want >= 0 ? model.unexp[want].id : -1;
    if (got_id != want_id)
        FAIL("%s (ctx %d src %d tag %d): engine found message %d, model %d",
             remove ? "take" : "probe", pat->ctx, pat->src, pat->tag, got_id, want_id);
    if (got && remove) {
        model_remove(model.unexp, &model.nunexp, want);
        msg_free((msg_t *)(void *)got);
    }
    return got;
}

/* A receive is started: an unexpected message first, else it is posted (held ones,
 * the bridge's deferred receives, are always posted and match nothing). */
static void op_post(item_t it)
{
    if (!it.held && op_find(&it, 1))
        return;
    if (model.nposted == CAP)
        return;
    recv_t *r = recv_alloc();
    r->id = it.id;
    pattern(&r->r, &it);
    hmpi_match_post(&q, &r->r);
    model.posted[model.nposted++] = it;
}

/* Cancel (or, for a held one, the bridge sending it below): off the posted list. */
static void op_cancel(unsigned which)
{
    if (model.nposted == 0)
        return;
    int i = (int)(which % (unsigned)model.nposted);
    recv_t *r = NULL;
    for (int k = 0; k < CAP; k++)
        if (recvs[k].in_use && recvs[k].id == model.posted[i].id)
            r = &recvs[k];
    if (!r || !r->r.posted)
        FAIL("receive %d of the model is not posted in the engine", model.posted[i].id);
    hmpi_match_unpost(&q, &r->r);
    r->in_use = 0;
    model_remove(model.posted, &model.nposted, i);
}

static void reset(void)
{
    memset(&q, 0, sizeof q);
    memset(&model, 0, sizeof model);
    memset(msg_slot_used, 0, sizeof msg_slot_used);
    memset(recvs, 0, sizeof recvs);
    next_id = 0;
}

/* Two bytes an operation: op and wildcard bits, then context, source and tag. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reset();
    for (size_t i = 0; i + 1 < size; i += 2) {
        uint8_t a = data[i], b = data[i + 1];
        item_t it = {.id = next_id++,
                     .ctx = b % NCTX,
                     .src = (b / NCTX) % NSRC,
                     .tag = (b / (NCTX * NSRC)) % NTAG};
        switch (a % 8) {
        case 0:
        case 1: /* arrivals twice as often: unexpected lists grow */ op_arrive(it); break;
        case 2:
        case 3:
            it.src = (a & 0x10) ? ANY : it.src;
            it.tag = (a & 0x20) ? ANY : it.tag;
            op_post(it);
            break;
        case 4:
            it.held = 1;
            op_post(it);
            break;
        case 5:
            it.src = (a & 0x10) ? ANY : it.src;
            it.tag = (a & 0x20) ? ANY : it.tag;
            op_find(&it, (a & 0x40) != 0);
            break;
        default: op_cancel(b); break;
        }
        compare_lists();
    }
    return 0;
}
