/* below_sym.h: the MPI below's own PMPI_X, for the tests that must bypass HMPI (which
 * exports PMPI_X too, for tools above it): the definition in the first object loaded
 * after libhmpi, found as HMPI itself finds it. BELOW(Irecv) is the below's PMPI_Irecv;
 * the test aborts when there is none (libhmpi not found, or nothing after it). */
#ifndef HMPI_TEST_BELOW_SYM_H
#define HMPI_TEST_BELOW_SYM_H

#include "../check.h"

#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <string.h>

typedef struct {
    const char *hmpi; /* libhmpi's path, as the loader lists it */
    void *hmpi_base;  /* its load address (the program itself when HMPI is linked in) */
    const char *name;
    void *found;
    int past; /* libhmpi seen */
} below_sym_walk_t;

static int below_sym_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    below_sym_walk_t *w = (below_sym_walk_t *)arg;
    (void)size;
    if (w->found)
        return 0;
    if ((void *)info->dlpi_addr == w->hmpi_base ||
        (info->dlpi_name != NULL && strcmp(info->dlpi_name, w->hmpi) == 0)) {
        w->past = 1;
        return 0;
    }
    if (!w->past || info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
        return 0;
    void *h = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
    if (h != NULL) {
        w->found = dlsym(h, w->name);
        dlclose(h);
    }
    return w->found != NULL;
}

static inline void *below_sym(const char *name)
{
    Dl_info self;
    CHECK(dladdr((void *)&MPI_Init, &self) && self.dli_fname != NULL,
          "below_sym: cannot tell which library defines MPI_Init");
    below_sym_walk_t w = {self.dli_fname, self.dli_fbase, name, NULL, 0};
    dl_iterate_phdr(below_sym_visit, &w);
    CHECK(w.found != NULL, "below_sym: no %s after %s", name, self.dli_fname);
    return w.found;
}

#define BELOW(name) ((__typeof__(&PMPI_##name))below_sym("PMPI_" #name))

#endif
