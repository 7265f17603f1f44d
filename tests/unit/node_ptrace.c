/* node_ptrace.c: whom a rank names with PR_SET_PTRACER under Yama's ptrace_scope=1.
 * The pure parts of hmpi_node_ptrace_setup on made-up process trees (a fake
 * /proc/<pid>/stat reader): the parent parsed from odd command names, the ancestry
 * walk, the nearest common ancestor (never init), the policy per scope. Then the real
 * /proc: two forked children of this test find it as their common ancestor. */
#include "../check.h"
#include "node/node.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { D = HMPI_ANCESTRY_DEPTH };

/* ---- /proc/<pid>/stat lines ------------------------------------------------------- */

static void test_stat_ppid(void)
{
    CHECK(hmpi_node_stat_ppid("1234 (fault_victim) S 77 1234 1234 0 -1 4194560") == 77,
          "plain line");
    CHECK(hmpi_node_stat_ppid("1234 (a b) c) R 4321 1 1") == 4321,
          "comm with spaces and ')' is skipped up to the last ')'");
    CHECK(hmpi_node_stat_ppid("1 (systemd) S 0 1 1 0") == 0, "init's parent is 0");
    CHECK(hmpi_node_stat_ppid("1234 (x) S 99\n") == 99, "ends after ppid");
    CHECK(hmpi_node_stat_ppid("") == -1, "empty");
    CHECK(hmpi_node_stat_ppid("1234 fault_victim S 77") == -1, "no parentheses");
    CHECK(hmpi_node_stat_ppid("1234 (x) S") == -1, "cut before ppid");
    CHECK(hmpi_node_stat_ppid("1234 (x) S abc 1") == -1, "ppid not a number");
    CHECK(hmpi_node_stat_ppid("1234 (x) S -5 1") == -1, "negative ppid");
    CHECK(hmpi_node_stat_ppid("1234 (x) S 99999999999 1") == -1, "ppid out of range");
}

/* ---- a made-up process tree ----------------------------------------------------------
 *   1 init
 *   +- 10 sshd -- 11 bash -- 100 mpiexec -- 200 hydra_pmi_proxy -- 301, 302, 303 ranks
 *   |                                   \-- 201 hydra_pmi_proxy -- 311 rank
 *   +- 20 other user's shell -- 400 rank of another job
 *   +- 30 (a self-named ") S 1 (" daemon) -- 500
 * 600's parent cannot be read; 700's parent is outside the pid namespace (0). */
static const struct {
    int pid, ppid;
    const char *comm;
} tree[] = {
    {1, 0, "systemd"},
    {10, 1, "sshd"},
    {11, 10, "bash"},
    {100, 11, "mpiexec"},
    {200, 100, "hydra_pmi_proxy"},
    {201, 100, "hydra_pmi_proxy"},
    {301, 200, "app"},
    {302, 200, "app"},
    {303, 200, "app"},
    {311, 201, "app"},
    {20, 1, "bash"},
    {400, 20, "app"},
    {30, 1, "x) S 1 (y"},
    {500, 30, "app"},
    {600, 12345, "app"},
    {700, 0, "app"},
};

static int fake_read_stat(int pid, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof tree / sizeof tree[0]; i++)
        if (tree[i].pid == pid) {
            snprintf(buf, len, "%d (%s) S %d %d %d 0 -1 4194560 100 0", pid, tree[i].comm,
                     tree[i].ppid, pid, pid);
            return 0;
        }
    return -1; /* 12345: gone, or not ours to read */
}

static void chain_of(int pid, int *row) { hmpi_node_ancestry(pid, row, D, fake_read_stat); }

static void expect_chain(int pid, const int *want, int n)
{
    int row[D];
    chain_of(pid, row);
    for (int i = 0; i < D; i++)
        CHECK(row[i] == (i < n ? want[i] : 0), "ancestry of %d: entry %d is %d, want %d", pid, i,
              row[i], i < n ? want[i] : 0);
}

static void test_ancestry(void)
{
    expect_chain(301, (const int[]){200, 100, 11, 10, 1}, 5);
    expect_chain(500, (const int[]){30, 1}, 2); /* the odd comm parsed right */
    expect_chain(600, (const int[]){12345}, 1); /* stops where /proc cannot be read */
    expect_chain(700, NULL, 0);                 /* parent outside the namespace */
    expect_chain(1, NULL, 0);
    /* A chain deeper than D: cut at D entries, no overflow. */
    int row[D + 4];
    for (int i = 0; i < D + 4; i++)
        row[i] = -7;
    hmpi_node_ancestry(301, row, 3, fake_read_stat);
    CHECK(row[0] == 200 && row[1] == 100 && row[2] == 11 && row[3] == -7,
          "depth 3 wrote %d %d %d %d", row[0], row[1], row[2], row[3]);
}

