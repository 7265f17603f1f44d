/* region_setup.c: the node's ranks agree on one shared region at one address.
 * Local rank 0 creates the file and proposes a random address; every rank maps it
 * there without replacing anything; if any rank cannot, rank 0 proposes another.
 * Once all have opened it the file is unlinked, so no file outlives the job's start.
 * Then the node's ranks get process_vm_readv rights to each other (node.c), and a
 * SIGBUS from a full file system under the region becomes a message and an abort. */
#include "node.h"
#include "../common/knobs.h"
#include "../common/log.h"
#include "../heap/heap.h"
#include "../heap/hugepage.h"
#include "../shm/ctrl.h"
#include "../shm/wait.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

enum { MAP_ATTEMPTS = 16 };

typedef struct {
    int status;     /* 0: the file exists and the offer stands */
    unsigned shift; /* log2 of one slice */
    uintptr_t addr; /* proposed address */
    size_t len;     /* bytes of the whole region */
    char path[256];
    int huge;           /* hmpi_hugepage_method_t the leader chose for the node */
    int huge_rc;        /* what hmpi_hugepage_setup returned there */
    char huge_why[384]; /* and why (said by the leader) */
} offer_t;

/* A rank could not map the region for want of address space: say which limit. */
static void log_no_address_space(size_t len)
{
    struct rlimit rl;
    char limit[64] = "unlimited";
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(limit, sizeof limit, "%llu MiB", (unsigned long long)rl.rlim_cur >> 20);
    hmpi_log_error("cannot map the %zu GiB shared region: out of address space (RLIMIT_AS, "
                   "ulimit -v: %s; or vm.overcommit_memory=2); lower HMPI_HEAP_SIZE (%zu GiB "
                   "per rank now) or raise the limit: running as pass-through",
                   len >> 30, limit, (size_t)hmpi_knobs.HEAP_SIZE >> 30);
}

/* Called by the SIGBUS handler when the region's file system is full (the message is
 * out): the job cannot go on. */
static void abort_job(void) { PMPI_Abort(hmpi_node.world, 1); }

static int make_offer(offer_t *o)
{
    const char *dir = hmpi_knobs.SHM_DIR;
    unsigned long long need = (unsigned long long)hmpi_knobs.SHM_MIN_FREE * hmpi_node.size;
    unsigned long long have = hmpi_region_space(dir);
    if (have < need && access(dir, F_OK) == 0) { /* a missing dir: the create below says so */
        hmpi_log_error("%s has %llu bytes free, HMPI needs %llu (HMPI_SHM_MIN_FREE per local "
                       "rank) for the shared heap: running as pass-through",
                       dir, have, need);
        return -1;
    }
    o->len = hmpi_region_size(hmpi_node.size, (size_t)hmpi_knobs.HEAP_SIZE, &o->shift);
    int fd;
    if (hmpi_region_create(dir, o->len, o->path, sizeof o->path, &fd) != 0) {
        hmpi_log_error("no shared region in %s: running as pass-through", dir);
        return -1;
    }
    close(fd); /* every rank, this one included, opens it by name below */
    o->addr = hmpi_region_pick_addr(o->len);
    o->huge_rc = hmpi_hugepage_setup(hmpi_knobs.HUGEPAGES, dir, o->huge_why, sizeof o->huge_why);
    o->huge = (int)hmpi_hugepage_method();
    return 0;
}

/* Huge pages for the heap (HMPI_HUGEPAGES): the leader finds what the node's kernel
 * offers (one probe per node, in make_offer), every rank applies it to its own mapping
 * of the slices (not the control area: its sparse small structures would each take a
 * 2 MiB page), the leader says what. */
static void huge_pages_setup(const offer_t *o, int leader)
{
    hmpi_hugepage_set((hmpi_hugepage_method_t)o->huge);
    hmpi_hugepage_region((void *)(o->addr + HMPI_REGION_ALIGN), o->len - HMPI_REGION_ALIGN);
    /* Collapsing works per 2 MiB range of a big block: arrays from 2 MiB on are big
     * blocks then, as THP backs a private array of that size (mimalloc's arenas would
     * leave them in 4 KiB pages). */
    if (hmpi_hugepage_method() == HMPI_HUGEPAGE_COLLAPSE)
        hmpi_heap_big_from(HMPI_HUGEPAGE_SIZE);
    if (leader && (o->huge_rc == 1 || hmpi_knobs.VERBOSE >= 1))
        hmpi_log_info("huge pages: %s (%s)", hmpi_hugepage_name((hmpi_hugepage_method_t)o->huge),
                      o->huge_why);
}

/* One exchange: whether every local rank attached its slice, and where each runs
 * (hmpi_node.place, which every rank must hold alike: the trees are cut by it). Returns
 * 1 when all attached. */
