/* init.c: HMPI's life in the process. It sets itself up at the first init of the
 * process, whichever comes first: MPI_Init, MPI_Init_thread or MPI_Session_init (MPI-4.1
 * §11.3), and tears itself down at the last finalize: MPI_Finalize, or the last
 * MPI_Session_finalize. Set-up: knobs, node discovery, the shared region, the parts; all
 * ranks of the job agree on whether HMPI is active, otherwise every call passes through.
 *
 * HMPI's own calls to the MPI below go over its world (node.h): MPI_COMM_WORLD when the
 * world model set it up; under sessions, where MPI_COMM_WORLD is not valid, a
 * communicator it makes from the pset mpi://WORLD of a session of its own. Both set-up
 * and tear-down are collective over that world: every process of the job takes part in
 * its first init and its last finalize (docs/design.md, "Sessions"). MPI_Init after a
 * session set HMPI up only gives MPI_COMM_WORLD and MPI_COMM_SELF their states (contexts
 * 0 and 1, which no other communicator takes); MPI_Finalize while sessions stay open
 * takes them away again, and if HMPI's world was MPI_COMM_WORLD, HMPI makes its own
 * first (the ranks agree on it: some may finalize their last session later).
 *
 * After the last finalize a new MPI_Session_init (MPI 4 allows it) sets HMPI up anew:
 * the knobs and the node are read again, the region stays mapped and attached (it never
 * goes, DESIGN.md §7), and the parts start again over it. */
#include "hmpi.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../common/stats.h"
#include "../heap/heap.h"
#include "../node/node.h"
#include "../p2p/p2p.h"
#include "../core/comm.h"
#include "../core/datatype.h"
#include "../core/errors.h"
#include "../core/mismatch.h"
#include "../core/op.h"
#include "../core/report.h"
#include "../core/singleton.h"
#include "pt2pt.h"
#include "session.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The start and end of the parts coll/, rma/ and opi/ (always built, see
 * src/CMakeLists.txt); each start returns 0 or -1 (logged). */
int hmpi_coll_init(void);
int hmpi_rma_init(void);
int hmpi_opi_init(int multiple);
int hmpi_opi_world_start(void);
void hmpi_opi_world_end(void);
void hmpi_opi_threads(void);
void hmpi_coll_finalize(void);
void hmpi_rma_finalize(void);
void hmpi_opi_finalize(void);

/* Set-up and tear-down, and what they read and write below: one at a time (sessions may
 * be opened and finalized by several threads at once). */
static pthread_mutex_t life = PTHREAD_MUTEX_INITIALIZER;
static int up;    /* HMPI is set up: hmpi_node.world is its world */
static int lives; /* set-ups so far: the same in every rank, each being collective */
#if HMPI_MPI4_CALLS
static int disabled; /* HMPI_DISABLE=1: sessions leave HMPI alone (the world model's
                        set-up still reads the knobs and makes the report) */
static MPI_Session own = MPI_SESSION_NULL; /* HMPI's session, whose psets gave its world */
#endif

static int start_parts(int provided)
{
    if ((hmpi_mpi_world && hmpi_comm_world_start() != 0) || hmpi_p2p_init(provided) != 0 ||
        hmpi_comm_meet_start() != 0)
        return -1;
    hmpi_op_init();
    if (hmpi_coll_init() != 0 || hmpi_rma_init() != 0 ||
        hmpi_opi_init(provided == MPI_THREAD_MULTIPLE) != 0)
        return -1;
    int *ub, flag = 0;
    PMPI_Comm_get_attr(hmpi_node.world, MPI_TAG_UB, &ub, &flag);
    if (flag)
        hmpi_tag_ub = *ub;
    if (provided == MPI_THREAD_MULTIPLE) /* no type cache across threads: what the parts'
                                            start put there goes */
        hmpi_type_cache_off();
    return 0;
}

/* A later init asks for MPI_THREAD_MULTIPLE where HMPI runs for less: HMPI takes its
 * locks from now on. Only the calling thread is inside MPI then (the level so far
 * allowed no more). */
static void thread_level(int provided)
{
    if (provided != MPI_THREAD_MULTIPLE || hmpi_p2p_threaded)
        return;
    hmpi_stats_threads = 1;
    hmpi_opi_threads();
    if (hmpi_node.active) {
        hmpi_p2p_threaded = 1;
        hmpi_type_cache_off();
    }
}

