/* mismatch.c: stops a process whose MPI library is not the one HMPI was built on, before
 * a handle of one MPI reaches the other (a segfault without a word otherwise), and a job
 * that a launcher of the other MPI started as singletons: one line, exit status 1. The
 * line is said once per node, as the job's processes cannot agree on more without MPI.
 * hmpi_mpi_check_library makes no MPI call: the MPI below may be the wrong one.
 *
 * An MPI library is a loaded object that itself defines PMPI_Init (HMPI's own objects,
 * which define HMPI_Active too, aside); its family is told by a symbol only that family
 * exports. Debian's plain mpicc and mpiexec are Open MPI's when both are installed, so a
 * program built the usual way and run with an MPICH build of HMPI is the common case. */
#include "mismatch.h"
#include "../common/log.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Macros, not an enum: BUILT is tested by the preprocessor. */
typedef int family_t;
#define FAMILY_OTHER 0
#define FAMILY_MPICH 1
#define FAMILY_OPENMPI 2

static const char *const family_name[] = {"another MPI", "MPICH", "Open MPI"};

/* The family of the mpi.h HMPI was compiled with. */
#if defined(OMPI_MAJOR_VERSION)
#define BUILT FAMILY_OPENMPI
#elif defined(MPICH_VERSION)
#define BUILT FAMILY_MPICH
#else
#define BUILT FAMILY_OTHER
#endif

#ifndef HMPI_BUILD_MPICC
#define HMPI_BUILD_MPICC "mpicc"
#endif
#ifndef HMPI_BUILD_MPIEXEC
#define HMPI_BUILD_MPIEXEC "mpiexec"
#endif

/* A symbol that one family's library exports and the other's does not. */
static const struct {
    family_t family;
    const char *symbol;
} probes[] = {
    {FAMILY_OPENMPI, "ompi_mpi_comm_world"}, /* MPI_COMM_WORLD is its address */
    {FAMILY_MPICH, "MPIR_Err_return_comm"},  /* exported for ROMIO by MPICH and its kin */
};

enum { MAX_OBJECTS = 1024 };

/* 1 for the first process of the job on this node to ask (the job's processes on a node
 * share their parent: the launcher's daemon, or the launcher). The claim is an abstract
 * socket name, held until the process exits: nothing is left behind. */
static int first_on_node(void)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int n = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "hmpi-mismatch.%d.%d", (int)getuid(),
                     (int)getppid());
    if (bind(fd, (struct sockaddr *)&a,
             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n)) == 0)
        return 1; /* fd stays open: the claim */
    int taken = errno == EADDRINUSE;
    close(fd);
    return !taken;
}

/* Says the line once per node and ends the process. The first process keeps its claim a
 * moment, for ranks that start late; the others go at once (a launcher that ends a job
 * when one rank fails then ends the first too, after it has spoken). */
static void __attribute__((noreturn)) stop_with(const char *line)
{
    if (first_on_node()) {
        hmpi_log_error("%s", line);
        sleep(1);
    }
    _exit(1);
}

#if BUILT != FAMILY_OTHER
struct object {
    const char *path;
    ElfW(Addr) base;
};

struct walk {
    struct object obj[MAX_OBJECTS];
    int n;
};

/* Collects the loaded objects; they are looked into after the walk, outside the lock
 * dl_iterate_phdr holds. The program itself (empty name) and the vDSO are left out. */
static int collect(struct dl_phdr_info *info, size_t size, void *data)
{
    struct walk *w = data;
    (void)size;
    if (info->dlpi_name && info->dlpi_name[0] == '/' && w->n < MAX_OBJECTS)
        w->obj[w->n++] = (struct object){info->dlpi_name, info->dlpi_addr};
    return 0;
}

/* 1 when the object at base (handle h) defines symbol itself, not through a dependency. */
static int defines(void *h, ElfW(Addr) base, const char *symbol)
{
    void *s = dlsym(h, symbol);
    Dl_info info;
    struct link_map *map = NULL;
    return s && dladdr1(s, &info, (void **)&map, RTLD_DL_LINKMAP) && map && map->l_addr == base;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}
#endif

void hmpi_mpi_check_library(void)
{
#if BUILT != FAMILY_OTHER
    static struct walk w; /* 16 KiB: not on the stack of a constructor */
    w.n = 0;
    dl_iterate_phdr(collect, &w);
    const char *own = NULL, *foreign = NULL;
    family_t foreign_family = FAMILY_OTHER;
    for (int i = 0; i < w.n; i++) {
        void *h = dlopen(w.obj[i].path, RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        if (defines(h, w.obj[i].base, "PMPI_Init") && !defines(h, w.obj[i].base, "HMPI_Active")) {
            family_t f = FAMILY_OTHER;
            for (size_t p = 0; p < sizeof probes / sizeof probes[0] && f == FAMILY_OTHER; p++)
                if (defines(h, w.obj[i].base, probes[p].symbol))
                    f = probes[p].family;
            if (f == BUILT && !own) {
                own = w.obj[i].path;
            } else if (f != FAMILY_OTHER && f != BUILT && !foreign) {
                foreign = w.obj[i].path;
                foreign_family = f;
            }
        }
        dlclose(h);
    }
    if (!foreign)
        return;
    char line[900];
    snprintf(line, sizeof line,
             "this program uses %s (%s) but this HMPI is built for %s (%s), and one process "
             "cannot hold both: build the program with hmpicc (or %s), or run it with the %s "
             "build of HMPI (cmake -DHMPI_MPI=%s)",
             family_name[foreign_family], base_name(foreign), family_name[BUILT],
             own ? base_name(own) : "not loaded", HMPI_BUILD_MPICC, family_name[foreign_family],
             foreign_family == FAMILY_OPENMPI ? "openmpi" : "mpich");
    stop_with(line);
#endif
}

void hmpi_mpi_check_launcher(int world_size)
{
    if (world_size != 1)
        return;
#if BUILT == FAMILY_MPICH
    /* Open MPI's launcher sets these in every rank; MPICH's Hydra sets PMI_SIZE. */
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    const char *mine = getenv("PMI_SIZE"), *launcher = "Open MPI's";
#elif BUILT == FAMILY_OPENMPI
    /* Hydra's: srun --mpi=pmi2 and Flux set PMI_SIZE too, but not Hydra's MPI_LOCALNRANKS;
     * a world of 1 under them is singleton.c's case, with its own advice. */
    const char *size = getenv("MPI_LOCALNRANKS") ? getenv("PMI_SIZE") : NULL;
    const char *mine = getenv("OMPI_COMM_WORLD_SIZE"), *launcher = "MPICH's";
#else
    const char *size = NULL, *mine = NULL, *launcher = "";
#endif
    if (!size || atoi(size) <= 1 || mine)
        return;
    /* Every rank is a job of its own; all stop. */
    char line[400];
    snprintf(line, sizeof line,
             "%s launcher (mpiexec) started this %s program: each of its %d ranks ran alone, "
             "in an MPI_COMM_WORLD of 1; start it with hmpirun (or %s)",
             launcher, family_name[BUILT], atoi(size), HMPI_BUILD_MPIEXEC);
    PMPI_Finalize();
    stop_with(line);
}
