/* mpit.c: the MPI tool information interface (MPI_T_*) with HMPI's variables in it.
 * Tools (TAU, Caliper, Score-P) list the MPI's control and performance variables and
 * categories by index; HMPI shows the MPI below's, then its own: every knob of
 * common/knobs.def as a control variable HMPI_<NAME>, every counter of common/stats.def
 * as a performance variable hmpi_<name>, in categories hmpi and hmpi_<part>.
 *
 * Indices. The MPI below may add variables while the process runs, and an index never
 * changes meaning (MPI-4.1 §15.3). HMPI's K variables of a kind sit right after the
 * below's first count B of it (taken at the first MPI_T_init_thread): user index u is
 * the below's u when u < B, HMPI's u - B when B <= u < B + K, the below's u - K beyond.
 * So the below's variables present then keep their indices; later ones shift by K.
 *
 * Handles. Every session and handle a tool sees is HMPI's (an obj_t in a chunk of this
 * file), wrapping the below's handle when the variable is the below's: handles never
 * collide, and a bad one is found without reading through it (obj_find).
 *
 * HMPI's performance variables: counters bound to no object, non-continuous, writable,
 * readable and reset atomically. A handle counts only while started: it keeps what it
 * counted so far (acc) and the counter's value when it last started or was reset or
 * written (base); while any handle of HMPI runs, HMPI counts (hmpi_stats_want).
 * Everything here runs under one lock; MPI_T calls are rare next to messages. */
#include "../common/knobs.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../p2p/p2p.h"
#include "../core/errors.h"
#include "mpit.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- what HMPI shows ------------------------------------------------------------------ */

/* The knobs a tool may change while the program runs: each is read where it is used (no
 * state was sized by it), and changing it in one rank is safe whatever the others do. */
static const char *const writable[] = {
    "IMMEDIATE_MAX", /* at most what MPI_Init read: the envelopes were sized by it */
    "SYNERGISTIC_MIN", "SYNERGISTIC_LARGE", "SYNERGISTIC_BLOCK", "SYNERGISTIC_BLOCK_LARGE",
    "CMA_MIN",         "PIPE_CHUNK",        "EAGER_MAX",         "EAGER_DELAY_US",
    "CHECK",           "VERBOSE",           "OPI_POOL_MAX",      "OPI_POOL_DEPTH"};

/* Categories: hmpi (the knobs of no part, and the part categories), then one per part. */
enum { CAT_HMPI, CAT_PARTS, NCATS = CAT_PARTS + HMPI_PART_COUNT };
static const char *const part_docs[HMPI_PART_COUNT] = {
    "point-to-point: protocols inside a node, lanes, messages to other nodes, waits",
    "collectives: direct access inside a node, hierarchical across nodes, waits",
    "one-sided communication: HMPI's windows, operations, synchronization waits",
    "ownership passing (OPI): pools, gives, waits",
    "the shared heap: the region, its allocations, huge pages"};

/* The part of knob k, or -1 for HMPI as a whole. */
static int knob_part(const hmpi_knob_info_t *k)
{
    static const struct {
        const char *prefix;
        int part;
    } map[] = {
        {"IMMEDIATE_", HMPI_PART_P2P}, {"LANE_", HMPI_PART_P2P}, {"SYNERGISTIC_", HMPI_PART_P2P},
        {"CMA", HMPI_PART_P2P},        {"PIPE_", HMPI_PART_P2P}, {"EAGER_", HMPI_PART_P2P},
        {"COLL", HMPI_PART_COLL},      {"RMA", HMPI_PART_RMA},   {"OPI_", HMPI_PART_OPI},
        {"HEAP_", HMPI_PART_HEAP},     {"SHM_", HMPI_PART_HEAP}, {"HUGEPAGES", HMPI_PART_HEAP}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strncmp(k->name, map[i].prefix, strlen(map[i].prefix)) == 0)
            return map[i].part;
    return -1;
}

static int knob_writable(const hmpi_knob_info_t *k)
{
    for (size_t i = 0; i < sizeof writable / sizeof writable[0]; i++)
        if (strcmp(k->name, writable[i]) == 0)
            return 1;
    return 0;
}

/* The category of HMPI's cvar i, pvar i, and of category c (-1: none). */
static int cvar_cat(int i)
{
    int p = knob_part(&hmpi_knob_table[i]);
    return p < 0 ? CAT_HMPI : CAT_PARTS + p;
}
static int pvar_cat(int i) { return CAT_PARTS + (int)hmpi_stat_part((hmpi_stat_t)i); }
static int cat_parent(int c) { return c == CAT_HMPI ? -1 : CAT_HMPI; }

