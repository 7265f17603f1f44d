/* sessions_mixed.c: the world model first, sessions after it (MPI-4.1 §11.3), in the
 * orders a program may take; the argument names one:
 *   nested   MPI_Init, a session, its finalize, then MPI_Finalize
 *   crossed  MPI_Init, a session, MPI_Finalize, the session used on, its finalize
 *   uneven   MPI_Init; the even ranks open a session (a communicator of the even ranks
 *            from its mpi://WORLD group) and use it past MPI_Finalize, the odd ones open
 *            none: their MPI_Finalize is their last finalize
 *   threads  MPI_Init_thread(MULTIPLE); then every rank's threads open a session each at
 *            once, make a communicator with a tag of their own and use it, and finalize
 *            it
 *   alone    the same threads without MPI_Init: one of them sets HMPI up, the others
 *            wait for it; the last to finalize tears it down
 * Every value received is checked. Standard MPI only. */
#include "sessions_common.h"

#include <pthread.h>

enum { THREADS = 3 };

static int thread_rank = -1; /* the process's rank in a thread's communicator */

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    MPI_Session s;
    CHECK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "thread %d: init", t);
    MPI_Info_free(&info);
    char tag[64];
    snprintf(tag, sizeof tag, "org.hmpi.test.thread.%d", t);
    MPI_Comm c = comm_of(s, "mpi://WORLD", tag);
    MPI_Comm_rank(c, &thread_rank);
    traffic(c, 100 + t);
    collectives(c, 100 + t);
    MPI_Comm_free(&c);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "thread %d: finalize", t);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "crossed";
    if (strcmp(how, "alone") == 0) {
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++)
            CHECK(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) == 0, "thread");
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        if (thread_rank == 0)
            printf("sessions_mixed alone: ok\n");
        return 0;
    }
    int provided = MPI_THREAD_SINGLE;
    if (strcmp(how, "threads") == 0) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
        CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    } else {
        MPI_Init(&argc, &argv);
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    traffic(MPI_COMM_WORLD, 1);

    if (strcmp(how, "threads") == 0) {
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++)
            CHECK(pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t) == 0, "thread");
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        traffic(MPI_COMM_WORLD, 2);
        MPI_Finalize();
    } else if (strcmp(how, "nested") == 0) {
        MPI_Session s;
        CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "init");
        MPI_Comm c = comm_of(s, "mpi://WORLD", "org.hmpi.test.nested");
        traffic(c, 2);
        collectives(c, 2);
        window(c, 2);
        traffic(MPI_COMM_WORLD, 3);
        MPI_Comm_free(&c);
        CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "finalize");
        traffic(MPI_COMM_WORLD, 4);
        MPI_Finalize();
    } else if (strcmp(how, "crossed") == 0) {
        MPI_Session s;
        CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "init");
        MPI_Comm c = comm_of(s, "mpi://WORLD", "org.hmpi.test.crossed");
        traffic(c, 2);
        /* A receive posted on the session's communicator before MPI_Finalize, matched and
         * completed after it. */
        int got = -1, next = (rank + 1) % size, prev = (rank + size - 1) % size;
        MPI_Request q;
        CHECK(MPI_Irecv(&got, 1, MPI_INT, prev, 9, c, &q) == MPI_SUCCESS, "Irecv");
        MPI_Finalize();
        int mine = rank * 3 + 1;
        CHECK(MPI_Send(&mine, 1, MPI_INT, next, 9, c) == MPI_SUCCESS, "Send");
        CHECK(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS, "Wait");
        CHECK(got == prev * 3 + 1, "got %d", got);
        traffic(c, 3);
        collectives(c, 3);
        window(c, 3);
        /* A second communicator of the session, made after MPI_Finalize. */
        MPI_Comm d = comm_of(s, "mpi://WORLD", "org.hmpi.test.after");
        traffic(d, 4);
        MPI_Comm_free(&d);
        MPI_Comm_free(&c);
        CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "finalize");
    } else if (strcmp(how, "uneven") == 0) {
        if (rank % 2 == 0) {
            MPI_Session s;
            CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "init");
            MPI_Group all, even;
            CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &all) == MPI_SUCCESS, "group");
            int range[1][3] = {{0, size - 1, 2}};
            MPI_Group_range_incl(all, 1, range, &even);
            MPI_Comm c;
            CHECK(MPI_Comm_create_from_group(even, "org.hmpi.test.even", MPI_INFO_NULL,
                                             MPI_ERRORS_RETURN, &c) == MPI_SUCCESS,
                  "create from the even ranks");
            MPI_Group_free(&all);
            MPI_Group_free(&even);
            traffic(c, 2);
            MPI_Finalize();
            traffic(c, 3);
            collectives(c, 3);
            MPI_Comm_free(&c);
            CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "finalize");
        } else {
            MPI_Finalize();
        }
    } else {
        CHECK(0, "no such order: %s", how);
    }
    if (rank == 0)
        printf("sessions_mixed %s: ok\n", how);
    return 0;
}
