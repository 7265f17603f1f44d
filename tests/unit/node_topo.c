/* node_topo.c: where a rank runs (node/topo.c), read from made-up sysfs trees: a machine
 * of 2 sockets (each its NUMA node) of 2 L3 caches of 2 CPUs. A rank bound to one CPU
 * or one L3 knows all three levels; one bound to a socket knows the socket and the NUMA
 * node; one spanning two sockets (or unbound) knows nothing. An older kernel's
 * core_siblings_list stands for package_cpus_list; a machine without cache files knows
 * no L3. Then this machine's own /sys: a rank bound to its first CPU knows its socket. */
#define _GNU_SOURCE
#include "../check.h"
#include "node/node.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

/* Writes text to root/<path made of fmt>, creating its directories. */
static void put(const char *text, const char *fmt, ...)
{
    char rel[256], path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        CHECK(mkdir(path, 0700) == 0 || errno == EEXIST, "mkdir %s", path);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    CHECK(f != NULL, "create %s", path);
    fputs(text, f);
    fclose(f);
}

/* The machine: CPU c in socket c/4 (NUMA node c/4), L3 c/2; older: no
 * package_cpus_list; caches: whether the cache files exist. */
static void make_machine(int older, int caches)
{
    static const char *socket[] = {"0-3\n", "4-7\n"}, *l3[] = {"0-1\n", "2-3\n", "4-5\n", "6-7\n"};
    for (int c = 0; c < 8; c++) {
        put(socket[c / 4], "devices/system/cpu/cpu%d/topology/%s", c,
            older ? "core_siblings_list" : "package_cpus_list");
        put("", "devices/system/cpu/cpu%d/node%d/.keep", c, c / 4);
        if (caches) {
            char own[8];
            snprintf(own, sizeof own, "%d\n", c);
            put("1\n", "devices/system/cpu/cpu%d/cache/index0/level", c);
            put(own, "devices/system/cpu/cpu%d/cache/index0/shared_cpu_list", c);
            put("2\n", "devices/system/cpu/cpu%d/cache/index1/level", c);
            put(own, "devices/system/cpu/cpu%d/cache/index1/shared_cpu_list", c);
            put("3\n", "devices/system/cpu/cpu%d/cache/index2/level", c);
            put(l3[c / 2], "devices/system/cpu/cpu%d/cache/index2/shared_cpu_list", c);
        }
    }
    put("0-3\n", "devices/system/node/node0/cpulist");
    put("4-7\n", "devices/system/node/node1/cpulist");
}

static void expect(int lo, int hi, int pkg, int numa, int l3, const char *what)
{
    cpu_set_t mask;
    CPU_ZERO(&mask);
    for (int c = lo; c <= hi; c++)
        CPU_SET(c, &mask);
    int32_t place[HMPI_NODE_LEVELS];
    hmpi_node_place_in(root, &mask, place);
    CHECK(place[HMPI_NODE_PACKAGE] == pkg && place[HMPI_NODE_NUMA] == numa &&
              place[HMPI_NODE_L3] == l3,
          "%s: CPUs %d-%d: socket %d NUMA %d L3 %d, expected %d %d %d", what, lo, hi,
          place[HMPI_NODE_PACKAGE], place[HMPI_NODE_NUMA], place[HMPI_NODE_L3], pkg, numa, l3);
}

static void fresh_root(void)
{
    snprintf(root, sizeof root, "/tmp/hmpi-topo-XXXXXX");
    CHECK(mkdtemp(root) != NULL, "mkdtemp");
}

static void remove_root(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK(system(cmd) == 0, "%s", cmd);
}

int main(void)
{
    fresh_root();
    make_machine(0, 1);
    expect(5, 5, 4, 4, 4, "one CPU");
    expect(2, 3, 0, 0, 2, "one L3");
    expect(0, 3, 0, 0, -1, "one socket");
    expect(4, 7, 4, 4, -1, "the other socket");
    expect(3, 4, -1, -1, -1, "across the sockets");
    expect(0, 7, -1, -1, -1, "unbound");
    expect(1, 0, -1, -1, -1, "no CPU");
    remove_root();

    fresh_root();
    make_machine(1, 0);
    expect(6, 7, 4, 4, -1, "older kernel, no cache files");
    expect(1, 2, 0, 0, -1, "older kernel, two L3s of one socket");
    remove_root();

    /* This machine: bound to its first allowed CPU, the socket is known. */
    cpu_set_t mask, one;
    CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0, "sched_getaffinity");
    int cpu = 0;
    while (!CPU_ISSET(cpu, &mask))
        cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    int32_t place[HMPI_NODE_LEVELS];
    hmpi_node_place_in("/sys", &one, place);
    CHECK(place[HMPI_NODE_PACKAGE] >= 0 && place[HMPI_NODE_PACKAGE] <= cpu,
          "CPU %d of this machine: socket %d", cpu, place[HMPI_NODE_PACKAGE]);
    printf("node_topo: ok (CPU %d here: socket %d, NUMA %d, L3 %d)\n", cpu,
           place[HMPI_NODE_PACKAGE], place[HMPI_NODE_NUMA], place[HMPI_NODE_L3]);
    return 0;
}