static void cat_name(int c, char *buf, size_t len)
{
    if (c == CAT_HMPI)
        snprintf(buf, len, "hmpi");
    else
        snprintf(buf, len, "hmpi_%s", hmpi_part_name((hmpi_part_t)(c - CAT_PARTS)));
}

static const char *cat_doc(int c)
{
    return c == CAT_HMPI ? "HMPI, the layer over the MPI below: its settings (HMPI_* knobs) "
                           "and its parts"
                         : part_docs[c - CAT_PARTS];
}

/* How HMPI's cvar i is typed: MPI_INT, MPI_UNSIGNED_LONG_LONG or MPI_CHAR, and count. */
static MPI_Datatype cvar_type(const hmpi_knob_info_t *k, int *count_p)
{
    *count_p = 1;
    switch (k->type) {
    case HMPI_KNOB_BOOL: return MPI_INT;
    case HMPI_KNOB_INT:
        return k->max <= INT_MAX && k->min >= INT_MIN ? MPI_INT : MPI_UNSIGNED_LONG_LONG;
    case HMPI_KNOB_SIZE: return MPI_UNSIGNED_LONG_LONG;
    default:
        *count_p = HMPI_MPIT_STRING_MAX; /* any value a path or a word:VALUE may take */
        return MPI_CHAR;
    }
}

static int cvar_scope(const hmpi_knob_info_t *k)
{
    return knob_writable(k) ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_CONSTANT;
}

/* The address of knob i's value in hmpi_knobs: X-macro order is the table's order. */
static void *knob_field(int i)
{
    void *fields[] = {
#define X(name, type, def, min, max, doc) &hmpi_knobs.name,
#include "../common/knobs.def"
#undef X
    };
    return fields[i];
}

/* ---- the MPI below's indices ---------------------------------------------------------- */

enum { KIND_CVAR, KIND_PVAR, KIND_CAT, KINDS };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int inits;                      /* MPI_T_init_thread calls not yet finalized */
static int base[KINDS] = {-1, -1, -1}; /* B: HMPI's variables of each kind start here */

static int ours_count(int kind)
{
    return kind == KIND_CVAR ? hmpi_knob_count : kind == KIND_PVAR ? HMPI_STAT_COUNT : NCATS;
}

/* User index u of kind: HMPI's (returns 1, *mine set), the below's (0, *below set), or
 * none (-1). Checked here: MPICH does not check an index it is given. */
enum { MINE = 1, BELOW = 0, NO_INDEX = -1 };
static int split(int kind, int u, int *mine, int *below)
{
    int b = base[kind], k = ours_count(kind), n = 0;
    if (u >= b && u < b + k) {
        *mine = u - b;
        return MINE;
    }
    *below = u < b ? u : u - k;
    if (u < 0)
        return NO_INDEX;
    int rc = kind == KIND_CVAR   ? PMPI_T_cvar_get_num(&n)
             : kind == KIND_PVAR ? PMPI_T_pvar_get_num(&n)
                                 : PMPI_T_category_get_num(&n);
    return rc == MPI_SUCCESS && *below < n ? BELOW : NO_INDEX;
}

static int from_below(int kind, int b) { return b < base[kind] ? b : b + ours_count(kind); }
static int from_mine(int kind, int i) { return base[kind] + i; }

/* ---- objects -------------------------------------------------------------------------- */

enum { OBJ_FREE, OBJ_SESSION, OBJ_PVAR, OBJ_CVAR };
typedef struct obj_s {
    int kind;  /* OBJ_* */
    int below; /* wraps the MPI below's handle (h) */
    union {
        MPI_T_pvar_session s;
        MPI_T_pvar_handle p;
        MPI_T_cvar_handle c;
    } h;
    struct obj_s *session; /* a pvar handle: its session */
    struct obj_s *next;    /* a session's handles, from the session; the free list */
    int index;             /* HMPI's: the knob or the counter */
    int started;
    uint64_t acc, base; /* HMPI's pvar: see the banner */
} obj_t;

enum { CHUNK = 256, MAX_CHUNKS = 4096 };
static obj_t *chunks[MAX_CHUNKS];
static int nchunks;
static obj_t *free_objs;
static int running; /* HMPI's pvar handles started */

