/* mpit_client.c: a generic MPI_T tool, as TAU or Caliper would be, run under HMPI.
 *  - before MPI_Init: MPI_T_init_thread, then every control variable, performance
 *    variable and category of the MPI below is listed at its own index with its own
 *    name (the below is asked directly through dlsym on its library), and HMPI's follow:
 *    every knob as HMPI_<NAME>, every counter as hmpi_<name>, categories hmpi and
 *    hmpi_<part> holding each of HMPI's variables once; a cvar write is refused for now;
 *  - the string convention (truncation, lengths) and every MPI_T_ERR_* the standard
 *    names for bad indices, names, sessions and handles, MPI_T_PVAR_ALL_HANDLES where it
 *    is not allowed, a handle of another session, a freed one;
 *  - after MPI_Init, in a session: every pvar of HMPI (and the below's bound to no
 *    object) started, 100 8-byte round trips between rank pairs, then each HMPI handle
 *    says what the messages did: 100 more immediate sends (or 100 remote ones when the
 *    peer is on another node), no more copies; stop, reset, write, readreset;
 *  - writing HMPI_IMMEDIATE_MAX = 0 moves the next 100 messages to the copy protocol;
 *    a read-only knob says MPI_T_ERR_CVAR_SET_NEVER, a value out of range MPI_T_ERR_INVALID;
 *  - after the last MPI_T_finalize: MPI_T_ERR_NOT_INITIALIZED.
 * --expect=off (HMPI_DISABLE=1): HMPI's variables are listed all the same and read 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Before MPI_Init there is no MPI_Abort: a failed check exits. */
static int me = -1;
#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "mpit_client[%d] %s:%d: CHECK(%s) failed: ", me, __FILE__, __LINE__, \
                    #cond);                                                                      \
            fprintf(stderr, __VA_ARGS__);                                                        \
            fputc('\n', stderr);                                                                 \
            fflush(stderr);                                                                      \
            if (me >= 0)                                                                         \
                MPI_Abort(MPI_COMM_WORLD, 1);                                                    \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s", #call)
#define ERR(call, want)                                                                        \
    do {                                                                                       \
        int got_ = (call);                                                                     \
        CHECK(got_ == (want), "%s returned %d, the standard says %s (%d)", #call, got_, #want, \
              want);                                                                           \
    } while (0)

/* ---- the MPI below, asked directly ----------------------------------------------------- */

static struct {
    int (*cvar_num)(int *);
    int (*cvar_info)(int, char *, int *, int *, MPI_Datatype *, MPI_T_enum *, char *, int *, int *,
                     int *);
    int (*pvar_num)(int *);
    int (*pvar_info)(int, char *, int *, int *, int *, MPI_Datatype *, MPI_T_enum *, char *, int *,
                     int *, int *, int *, int *);
    int (*cat_num)(int *);
    int (*cat_info)(int, char *, int *, char *, int *, int *, int *, int *);
} below;

static void find_below(void)
{
    Dl_info info;
    CHECK(dladdr((void *)PMPI_Comm_rank, &info) && info.dli_fname, "no library for PMPI_Comm_rank");
    void *lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    CHECK(lib, "dlopen %s: %s", info.dli_fname, dlerror());
    *(void **)&below.cvar_num = dlsym(lib, "PMPI_T_cvar_get_num");
    *(void **)&below.cvar_info = dlsym(lib, "PMPI_T_cvar_get_info");
    *(void **)&below.pvar_num = dlsym(lib, "PMPI_T_pvar_get_num");
    *(void **)&below.pvar_info = dlsym(lib, "PMPI_T_pvar_get_info");
    *(void **)&below.cat_num = dlsym(lib, "PMPI_T_category_get_num");
    *(void **)&below.cat_info = dlsym(lib, "PMPI_T_category_get_info");
    CHECK(below.cvar_num && below.cvar_info && below.pvar_num && below.pvar_info && below.cat_num &&
              below.cat_info,
          "the MPI below (%s) lacks its PMPI_T_* functions", info.dli_fname);
    CHECK((void *)below.cvar_num != (void *)PMPI_T_cvar_get_num,
          "PMPI_T_cvar_get_num of %s is HMPI's own: HMPI is not in front of it", info.dli_fname);
}

