/* The floor of a per-line sandbox launcher (issue 27): what the kernel must do for shellgate's
 * sandbox shape, and nothing else. One static process that
 *   - builds a Landlock ruleset: read and execute everywhere, every right beneath WS, /tmp, /dev;
 *   - clones into new mount and PID namespaces (and a user namespace when not root);
 *   - in the child: mounts private, binds WS and /tmp onto themselves, makes the whole tree
 *     read-only but those two, sets no_new_privs, restricts itself with the ruleset, installs a
 *     one-instruction seccomp filter, and execs PROG;
 *   - waits for it and exits with its status.
 * No decision, no config, no audit, no supervisor: a launcher cannot do less and give a line
 * this sandbox. benches/floor.sh builds it (cc -O2 -static) and measures shellgate against it.
 *
 * Usage: floor WS PROG [ARGS...]   (PROG absolute). Exit 120-127: the launcher's own failure. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/mount.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Landlock ABI 1's filesystem rights (13 of them): every kernel with Landlock has them. */
#define FS_ALL ((1ULL << 13) - 1)
#define FS_READ_EXEC \
  (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

static int add_rule(int ruleset, const char *path, unsigned long long rights) {
  struct landlock_path_beneath_attr rule = {.allowed_access = rights};
  rule.parent_fd = open(path, O_PATH | O_CLOEXEC);
  if (rule.parent_fd < 0) return -1;
  int r = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
  close(rule.parent_fd);
  return r;
}

static int set_attr(const char *path, unsigned long long set, unsigned long long clear) {
  struct mount_attr attr = {.attr_set = set, .attr_clr = clear};
  return syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof attr);
}

/* Maps this user to itself in the new user namespace (the unprivileged path). */
static int map_self(uid_t uid, gid_t gid) {
  char line[64];
  int fd, n, ok = 1;
  if ((fd = open("/proc/self/setgroups", O_WRONLY)) < 0) return -1;
  ok &= write(fd, "deny", 4) == 4, close(fd);
  n = snprintf(line, sizeof line, "%u %u 1", uid, uid);
  if ((fd = open("/proc/self/uid_map", O_WRONLY)) < 0) return -1;
  ok &= write(fd, line, n) == n, close(fd);
  n = snprintf(line, sizeof line, "%u %u 1", gid, gid);
  if ((fd = open("/proc/self/gid_map", O_WRONLY)) < 0) return -1;
  ok &= write(fd, line, n) == n, close(fd);
  return ok ? 0 : -1;
}

static void child(const char *ws, int ruleset, uid_t uid, gid_t gid, char **argv) {
  struct sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog filter = {.len = 1, .filter = allow};
  if (uid != 0 && map_self(uid, gid)) _exit(121);
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) _exit(122);
  if (mount(ws, ws, NULL, MS_BIND | MS_REC, NULL)) _exit(122);
  if (mount("/tmp", "/tmp", NULL, MS_BIND | MS_REC, NULL)) _exit(122);
  if (set_attr("/", MOUNT_ATTR_RDONLY, 0) || set_attr(ws, 0, MOUNT_ATTR_RDONLY) ||
      set_attr("/tmp", 0, MOUNT_ATTR_RDONLY))
    _exit(123);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) _exit(124);
  if (syscall(SYS_landlock_restrict_self, ruleset, 0)) _exit(125);
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &filter)) _exit(126);
  execv(argv[0], argv);
  _exit(127);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fputs("usage: floor WS PROG [ARGS...]\n", stderr);
    return 120;
  }
  struct landlock_ruleset_attr handled = {.handled_access_fs = FS_ALL};
  int ruleset = syscall(SYS_landlock_create_ruleset, &handled, sizeof handled, 0);
  if (ruleset < 0 || add_rule(ruleset, "/", FS_READ_EXEC) || add_rule(ruleset, argv[1], FS_ALL) ||
      add_rule(ruleset, "/tmp", FS_ALL) || add_rule(ruleset, "/dev", FS_ALL))
    return 120;
  uid_t uid = geteuid();
  gid_t gid = getegid();
  long flags = CLONE_NEWNS | CLONE_NEWPID | SIGCHLD | (uid != 0 ? CLONE_NEWUSER : 0);
  pid_t pid = syscall(SYS_clone, flags, 0, 0, 0, 0);
  if (pid < 0) return 120;
  if (pid == 0) child(argv[1], ruleset, uid, gid, argv + 2);
  int status;
  if (waitpid(pid, &status, 0) < 0) return 120;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
