/* sessions_reinit.c: MPI again after a complete finalize (MPI-4.1 §11.3 allows it): three
 * lives of sessions alone, each MPI_Session_init .. MPI_Session_finalize with traffic,
 * collectives and a window on a communicator from mpi://WORLD, then the world model
 * (MPI_Init .. MPI_Finalize, allowed once the sessions are gone). HMPI sets itself up
 * anew in each life, over the shared heap of the first (it is never unmapped): HMPI is
 * active in every life unless HMPI_DISABLE=1, and memory allocated in one life is still
 * shared in the next, sent, received and freed there. Registered only where the MPI
 * below survives a second MPI_Session_init (not MPICH 4.0, which crashes in it alone). */
#include "sessions_common.h"

#include <hmpi.h>

enum { LIVES = 3, N = 40000 };

static void check_hmpi(int life)
{
    const char *d = getenv("HMPI_DISABLE");
    int want = !(d && strcmp(d, "0") != 0);
    CHECK(HMPI_Active() == want, "life %d: HMPI_Active() is %d", life, HMPI_Active());
}

int main(void)
{
    int *kept = NULL; /* allocated in the first life, used in the others */
    int rank = 0, size = 1;
    for (int life = 0; life < LIVES; life++) {
        MPI_Session s;
        CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS,
              "life %d: init", life);
        check_hmpi(life);
        MPI_Comm c = comm_of(s, "mpi://WORLD", "org.hmpi.test.reinit");
        MPI_Comm_rank(c, &rank);
        MPI_Comm_size(c, &size);
        if (!kept) {
            kept = malloc(sizeof(int) * N);
            CHECK(kept, "out of memory");
            CHECK(HMPI_Is_shared(kept) == HMPI_Active(), "shared %d", HMPI_Is_shared(kept));
        } else {
            CHECK(HMPI_Is_shared(kept) == HMPI_Active(),
                  "life %d: the first life's block is "
                  "shared %d",
                  life, HMPI_Is_shared(kept));
        }
        for (int i = 0; i < N; i++)
            kept[i] = rank * 31 + i + life;
        int *in = malloc(sizeof(int) * N);
        CHECK(in, "out of memory");
        CHECK(MPI_Sendrecv(kept, N, MPI_INT, (rank + 1) % size, life, in, N, MPI_INT,
                           (rank + size - 1) % size, life, c, MPI_STATUS_IGNORE) == MPI_SUCCESS,
              "life %d: Sendrecv", life);
        for (int i = 0; i < N; i++)
            CHECK(in[i] == ((rank + size - 1) % size) * 31 + i + life, "life %d: element %d: %d",
                  life, i, in[i]);
        free(in);
        traffic(c, life);
        collectives(c, life);
        window(c, life);
        MPI_Comm_free(&c);
        CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "life %d: finalize", life);
    }
    MPI_Init(NULL, NULL);
    check_hmpi(LIVES);
    traffic(MPI_COMM_WORLD, LIVES);
    collectives(MPI_COMM_WORLD, LIVES);
    free(kept);
    MPI_Finalize();
    if (rank == 0)
        printf("sessions_reinit: ok\n");
    return 0;
}