static int ancestor_of(const int *pids, int n)
{
    int rows[8 * D];
    for (int r = 0; r < n; r++)
        chain_of(pids[r], rows + r * D);
    return hmpi_node_common_ancestor(rows, n, D);
}

static void test_common_ancestor(void)
{
    /* Ranks under one launcher process: that process, not mpiexec above it. */
    CHECK(ancestor_of((const int[]){301, 302, 303}, 3) == 200, "siblings: their proxy");
    CHECK(ancestor_of((const int[]){303, 301}, 2) == 200, "order of the ranks");
    /* Ranks under two proxies (two simulated nodes on one machine): the nearest above. */
    CHECK(ancestor_of((const int[]){301, 311}, 2) == 100, "two proxies: mpiexec");
    /* One rank: its parent (the grant then covers only the launcher's subtree). */
    CHECK(ancestor_of((const int[]){302}, 1) == 200, "single rank");
    /* Related only through init: no grant (naming init would let everyone in). */
    CHECK(ancestor_of((const int[]){301, 400}, 2) == 0, "other job: only init in common");
    CHECK(ancestor_of((const int[]){500, 301}, 2) == 0, "via init only");
    /* Chains cut short (unreadable /proc, other namespace): no common ancestor. */
    CHECK(ancestor_of((const int[]){301, 600}, 2) == 0, "unreadable parent");
    CHECK(ancestor_of((const int[]){700, 301}, 2) == 0, "empty chain of rank 0");
    CHECK(ancestor_of((const int[]){301, 700}, 2) == 0, "empty chain of rank 1");

    /* Made-up chains: init never chosen even where it is the only pid in common, and a
     * 0 ends a row (entries after it are ignored). */
    int rows[3 * D] = {0};
    rows[0] = 1;
    rows[D] = 1;
    CHECK(hmpi_node_common_ancestor(rows, 2, D) == 0, "init alone");
    int a[D] = {5, 6, 7}, b[D] = {8, 0, 5};
    memcpy(rows, a, sizeof a);
    memcpy(rows + D, b, sizeof b);
    CHECK(hmpi_node_common_ancestor(rows, 2, D) == 0, "5 after the end of row 1");
    int c[D] = {9, 7, 6};
    memcpy(rows + D, c, sizeof c);
    CHECK(hmpi_node_common_ancestor(rows, 2, D) == 6, "nearest from row 0: 6 before 7");
}

static void test_policy(void)
{
    CHECK(hmpi_node_cma_policy(-1, 0) == HMPI_CMA_FREE, "no Yama");
    CHECK(hmpi_node_cma_policy(0, 0) == HMPI_CMA_FREE, "scope 0");
    CHECK(hmpi_node_cma_policy(1, 200) == HMPI_CMA_GRANT, "scope 1 with an ancestor");
    CHECK(hmpi_node_cma_policy(1, 0) == HMPI_CMA_OFF, "scope 1 without");
    CHECK(hmpi_node_cma_policy(1, 1) == HMPI_CMA_OFF, "scope 1, init: never");
    CHECK(hmpi_node_cma_policy(2, 200) == HMPI_CMA_OFF, "scope 2: admin only");
    CHECK(hmpi_node_cma_policy(3, 200) == HMPI_CMA_OFF, "scope 3: no attach");
}

/* ---- the real /proc --------------------------------------------------------------------- */

static int real_read_stat(int pid, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0 ? 0 : -1;
}

/* Two children, like two ranks under one launcher: each sends its chain up a pipe. */
static void test_real_proc(void)
{
    int rows[2 * D];
    for (int k = 0; k < 2; k++) {
        int fds[2];
        CHECK(pipe(fds) == 0, "pipe");
        pid_t child = fork();
        CHECK(child >= 0, "fork");
        if (child == 0) {
            int row[D];
            hmpi_node_ancestry((int)getpid(), row, D, real_read_stat);
            _exit(write(fds[1], row, sizeof row) == (ssize_t)sizeof row ? 0 : 1);
        }
        close(fds[1]);
        CHECK(read(fds[0], rows + k * D, sizeof(int) * D) == (ssize_t)(sizeof(int) * D),
              "read the child's chain");
        close(fds[0]);
        int st;
        CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child");
        CHECK(rows[k * D] == (int)getpid(), "child %d: parent %d, want %d", k, rows[k * D],
              (int)getpid());
    }
    int anc = hmpi_node_common_ancestor(rows, 2, D);
    CHECK(anc == (int)getpid(), "two children of this test: common ancestor %d, want %d", anc,
          (int)getpid());
}

int main(void)
{
    test_stat_ppid();
    test_ancestry();
    test_common_ancestor();
    test_policy();
    test_real_proc();
    printf("node_ptrace: ok\n");
    return 0;
}
