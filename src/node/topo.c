/* topo.c: where on the machine this rank runs: its package (socket), NUMA node and L3
 * cache, from sysfs (the files hwloc reads on Linux; only those of the domains that hold
 * this rank's first CPU: three or four small files a rank at MPI_Init, not the whole
 * machine's tree, which would cost every rank milliseconds). A level is known when the
 * rank's affinity mask lies within one domain of it (a rank bound to a core, an L3 or a
 * socket); its id is the lowest CPU of that domain. An unbound rank knows no level: it
 * may run anywhere, and a tree cut by where it ran at MPI_Init would be cut wrongly.
 * HMPI_DOMAIN_SIZE simulates L3 domains of k consecutive local ranks, as
 * HMPI_NODE_SIZE simulates nodes, so the cut trees run on a machine of one domain. */
#include "node.h"
#include "../common/knobs.h"

#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a sysfs CPU list ("0-3,8-11") into set; 0 on success. */
static int read_cpulist(const char *path, cpu_set_t *set)
{
    char buf[4096];
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    CPU_ZERO(set);
    char *p = buf;
    while (*p >= '0' && *p <= '9') {
        long lo = strtol(p, &p, 10), hi = lo;
        if (*p == '-')
            hi = strtol(p + 1, &p, 10);
        for (long c = lo; c <= hi && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, set);
        if (*p == ',')
            p++;
    }
    return CPU_COUNT(set) ? 0 : -1;
}

/* The lowest CPU of the domain listed in path when it holds all of mine, else -1. */
static int32_t domain_of(const cpu_set_t *mine, const char *path)
{
    cpu_set_t dom, both;
    if (read_cpulist(path, &dom) != 0)
        return -1;
    CPU_AND(&both, mine, &dom);
    if (!CPU_EQUAL(&both, mine))
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &dom))
            return c;
    return -1;
}

/* The L3 cache's CPU list of cpu (the cache index whose level is 3) into path. */
static int l3_path(const char *sys, int cpu, char *path, size_t len)
{
    for (int i = 0; i < 16; i++) {
        char lp[PATH_MAX];
        int level = 0;
        snprintf(lp, sizeof lp, "%s/devices/system/cpu/cpu%d/cache/index%d/level", sys, cpu, i);
        FILE *f = fopen(lp, "r");
        if (!f)
            return -1;
        int got = fscanf(f, "%d", &level);
        fclose(f);
        if (got == 1 && level == 3) {
            snprintf(path, len, "%s/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", sys,
                     cpu, i);
            return 0;
        }
    }
    return -1;
}

/* The NUMA node's CPU list of cpu (its nodeK entry) into path. */
static int numa_path(const char *sys, int cpu, char *path, size_t len)
{
    char dp[PATH_MAX];
    snprintf(dp, sizeof dp, "%s/devices/system/cpu/cpu%d", sys, cpu);
    DIR *d = opendir(dp);
    if (!d)
        return -1;
    int node = -1;
    for (struct dirent *e; node < 0 && (e = readdir(d));)
        if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9')
            node = atoi(e->d_name + 4);
    closedir(d);
    if (node < 0)
        return -1;
    snprintf(path, len, "%s/devices/system/node/node%d/cpulist", sys, node);
    return 0;
}

void hmpi_node_place_in(const char *sys, const cpu_set_t *mine, int32_t place[HMPI_NODE_LEVELS])
{
    for (int l = 0; l < HMPI_NODE_LEVELS; l++)
        place[l] = -1;
    if (!CPU_COUNT(mine))
        return;
    int cpu = 0;
    while (!CPU_ISSET(cpu, mine))
        cpu++;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/topology/package_cpus_list", sys, cpu);
    place[HMPI_NODE_PACKAGE] = domain_of(mine, path);
    if (place[HMPI_NODE_PACKAGE] < 0) { /* kernels before 5.4 */
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/topology/core_siblings_list", sys,
                 cpu);
        place[HMPI_NODE_PACKAGE] = domain_of(mine, path);
    }
    if (numa_path(sys, cpu, path, sizeof path) == 0)
        place[HMPI_NODE_NUMA] = domain_of(mine, path);
    if (l3_path(sys, cpu, path, sizeof path) == 0)
        place[HMPI_NODE_L3] = domain_of(mine, path);
}

void hmpi_node_place(int32_t place[HMPI_NODE_LEVELS])
{
    cpu_set_t mine;
    CPU_ZERO(&mine); /* no mask, no CPU: every level unknown */
    if (hmpi_knobs.DOMAIN_SIZE <= 0 && sched_getaffinity(0, sizeof mine, &mine) != 0)
        CPU_ZERO(&mine);
    hmpi_node_place_in("/sys", &mine, place);
    if (hmpi_knobs.DOMAIN_SIZE > 0)
        place[HMPI_NODE_L3] = hmpi_node.rank / (int32_t)hmpi_knobs.DOMAIN_SIZE;
}

int hmpi_node_cut(int a, int b)
{
    if (!hmpi_node.place)
        return HMPI_NODE_LEVELS;
    for (int l = 0; l < HMPI_NODE_LEVELS; l++)
        if (hmpi_node.place[a][l] != hmpi_node.place[b][l])
            return l;
    return HMPI_NODE_LEVELS;
}
