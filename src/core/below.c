/* below.c: fills hmpi_below (below.h) with the MPI below's PMPI_* functions, once, when
 * libhmpi is loaded and before any MPI call can arrive. The next definition after
 * HMPI's in the symbol search order is the below's: HMPI comes before libmpi whether
 * it is linked (-lhmpi before -lmpi, or libhmpi.a inside the program) or preloaded. */
#include "below.h"
#include "../common/log.h"
#include "mismatch.h"

#include <dlfcn.h>
#include <stdlib.h>

struct hmpi_below_table hmpi_below;

__attribute__((constructor)) static void below_bind(void)
{
    /* First: with another MPI's library in the process the table below would be filled
     * from the wrong library, and the first call through it would crash. */
    hmpi_mpi_check_library();
    int missing = 0;
#define BIND(name)                                                                        \
    hmpi_below.name = (__typeof__(hmpi_below.name))dlsym(RTLD_NEXT, "PMPI_" #name);       \
    if (!hmpi_below.name) {                                                               \
        hmpi_log_error("the MPI below has no PMPI_" #name " after libhmpi in the symbol " \
                       "search order (libhmpi must come before libmpi)");                 \
        missing++;                                                                        \
    }
    HMPI_BELOW_CALLS(BIND)
#undef BIND
    if (missing)
        abort();
}
