/* node.c: node discovery. The ranks on one machine (same host name and boot id) form
 * the physical node; HMPI_NODE_SIZE=k cuts it into simulated nodes of k consecutive
 * world ranks so the inter-node path can be tested on one machine. Also who may read a rank's
 * private memory (process_vm_readv): the node's ranks and nobody else. */
#include "node.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../heap/heap.h"
#include "../shm/wait.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61 /* "Yama" */
#endif

hmpi_node_t hmpi_node = {.world = MPI_COMM_WORLD, .self = MPI_COMM_SELF, .cma_allowed = 1};

/* How long waits spin, and whether they park (wait.h): host_ranks share the host's
 * online cores; nnodes: the job's (simulated) nodes. auto parks only in a one-node job:
 * what comes from other nodes through the MPI below wakes nobody, and would reach a
 * sleeping rank only as its nap ends. */
static void choose_spin(int host_ranks, int nnodes)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int crowded = cores > 0 && host_ranks > cores;
    hmpi_node.crowded = crowded;
    unsigned spin = crowded ? HMPI_SPIN_EARLY : HMPI_SPIN_DEDICATED;
    if (hmpi_knobs.SPIN > 0)
        spin = hmpi_knobs.SPIN > HMPI_SPIN_EARLY ? (unsigned)hmpi_knobs.SPIN : HMPI_SPIN_EARLY;
    hmpi_spin_limit = spin;
    /* Whether enough ranks sleep is known of this node only: of the host when it is one
     * node of the job. */
    hmpi_wait_crowd(crowded && hmpi_knobs.SPIN <= 0 && nnodes == 1 ? (unsigned)cores : 0);
    const char *w = hmpi_knobs.WAIT;
    hmpi_wait_policy_t p = HMPI_WAIT_YIELD;
    unsigned park_us = 1000; /* auto: about a millisecond of yielding first */
    if (!strcmp(w, "spin"))
        p = HMPI_WAIT_SPIN;
    else if (!strcmp(w, "sleep"))
        p = HMPI_WAIT_PARK, park_us = 50;
    else if (!strcmp(w, "auto") && crowded && nnodes == 1)
        p = HMPI_WAIT_PARK;
    if (hmpi_knobs.WAIT_PARK_US > 0)
        park_us = (unsigned)hmpi_knobs.WAIT_PARK_US;
    hmpi_wait_configure(p, park_us, (unsigned)hmpi_knobs.WAIT_NAP_MAX_US);
    if (hmpi_knobs.VERBOSE >= 2)
        hmpi_log_info("%d ranks on %ld cores: waits spin %u steps, HMPI_WAIT=%s: %s", host_ranks,
                      cores, spin, w,
                      p == HMPI_WAIT_PARK   ? "they park"
                      : p == HMPI_WAIT_SPIN ? "never yield"
                                            : "they yield");
}

/* A word naming this machine: its host name and kernel boot id, hashed (FNV-1a). Ranks
 * with the same word share the machine's memory, as MPI_COMM_TYPE_SHARED says. */
uint64_t hmpi_node_host_key(void)
{
    char buf[HOST_NAME_MAX + 1 + 64] = "";
    gethostname(buf, HOST_NAME_MAX);
    buf[HOST_NAME_MAX] = '\0';
    size_t len = strlen(buf);
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got = read(fd, buf + len + 1, 63);
        len += got > 0 ? (size_t)got + 1 : 0;
        close(fd);
    }
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ULL;
    return h;
}

/* World ranks ordered by node (machine, then simulated node) and rank: each node's
 * ranks are one run. */
static const uint64_t *sort_host;
static int sim_node(int w) { return hmpi_knobs.NODE_SIZE > 0 ? w / hmpi_knobs.NODE_SIZE : 0; }
static int same_node(int x, int y)
{
    return sort_host[x] == sort_host[y] && sim_node(x) == sim_node(y);
}
static int by_node(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (sort_host[x] != sort_host[y])
        return sort_host[x] < sort_host[y] ? -1 : 1;
    if (sim_node(x) != sim_node(y))
        return sim_node(x) < sim_node(y) ? -1 : 1;
    return (x > y) - (x < y);
}