/* ---- what is listed ------------------------------------------------------------------- */

/* Every output of the info calls given (MPICH writes them all; only strings may be NULL). */
static int cvar_info(int (*f)(int, char *, int *, int *, MPI_Datatype *, MPI_T_enum *, char *,
                              int *, int *, int *),
                     int i, char *name, int *len, char *desc, int *desc_len)
{
    int verb, bind, scope, dl = desc_len ? *desc_len : 0;
    MPI_Datatype t;
    MPI_T_enum e;
    int rc = f(i, name, len, &verb, &t, &e, desc, desc_len ? desc_len : &dl, &bind, &scope);
    return rc;
}

static int pvar_info(int (*f)(int, char *, int *, int *, int *, MPI_Datatype *, MPI_T_enum *,
                              char *, int *, int *, int *, int *, int *),
                     int i, char *name, int *len, int *cls, int *bind)
{
    int verb, c, b, ro, cont, at, dl = 0;
    MPI_Datatype t;
    MPI_T_enum e;
    int rc = f(i, name, len, &verb, &c, &t, &e, NULL, &dl, &b, &ro, &cont, &at);
    if (cls)
        *cls = c;
    if (bind)
        *bind = b;
    return rc;
}

enum { NAME = 256 };
static int expect_off;
static int base_cvar, base_pvar, base_cat; /* the below's counts at MPI_T_init_thread */
static int ncvar, npvar, ncat;             /* as HMPI says now */
static int hmpi_kp;                        /* HMPI's pvars */
static const int hmpi_ncat = 6;

