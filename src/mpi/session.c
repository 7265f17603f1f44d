/* session.c: the entry points that take a session (MPI 4, MPI-4.1 §11.3), and what HMPI
 * remembers of the program's sessions so that bad input gets the error the standard
 * names instead of reaching the MPI below, which takes some of it silently or crashes on
 * it: the handle of a finalized session (the MPI below reads a freed object: MPICH
 * answers from it, a reused one may crash), a pset name that does not exist (MPICH 4.0
 * raises it on MPI_COMM_WORLD, or fatally, not on the session's handler), a group of a
 * session finalized since (MPICH 4.0 and 4.2 and Open MPI 5.0 make a communicator of
 * it). MPI_Session_init and MPI_Session_finalize are HMPI's life (mpi/init.c). Rare
 * calls only: one lock and two short tables; with HMPI_DISABLE=1 every call passes on. */
#include "session.h"
#include "../common/knobs.h"
#include "../core/errors.h"

#if HMPI_MPI4_CALLS
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A live session and its serial; a group made from a pset and its session's serial
 * (serials are never reused: the MPI below reuses handles). */
typedef struct {
    uintptr_t handle; /* MPI_Session or MPI_Group, an integer or a pointer */
    uint64_t serial;
} entry_t;

typedef struct {
    entry_t *e;
    int n, cap;
} table_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static table_t live, groups;
static uint64_t serials;
static _Atomic int ngroups; /* groups.n, read without the lock by MPI_Group_free */

/* Handles as integers: MPICH's are ints, Open MPI's pointers. */
#define H(x) ((uintptr_t)(x))

static int find(const table_t *t, uintptr_t h)
{
    for (int i = 0; i < t->n; i++)
        if (t->e[i].handle == h)
            return i;
    return -1;
}

static void add(table_t *t, uintptr_t h, uint64_t serial)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        entry_t *e = realloc(t->e, sizeof *e * (size_t)cap);
        if (!e)
            return; /* unremembered: its checks pass it on to the MPI below */
        t->e = e;
        t->cap = cap;
    }
    t->e[t->n++] = (entry_t){h, serial};
}

static void drop(table_t *t, int i) { t->e[i] = t->e[--t->n]; }

void hmpi_session_opened(MPI_Session s)
{
    pthread_mutex_lock(&lock);
    add(&live, H(s), ++serials);
    pthread_mutex_unlock(&lock);
}

void hmpi_session_closed(MPI_Session s)
{
    pthread_mutex_lock(&lock);
    int i = find(&live, H(s));
    if (i >= 0)
        drop(&live, i);
    pthread_mutex_unlock(&lock);
}

/* The serial of live session s, or 0 when the program has no such session open. */
static uint64_t serial_of(MPI_Session s)
{
    pthread_mutex_lock(&lock);
    int i = find(&live, H(s));
    uint64_t serial = i >= 0 ? live.e[i].serial : 0;
    pthread_mutex_unlock(&lock);
    return serial;
}

int hmpi_session_group_check(MPI_Group g)
{
    if (g == MPI_GROUP_NULL)
        return hmpi_err_what(MPI_ERR_GROUP, "group is MPI_GROUP_NULL");
    if (atomic_load_explicit(&ngroups, memory_order_relaxed) == 0)
        return MPI_SUCCESS;
    int dead = 0;
    pthread_mutex_lock(&lock);
    int i = find(&groups, H(g));
    if (i >= 0) {
        dead = 1;
        for (int k = 0; k < live.n && dead; k++)
            dead = live.e[k].serial != groups.e[i].serial;
    }
    pthread_mutex_unlock(&lock);
    return dead ? hmpi_err_what(MPI_ERR_GROUP,
                                "group was made from a pset of a session finalized since")
                : MPI_SUCCESS;
}

MPI_Session hmpi_session_checked(MPI_Session s)
{
    return hmpi_knobs.DISABLE || serial_of(s) ? s : MPI_SESSION_NULL;
}

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
/* Whether name is one of the psets of session s, letter case aside (as MPICH matches
 * them). MPICH 4.0 raises an unknown name on MPI_COMM_WORLD's handler (fatally under
 * sessions alone) instead of the session's, so HMPI decides it first; later MPICH and
 * Open MPI 5 raise it on the session's handler themselves. */