static obj_t *obj_new(int kind)
{
    if (!free_objs) {
        if (nchunks == MAX_CHUNKS)
            return NULL;
        obj_t *c = calloc(CHUNK, sizeof *c);
        if (!c)
            return NULL;
        chunks[nchunks++] = c;
        for (int i = CHUNK - 1; i >= 0; i--) {
            c[i].next = free_objs;
            free_objs = &c[i];
        }
    }
    obj_t *o = free_objs;
    free_objs = o->next;
    memset(o, 0, sizeof *o);
    o->kind = kind;
    return o;
}

static void obj_free(obj_t *o)
{
    o->kind = OBJ_FREE;
    o->next = free_objs;
    free_objs = o;
}

/* The live object of that kind at p, or NULL: p is compared, never read through, until
 * it is known to be one of ours. */
static obj_t *obj_find(const void *p, int kind)
{
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < nchunks; i++) {
        uintptr_t lo = (uintptr_t)chunks[i];
        if (a >= lo && a < lo + CHUNK * sizeof(obj_t) && (a - lo) % sizeof(obj_t) == 0) {
            obj_t *o = (obj_t *)p;
            return o->kind == kind ? o : NULL;
        }
    }
    return NULL;
}

/* ---- HMPI's counters as handles see them ---------------------------------------------- */

static uint64_t counter(int i) { return hmpi_stat_get((hmpi_stat_t)i); }

static uint64_t pvar_value(const obj_t *h)
{
    return h->acc + (h->started ? counter(h->index) - h->base : 0);
}

static void pvar_start(obj_t *h)
{
    if (h->started)
        return;
    h->base = counter(h->index);
    h->started = 1;
    if (running++ == 0) {
        hmpi_wait_calibrate();
        hmpi_stats_want(HMPI_STATS_BY_TOOL, 1);
    }
}

static void pvar_stop(obj_t *h)
{
    if (!h->started)
        return;
    h->acc = pvar_value(h);
    h->started = 0;
    if (--running == 0)
        hmpi_stats_want(HMPI_STATS_BY_TOOL, 0);
}

static void pvar_set(obj_t *h, uint64_t v)
{
    h->acc = v;
    h->base = counter(h->index);
}

/* Unlinks and frees handle h of its session. */
static void pvar_forget(obj_t *h)
{
    pvar_stop(h);
    for (obj_t **pp = &h->session->next; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            break;
        }
    obj_free(h);
}

/* ---- strings (MPI-4.1 §15.3.3) -------------------------------------------------------- */

static void give_string(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    int need = (int)strlen(s) + 1;
    if (buf && *len > 0) {
        int n = need <= *len ? need - 1 : *len - 1;
        memcpy(buf, s, (size_t)n);
        buf[n] = '\0';
    }
    *len = need;
}

/* ---- init and finalize ---------------------------------------------------------------- */

/* Before MPI_Init the knobs are read here too, so that tools see their values early; a bad
 * one is said by MPI_Init, not here. */
static void load_knobs_early(void)
{
    if (hmpi_mpi_state != HMPI_STATE_BEFORE)
        return;
    hmpi_log_hold();
    hmpi_knobs_load();
    hmpi_log_release(0);
    hmpi_stats_block((int)hmpi_knobs.DISABLE);
}