/* Every rank reads its knobs and looks for misspelt ones; what it has to say is held
 * back and said by one rank for the whole job: the lowest rank with a bad setting, else
 * the lowest with a warning (ranks normally share one environment). All learn whether a
 * setting was bad, so all stop together, by a clean finalize and exit rather than an
 * abort: a launcher tearing a job down may drop output still in its pipes, and the
 * message is the point. The same gather compares the reports the ranks ask for and
 * tells each rank which machine every rank runs on (the node's discovery: the only
 * gather of the whole job at set-up). Returns the host keys by world rank. */
static uint64_t *load_settings(int rank, int size, int provided)
{
    hmpi_log_hold();
    int bad = hmpi_knobs_load() != 0;
    hmpi_knobs_check_names();
    if (bad)
        hmpi_log_error("bad HMPI_* setting: see 'hmpi_info' or docs/tuning.md; stopping");
    long long quiet = 2LL * size, report = hmpi_report_wanted();
    long long verdict = bad ? rank : hmpi_log_held() ? size + rank : quiet;
    long long mine[3] = {verdict, report, (long long)hmpi_node_host_key()};
    long long *all = malloc(sizeof mine * (size_t)size);
    uint64_t *host = malloc(sizeof *host * (size_t)size);
    if (!all || !host) {
        hmpi_log_release(1);
        hmpi_log_error("out of memory for what %d ranks say at set-up: stopping", size);
        PMPI_Abort(hmpi_node.world, 1);
    }
    MPI_Request q;
    if (size == 1) { /* (MPICH 4.0.2 crashes in this collective of one process, sessions) */
        memcpy(all, mine, sizeof mine);
    } else {
        PMPI_Iallgather(mine, 3, MPI_LONG_LONG, all, 3, MPI_LONG_LONG, hmpi_node.world, &q);
        hmpi_node_below_wait(1, &q);
    }
    long long first = quiet, low = report, high = report;
    for (int r = 0; r < size; r++) {
        first = all[3 * r] < first ? all[3 * r] : first;
        low = all[3 * r + 1] < low ? all[3 * r + 1] : low;
        high = all[3 * r + 1] > high ? all[3 * r + 1] : high;
        host[r] = (uint64_t)all[3 * r + 2];
    }
    free(all);
    hmpi_log_release(mine[0] == first);
    if (first < size) {
        if (hmpi_mpi_world)
            PMPI_Finalize();
        exit(1); /* (sessions: the MPI below cleans up at exit) */
    }
    hmpi_report_setup(provided, (int)low, (int)high);
    return host;
}

/* The minimum of v over HMPI's world (collective), by the MPI below, waited for as
 * the set-up's calls are. Alone in the world it is v: MPICH 4.0.2 crashes in the wait
 * of a collective of one process under sessions. */
static int world_min(int v)
{
    int size = 0, all = v;
    PMPI_Comm_size(hmpi_node.world, &size);
    if (size > 1) {
        MPI_Request q;
        PMPI_Iallreduce(&v, &all, 1, MPI_INT, MPI_MIN, hmpi_node.world, &q);
        hmpi_node_below_wait(1, &q);
    }
    return all;
}

/* The shared region: made at the first set-up. A later one finds it mapped still, and
 * attached in every rank that attached it then: the ranks go on with it if all did (the
 * node's ranks are the same processes, as HMPI's world is), else pass through. */
static int node_region(void)
{
    if (lives == 0)
        return hmpi_node_region_setup();
    return world_min(hmpi_heap_active()) ? hmpi_node_region_again() : -1;
}

