/* procs.h: the stress runs of the shm primitives' unit tests (barrier.c, epoch.c,
 * meet.c) as forked processes: n members over shared memory the caller mapped, each
 * member's `run` returning how many wrong values it read (0: right); and a call run in a
 * child that must die of a failed assertion (src/common/assert.h). */
#ifndef HMPI_TEST_PROCS_H
#define HMPI_TEST_PROCS_H

#include "../check.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Forks members 0 .. n-1 (at most 64), each calling run(sh, i), and checks that all of
 * them read only right values; `what` names what a wrong read saw. */
#define PROCS_RUN(n, run, sh, what)                                                             \
    do {                                                                                        \
        pid_t pid_[64];                                                                         \
        CHECK((n) <= 64, "at most 64 members");                                                 \
        for (int i_ = 0; i_ < (int)(n); i_++) {                                                 \
            pid_[i_] = fork();                                                                  \
            CHECK(pid_[i_] >= 0, "fork");                                                       \
            if (pid_[i_] == 0)                                                                  \
                _exit(run((sh), i_) ? 1 : 0);                                                   \
        }                                                                                       \
        for (int i_ = 0; i_ < (int)(n); i_++) {                                                 \
            int st_;                                                                            \
            CHECK(waitpid(pid_[i_], &st_, 0) == pid_[i_], "waitpid");                           \
            CHECK(WIFEXITED(st_) && WEXITSTATUS(st_) == 0, "process member %d %s", i_, (what)); \
        }                                                                                       \
    } while (0)

/* 1 when body(arg), run in a forked child with its stderr on /dev/null, dies of SIGABRT
 * (an assertion that failed); 0 when it returns. */
static inline int proc_aborts(void (*body)(void *), void *arg)
{
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, STDERR_FILENO);
        body(arg);
        _exit(0);
    }
    int st;
    CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
    CHECK((WIFEXITED(st) && WEXITSTATUS(st) == 0) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT),
          "the child neither returned nor aborted (status %#x)", st);
    return WIFSIGNALED(st);
}

#endif
