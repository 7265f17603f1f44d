/* late_mpi.c: loads an MPI library only after start (as Python loads mpi4py's), then
 * calls MPI_Init through the global scope, where a preloaded libhmpi answers.
 *   late_mpi LIBRARY      e.g. late_mpi /usr/lib/x86_64-linux-gnu/libmpi.so.40
 * Prints "late_mpi: MPI_Init returned" if it does; exit 3 when LIBRARY will not load. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: late_mpi LIBRARY\n");
        return 2;
    }
    if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "late_mpi: %s\n", dlerror());
        return 3;
    }
    int (*init)(int *, char ***) = (int (*)(int *, char ***))dlsym(RTLD_DEFAULT, "MPI_Init");
    int (*fin)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "MPI_Finalize");
    if (!init || !fin) {
        fprintf(stderr, "late_mpi: no MPI_Init/MPI_Finalize\n");
        return 3;
    }
    int one = 1;
    char *args[] = {argv[0], NULL}, **pargs = args;
    init(&one, &pargs);
    printf("late_mpi: MPI_Init returned\n");
    fflush(stdout);
    fin();
    return 0;
}
