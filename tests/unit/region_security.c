/* region_security.c: the region's file as another user or a planted file sees it.
 * hmpi_region_create makes a file of mode exactly 0600 (whatever the umask) owned by
 * this user, under a name of 24 hex digits from the kernel, different every time;
 * creating at a name where a file or a symlink was planted fails and touches neither;
 * hmpi_region_open refuses files others may read and symlinks; as root, a child that
 * became nobody cannot open the file (its directory open to all, like /dev/shm). */
#define _GNU_SOURCE /* setresuid, setresgid */
#include "test_util.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>

enum { LEN = 1 << 20 };

static region_fixture_t fx; /* only for its dir and the atexit cleanup */

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", fx.dir, name);
}

static void test_name(void)
{
    const unsigned char rnd[3] = {0x00, 0xab, 0x7f};
    char p[64];
    CHECK(hmpi_region_name("/d", rnd, 3, p, sizeof p) == 0 && strcmp(p, "/d/hmpi-00ab7f") == 0,
          "name '%s'", p);
    CHECK(hmpi_region_name("/d", rnd, 3, p, 14) == -1, "a name one byte too long must fail");
    CHECK(hmpi_region_name("/d", rnd, 3, p, 15) == 0, "a name that just fits");
}

static void test_create(void)
{
    mode_t old = umask(0); /* the most permissive umask: the mode must still be 0600 */
    char a[256], b[256];
    int fa, fb;
    CHECK(hmpi_region_create(fx.dir, LEN, a, sizeof a, &fa) == 0, "create a");
    CHECK(hmpi_region_create(fx.dir, LEN, b, sizeof b, &fb) == 0, "create b");
    umask(old);
    CHECK(strcmp(a, b) != 0, "two regions got one name '%s'", a);
    for (int k = 0; k < 2; k++) {
        const char *p = k ? b : a;
        const char *base = strrchr(p, '/') + 1;
        CHECK(strncmp(base, "hmpi-", 5) == 0 && strlen(base) == 5 + 24 &&
                  strspn(base + 5, "0123456789abcdef") == 24,
              "name '%s': want hmpi- and 96 random bits in hex", base);
        struct stat st;
        CHECK(lstat(p, &st) == 0, "lstat %s", p);
        CHECK(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600,
              "%s: mode %o, want a regular file of mode 0600", p, (unsigned)st.st_mode);
        CHECK(st.st_uid == geteuid() && st.st_gid == getegid(), "%s: owner %u:%u", p,
              (unsigned)st.st_uid, (unsigned)st.st_gid);
        CHECK(st.st_size == LEN && st.st_blocks == 0, "%s: size %lld, %lld blocks (sparse?)", p,
              (long long)st.st_size, (long long)st.st_blocks);
        int fd = -1;
        CHECK(hmpi_region_open(p, &fd) == 0, "a peer opens %s", p);
        close(fd);
    }
    close(fa);
    close(fb);
    CHECK(unlink(a) == 0 && unlink(b) == 0, "unlink");
}

/* Something planted at the name: creation fails with EEXIST and leaves it as it was. */
static void test_planted(void)
{
    char victim[256], planted[256], dangling[256], target[256];
    path_in(victim, sizeof victim, "victim");
    path_in(planted, sizeof planted, "hmpi-planted-file");
    path_in(dangling, sizeof dangling, "hmpi-planted-link");
    path_in(target, sizeof target, "would-be-created");

    int fd = open(planted, O_CREAT | O_EXCL | O_WRONLY, 0644);
    CHECK(fd >= 0 && write(fd, "x", 1) == 1, "plant a file");
    close(fd);
    int got = -1;
    errno = 0;
    CHECK(hmpi_region_create_at(planted, LEN, &got) == -1 && errno == EEXIST,
          "created over a planted file (errno %d)", errno);
    struct stat st;
    CHECK(stat(planted, &st) == 0 && st.st_size == 1 && (st.st_mode & 0777) == 0644,
          "the planted file was changed: size %lld mode %o", (long long)st.st_size,
          (unsigned)st.st_mode);

    /* A symlink to a file of ours: not followed, the file not truncated. */
    fd = open(victim, O_CREAT | O_EXCL | O_WRONLY, 0600);
    CHECK(fd >= 0 && write(fd, "keep", 4) == 4, "victim file");
    close(fd);
    char link_to_victim[256];
    path_in(link_to_victim, sizeof link_to_victim, "hmpi-planted-link2");
    CHECK(symlink(victim, link_to_victim) == 0, "symlink");
    errno = 0;
    CHECK(hmpi_region_create_at(link_to_victim, LEN, &got) == -1 && errno == EEXIST,
          "created through a symlink to a file (errno %d)", errno);
    CHECK(stat(victim, &st) == 0 && st.st_size == 4, "the symlink's target was truncated");

    /* A dangling symlink: O_EXCL must not create its target. */
    CHECK(symlink(target, dangling) == 0, "dangling symlink");
    errno = 0;
    CHECK(hmpi_region_create_at(dangling, LEN, &got) == -1 && errno == EEXIST,
          "created through a dangling symlink (errno %d)", errno);
    CHECK(access(target, F_OK) != 0 && errno == ENOENT, "the symlink's target was created");

    /* hmpi_region_open refuses what is not a private file of this user. */
    CHECK(hmpi_region_open(planted, &got) == -1, "opened a file of mode 0644");
    CHECK(hmpi_region_open(link_to_victim, &got) == -1, "opened through a symlink");
    CHECK(unlink(planted) == 0 && unlink(link_to_victim) == 0 && unlink(dangling) == 0 &&
              unlink(victim) == 0,
          "cleanup");
}

/* As root: a child that became nobody opens the file by name and gets EACCES, from the
 * file's mode alone (the directory lets everyone in, as /dev/shm does). */
static void test_other_user(void)
{
    if (geteuid() != 0) {
        printf("region_security: not root, the other-user open is not tried\n");
        return;
    }
    char p[256];
    int fd;
    CHECK(hmpi_region_create(fx.dir, LEN, p, sizeof p, &fd) == 0, "create");
    CHECK(chmod(fx.dir, 01777) == 0, "chmod dir");
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
            setresuid(65534, 65534, 65534) != 0)
            _exit(2);
        int rd = open(p, O_RDONLY | O_NOFOLLOW);
        int rw = open(p, O_RDWR | O_NOFOLLOW);
        int e = errno;
        _exit(rd < 0 && rw < 0 && e == EACCES ? 0 : 1);
    }
    int st;
    CHECK(waitpid(child, &st, 0) == child && WIFEXITED(st), "child");
    CHECK(WEXITSTATUS(st) != 2, "the child could not become nobody");
    CHECK(WEXITSTATUS(st) == 0, "nobody opened the region file %s", p);
    CHECK(chmod(fx.dir, 0700) == 0, "chmod dir back");
    close(fd);
    CHECK(unlink(p) == 0, "unlink");
}

int main(void)
{
    memset(&fx, 0, sizeof fx);
    fixture_live = &fx;
    atexit(fixture_atexit);
    snprintf(fx.dir, sizeof fx.dir, "/dev/shm/hmpitest.XXXXXX");
    CHECK(mkdtemp(fx.dir) != NULL, "mkdtemp: %s", strerror(errno));
    test_name();
    test_create();
    test_planted();
    test_other_user();
    CHECK(dir_entries(fx.dir) == 0, "%s is not empty", fx.dir);
    CHECK(rmdir(fx.dir) == 0, "rmdir");
    fixture_live = NULL;
    printf("region_security: ok\n");
    return 0;
}