/* Sets HMPI up over hmpi_node.world (collective over it). */
static void set_up(int provided)
{
    int size = 0;
    PMPI_Comm_size(hmpi_node.world, &size);
    hmpi_mpi_check_launcher(size);
    PMPI_Comm_rank(hmpi_node.world, &hmpi_log_rank);
    uint64_t *host = load_settings(hmpi_log_rank, size, provided);
    int alone = hmpi_mpi_check_singleton(size); /* needs the knobs: HMPI_SINGLETON */
    int all = 0;
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
    /* MPICH 4.0 running one process under sessions crashes in the wait of any pending
     * request that needs its network (its UCX worker is not there): HMPI, whose own
     * collectives on the program's communicators would meet that, passes through. */
    int below_alone = !hmpi_mpi_world && size == 1;
#else
    int below_alone = 0;
#endif
    if (!hmpi_knobs.DISABLE && !below_alone) {
        all = world_min(hmpi_node_discover(host) == 0 && !alone && node_region() == 0);
    }
    free(host);
    hmpi_node.active = all;
    up = 1;
    lives++;
    /* OPI is an API of HMPI's own: it runs over the MPI below when HMPI passes through. */
    hmpi_comm_starting = 1;
    int failed =
        all ? start_parts(provided) != 0 : hmpi_opi_init(provided == MPI_THREAD_MULTIPLE) != 0;
    hmpi_comm_starting = 0;
    if (failed) {
        hmpi_log_error("cannot start HMPI's parts: stopping");
        PMPI_Abort(hmpi_node.world, 1);
    }
    if (hmpi_knobs.DISABLE)
        return;
    if (hmpi_knobs.VERBOSE >= 1 && hmpi_node.world_rank == 0)
        hmpi_log_info("HMPI %s: %d ranks on %d node(s)%s", all ? "active" : "pass-through",
                      hmpi_node.world_size, hmpi_node.nnodes,
                      hmpi_mpi_world ? "" : ", under sessions");
}

/* MPI_Init after a session set HMPI up: MPI_COMM_WORLD and MPI_COMM_SELF get their
 * states, OPI its shadow of MPI_COMM_WORLD (collective over it, as MPI_Init is). */
static void world_start(int provided)
{
    thread_level(provided);
    if (hmpi_node.active && hmpi_comm_world_start() != 0) {
        hmpi_log_error("out of memory for MPI_COMM_WORLD's state: stopping");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (hmpi_opi_world_start() != 0)
        PMPI_Abort(MPI_COMM_WORLD, 1);
}

/* MPI_Finalize while HMPI stays: the states of MPI_COMM_WORLD and MPI_COMM_SELF go, and
 * OPI's shadow (collective over MPI_COMM_WORLD, as MPI_Finalize is). */
static void world_end(void)
{
    hmpi_opi_world_end();
    if (hmpi_node.active)
        hmpi_comm_world_end();
}

/* HMPI's end, at the last finalize (collective over its world). The report first, then
 * a barrier: no peer may still look for this rank's requests. */
static void tear_down(void)
{
    hmpi_report_finalize();
    MPI_Request q;
    if (hmpi_node.active && hmpi_node.world_size > 1 &&
        PMPI_Ibarrier(hmpi_node.world, &q) == MPI_SUCCESS)
        hmpi_p2p_below_wait(&q, MPI_STATUS_IGNORE, HMPI_WAIT_COLL);
    hmpi_opi_finalize();
    if (hmpi_node.active) {
        hmpi_rma_finalize();
        hmpi_coll_finalize();
        hmpi_p2p_finalize();
        hmpi_comm_meet_end();
        hmpi_comm_finalize();
        hmpi_comm_contexts_reset();
    }
    hmpi_type_cache_reset();
    hmpi_node.active = 0;
    hmpi_node_release();
#if HMPI_MPI4_CALLS
    if (own != MPI_SESSION_NULL) {
        PMPI_Comm_free(&hmpi_node.world);
        PMPI_Comm_free(&hmpi_node.self);
        PMPI_Session_finalize(&own);
    }
#endif
    hmpi_node.world = MPI_COMM_WORLD;
    hmpi_node.self = MPI_COMM_SELF;
    up = 0;
}

#if HMPI_MPI4_CALLS
/* The thread level a session was opened with (its info's "thread_level"; MPICH lists
 * MPI_THREAD_MULTIPLE when the program asked for none, Open MPI 5 lists nothing then). */
static int session_level(MPI_Session s)
{
    static const char *names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                  "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
    static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                 MPI_THREAD_MULTIPLE};
    MPI_Info info = MPI_INFO_NULL;
    char value[64] = "";
    int len = (int)sizeof value, flag = 0;
    if (PMPI_Session_get_info(s, &info) == MPI_SUCCESS && info != MPI_INFO_NULL) {
        PMPI_Info_get_string(info, "thread_level", &len, value, &flag);
        PMPI_Info_free(&info);
    }
    for (int i = 0; flag && i < 4; i++)
        if (strcasecmp(value, names[i]) == 0)
            return levels[i];
    return MPI_THREAD_SINGLE;
}