/* From every rank's host key: who shares this rank's machine (and, with HMPI_NODE_SIZE,
 * its simulated node), each node's lowest world rank, how many nodes there are. No
 * communicator of the MPI below is made for the node (agree.c says why). */
int hmpi_node_discover(const uint64_t *host)
{
    hmpi_node_t *n = &hmpi_node;
    PMPI_Comm_rank(n->world, &n->world_rank);
    PMPI_Comm_size(n->world, &n->world_size);
    int ws = n->world_size, me = n->world_rank;
    int *order = malloc(sizeof *order * (size_t)ws);
    n->local_of_world = hmpi_heap_malloc(sizeof(int) * (size_t)ws);
    if (!order || !n->local_of_world) {
        hmpi_log_error("out of memory for the node tables of %d ranks: stopping", ws);
        PMPI_Abort(hmpi_node.world, 1);
    }
    uint64_t mine = host[me];
    for (int w = 0; w < ws; w++)
        order[w] = w;
    sort_host = host;
    qsort(order, (size_t)ws, sizeof *order, by_node);
    int host_ranks = 0, first = -1;
    n->nnodes = 0;
    for (int i = 0; i < ws; i++) {
        int w = order[i];
        host_ranks += host[w] == mine;
        n->local_of_world[w] = -1;
        n->nnodes += i == 0 || !same_node(w, order[i - 1]);
        if (first < 0 && same_node(w, me))
            first = i;
    }
    n->size = 0;
    while (first + n->size < ws && same_node(order[first + n->size], me))
        n->size++;
    n->world_of_local = hmpi_heap_malloc(sizeof(int) * (size_t)n->size);
    if (!n->world_of_local) {
        hmpi_log_error("out of memory for the node tables: stopping");
        PMPI_Abort(hmpi_node.world, 1);
    }
    for (int i = 0; i < n->size; i++) {
        n->world_of_local[i] = order[first + i];
        n->local_of_world[order[first + i]] = i;
    }
    n->rank = n->local_of_world[me];
    n->id = n->world_of_local[0];
    free(order);
    choose_spin(host_ranks, n->nnodes);
    return 0;
}

void hmpi_node_release(void)
{
    hmpi_node_t *n = &hmpi_node;
    hmpi_heap_free(n->world_of_local);
    hmpi_heap_free(n->local_of_world);
    hmpi_heap_free(n->place);
    n->world_of_local = n->local_of_world = NULL;
    n->place = NULL;
}

/* ---- process_vm_readv rights ---------------------------------------------------------- */

int hmpi_node_stat_ppid(const char *stat)
{
    /* comm is whatever the program named itself, ")" included: the fields resume
     * after the last ')'. */
    const char *rp = strrchr(stat, ')');
    if (rp == NULL || rp[1] != ' ' || rp[2] == '\0' || rp[3] != ' ')
        return -1;
    char *end;
    errno = 0;
    long ppid = strtol(rp + 4, &end, 10);
    if (errno != 0 || end == rp + 4 || (*end != ' ' && *end != '\0' && *end != '\n') || ppid < 0 ||
        ppid > 0x7fffffff)
        return -1;
    return (int)ppid;
}

void hmpi_node_ancestry(int pid, int *chain, int depth,
                        int (*read_stat)(int pid, char *buf, size_t len))
{
    char buf[512];
    for (int i = 0; i < depth; i++)
        chain[i] = 0;
    for (int i = 0; i < depth && pid > 1; i++) {
        if (read_stat(pid, buf, sizeof buf) != 0)
            return;
        int ppid = hmpi_node_stat_ppid(buf);
        if (ppid <= 0)
            return;
        chain[i] = pid = ppid;
    }
}