static void check_listing(void)
{
    int bc, bp, bk;
    OK(below.cvar_num(&bc));
    OK(below.pvar_num(&bp));
    OK(below.cat_num(&bk));
    OK(MPI_T_cvar_get_num(&ncvar));
    OK(MPI_T_pvar_get_num(&npvar));
    OK(MPI_T_category_get_num(&ncat));
    int kc = ncvar - bc, kp = npvar - bp, kk = ncat - bk;
    hmpi_kp = kp;
    CHECK(kc > 10 && kp > 50 && kk == hmpi_ncat,
          "HMPI adds %d cvars, %d pvars, %d categories to the below's %d, %d, %d", kc, kp, kk, bc,
          bp, bk);
    /* The below's variables: their own indices up to its count at MPI_T_init_thread, then
     * after HMPI's; same names, same descriptions. */
    for (int b = 0; b < bc; b++) {
        char want[NAME], got[NAME], wd[1024], gd[1024];
        int wl = NAME, gl = NAME, wdl = sizeof wd, gdl = sizeof gd, u = b < base_cvar ? b : b + kc;
        /* (Open MPI says MPI_T_ERR_INVALID_INDEX for the variables of components it has
         * closed: HMPI says the same at their index.) */
        int rb = cvar_info(below.cvar_info, b, want, &wl, wd, &wdl);
        int rh = cvar_info(MPI_T_cvar_get_info, u, got, &gl, gd, &gdl);
        CHECK(rb == rh, "cvar %d of the below: %d from it, %d at %d", b, rb, rh, u);
        if (rb != MPI_SUCCESS)
            continue;
        CHECK(strcmp(want, got) == 0 && wl == gl && strcmp(wd, gd) == 0,
              "cvar %d of the below ('%s') is '%s' at %d", b, want, got, u);
        int idx = -1;
        OK(MPI_T_cvar_get_index(want, &idx));
        CHECK(idx == u, "MPI_T_cvar_get_index(%s) = %d, not %d", want, idx, u);
    }
    for (int b = 0; b < bp; b++) {
        char want[NAME], got[NAME];
        int wl = NAME, gl = NAME, wc, gc, u = b < base_pvar ? b : b + kp;
        int rb = pvar_info(below.pvar_info, b, want, &wl, &wc, NULL);
        int rh = pvar_info(MPI_T_pvar_get_info, u, got, &gl, &gc, NULL);
        CHECK(rb == rh, "pvar %d of the below: %d from it, %d at %d", b, rb, rh, u);
        if (rb != MPI_SUCCESS)
            continue;
        CHECK(strcmp(want, got) == 0 && wc == gc, "pvar %d of the below ('%s') is '%s' at %d", b,
              want, got, u);
    }
    for (int b = 0; b < bk; b++) {
        char want[NAME], got[NAME];
        int wl = NAME, gl = NAME, w[3], g[3], u = b < base_cat ? b : b + kk;
        int dl = 0;
        int rb = below.cat_info(b, want, &wl, NULL, &dl, &w[0], &w[1], &w[2]);
        int rh = MPI_T_category_get_info(u, got, &gl, NULL, &dl, &g[0], &g[1], &g[2]);
        CHECK(rb == rh, "category %d of the below: %d from it, %d at %d", b, rb, rh, u);
        if (rb != MPI_SUCCESS)
            continue;
        CHECK(strcmp(want, got) == 0 && memcmp(w, g, sizeof w) == 0,
              "category %d of the below ('%s') is '%s' at %d", b, want, got, u);
        /* Its members renumbered as the listing is. */
        if (w[1] > 0) {
            int *m = malloc(sizeof *m * (size_t)w[1]);
            OK(MPI_T_category_get_pvars(u, w[1], m));
            for (int k = 0; k < w[1]; k++)
                CHECK(m[k] < base_pvar || m[k] >= base_pvar + kp,
                      "category %s lists HMPI's pvar %d", got, m[k]);
            free(m);
        }
    }
    /* HMPI's: every one named, typed and in one category of HMPI's. */
    int *seen_c = calloc((size_t)ncvar, sizeof(int)), *seen_p = calloc((size_t)npvar, sizeof(int));
    for (int c = base_cat; c < base_cat + kk; c++) {
        char name[NAME];
        int len = NAME, nc, np, nk;
        OK(MPI_T_category_get_info(c, name, &len, NULL, NULL, &nc, &np, &nk));
        CHECK(strncmp(name, "hmpi", 4) == 0, "category %d of HMPI is '%s'", c, name);
        int idx = -1;
        OK(MPI_T_category_get_index(name, &idx));
        CHECK(idx == c, "MPI_T_category_get_index(%s) = %d, not %d", name, idx, c);
        int m[512];
        CHECK(nc <= 512 && np <= 512 && nk <= 512, "category %s too large", name);
        OK(MPI_T_category_get_cvars(c, nc, m));
        for (int k = 0; k < nc; k++) {
            CHECK(m[k] >= base_cvar && m[k] < base_cvar + kc, "%s lists cvar %d", name, m[k]);
            seen_c[m[k]]++;
        }
        OK(MPI_T_category_get_pvars(c, np, m));
        for (int k = 0; k < np; k++) {
            CHECK(m[k] >= base_pvar && m[k] < base_pvar + kp, "%s lists pvar %d", name, m[k]);
            seen_p[m[k]]++;
        }
        OK(MPI_T_category_get_categories(c, nk, m));
        CHECK(strcmp(name, "hmpi") == 0 ? nk == hmpi_ncat - 1 : nk == 0,
              "category %s has %d subcategories", name, nk);
        for (int k = 0; k < nk; k++)
            CHECK(m[k] > base_cat && m[k] < base_cat + kk, "hmpi lists category %d", m[k]);
    }
    for (int i = base_cvar; i < base_cvar + kc; i++) {
        char name[NAME];
        int len = NAME, verb, bind, scope;
        MPI_Datatype t;
        MPI_T_enum e;
        OK(MPI_T_cvar_get_info(i, name, &len, &verb, &t, &e, NULL, NULL, &bind, &scope));
        CHECK(strncmp(name, "HMPI_", 5) == 0 && len == (int)strlen(name) + 1, "cvar %d: %s", i,
              name);
        CHECK(t == MPI_INT || t == MPI_UNSIGNED_LONG_LONG || t == MPI_CHAR, "cvar %s type", name);
        CHECK(bind == MPI_T_BIND_NO_OBJECT && e == MPI_T_ENUM_NULL &&
                  (scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_LOCAL),
              "cvar %s: bind %d scope %d", name, bind, scope);
        CHECK(seen_c[i] == 1, "cvar %s is in %d of HMPI's categories", name, seen_c[i]);
    }
    for (int i = base_pvar; i < base_pvar + kp; i++) {
        char name[NAME], desc[512];
        int len = NAME, dl = sizeof desc, verb, cls, bind, ro, cont, at;
        MPI_Datatype t;
        MPI_T_enum e;
        OK(MPI_T_pvar_get_info(i, name, &len, &verb, &cls, &t, &e, desc, &dl, &bind, &ro, &cont,
                               &at));
        CHECK(strncmp(name, "hmpi_", 5) == 0 && dl > 10, "pvar %d: %s '%s'", i, name, desc);
        int timer = strlen(name) > 3 && strcmp(name + strlen(name) - 3, "_ns") == 0;
        CHECK(cls == (timer ? MPI_T_PVAR_CLASS_TIMER : MPI_T_PVAR_CLASS_COUNTER) &&
                  t == MPI_UNSIGNED_LONG_LONG && bind == MPI_T_BIND_NO_OBJECT && !ro && !cont && at,
              "pvar %s: class %d readonly %d continuous %d atomic %d", name, cls, ro, cont, at);
        int idx = -1;
        OK(MPI_T_pvar_get_index(name, cls, &idx));
        CHECK(idx == i, "MPI_T_pvar_get_index(%s) = %d, not %d", name, idx, i);
        CHECK(seen_p[i] == 1, "pvar %s is in %d of HMPI's categories", name, seen_p[i]);
    }
    free(seen_c);
    free(seen_p);
}