/* HMPI's own session and its world and self, from the psets mpi://WORLD and mpi://SELF
 * (collective over every process). Nothing else of the program's can reach them. */
static int own_world(int provided, MPI_Comm *world, MPI_Comm *self)
{
    MPI_Info info = MPI_INFO_NULL;
    if (provided == MPI_THREAD_MULTIPLE && PMPI_Info_create(&info) == MPI_SUCCESS)
        PMPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    int err = PMPI_Session_init(info, MPI_ERRORS_RETURN, &own);
    if (info != MPI_INFO_NULL)
        PMPI_Info_free(&info);
    MPI_Group g = MPI_GROUP_NULL, s = MPI_GROUP_NULL;
    if (!err)
        err = PMPI_Group_from_session_pset(own, "mpi://WORLD", &g);
    if (!err)
        err = PMPI_Group_from_session_pset(own, "mpi://SELF", &s);
    if (!err)
        err = PMPI_Comm_create_from_group(g, "org.hmpi.world", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                          world);
    if (!err)
        err =
            PMPI_Comm_create_from_group(s, "org.hmpi.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, self);
    if (g != MPI_GROUP_NULL)
        PMPI_Group_free(&g);
    if (s != MPI_GROUP_NULL)
        PMPI_Group_free(&s);
    if (err)
        hmpi_log_error("cannot make HMPI's world from a session of its own (%d)", err);
    return err;
}

/* MPI_Finalize, HMPI's world being MPI_COMM_WORLD: does HMPI outlive it somewhere, a
 * rank keeping a session open? Then every rank makes HMPI's own world first (collective)
 * and moves onto it. The agreement is also the arrival of every rank into MPI_Finalize:
 * once it is done no peer waits for this rank's progress (p2p.h). */
static void move_world_if_kept(int keep)
{
    int any = 0;
    MPI_Request q;
    PMPI_Iallreduce(&keep, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q);
    if (hmpi_node.active)
        hmpi_p2p_below_wait(&q, MPI_STATUS_IGNORE, HMPI_WAIT_COLL);
    else
        hmpi_node_below_wait(1, &q);
    if (!any)
        return;
    MPI_Comm world, self;
    if (own_world(hmpi_p2p_threaded ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &world, &self) != 0)
        PMPI_Abort(MPI_COMM_WORLD, 1);
    hmpi_node.world = world;
    hmpi_node.self = self;
    if (hmpi_node.active) {
        hmpi_comm_meet_end();
        if (hmpi_p2p_world_moved() != 0 || hmpi_comm_meet_start() != 0)
            PMPI_Abort(world, 1);
    }
}
#endif

/* The state turns RUNNING before set_up, which calls HMPI's own MPI_* functions, and
 * AFTER only once the MPI below has finalized: its attribute callbacks on MPI_COMM_SELF
 * still run OPI's last calls inside PMPI_Finalize. */
static void world_init(int provided)
{
    hmpi_mpi_state = HMPI_STATE_RUNNING;
    pthread_mutex_lock(&life);
    hmpi_mpi_world = 1;
    if (up && !hmpi_knobs.DISABLE) {
        world_start(provided);
    } else {
        hmpi_node.world = MPI_COMM_WORLD;
        hmpi_node.self = MPI_COMM_SELF;
        set_up(provided);
    }
    pthread_mutex_unlock(&life);
}

int MPI_Init(int *argc, char ***argv)
{
    hmpi_mpi_check_library(); /* again: a Python program loads its MPI after libhmpi */
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        world_init(MPI_THREAD_SINGLE);
    return rc;
}
HMPI_PMPI(Init)

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    hmpi_mpi_check_library();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        world_init(*provided);
    return rc;
}
HMPI_PMPI(Init_thread)

/* Where the world model leaves MPI once finalized: AFTER, unless sessions are still
 * open (MPI 4 lets a program use them past MPI_Finalize). */
static int world_finalized;