int hmpi_node_common_ancestor(const int *chains, int nranks, int depth)
{
    for (int i = 0; i < depth && chains[i] > 1; i++) {
        int cand = chains[i], everywhere = 1;
        for (int r = 1; r < nranks && everywhere; r++) {
            const int *row = chains + (size_t)r * (size_t)depth;
            everywhere = 0;
            for (int j = 0; j < depth && row[j] != 0 && !everywhere; j++)
                everywhere = row[j] == cand;
        }
        if (everywhere)
            return cand;
    }
    return 0;
}

hmpi_cma_policy_t hmpi_node_cma_policy(int ptrace_scope, int ancestor)
{
    if (ptrace_scope <= 0)
        return HMPI_CMA_FREE;
    if (ptrace_scope == 1 && ancestor > 1)
        return HMPI_CMA_GRANT;
    return HMPI_CMA_OFF;
}

static int read_proc_stat(int pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* Yama's ptrace_scope, or -1 on a kernel without Yama. */
static int yama_scope(void)
{
    char buf[16] = "";
    int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n > 0 ? atoi(buf) : -1;
}

void hmpi_node_ptrace_setup(void)
{
    hmpi_node_t *n = &hmpi_node;
    n->cma_allowed = 0;
    if (!hmpi_knobs.CMA)
        return;
    /* The scope is the kernel's, the same for every rank of a (simulated) node, so
     * all ranks take the same branch and meet in the exchanges below. */
    int scope = yama_scope();
    if (scope <= 0) {
        n->cma_allowed = 1;
        return;
    }
    int ancestor = 0;
    if (scope == 1) {
        /* Every rank says its ancestors, local rank 0 names the common one. */
        int mine[HMPI_ANCESTRY_DEPTH];
        hmpi_node_ancestry((int)getpid(), mine, HMPI_ANCESTRY_DEPTH, read_proc_stat);
        int64_t said[HMPI_NODE_SAY_WORDS];
        static_assert(sizeof mine == sizeof said, "the ancestry fills what a rank says");
        memcpy(said, mine, sizeof mine);
        hmpi_node_exchange(said, HMPI_NODE_SAY_WORDS);
        int64_t common = 0;
        if (n->rank == 0) {
            int *all = malloc(sizeof mine * (size_t)n->size);
            if (all == NULL) {
                hmpi_log_error("out of memory for the node's ancestry: stopping");
                PMPI_Abort(hmpi_node.world, 1);
            }
            for (int r = 0; r < n->size; r++)
                memcpy(all + (size_t)r * HMPI_ANCESTRY_DEPTH, hmpi_node_said(r), sizeof mine);
            common = hmpi_node_common_ancestor(all, n->size, HMPI_ANCESTRY_DEPTH);
            free(all);
        }
        hmpi_node_exchange(&common, 1);
        ancestor = (int)hmpi_node_said(0)[0];
    }
    int ok = 0;
    switch (hmpi_node_cma_policy(scope, ancestor)) {
    case HMPI_CMA_FREE: ok = 1; break;
    case HMPI_CMA_GRANT: ok = prctl(PR_SET_PTRACER, (unsigned long)ancestor, 0, 0, 0) == 0; break;
    case HMPI_CMA_OFF: break;
    }
    int all_ok = (int)hmpi_node_agree_min(ok);
    n->cma_allowed = all_ok;
    if (hmpi_knobs.VERBOSE >= 1 && n->rank == 0) {
        if (all_ok)
            hmpi_log_info("Yama ptrace_scope=1: process_vm_readv granted to pid %d, the "
                          "common ancestor of the node's ranks, and its descendants",
                          ancestor);
        else if (scope == 1)
            hmpi_log_info("Yama ptrace_scope=1 and %s: process_vm_readv off on this node, "
                          "buffers outside the heap are bounced",
                          ancestor > 1 ? "PR_SET_PTRACER failed"
                                       : "no common ancestor of the node's ranks below init");
        else
            hmpi_log_info("Yama ptrace_scope=%d: process_vm_readv off on this node, buffers "
                          "outside the heap are bounced",
                          scope);
    }
}