/* MPI-4.1 §15.3.3: at most n-1 characters and a terminator, the full length + 1 back. */
static void check_strings(void)
{
    int i = -1, len;
    OK(MPI_T_cvar_get_index("HMPI_IMMEDIATE_MAX", &i));
    char buf[8] = "xxxxxxx";
    len = 5;
    OK(cvar_info(MPI_T_cvar_get_info, i, buf, &len, NULL, NULL));
    CHECK(strcmp(buf, "HMPI") == 0 && len == (int)sizeof "HMPI_IMMEDIATE_MAX",
          "truncated name '%s', length %d", buf, len);
    len = 0;
    OK(cvar_info(MPI_T_cvar_get_info, i, buf, &len, NULL, NULL));
    CHECK(len == (int)sizeof "HMPI_IMMEDIATE_MAX" && strcmp(buf, "HMPI") == 0,
          "length 0 wrote the buffer or gave %d", len);
    len = 64;
    OK(cvar_info(MPI_T_cvar_get_info, i, NULL, &len, NULL, NULL));
    CHECK(len == (int)sizeof "HMPI_IMMEDIATE_MAX", "NULL buffer gave length %d", len);
    OK(cvar_info(MPI_T_cvar_get_info, i, buf, NULL, NULL, NULL));
}

static void check_errors(void)
{
    char name[NAME];
    int len = NAME, n, idx;
    ERR(cvar_info(MPI_T_cvar_get_info, -1, name, &len, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    ERR(cvar_info(MPI_T_cvar_get_info, ncvar, name, &len, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    ERR(pvar_info(MPI_T_pvar_get_info, -1, name, &len, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    ERR(pvar_info(MPI_T_pvar_get_info, npvar, name, &len, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    ERR(MPI_T_category_get_info(ncat, name, &len, NULL, &len, &n, &n, &n), MPI_T_ERR_INVALID_INDEX);
    ERR(MPI_T_category_get_info(-3, name, &len, NULL, &len, &n, &n, &n), MPI_T_ERR_INVALID_INDEX);
    int m[4];
    ERR(MPI_T_category_get_cvars(ncat, 4, m), MPI_T_ERR_INVALID_INDEX);
    ERR(MPI_T_category_get_pvars(ncat + 5, 4, m), MPI_T_ERR_INVALID_INDEX);
    ERR(MPI_T_cvar_get_index("HMPI_NO_SUCH_KNOB", &idx), MPI_T_ERR_INVALID_NAME);
    ERR(MPI_T_pvar_get_index("hmpi_no_such_counter", MPI_T_PVAR_CLASS_COUNTER, &idx),
        MPI_T_ERR_INVALID_NAME);
    /* The right name in the wrong class is not that variable. */
    ERR(MPI_T_pvar_get_index("hmpi_msgs_immediate", MPI_T_PVAR_CLASS_TIMER, &idx),
        MPI_T_ERR_INVALID_NAME);
    ERR(MPI_T_category_get_index("hmpi_nothing", &idx), MPI_T_ERR_INVALID_NAME);
    MPI_T_cvar_handle ch;
    ERR(MPI_T_cvar_handle_alloc(ncvar, NULL, &ch, &n), MPI_T_ERR_INVALID_INDEX);
    ERR(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &n), MPI_T_ERR_INVALID_HANDLE);
    MPI_T_pvar_session s1, s2;
    MPI_T_pvar_handle ph;
    OK(MPI_T_pvar_session_create(&s1));
    OK(MPI_T_pvar_session_create(&s2));
    ERR(MPI_T_pvar_handle_alloc(s1, npvar, NULL, &ph, &n), MPI_T_ERR_INVALID_INDEX);
    ERR(MPI_T_pvar_handle_alloc(s1, -1, NULL, &ph, &n), MPI_T_ERR_INVALID_INDEX);
    ERR(MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, 0, NULL, &ph, &n),
        MPI_T_ERR_INVALID_SESSION);
    OK(MPI_T_pvar_get_index("hmpi_msgs_immediate", MPI_T_PVAR_CLASS_COUNTER, &idx));
    OK(MPI_T_pvar_handle_alloc(s1, idx, NULL, &ph, &n));
    CHECK(n == 1, "count %d", n);
    unsigned long long v;
    ERR(MPI_T_pvar_read(s2, ph, &v), MPI_T_ERR_INVALID_HANDLE); /* another session's */
    ERR(MPI_T_pvar_read(s1, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    ERR(MPI_T_pvar_write(s1, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    ERR(MPI_T_pvar_readreset(s1, MPI_T_PVAR_ALL_HANDLES, &v), MPI_T_ERR_INVALID_HANDLE);
    ERR(MPI_T_pvar_start(s1, MPI_T_PVAR_HANDLE_NULL), MPI_T_ERR_INVALID_HANDLE);
    ERR(MPI_T_pvar_handle_free(s2, &ph), MPI_T_ERR_INVALID_HANDLE);
    MPI_T_pvar_handle stale = ph;
    OK(MPI_T_pvar_handle_free(s1, &ph));
    CHECK(ph == MPI_T_PVAR_HANDLE_NULL, "freed handle not set to MPI_T_PVAR_HANDLE_NULL");
    ERR(MPI_T_pvar_read(s1, stale, &v), MPI_T_ERR_INVALID_HANDLE);
    ERR(MPI_T_pvar_stop(s1, stale), MPI_T_ERR_INVALID_HANDLE);
    /* ALL_HANDLES with no handle at all in the session: nothing to do, success. */
    OK(MPI_T_pvar_start(s1, MPI_T_PVAR_ALL_HANDLES));
    OK(MPI_T_pvar_session_free(&s2));
    CHECK(s2 == MPI_T_PVAR_SESSION_NULL, "freed session not set to MPI_T_PVAR_SESSION_NULL");
    MPI_T_pvar_session stale_s = s1;
    OK(MPI_T_pvar_session_free(&s1));
    ERR(MPI_T_pvar_handle_alloc(stale_s, idx, NULL, &ph, &n), MPI_T_ERR_INVALID_SESSION);
    ERR(MPI_T_pvar_reset(stale_s, MPI_T_PVAR_ALL_HANDLES), MPI_T_ERR_INVALID_SESSION);
    ERR(MPI_T_pvar_session_free(&stale_s), MPI_T_ERR_INVALID_SESSION);
}

/* ---- what the messages did ------------------------------------------------------------ */

enum { ROUNDS = 100 };

static int idx_of(const char *name)
{
    int i = -1;
    OK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &i));
    return i;
}

/* ROUNDS round trips of 8 bytes between rank pairs (2k, 2k+1); an odd last rank idles. */
static void round_trips(char *buf, int rank, int size, int tag)
{
    int peer = rank ^ 1;
    if (peer >= size)
        return;
    for (int i = 0; i < ROUNDS; i++) {
        if (rank & 1) {
            MPI_Recv(buf, 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(buf[0] == (char)i && buf[7] == (char)(i ^ 0x5a), "round %d: bytes %d %d", i,
                  buf[0], buf[7]);
            buf[0] = (char)(i + 1);
            MPI_Send(buf, 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
        } else {
            buf[0] = (char)i;
            buf[7] = (char)(i ^ 0x5a);
            MPI_Send(buf, 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(buf[0] == (char)(i + 1), "round %d: reply %d", i, buf[0]);
        }
    }
}

static unsigned long long rd(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ull;
    OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

static void check_counting(int rank, int size)
{
    /* Is the peer on this node (simulated nodes included)? */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int nrank, same = 0, peer = rank ^ 1;
    MPI_Comm_rank(node, &nrank);
    int *peers = calloc((size_t)size, sizeof(int));
    MPI_Allgather(&nrank, 1, MPI_INT, peers, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Group wg, ng;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    if (peer < size) {
        int t;
        MPI_Group_translate_ranks(wg, 1, &peer, ng, &t);
        same = t != MPI_UNDEFINED;
    }
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
    free(peers);

    MPI_T_pvar_session s;
    OK(MPI_T_pvar_session_create(&s));
    /* Every pvar HMPI shows, and the below's that need no object. */
    MPI_T_pvar_handle *h = calloc((size_t)npvar, sizeof *h);
    int n;
    for (int i = 0; i < npvar; i++) {
        int bind, len = 0;
        if (pvar_info(MPI_T_pvar_get_info, i, NULL, &len, NULL, &bind) != MPI_SUCCESS ||
            bind != MPI_T_BIND_NO_OBJECT)
            continue;
        int rc = MPI_T_pvar_handle_alloc(s, i, NULL, &h[i], &n);
        /* HMPI's must come; the below's are its own business. */
        CHECK(rc == MPI_SUCCESS || i < base_pvar || i >= base_pvar + hmpi_kp,
              "HMPI's pvar %d: handle_alloc %d", i, rc);
        if (rc != MPI_SUCCESS)
            h[i] = MPI_T_PVAR_HANDLE_NULL;
    }
    int imm = idx_of("hmpi_msgs_immediate"), lane = idx_of("hmpi_msgs_lane"),
        copy = idx_of("hmpi_msgs_copy"), rem = idx_of("hmpi_msgs_remote"),
        bytes = idx_of("hmpi_bytes_immediate"), pipe = idx_of("hmpi_msgs_pipe"),
        cma = idx_of("hmpi_msgs_cma"), syn = idx_of("hmpi_msgs_synergistic");
    /* Not started: nothing counted. */
    char *buf = malloc(64);
    MPI_Barrier(MPI_COMM_WORLD);
    round_trips(buf, rank, size, 1);
    CHECK(rd(s, h[imm]) == 0 && rd(s, h[rem]) == 0, "a handle never started counted %llu %llu",
          rd(s, h[imm]), rd(s, h[rem]));
    /* The below may say it could not start some of its own (continuous ones are skipped,
     * others it may refuse): HMPI's start all the same. */
    int rc = MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES);
    CHECK(rc == MPI_SUCCESS || rc == MPI_T_ERR_PVAR_NO_STARTSTOP, "start all: %d", rc);
    MPI_Barrier(MPI_COMM_WORLD);
    round_trips(buf, rank, size, 2);
    unsigned long long want = peer < size ? ROUNDS : 0;
    if (expect_off)
        want = 0;
    unsigned long long got_imm = rd(s, h[imm]), got_rem = rd(s, h[rem]);
    if (same) {
        CHECK(got_imm == want && got_rem == 0 && rd(s, h[bytes]) == 8 * want &&
                  rd(s, h[lane]) <= want && rd(s, h[copy]) == 0,
              "%llu local 8-byte sends counted %llu immediate (%llu bytes, %llu in lanes), %llu "
              "remote, %llu copies",
              want, got_imm, rd(s, h[bytes]), rd(s, h[lane]), got_rem, rd(s, h[copy]));
    } else {
        CHECK(got_rem == want && got_imm == 0,
              "%llu sends to another node counted %llu remote, %llu immediate", want, got_rem,
              got_imm);
    }
    /* Stopped: the value stays. */
    rc = MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES);
    CHECK(rc == MPI_SUCCESS || rc == MPI_T_ERR_PVAR_NO_STARTSTOP, "stop all: %d", rc);
    round_trips(buf, rank, size, 3);
    CHECK(rd(s, h[imm]) == got_imm && rd(s, h[rem]) == got_rem, "a stopped handle counted on");
    /* Reset, write, readreset. */
    OK(MPI_T_pvar_reset(s, h[imm]));
    CHECK(rd(s, h[imm]) == 0, "reset gave %llu", rd(s, h[imm]));
    unsigned long long seven = 7, v;
    OK(MPI_T_pvar_write(s, h[imm], &seven));
    OK(MPI_T_pvar_start(s, h[imm]));
    OK(MPI_T_pvar_start(s, h[rem]));
    MPI_Barrier(MPI_COMM_WORLD);
    round_trips(buf, rank, size, 4);
    OK(MPI_T_pvar_readreset(s, h[imm], &v));
    CHECK(v == 7 + (same ? want : 0), "written 7, then %llu sends: read %llu", want, v);
    CHECK(rd(s, h[imm]) == 0, "readreset left %llu", rd(s, h[imm]));

    /* HMPI_IMMEDIATE_MAX = 0: the next messages go by another protocol: copy from the
     * shared heap where malloc is HMPI's, pipe (or cma) from private memory where it is
     * not (a sanitizer's malloc). */
    int ci;
    MPI_T_cvar_handle c;
    OK(MPI_T_cvar_get_index("HMPI_IMMEDIATE_MAX", &ci));
    OK(MPI_T_cvar_handle_alloc(ci, NULL, &c, &n));
    unsigned long long old = 0, zero = 0, huge = 1ull << 20;
    OK(MPI_T_cvar_read(c, &old));
    const char *env = getenv("HMPI_IMMEDIATE_MAX");
    CHECK(old == (env ? strtoull(env, NULL, 10) : 256), "HMPI_IMMEDIATE_MAX reads %llu", old);
    ERR(MPI_T_cvar_write(c, &huge), MPI_T_ERR_INVALID);
    OK(MPI_T_cvar_write(c, &zero));
    rc = MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES);
    CHECK(rc == MPI_SUCCESS || rc == MPI_T_ERR_PVAR_NO_WRITE, "reset all: %d", rc);
    rc = MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES);
    CHECK(rc == MPI_SUCCESS || rc == MPI_T_ERR_PVAR_NO_STARTSTOP, "start all: %d", rc);
    MPI_Barrier(MPI_COMM_WORLD);
    round_trips(buf, rank, size, 5);
    if (same)
        CHECK(rd(s, h[imm]) == 0 &&
                  rd(s, h[copy]) + rd(s, h[pipe]) + rd(s, h[cma]) + rd(s, h[syn]) == want,
              "with HMPI_IMMEDIATE_MAX=0: %llu immediate, %llu copies, %llu pipe, %llu cma, "
              "%llu synergistic of %llu sends",
              rd(s, h[imm]), rd(s, h[copy]), rd(s, h[pipe]), rd(s, h[cma]), rd(s, h[syn]), want);
    OK(MPI_T_cvar_write(c, &old));
    rc = MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES);
    CHECK(rc == MPI_SUCCESS || rc == MPI_T_ERR_PVAR_NO_WRITE, "reset all: %d", rc);
    MPI_Barrier(MPI_COMM_WORLD);
    round_trips(buf, rank, size, 6);
    if (same)
        CHECK(rd(s, h[imm]) == want && rd(s, h[copy]) == 0, "restored: %llu immediate, %llu copies",
              rd(s, h[imm]), rd(s, h[copy]));
    OK(MPI_T_cvar_handle_free(&c));
    /* A knob read once at MPI_Init cannot change. */
    OK(MPI_T_cvar_get_index("HMPI_NODE_SIZE", &ci));
    OK(MPI_T_cvar_handle_alloc(ci, NULL, &c, &n));
    int ns = -1, one = 1;
    OK(MPI_T_cvar_read(c, &ns));
    env = getenv("HMPI_NODE_SIZE");
    CHECK(ns == (env ? atoi(env) : 0), "HMPI_NODE_SIZE reads %d", ns);
    ERR(MPI_T_cvar_write(c, &one), MPI_T_ERR_CVAR_SET_NEVER);
    OK(MPI_T_cvar_handle_free(&c));
    ERR(MPI_T_cvar_read(c, &ns), MPI_T_ERR_INVALID_HANDLE);
    /* A string: HMPI_SHM_DIR. */
    OK(MPI_T_cvar_get_index("HMPI_SHM_DIR", &ci));
    OK(MPI_T_cvar_handle_alloc(ci, NULL, &c, &n));
    char *dir = malloc((size_t)n);
    OK(MPI_T_cvar_read(c, dir));
    env = getenv("HMPI_SHM_DIR");
    (void)env;
    CHECK(strcmp(dir, env ? env : "/dev/shm") == 0 && (int)strlen(dir) < n,
          "HMPI_SHM_DIR reads '%s'", dir);
    free(dir);
    OK(MPI_T_cvar_handle_free(&c));

    OK(MPI_T_pvar_session_free(&s)); /* frees every handle in it */
    free(h);
    free(buf);
}

int main(int argc, char **argv)
{
    expect_off = argc > 1 && strcmp(argv[1], "--expect=off") == 0;
    find_below();
    int provided;
    /* Twice, as two tools in one process would: one MPI_T_finalize leaves it open. */
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(below.cvar_num(&base_cvar));
    OK(below.pvar_num(&base_pvar));
    OK(below.cat_num(&base_cat));
    OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    OK(MPI_T_finalize());
    check_listing();
    check_strings();
    /* Before MPI_Init: readable, not writable yet. */
    int ci, n;
    MPI_T_cvar_handle c;
    OK(MPI_T_cvar_get_index("HMPI_IMMEDIATE_MAX", &ci));
    OK(MPI_T_cvar_handle_alloc(ci, NULL, &c, &n));
    unsigned long long v = 0;
    OK(MPI_T_cvar_read(c, &v));
    const char *env = getenv("HMPI_IMMEDIATE_MAX");
    CHECK(v == (env ? strtoull(env, NULL, 10) : 256), "HMPI_IMMEDIATE_MAX before MPI_Init: %llu",
          v);
    ERR(MPI_T_cvar_write(c, &v), MPI_T_ERR_CVAR_SET_NOT_NOW);
    OK(MPI_T_cvar_handle_free(&c));

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    me = rank;
    check_listing(); /* the below may have added variables at MPI_Init */
    check_errors();
    check_counting(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_T_finalize());
    int num;
    ERR(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    ERR(MPI_T_pvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    ERR(MPI_T_category_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    if (rank == 0)
        printf("mpit_client: %d ranks ok (%d cvars, %d pvars, %d categories)\n", size, ncvar, npvar,
               ncat);
    MPI_Finalize();
    return 0;
}