int MPI_T_init_thread(int required, int *provided)
{
    int rc = PMPI_T_init_thread(required, provided);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&lock);
    if (inits++ == 0)
        load_knobs_early();
    if (base[KIND_CVAR] < 0) {
        int n[KINDS] = {0, 0, 0};
        PMPI_T_cvar_get_num(&n[KIND_CVAR]);
        PMPI_T_pvar_get_num(&n[KIND_PVAR]);
        PMPI_T_category_get_num(&n[KIND_CAT]);
        memcpy(base, n, sizeof base);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
HMPI_PMPI(T_init_thread)

int MPI_T_finalize(void)
{
    int rc = PMPI_T_finalize();
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&lock);
    if (inits > 0 && --inits == 0) { /* every session and handle goes with the interface */
        for (int c = 0; c < nchunks; c++)
            for (int i = 0; i < CHUNK; i++) {
                obj_t *o = &chunks[c][i];
                if (o->kind == OBJ_PVAR && !o->below)
                    pvar_stop(o);
                if (o->kind != OBJ_FREE)
                    obj_free(o);
            }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
HMPI_PMPI(T_finalize)

/* Each entry point below: ENTER takes the lock and fails with MPI_T_ERR_NOT_INITIALIZED
 * outside MPI_T_init_thread/MPI_T_finalize; LEAVE(rc) drops it and returns rc. */
#define ENTER()                \
    pthread_mutex_lock(&lock); \
    if (inits == 0)            \
    LEAVE(MPI_T_ERR_NOT_INITIALIZED)
#define LEAVE(rc)                    \
    do {                             \
        int leave_rc_ = (rc);        \
        pthread_mutex_unlock(&lock); \
        return leave_rc_;            \
    } while (0)

/* ---- control variables ---------------------------------------------------------------- */

int MPI_T_cvar_get_num(int *num_cvar)
{
    ENTER();
    if (!num_cvar)
        LEAVE(MPI_T_ERR_INVALID);
    int n = 0, rc = PMPI_T_cvar_get_num(&n);
    if (rc == MPI_SUCCESS)
        *num_cvar = n + hmpi_knob_count;
    LEAVE(rc);
}
HMPI_PMPI(T_cvar_get_num)

int MPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                        int *bind, int *scope)
{
    ENTER();
    int i, b, where = split(KIND_CVAR, cvar_index, &i, &b);
    if (where == NO_INDEX)
        LEAVE(MPI_T_ERR_INVALID_INDEX);
    if (where == BELOW)
        LEAVE(PMPI_T_cvar_get_info(b, name, name_len, verbosity, datatype, enumtype, desc, desc_len,
                                   bind, scope));
    const hmpi_knob_info_t *k = &hmpi_knob_table[i];
    char full[64];
    snprintf(full, sizeof full, "HMPI_%s", k->name);
    give_string(full, name, name_len);
    give_string(k->doc, desc, desc_len);
    int count;
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype)
        *datatype = cvar_type(k, &count);
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = cvar_scope(k);
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_cvar_get_info)

int MPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    ENTER();
    if (!name || !cvar_index)
        LEAVE(MPI_T_ERR_INVALID);
    for (int i = 0; i < hmpi_knob_count; i++)
        if (strncmp(name, "HMPI_", 5) == 0 && strcmp(name + 5, hmpi_knob_table[i].name) == 0) {
            *cvar_index = from_mine(KIND_CVAR, i);
            LEAVE(MPI_SUCCESS);
        }
    int b, rc = PMPI_T_cvar_get_index(name, &b);
    if (rc == MPI_SUCCESS)
        *cvar_index = from_below(KIND_CVAR, b);
    LEAVE(rc);
}
HMPI_PMPI(T_cvar_get_index)

int MPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    ENTER();
    int i, b;
    if (!handle || !count)
        LEAVE(MPI_T_ERR_INVALID);
    int mine = split(KIND_CVAR, cvar_index, &i, &b);
    if (mine == NO_INDEX)
        LEAVE(MPI_T_ERR_INVALID_INDEX);
    obj_t *o = obj_new(OBJ_CVAR);
    if (!o)
        LEAVE(MPI_T_ERR_OUT_OF_HANDLES);
    if (mine == BELOW) {
        int rc = PMPI_T_cvar_handle_alloc(b, obj_handle, &o->h.c, count);
        if (rc != MPI_SUCCESS) {
            obj_free(o);
            LEAVE(rc);
        }
        o->below = 1;
    } else {
        o->index = i;
        cvar_type(&hmpi_knob_table[i], count);
    }
    *handle = (MPI_T_cvar_handle)(void *)o;
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_cvar_handle_alloc)

int MPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    ENTER();
    obj_t *o = handle ? obj_find(*handle, OBJ_CVAR) : NULL;
    if (!o)
        LEAVE(MPI_T_ERR_INVALID_HANDLE);
    int rc = o->below ? PMPI_T_cvar_handle_free(&o->h.c) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS) {
        obj_free(o);
        *handle = MPI_T_CVAR_HANDLE_NULL;
    }
    LEAVE(rc);
}
HMPI_PMPI(T_cvar_handle_free)

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    ENTER();
    obj_t *o = obj_find(handle, OBJ_CVAR);
    if (!o)
        LEAVE(MPI_T_ERR_INVALID_HANDLE);
    if (o->below)
        LEAVE(PMPI_T_cvar_read(o->h.c, buf));
    if (!buf)
        LEAVE(MPI_T_ERR_INVALID);
    const hmpi_knob_info_t *k = &hmpi_knob_table[o->index];
    int count;
    MPI_Datatype t = cvar_type(k, &count);
    if (t == MPI_CHAR) {
        const char *s = *(const char **)knob_field(o->index);
        snprintf(buf, (size_t)count, "%s", s ? s : "");
    } else {
        long long v = *(const long long *)knob_field(o->index);
        if (t == MPI_INT)
            *(int *)buf = (int)v;
        else
            *(unsigned long long *)buf = (unsigned long long)v;
    }
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_cvar_read)