static int pset_known(MPI_Session s, const char *name)
{
    int n = 0;
    if (PMPI_Session_get_num_psets(s, MPI_INFO_NULL, &n) != MPI_SUCCESS)
        return 1; /* the MPI below decides */
    for (int i = 0; i < n; i++) {
        char buf[256];
        int len = (int)sizeof buf;
        if (PMPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, buf) == MPI_SUCCESS &&
            len <= (int)sizeof buf && strcasecmp(buf, name) == 0)
            return 1;
    }
    return 0;
}
#endif

int MPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    HMPI_ENTER("MPI_Group_from_session_pset");
    MPI_Session s = hmpi_session_checked(session);
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
    if (s != MPI_SESSION_NULL && !hmpi_knobs.DISABLE && pset_name && newgroup &&
        !pset_known(s, pset_name))
        return hmpi_err_session(s,
                                hmpi_err_what(MPI_ERR_ARG,
                                              "pset_name \"%s\" is no process set of the "
                                              "session (MPI_Session_get_nth_pset lists them)",
                                              pset_name),
                                "MPI_Group_from_session_pset");
#endif
    int rc = PMPI_Group_from_session_pset(s, pset_name, newgroup);
    if (rc == MPI_SUCCESS && s != MPI_SESSION_NULL) {
        pthread_mutex_lock(&lock);
        int i = find(&live, H(s));
        if (i >= 0) {
            add(&groups, H(*newgroup), live.e[i].serial);
            atomic_store_explicit(&ngroups, groups.n, memory_order_relaxed);
        }
        pthread_mutex_unlock(&lock);
    }
    return rc;
}
HMPI_PMPI(Group_from_session_pset)

/* Forgets a group made from a pset: the MPI below may give its handle to the next group. */
int MPI_Group_free(MPI_Group *group)
{
    HMPI_ENTER("MPI_Group_free");
    if (group && atomic_load_explicit(&ngroups, memory_order_relaxed) > 0) {
        pthread_mutex_lock(&lock);
        int i = find(&groups, H(*group));
        if (i >= 0) {
            drop(&groups, i);
            atomic_store_explicit(&ngroups, groups.n, memory_order_relaxed);
        }
        pthread_mutex_unlock(&lock);
    }
    return PMPI_Group_free(group);
}
HMPI_PMPI(Group_free)

/* The other calls that take a session: a session the program does not hold open goes on
 * as MPI_SESSION_NULL (hmpi_session_checked). */
int MPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    HMPI_ENTER("MPI_Session_get_num_psets");
    return PMPI_Session_get_num_psets(hmpi_session_checked(session), info, npset_names);
}
HMPI_PMPI(Session_get_num_psets)

int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                             char *pset_name)
{
    HMPI_ENTER("MPI_Session_get_nth_pset");
    return PMPI_Session_get_nth_pset(hmpi_session_checked(session), info, n, pset_len, pset_name);
}
HMPI_PMPI(Session_get_nth_pset)

int MPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    HMPI_ENTER("MPI_Session_get_info");
    return PMPI_Session_get_info(hmpi_session_checked(session), info_used);
}
HMPI_PMPI(Session_get_info)

int MPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    HMPI_ENTER("MPI_Session_get_pset_info");
    return PMPI_Session_get_pset_info(hmpi_session_checked(session), pset_name, info);
}
HMPI_PMPI(Session_get_pset_info)

int MPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    HMPI_ENTER("MPI_Session_get_errhandler");
    return PMPI_Session_get_errhandler(hmpi_session_checked(session), errhandler);
}
HMPI_PMPI(Session_get_errhandler)

int MPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    HMPI_ENTER("MPI_Session_set_errhandler");
    return PMPI_Session_set_errhandler(hmpi_session_checked(session), errhandler);
}
HMPI_PMPI(Session_set_errhandler)

int MPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    HMPI_ENTER("MPI_Session_call_errhandler");
    return PMPI_Session_call_errhandler(hmpi_session_checked(session), errorcode);
}
HMPI_PMPI(Session_call_errhandler)

#else
/* The MPI below has no sessions (Open MPI 4.1): no group of a pset to forget. HMPI
 * defines MPI_Group_free all the same, so that it is intercepted under every MPI alike
 * (tests/check_surface.py: one list of what passes through serves every MPI). */
int MPI_Group_free(MPI_Group *group)
{
    HMPI_ENTER("MPI_Group_free");
    return PMPI_Group_free(group);
}
HMPI_PMPI(Group_free)
#endif