/* The last finalize tears HMPI down over its world: before the MPI below's when that is
 * MPI_COMM_WORLD, after it when it is HMPI's own (MPI_Finalize of Open MPI 5 waits for
 * every process's, so a rank must not wait there for a peer's later finalize first). */
int MPI_Finalize(void)
{
    HMPI_ENTER("MPI_Finalize");
    pthread_mutex_lock(&life);
    int last = atomic_load(&hmpi_mpi_sessions) == 0 || hmpi_knobs.DISABLE;
#if HMPI_MPI4_CALLS
    if (up && !hmpi_knobs.DISABLE && hmpi_node.world == MPI_COMM_WORLD)
        move_world_if_kept(!last);
#endif
    int own_world = hmpi_node.world != MPI_COMM_WORLD;
    if (up && own_world)
        world_end();
    else if (up && last)
        tear_down();
    hmpi_mpi_world = 0;
    int rc = PMPI_Finalize();
    world_finalized = 1;
    if (up && own_world && last)
        tear_down();
    if (atomic_load(&hmpi_mpi_sessions) == 0)
        hmpi_mpi_state = HMPI_STATE_AFTER;
    pthread_mutex_unlock(&life);
    return rc;
}
HMPI_PMPI(Finalize)

#if HMPI_MPI4_CALLS
/* Sessions (MPI 4, §11.3): MPI runs while one is open, MPI_Init or not. The first init of
 * the process sets HMPI up on a world of its own; HMPI_DISABLE=1 (read here, before
 * anything collective: every rank must have it alike) leaves every session to the MPI
 * below. */
int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    hmpi_mpi_check_library();
    int rc = PMPI_Session_init(info, errhandler, session);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&life);
    atomic_fetch_add(&hmpi_mpi_sessions, 1);
    hmpi_mpi_state = HMPI_STATE_RUNNING;
    hmpi_session_opened(*session);
    if (!up && !hmpi_mpi_world) {
        hmpi_log_hold(); /* quietly: set_up reads them again and says what is wrong */
        hmpi_knobs_load();
        hmpi_log_release(0);
        disabled = hmpi_knobs.DISABLE;
    }
    int level = session_level(*session);
    if (up && !hmpi_knobs.DISABLE) {
        thread_level(level);
    } else if (!up && !disabled) {
        if (own_world(level, &hmpi_node.world, &hmpi_node.self) != 0) {
            hmpi_log_error("cannot set HMPI up under sessions: stopping");
            exit(EXIT_FAILURE);
        }
        set_up(level);
    }
    pthread_mutex_unlock(&life);
    return rc;
}
HMPI_PMPI(Session_init)

/* The last finalize tears HMPI down: the program's session goes first (it may still
 * refuse), then HMPI's. A session the program does not hold open (MPI_SESSION_NULL, a
 * finalized one's handle) is MPI_ERR_SESSION, of no object (Open MPI 5.0 says
 * MPI_ERR_ARG of MPI_SESSION_NULL; the MPI below would read a freed one). */
int MPI_Session_finalize(MPI_Session *session)
{
    if (session && !hmpi_knobs.DISABLE && hmpi_session_checked(*session) == MPI_SESSION_NULL)
        return hmpi_raise_in(MPI_COMM_NULL,
                             hmpi_err_what(MPI_ERR_SESSION, "session is not open (finalized "
                                                            "already, or MPI_SESSION_NULL)"),
                             "MPI_Session_finalize");
    MPI_Session s = session ? *session : MPI_SESSION_NULL;
    int rc = PMPI_Session_finalize(session);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&life);
    hmpi_session_closed(s);
    int left = atomic_fetch_sub(&hmpi_mpi_sessions, 1) - 1;
    if (left == 0 && !hmpi_mpi_world && up && !hmpi_knobs.DISABLE)
        tear_down();
    if (left == 0 && !hmpi_mpi_world)
        hmpi_mpi_state = world_finalized ? HMPI_STATE_AFTER : HMPI_STATE_BEFORE;
    pthread_mutex_unlock(&life);
    return rc;
}
HMPI_PMPI(Session_finalize)
#endif

int HMPI_Is_shared(const void *ptr) { return hmpi_heap_is_shared(ptr); }
int HMPI_Active(void) { return hmpi_node.active; }
int HMPI_Owner(const void *ptr) { return hmpi_heap_owner(ptr); }