int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    ENTER();
    obj_t *o = obj_find(handle, OBJ_CVAR);
    if (!o)
        LEAVE(MPI_T_ERR_INVALID_HANDLE);
    if (o->below)
        LEAVE(PMPI_T_cvar_write(o->h.c, buf));
    const hmpi_knob_info_t *k = &hmpi_knob_table[o->index];
    if (!knob_writable(k))
        LEAVE(MPI_T_ERR_CVAR_SET_NEVER);
    /* Before MPI_Init the environment has the last word; after MPI_Finalize nothing reads it. */
    if (hmpi_mpi_state != HMPI_STATE_RUNNING)
        LEAVE(MPI_T_ERR_CVAR_SET_NOT_NOW);
    if (!buf)
        LEAVE(MPI_T_ERR_INVALID);
    int count;
    long long v = cvar_type(k, &count) == MPI_INT ? *(const int *)buf
                                                  : (long long)*(const unsigned long long *)buf;
    long long max = k->max;
    if (strcmp(k->name, "IMMEDIATE_MAX") == 0 && hmpi_p2p_immediate_room)
        max = (long long)hmpi_p2p_immediate_room;
    if (v < k->min || v > max)
        LEAVE(MPI_T_ERR_INVALID);
    __atomic_store_n((long long *)knob_field(o->index), v, __ATOMIC_RELAXED);
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_cvar_write)

/* ---- performance variables ------------------------------------------------------------ */

int MPI_T_pvar_get_num(int *num_pvar)
{
    ENTER();
    if (!num_pvar)
        LEAVE(MPI_T_ERR_INVALID);
    int n = 0, rc = PMPI_T_pvar_get_num(&n);
    if (rc == MPI_SUCCESS)
        *num_pvar = n + HMPI_STAT_COUNT;
    LEAVE(rc);
}
HMPI_PMPI(T_pvar_get_num)

static int pvar_class(int i)
{
    return hmpi_stat_is_time((hmpi_stat_t)i) ? MPI_T_PVAR_CLASS_TIMER : MPI_T_PVAR_CLASS_COUNTER;
}

int MPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                        MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                        int *bind, int *readonly, int *continuous, int *atomic)
{
    ENTER();
    int i, b, where = split(KIND_PVAR, pvar_index, &i, &b);
    if (where == NO_INDEX)
        LEAVE(MPI_T_ERR_INVALID_INDEX);
    if (where == BELOW)
        LEAVE(PMPI_T_pvar_get_info(b, name, name_len, verbosity, var_class, datatype, enumtype,
                                   desc, desc_len, bind, readonly, continuous, atomic));
    char full[64];
    snprintf(full, sizeof full, "hmpi_%s", hmpi_stat_name((hmpi_stat_t)i));
    give_string(full, name, name_len);
    give_string(hmpi_stat_doc((hmpi_stat_t)i), desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (var_class)
        *var_class = pvar_class(i);
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = 0;
    if (continuous)
        *continuous = 0;
    if (atomic)
        *atomic = 1;
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_pvar_get_info)

int MPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    ENTER();
    if (!name || !pvar_index)
        LEAVE(MPI_T_ERR_INVALID);
    for (int i = 0; i < HMPI_STAT_COUNT; i++)
        if (strncmp(name, "hmpi_", 5) == 0 &&
            strcmp(name + 5, hmpi_stat_name((hmpi_stat_t)i)) == 0 && var_class == pvar_class(i)) {
            *pvar_index = from_mine(KIND_PVAR, i);
            LEAVE(MPI_SUCCESS);
        }
    int b, rc = PMPI_T_pvar_get_index(name, var_class, &b);
    if (rc == MPI_SUCCESS)
        *pvar_index = from_below(KIND_PVAR, b);
    LEAVE(rc);
}
HMPI_PMPI(T_pvar_get_index)

int MPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    ENTER();
    if (!session)
        LEAVE(MPI_T_ERR_INVALID);
    obj_t *s = obj_new(OBJ_SESSION);
    if (!s)
        LEAVE(MPI_T_ERR_OUT_OF_SESSIONS);
    int rc = PMPI_T_pvar_session_create(&s->h.s);
    if (rc != MPI_SUCCESS) {
        obj_free(s);
        LEAVE(rc);
    }
    s->below = 1;
    *session = (MPI_T_pvar_session)(void *)s;
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_pvar_session_create)

int MPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    ENTER();
    obj_t *s = session ? obj_find(*session, OBJ_SESSION) : NULL;
    if (!s)
        LEAVE(MPI_T_ERR_INVALID_SESSION);
    int rc = PMPI_T_pvar_session_free(&s->h.s); /* frees the below's handles in it */
    if (rc != MPI_SUCCESS)
        LEAVE(rc);
    while (s->next)
        pvar_forget(s->next);
    obj_free(s);
    *session = MPI_T_PVAR_SESSION_NULL;
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_pvar_session_free)

int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                            MPI_T_pvar_handle *handle, int *count)
{
    ENTER();
    obj_t *s = obj_find(session, OBJ_SESSION);
    if (!s)
        LEAVE(MPI_T_ERR_INVALID_SESSION);
    if (!handle || !count)
        LEAVE(MPI_T_ERR_INVALID);
    int i, b, mine = split(KIND_PVAR, pvar_index, &i, &b);
    if (mine == NO_INDEX)
        LEAVE(MPI_T_ERR_INVALID_INDEX);
    obj_t *h = obj_new(OBJ_PVAR);
    if (!h)
        LEAVE(MPI_T_ERR_OUT_OF_HANDLES);
    if (mine == BELOW) {
        int rc = PMPI_T_pvar_handle_alloc(s->h.s, b, obj_handle, &h->h.p, count);
        if (rc != MPI_SUCCESS) {
            obj_free(h);
            LEAVE(rc);
        }
        h->below = 1;
    } else {
        h->index = i;
        *count = 1;
    }
    h->session = s;
    h->next = s->next;
    s->next = h;
    *handle = (MPI_T_pvar_handle)(void *)h;
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_pvar_handle_alloc)

/* The handle of session s, or NULL (MPI_T_PVAR_ALL_HANDLES is not a handle). */
static obj_t *handle_of(const obj_t *s, MPI_T_pvar_handle handle)
{
    if (handle == MPI_T_PVAR_ALL_HANDLES)
        return NULL;
    obj_t *h = obj_find(handle, OBJ_PVAR);
    return h && h->session == s ? h : NULL;
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    ENTER();
    obj_t *s = obj_find(session, OBJ_SESSION);
    if (!s)
        LEAVE(MPI_T_ERR_INVALID_SESSION);
    obj_t *h = handle ? handle_of(s, *handle) : NULL;
    if (!h)
        LEAVE(MPI_T_ERR_INVALID_HANDLE);
    int rc = h->below ? PMPI_T_pvar_handle_free(s->h.s, &h->h.p) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        LEAVE(rc);
    pvar_forget(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_pvar_handle_free)

/* start, stop and reset: one handle, or with MPI_T_PVAR_ALL_HANDLES every handle of the
 * session (the below's through its own MPI_T_PVAR_ALL_HANDLES). */
enum { OP_START, OP_STOP, OP_RESET };

static int below_op(int op, MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    return op == OP_START  ? PMPI_T_pvar_start(s, h)
           : op == OP_STOP ? PMPI_T_pvar_stop(s, h)
                           : PMPI_T_pvar_reset(s, h);
}

static void mine_op(int op, obj_t *h)
{
    if (op == OP_START)
        pvar_start(h);
    else if (op == OP_STOP)
        pvar_stop(h);
    else
        pvar_set(h, 0);
}

static int pvar_op(int op, MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    ENTER();
    obj_t *s = obj_find(session, OBJ_SESSION);
    if (!s)
        LEAVE(MPI_T_ERR_INVALID_SESSION);
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        int rc = below_op(op, s->h.s, MPI_T_PVAR_ALL_HANDLES);
        for (obj_t *h = s->next; h; h = h->next)
            if (!h->below)
                mine_op(op, h);
        LEAVE(rc);
    }
    obj_t *h = handle_of(s, handle);
    if (!h)
        LEAVE(MPI_T_ERR_INVALID_HANDLE);
    if (h->below)
        LEAVE(below_op(op, s->h.s, h->h.p));
    mine_op(op, h);
    LEAVE(MPI_SUCCESS);
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(OP_START, session, handle);
}
HMPI_PMPI(T_pvar_start)

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(OP_STOP, session, handle);
}
HMPI_PMPI(T_pvar_stop)

int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(OP_RESET, session, handle);
}
HMPI_PMPI(T_pvar_reset)

/* read, write and readreset take one handle, never MPI_T_PVAR_ALL_HANDLES. */
enum { OP_READ, OP_WRITE, OP_READRESET };

