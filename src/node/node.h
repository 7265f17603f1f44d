/* node.h: who shares this node. Built when HMPI sets itself up (the first MPI_Init or
 * MPI_Session_init of the process): the ranks of HMPI's world on one machine (one host
 * name and boot id), split by HMPI_NODE_SIZE into simulated nodes; local ranks are
 * numbered in world rank order but need not be contiguous in the world. */
#ifndef HMPI_NODE_H
#define HMPI_NODE_H

#include <mpi.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

/* The machine's levels of domains, coarsest first: a rank's domain at each is the lowest
 * CPU of the package, NUMA node or L3 cache that holds every CPU it may run on, or -1
 * when no single one does. */
typedef enum {
    HMPI_NODE_PACKAGE,
    HMPI_NODE_NUMA,
    HMPI_NODE_L3,
    HMPI_NODE_LEVELS
} hmpi_node_level_t;

typedef struct {
    /* HMPI's own communicators of every process of the job and of this process alone:
     * MPI_COMM_WORLD and MPI_COMM_SELF when the world model set HMPI up, otherwise (under
     * sessions, where neither is valid) made from the psets mpi://WORLD and mpi://SELF of
     * a session HMPI opens for itself (mpi/init.c). Every call HMPI makes to the MPI below
     * for its own purposes (discovery, the node's early messages, the report, aborts)
     * names these, never MPI_COMM_WORLD. World ranks are ranks in world. Written only
     * while HMPI sets itself up or tears itself down. */
    MPI_Comm world, self;
    int active;     /* 1: HMPI accelerates this job; 0: pure pass-through */
    int rank, size; /* this rank's local rank (and slice), the node's ranks */
    int world_rank, world_size;
    int id;              /* the node's number: its lowest world rank */
    int *world_of_local; /* [size]: world rank of each local rank */
    int *local_of_world; /* [world_size]: local rank, or -1 off this node */
    int nnodes;          /* nodes in the job */
    int cma_allowed;     /* 0: the kernel refuses process_vm_readv between local ranks
                             (Yama), so CMA is not even tried: buffers are bounced */
    int crowded;         /* 1: this host's ranks outnumber its online cores (waits
                             yield early; collectives copy small data rather than wait
                             for its readers) */
    int32_t (*place)[HMPI_NODE_LEVELS]; /* [size]: each local rank's domain at each level
                                           (topo.c), once the region is set up; else NULL */
} hmpi_node_t;

extern hmpi_node_t hmpi_node;

/* A word naming this rank's machine (its host name and boot id, hashed). */
uint64_t hmpi_node_host_key(void);
/* Finds the node's ranks from every world rank's host key (not collective). Returns 0. */
int hmpi_node_discover(const uint64_t *host_of_world);

/* ---- where the ranks run (topo.c) -------------------------------------------------- */

/* This rank's domains (HMPI_DOMAIN_SIZE=k: L3 domains of k consecutive local ranks, the
 * other levels unknown). Reads sysfs: called once, at MPI_Init. */
void hmpi_node_place(int32_t place[HMPI_NODE_LEVELS]);
/* The same for the CPUs in mine, from the sysfs tree at sys ("/sys"; a made-up one in
 * tests/unit/node_topo.c). */
void hmpi_node_place_in(const char *sys, const cpu_set_t *mine, int32_t place[HMPI_NODE_LEVELS]);
/* The coarsest level at which local ranks a and b lie in different domains (unknown
 * counts as a domain of its own), HMPI_NODE_LEVELS when they share every one or the
 * places are not known. */
int hmpi_node_cut(int a, int b);

/* Agrees with the node's ranks on one region, maps it at one address, unlinks its
 * file and attaches this rank's slice to the heap (collective over the node).
 * Returns 0, or -1 when the node must pass through (every local rank gets the same
 * answer, and the first to know has logged why). */
int hmpi_node_region_setup(void);
/* A later life of HMPI in the process (a set-up after the last finalize, mpi/init.c):
 * the region of the first is still mapped and attached in every local rank, which
 * found it so and agreed on it; only where the ranks run is asked again (the node's
 * release freed it). Collective over the node; returns 0. */