static int agree_places(int attached)
{
    int32_t mine[HMPI_NODE_LEVELS];
    hmpi_node_place(mine);
    int64_t say[1 + HMPI_NODE_LEVELS] = {attached};
    for (int l = 0; l < HMPI_NODE_LEVELS; l++)
        say[1 + l] = mine[l];
    hmpi_node_exchange(say, 1 + HMPI_NODE_LEVELS);
    int32_t(*place)[HMPI_NODE_LEVELS] = hmpi_heap_malloc(sizeof *place * (size_t)hmpi_node.size);
    if (!place) {
        hmpi_log_error("out of memory for where %d ranks run", hmpi_node.size);
        PMPI_Abort(hmpi_node.world, 1);
    }
    int all = 1;
    for (int r = 0; r < hmpi_node.size; r++) {
        const int64_t *said = hmpi_node_said(r);
        all &= said[0] != 0;
        for (int l = 0; l < HMPI_NODE_LEVELS; l++)
            place[r][l] = (int32_t)said[1 + l];
    }
    hmpi_node.place = place;
    if (hmpi_knobs.VERBOSE >= 2 && hmpi_node.rank == 0) {
        int runs[HMPI_NODE_LEVELS] = {1, 1, 1}, unknown = 0;
        for (int r = 0; r < hmpi_node.size; r++)
            unknown += place[r][HMPI_NODE_L3] < 0;
        for (int r = 1; r < hmpi_node.size; r++)
            for (int l = hmpi_node_cut(r - 1, r); l < HMPI_NODE_LEVELS; l++)
                runs[l]++;
        hmpi_log_info("where the %d ranks run, in rank order: %d socket, %d NUMA node and %d "
                      "L3 domain runs; %d ranks not within one L3 cache",
                      hmpi_node.size, runs[HMPI_NODE_PACKAGE], runs[HMPI_NODE_NUMA],
                      runs[HMPI_NODE_L3], unknown);
    }
    return all;
}

int hmpi_node_region_setup(void)
{
    offer_t o;
    memset(&o, 0, sizeof o);
    int leader = hmpi_node.rank == 0;
    if (leader)
        o.status = make_offer(&o);
    hmpi_node_bcast_early(&o, (int)sizeof o);
    if (o.status != 0)
        return -1;

    /* Every rank opens the file and maps it at the offer; one reduction says whether
     * all opened it, all mapped it, and whether one ran out of address space. */
    int fd = -1, opened = hmpi_region_open(o.path, &fd) == 0;
    int mapped = 0, no_space = 0;
    for (int attempt = 0; attempt < MAP_ATTEMPTS && !mapped && !no_space; attempt++) {
        int err = opened ? hmpi_region_map(fd, o.addr, o.len) : EBADF;
        /* ENOMEM is the address space limit, not a collision: no other address helps. */
        int mine[3] = {opened, err == 0, err != ENOMEM};
        hmpi_node_min_early(mine, 3);
        int *all = mine;
        /* Every rank holds the file open (or none will use it): the name has done its
         * job. Gone now rather than once mapped everywhere, so that a rank killed from
         * here on, during the mapping's retries too, leaves nothing in HMPI_SHM_DIR. */
        if (attempt == 0 && leader)
            unlink(o.path);
        if (!all[0]) {
            if (err == 0)
                munmap((void *)o.addr, o.len);
            goto fail;
        }
        mapped = all[1], no_space = !all[2];
        if (!mapped) {
            if (err == 0)
                munmap((void *)o.addr, o.len);
            if (leader)
                o.addr = hmpi_region_pick_addr(o.len);
            hmpi_node_bcast_early(&o.addr, (int)sizeof o.addr);
        }
    }
    if (!mapped) {
        if (leader && no_space)
            log_no_address_space(o.len);
        else if (leader)
            hmpi_log_error("no address free in every local rank for the %zu GiB region "
                           "after %d random tries between 16 and 96 TiB (taken by other "
                           "mappings; lower HMPI_HEAP_SIZE?): running as pass-through",
                           o.len >> 30, MAP_ATTEMPTS);
        goto fail;
    }

    /* From here on the node's ranks agree through the control area (agree.c). */
    hmpi_ctrl_t *ctrl = (hmpi_ctrl_t *)o.addr; /* zero, as the file was made: nobody parks yet */
    hmpi_wait_attach(&ctrl->park, &ctrl->rank[0].park, sizeof(hmpi_rank_ctrl_t), hmpi_node.size,
                     hmpi_node.rank);
    hmpi_node_agree_setup(ctrl);
    int attached = hmpi_heap_attach(o.addr, HMPI_REGION_ALIGN, o.shift, hmpi_node.size,
                                    hmpi_node.rank, fd) == 0;
    if (!agree_places(attached))
        return -1; /* the mapping stays: blocks already served from it remain valid */
    hmpi_region_watch_faults(hmpi_knobs.SHM_DIR, abort_job);
    hmpi_node_ptrace_setup();
    if (hmpi_knobs.VERBOSE >= 1 && leader)
        hmpi_log_info("shared heap: %d ranks, %zu GiB per rank at %p", hmpi_node.size,
                      ((size_t)1 << o.shift) >> 30, (void *)o.addr);
    huge_pages_setup(&o, leader);
    return 0;

fail:
    if (fd >= 0)
        close(fd);
    return -1;
}

int hmpi_node_region_again(void) { return agree_places(1) ? 0 : -1; }