static int pvar_access(int op, MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    ENTER();
    obj_t *s = obj_find(session, OBJ_SESSION);
    if (!s)
        LEAVE(MPI_T_ERR_INVALID_SESSION);
    obj_t *h = handle_of(s, handle);
    if (!h)
        LEAVE(MPI_T_ERR_INVALID_HANDLE);
    if (h->below)
        LEAVE(op == OP_READ    ? PMPI_T_pvar_read(s->h.s, h->h.p, buf)
              : op == OP_WRITE ? PMPI_T_pvar_write(s->h.s, h->h.p, buf)
                               : PMPI_T_pvar_readreset(s->h.s, h->h.p, buf));
    if (!buf)
        LEAVE(MPI_T_ERR_INVALID);
    if (op == OP_WRITE) {
        pvar_set(h, *(const unsigned long long *)buf);
        LEAVE(MPI_SUCCESS);
    }
    *(unsigned long long *)buf = pvar_value(h);
    if (op == OP_READRESET)
        pvar_set(h, 0);
    LEAVE(MPI_SUCCESS);
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return pvar_access(OP_READ, session, handle, buf);
}
HMPI_PMPI(T_pvar_read)

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    return pvar_access(OP_WRITE, session, handle, (void *)buf);
}
HMPI_PMPI(T_pvar_write)

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    return pvar_access(OP_READRESET, session, handle, buf);
}
HMPI_PMPI(T_pvar_readreset)

/* ---- categories ----------------------------------------------------------------------- */

int MPI_T_category_get_num(int *num_cat)
{
    ENTER();
    if (!num_cat)
        LEAVE(MPI_T_ERR_INVALID);
    int n = 0, rc = PMPI_T_category_get_num(&n);
    if (rc == MPI_SUCCESS)
        *num_cat = n + NCATS;
    LEAVE(rc);
}
HMPI_PMPI(T_category_get_num)

/* HMPI's members of category c: its cvars, pvars or categories (as user indices) into
 * out[len], how many there are in all. */
static int members(int kind, int c, int len, int *out)
{
    int n = 0;
    for (int i = 0; i < ours_count(kind); i++) {
        int in = kind == KIND_CVAR   ? cvar_cat(i) == c
                 : kind == KIND_PVAR ? pvar_cat(i) == c
                                     : cat_parent(i) == c;
        if (!in)
            continue;
        if (out && n < len)
            out[n] = from_mine(kind, i);
        n++;
    }
    return n;
}

int MPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                            int *num_cvars, int *num_pvars, int *num_categories)
{
    ENTER();
    int i, b, where = split(KIND_CAT, cat_index, &i, &b);
    if (where == NO_INDEX)
        LEAVE(MPI_T_ERR_INVALID_INDEX);
    if (where == BELOW)
        LEAVE(PMPI_T_category_get_info(b, name, name_len, desc, desc_len, num_cvars, num_pvars,
                                       num_categories));
    char full[32];
    cat_name(i, full, sizeof full);
    give_string(full, name, name_len);
    give_string(cat_doc(i), desc, desc_len);
    if (num_cvars)
        *num_cvars = members(KIND_CVAR, i, 0, NULL);
    if (num_pvars)
        *num_pvars = members(KIND_PVAR, i, 0, NULL);
    if (num_categories)
        *num_categories = members(KIND_CAT, i, 0, NULL);
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_category_get_info)

int MPI_T_category_get_index(const char *name, int *cat_index)
{
    ENTER();
    if (!name || !cat_index)
        LEAVE(MPI_T_ERR_INVALID);
    for (int i = 0; i < NCATS; i++) {
        char full[32];
        cat_name(i, full, sizeof full);
        if (strcmp(name, full) == 0) {
            *cat_index = from_mine(KIND_CAT, i);
            LEAVE(MPI_SUCCESS);
        }
    }
    int b, rc = PMPI_T_category_get_index(name, &b);
    if (rc == MPI_SUCCESS)
        *cat_index = from_below(KIND_CAT, b);
    LEAVE(rc);
}
HMPI_PMPI(T_category_get_index)