int hmpi_node_region_again(void);

/* ---- what the node's ranks tell each other at MPI_Init (agree.c) ------------------ */

enum { HMPI_NODE_SAY_WORDS = 8 }; /* words a rank says in one exchange */

/* Waits for n requests of the MPI below at MPI_Init (HMPI's own calls to it there are
 * nonblocking), testing them and yielding the core between tests rather than spinning
 * inside the below's blocking call, which with more ranks than cores holds the core
 * that a rank it waits for needs (agree.c). Never parks: the MPI below wakes no futex.
 * Returns the below's error code. */
int hmpi_node_below_wait(int n, MPI_Request *reqs);

/* Before the region is mapped, through local rank 0 and the MPI below (collective over
 * the node): local rank 0's bytes to every local rank; the minimum of n ints (at most
 * HMPI_NODE_SAY_WORDS) of every local rank, in place. */
void hmpi_node_bcast_early(void *buf, int bytes);
void hmpi_node_min_early(int *v, int n);

/* Once it is mapped, through its control area: */

/* Starts the node's exchanges in the control area at base (zero as the file was made). */
void hmpi_node_agree_setup(void *base);
/* Collective over the node: this rank says its n words (at most HMPI_NODE_SAY_WORDS)
 * and waits until every local rank has said its own. */
void hmpi_node_exchange(const int64_t *mine, int n);
/* What local rank said in the last exchange (valid until the exchange after next). */
const int64_t *hmpi_node_said(int local);
/* Collective over the node: the minimum of every local rank's v. */
int64_t hmpi_node_agree_min(int64_t v);

/* process_vm_readv rights for the node's ranks, and only for them (collective over the
 * node). Under Yama's ptrace_scope=1 a rank may read only its descendants, so ranks,
 * which are siblings, cannot read each other unless each names its reader with
 * PR_SET_PTRACER. That takes one pid and covers its descendants: every rank names the
 * nearest common ancestor of the node's ranks (the launcher's local process:
 * hydra_pmi_proxy, orted, slurmstepd), never PR_SET_PTRACER_ANY. Sets
 * hmpi_node.cma_allowed; logs why CMA is off at HMPI_VERBOSE>=1. */
void hmpi_node_ptrace_setup(void);

/* ---- pure parts of hmpi_node_ptrace_setup, unit-tested (tests/unit/node_ptrace.c) -- */

enum { HMPI_ANCESTRY_DEPTH = 16 }; /* ancestors of a rank looked at, parent first */

/* The parent pid in the text of /proc/<pid>/stat ("pid (comm) state ppid ..."; comm
 * may hold spaces and parentheses), or -1 when the text is not such a line. */
int hmpi_node_stat_ppid(const char *stat);

/* Fills chain[depth] with the ancestors of pid, parent first, using read_stat(pid, buf,
 * len) (0 on success) for each /proc/<pid>/stat; unused entries are 0. Stops at init
 * (1), at 0 (a parent outside the pid namespace) or at a read error. */
void hmpi_node_ancestry(int pid, int *chain, int depth,
                        int (*read_stat)(int pid, char *buf, size_t len));

/* The nearest pid that appears in every one of nranks chains (rows of depth entries,
 * as hmpi_node_ancestry fills them), nearest as seen from row 0. Never 1: init is the
 * ancestor of every process, and naming it would let anyone read the ranks. 0 when
 * there is no such pid. */
int hmpi_node_common_ancestor(const int *chains, int nranks, int depth);

typedef enum {
    HMPI_CMA_FREE,  /* no Yama, or ptrace_scope 0: same-user processes may read */
    HMPI_CMA_GRANT, /* ptrace_scope 1: name the common ancestor with PR_SET_PTRACER */
    HMPI_CMA_OFF,   /* ptrace_scope 1 without a common ancestor, or 2/3: no CMA */
} hmpi_cma_policy_t;

/* What to do under Yama's ptrace_scope (-1: no Yama) with that ancestor (0: none). */
hmpi_cma_policy_t hmpi_node_cma_policy(int ptrace_scope, int ancestor);

/* Frees what discovery made (not the region: it stays mapped for the process). */
void hmpi_node_release(void);

#endif
