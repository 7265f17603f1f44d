/* init.c: MPI_Init, MPI_Init_thread and MPI_Finalize. Starts HMPI after the MPI
 * below is up: knobs, node discovery, the shared region; all ranks of the job agree
 * on whether HMPI is active, otherwise every call passes through. */
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

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The start and end of the parts coll/, rma/ and opi/ (always built, see
 * src/CMakeLists.txt); each start returns 0 or -1 (logged). */
int hmpi_coll_init(void);
int hmpi_rma_init(void);
int hmpi_opi_init(void);
void hmpi_coll_finalize(void);
void hmpi_rma_finalize(void);
void hmpi_opi_finalize(void);

static int start_parts(int provided)
{
    if (hmpi_comm_init() != 0 || hmpi_p2p_init(provided) != 0)
        return -1;
    hmpi_op_init();
    if (hmpi_coll_init() != 0 || hmpi_rma_init() != 0 || hmpi_opi_init() != 0)
        return -1;
    int *ub, flag = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    if (flag)
        hmpi_tag_ub = *ub;
    if (provided == MPI_THREAD_MULTIPLE) /* no type cache across threads: what the parts'
                                            start put there goes */
        hmpi_type_cache_off();
    return 0;
}

/* Every rank reads its knobs and looks for misspelt ones; what it has to say is held
 * back and said by one rank for the whole job: the lowest rank with a bad setting, else
 * the lowest with a warning (ranks normally share one environment). All learn whether a
 * setting was bad, so all stop together, by a clean finalize and exit rather than an
 * abort: a launcher tearing a job down may drop output still in its pipes, and the
 * message is the point. The same gather compares the reports the ranks ask for and
 * tells each rank which machine every rank runs on (the node's discovery: the only
 * gather of the whole job at MPI_Init). Returns the host keys by world rank. */
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
        hmpi_log_error("out of memory for what %d ranks say at MPI_Init: stopping", size);
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Request q;
    PMPI_Iallgather(mine, 3, MPI_LONG_LONG, all, 3, MPI_LONG_LONG, MPI_COMM_WORLD, &q);
    hmpi_node_below_wait(1, &q);
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
        PMPI_Finalize();
        exit(1);
    }
    hmpi_report_setup(provided, (int)low, (int)high);
    return host;
}

static void hmpi_start(int provided)
{
    int size = 0;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    hmpi_mpi_check_launcher(size);
    PMPI_Comm_rank(MPI_COMM_WORLD, &hmpi_log_rank);
    uint64_t *host = load_settings(hmpi_log_rank, size, provided);
    int alone = hmpi_mpi_check_singleton(size); /* needs the knobs: HMPI_SINGLETON */
    int all = 0;
    if (!hmpi_knobs.DISABLE) {
        int ok = hmpi_node_discover(host) == 0 && !alone && hmpi_node_region_setup() == 0;
        MPI_Request q;
        PMPI_Iallreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &q);
        hmpi_node_below_wait(1, &q);
    }
    free(host);
    hmpi_node.active = all;
    /* OPI is an API of HMPI's own: it runs over the MPI below when HMPI passes through. */
    hmpi_comm_starting = 1;
    int failed = all ? start_parts(provided) != 0 : hmpi_opi_init() != 0;
    hmpi_comm_starting = 0;
    if (failed) {
        hmpi_log_error("cannot start HMPI's parts: stopping");
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (hmpi_knobs.DISABLE)
        return;
    if (hmpi_knobs.VERBOSE >= 1 && hmpi_node.world_rank == 0)
        hmpi_log_info("HMPI %s: %d ranks on %d node(s)", all ? "active" : "pass-through",
                      hmpi_node.world_size, hmpi_node.nnodes);
}

/* The state turns RUNNING before hmpi_start, which calls HMPI's own MPI_* functions,
 * and AFTER only once the MPI below has finalized: its attribute callbacks on
 * MPI_COMM_SELF still run OPI's last calls inside PMPI_Finalize. */
int MPI_Init(int *argc, char ***argv)
{
    hmpi_mpi_check_library(); /* again: a Python program loads its MPI after libhmpi */
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) {
        hmpi_mpi_state = HMPI_STATE_RUNNING;
        hmpi_start(MPI_THREAD_SINGLE);
    }
    return rc;
}
HMPI_PMPI(Init)

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    hmpi_mpi_check_library();
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) {
        hmpi_mpi_state = HMPI_STATE_RUNNING;
        hmpi_start(*provided);
    }
    return rc;
}
HMPI_PMPI(Init_thread)

/* Where the world model leaves MPI once finalized: AFTER, unless sessions are still
 * open (MPI 4 lets a program use them past MPI_Finalize). */
static int world_finalized;

int MPI_Finalize(void)
{
    HMPI_ENTER("MPI_Finalize");
    hmpi_report_finalize();
    if (hmpi_node.active) {
        PMPI_Barrier(MPI_COMM_WORLD); /* no peer may still look for our requests */
        hmpi_opi_finalize();
        hmpi_rma_finalize();
        hmpi_coll_finalize();
        hmpi_p2p_finalize();
        hmpi_comm_finalize();
    }
    hmpi_node.active = 0;
    hmpi_node_release();
    int rc = PMPI_Finalize();
    world_finalized = 1;
    if (atomic_load(&hmpi_mpi_sessions) == 0)
        hmpi_mpi_state = HMPI_STATE_AFTER;
    return rc;
}
HMPI_PMPI(Finalize)

#if HMPI_MPI4_CALLS
/* Sessions (MPI 4, §11.3): MPI runs while one is open, MPI_Init or not, so HMPI's entry
 * points take calls on a session's communicators; HMPI passes them to the MPI below. */
int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    hmpi_mpi_check_library();
    int rc = PMPI_Session_init(info, errhandler, session);
    if (rc == MPI_SUCCESS && atomic_fetch_add(&hmpi_mpi_sessions, 1) == 0)
        hmpi_mpi_state = HMPI_STATE_RUNNING;
    return rc;
}
HMPI_PMPI(Session_init)

int MPI_Session_finalize(MPI_Session *session)
{
    int rc = PMPI_Session_finalize(session);
    if (rc == MPI_SUCCESS && atomic_fetch_sub(&hmpi_mpi_sessions, 1) == 1) {
        int init = 0;
        PMPI_Initialized(&init);
        if (!init || world_finalized)
            hmpi_mpi_state = world_finalized ? HMPI_STATE_AFTER : HMPI_STATE_BEFORE;
    }
    return rc;
}
HMPI_PMPI(Session_finalize)
#endif

int HMPI_Is_shared(const void *ptr) { return hmpi_heap_is_shared(ptr); }
int HMPI_Active(void) { return hmpi_node.active; }
int HMPI_Owner(const void *ptr) { return hmpi_heap_owner(ptr); }