/* get_cvars, get_pvars, get_categories: HMPI's members, or the below's renumbered. */
static int category_list(int kind, int cat_index, int len, int indices[])
{
    ENTER();
    int i, b, where = split(KIND_CAT, cat_index, &i, &b);
    if (where == NO_INDEX)
        LEAVE(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && !indices))
        LEAVE(MPI_T_ERR_INVALID);
    if (where == MINE) {
        members(kind, i, len, indices);
        LEAVE(MPI_SUCCESS);
    }
    int rc = kind == KIND_CVAR   ? PMPI_T_category_get_cvars(b, len, indices)
             : kind == KIND_PVAR ? PMPI_T_category_get_pvars(b, len, indices)
                                 : PMPI_T_category_get_categories(b, len, indices);
    if (rc != MPI_SUCCESS)
        LEAVE(rc);
    /* The below fills at most len, as many as the category has: renumber those. (Every
     * output given: MPICH writes them all.) */
    int n[3] = {0, 0, 0}, name_len = 0, desc_len = 0;
    if (PMPI_T_category_get_info(b, NULL, &name_len, NULL, &desc_len, &n[0], &n[1], &n[2]) !=
        MPI_SUCCESS)
        n[kind] = len;
    for (int k = 0; k < n[kind] && k < len; k++)
        indices[k] = from_below(kind, indices[k]);
    LEAVE(MPI_SUCCESS);
}

int MPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return category_list(KIND_CVAR, cat_index, len, indices);
}
HMPI_PMPI(T_category_get_cvars)

int MPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return category_list(KIND_PVAR, cat_index, len, indices);
}
HMPI_PMPI(T_category_get_pvars)

int MPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return category_list(KIND_CAT, cat_index, len, indices);
}
HMPI_PMPI(T_category_get_categories)

int MPI_T_category_changed(int *stamp)
{
    ENTER();
    LEAVE(PMPI_T_category_changed(stamp)); /* HMPI's categories never change */
}
HMPI_PMPI(T_category_changed)

#if MPI_VERSION >= 4
/* Events (MPI 4): HMPI raises none; the below's keep their indices. */
int MPI_T_category_get_num_events(int cat_index, int *num_events)
{
    ENTER();
    int i, b, where = split(KIND_CAT, cat_index, &i, &b);
    if (where == NO_INDEX)
        LEAVE(MPI_T_ERR_INVALID_INDEX);
    if (where == BELOW)
        LEAVE(PMPI_T_category_get_num_events(b, num_events));
    if (!num_events)
        LEAVE(MPI_T_ERR_INVALID);
    *num_events = 0;
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_category_get_num_events)

int MPI_T_category_get_events(int cat_index, int len, int indices[])
{
    ENTER();
    int i, b, where = split(KIND_CAT, cat_index, &i, &b);
    if (where == NO_INDEX)
        LEAVE(MPI_T_ERR_INVALID_INDEX);
    if (where == BELOW)
        LEAVE(PMPI_T_category_get_events(b, len, indices));
    LEAVE(MPI_SUCCESS);
}
HMPI_PMPI(T_category_get_events)
#endif

/* ---- docs ----------------------------------------------------------------------------- */

static const char *type_name(MPI_Datatype t)
{
    return t == MPI_INT ? "int" : t == MPI_CHAR ? "char" : "unsigned long long";
}

void hmpi_mpit_markdown(FILE *out)
{
    fprintf(out, "| category | contains |\n|---|---|\n");
    for (int c = 0; c < NCATS; c++) {
        char name[32];
        cat_name(c, name, sizeof name);
        fprintf(out, "| `%s` | %s |\n", name, cat_doc(c));
    }
    fprintf(out, "\n| performance variable | class | category | meaning |\n|---|---|---|---|\n");
    for (int i = 0; i < HMPI_STAT_COUNT; i++) {
        char cat[32];
        cat_name(pvar_cat(i), cat, sizeof cat);
        fprintf(out, "| `hmpi_%s` | %s | `%s` | %s |\n", hmpi_stat_name((hmpi_stat_t)i),
                pvar_class(i) == MPI_T_PVAR_CLASS_TIMER ? "timer (ns)" : "counter", cat,
                hmpi_stat_doc((hmpi_stat_t)i));
    }
    fprintf(out, "\n| control variable | type | scope | category | meaning |\n"
                 "|---|---|---|---|---|\n");
    for (int i = 0; i < hmpi_knob_count; i++) {
        const hmpi_knob_info_t *k = &hmpi_knob_table[i];
        char cat[32];
        int count;
        cat_name(cvar_cat(i), cat, sizeof cat);
        fprintf(out, "| `HMPI_%s` | %s | %s | `%s` | %s |\n", k->name,
                type_name(cvar_type(k, &count)),
                cvar_scope(k) == MPI_T_SCOPE_LOCAL ? "local (writable)" : "constant", cat, k->doc);
    }
}
