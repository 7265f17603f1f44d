/* procs.h: the stress runs of the shm primitives' unit tests (barrier.c, epoch.c,
 * meet.c) as forked processes: n members over shared memory the caller mapped, each
 * member's `run` returning how many wrong values it read (0: right). */
#ifndef HMPI_TEST_PROCS_H
#define HMPI_TEST_PROCS_H

#include "../check.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Forks members 0 .. n-1 (at most 64), each calling run(sh, i), and checks that all of
 * them read only right values; `what` names what a wrong read saw. */
#define PROCS_RUN(n, run, sh, what)                                                        \
    do {                                                                                   \
        pid_t pid_[64];                                                                    \
        CHECK((n) <= 64, "at most 64 members");                                            \
        for (int i_ = 0; i_ < (int)(n); i_++) {                                            \
            pid_[i_] = fork();                                                             \
            CHECK(pid_[i_] >= 0, "fork");                                                  \
            if (pid_[i_] == 0)                                                             \
                _exit(run((sh), i_) ? 1 : 0);                                              \
        }                                                                                  \
        for (int i_ = 0; i_ < (int)(n); i_++) {                                            \
            int st_;                                                                       \
            CHECK(waitpid(pid_[i_], &st_, 0) == pid_[i_], "waitpid");                      \
            CHECK(WIFEXITED(st_) && WEXITSTATUS(st_) == 0, "process member %d %s", i_,      \
                  (what));                                                                 \
        }                                                                                  \
    } while (0)

#endif
