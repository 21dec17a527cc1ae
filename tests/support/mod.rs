//! What every integration test that starts shellgate, a shell or an agent shares, so that the
//! suite gives the same answer wherever the clone lives (`/tmp`, `$HOME`) and however it was
//! started (from a terminal or without one, under `nohup`, by root or by a normal user):
//!
//! * [`scratch_dir`]: test files live outside `/tmp` and `/var/tmp`, which the sandbox makes
//!   writable; a marker that must not appear is only meaningful where the sandbox cannot write.
//! * [`isolate`]: a child gets its own `HOME` and `XDG_*` directories and nothing else inherited
//!   from the test's environment (no `SHELLGATE_*`, `BASH_ENV`, `ENV`, `ZDOTDIR` of the person
//!   running the tests), and the default disposition of every signal: a parent started with `&`
//!   or `nohup` ignores SIGINT, and an ignored signal stays ignored across `exec`.
//! * [`detach`]: no controlling terminal, as for an agent's subprocess or CI.
//! * [`write_executable`], [`copy_executable`]: a program a test makes is written by a child
//!   process, never by the test process (see there).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Directories the sandbox makes writable (`/tmp`, `/var/tmp`) or private (`/dev/shm`, a fresh
/// one in every sandbox): no place for files a sandboxed line must see but not change.
const SANDBOX_TEMP_ROOTS: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// Writes `contents` to `path` as a program (mode 0755): drafted beside it, then copied into
/// place by a child process ([`copy_executable`]).
pub fn write_executable(path: &Path, contents: impl AsRef<[u8]>) {
    let mut draft = path.as_os_str().to_owned();
    draft.push(".draft");
    let draft = PathBuf::from(draft);
    std::fs::write(&draft, contents).expect("the draft is written");
    copy_executable(&draft, path);
    std::fs::remove_file(&draft).expect("the draft is removed");
}

/// Copies the program `from` to `to` (mode 0755) from a child process (`install`). A descriptor
/// this process held open for writing on `to` would be inherited by every child another test
/// thread forks meanwhile, and executing `to` before that child reaches its own `exec` fails
/// with `ETXTBSY` ("Text file busy"); a file written by a child that has exited is open for
/// writing nowhere.
pub fn copy_executable(from: &Path, to: &Path) {
    let status = Command::new("install")
        .args(["-m", "0755"])
        .arg(from)
        .arg(to)
        .status()
        .expect("install starts");
    assert!(
        status.success(),
        "copying {} failed: {status}",
        from.display()
    );
}

/// A fresh directory outside every directory the sandbox makes writable or private, removed when
/// dropped (see [`scratch_base`]).
pub fn scratch_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("shellgate-test-")
        .tempdir_in(scratch_base())
        .expect("a scratch directory")
}

/// A scratch directory no git repository contains (shellgate counts a repository's whole tree as
/// writable by its lines, and a clone's `target/tmp` lies in one): in [`scratch_base`] when that
/// is in no repository, else in `/srv/shellgate-test-scratch` for root, else in
/// `~/.cache/shellgate-test-scratch`; `None` when none is.
pub fn scratch_dir_outside_repositories() -> Option<tempfile::TempDir> {
    let in_repository = |dir: &Path| dir.ancestors().any(|d| d.join(".git").exists());
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let bases = [
        Some(scratch_base().to_path_buf()),
        root.then(|| PathBuf::from("/srv/shellgate-test-scratch")),
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/shellgate-test-scratch")),
    ];
    bases.into_iter().flatten().find_map(|base| {
        std::fs::create_dir_all(&base).ok()?;
        let base = std::fs::canonicalize(&base).ok()?;
        if in_repository(&base) || is_beneath_a_sandbox_temp_root(&base) {
            return None;
        }
        tempfile::Builder::new()
            .prefix("shellgate-test-")
            .tempdir_in(&base)
            .ok()
    })
}

/// Where test files live, in order: `$SHELLGATE_TEST_SCRATCH`; cargo's `target/tmp` when the
/// clone is not beneath a temp dir; `/srv/shellgate-test-scratch` for root. Traversable by
/// everyone (tests also run programs as `nobody`).
pub fn scratch_base() -> &'static Path {
    static BASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BASE.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let candidates = [
            std::env::var_os("SHELLGATE_TEST_SCRATCH").map(PathBuf::from),
            Some(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scratch")),
            root.then(|| PathBuf::from("/srv/shellgate-test-scratch")),
        ];
        for dir in candidates.into_iter().flatten() {
            if std::fs::create_dir_all(&dir).is_err() {
                continue;
            }
            let Ok(canonical) = std::fs::canonicalize(&dir) else {
                continue;
            };
            if is_beneath_a_sandbox_temp_root(&canonical) || !is_writable_dir(&canonical) {
                continue;
            }
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&canonical, std::fs::Permissions::from_mode(0o755));
            return canonical;
        }
        panic!(
            "no directory for test files outside /tmp, /var/tmp and /dev/shm (the sandbox makes \
             those writable or private) and the target directory ({}) lies beneath one: set \
             SHELLGATE_TEST_SCRATCH to a directory elsewhere",
            env!("CARGO_TARGET_TMPDIR")
        )
    })
}

fn is_writable_dir(dir: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path; access(2) only reads it.
    dir.is_dir() && unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } == 0
}

/// Whether a canonical path lies beneath a directory the sandbox may make writable.
pub fn is_beneath_a_sandbox_temp_root(path: &Path) -> bool {
    SANDBOX_TEMP_ROOTS.iter().any(|root| {
        std::fs::canonicalize(root)
            .map(|root| path.starts_with(root))
            .unwrap_or(false)
    })
}

/// The per-user directories a test's child gets, all beneath one home of its own.
#[derive(Clone, Debug)]
pub struct Home {
    pub home: PathBuf,
}

impl Home {
    /// Creates `home` and its XDG directories.
    pub fn at(home: impl Into<PathBuf>) -> Home {
        let home = Home { home: home.into() };
        for (_, dir) in home.xdg() {
            std::fs::create_dir_all(&dir).expect("the home's XDG directories");
        }
        home
    }

    pub fn config(&self) -> PathBuf {
        self.home.join(".config")
    }

    pub fn state(&self) -> PathBuf {
        self.home.join(".local/state")
    }

    fn xdg(&self) -> [(&'static str, PathBuf); 4] {
        [
            ("XDG_CONFIG_HOME", self.config()),
            ("XDG_STATE_HOME", self.state()),
            ("XDG_CACHE_HOME", self.home.join(".cache")),
            ("XDG_DATA_HOME", self.home.join(".local/share")),
        ]
    }
}

/// Gives `command` a clean environment: only `PATH=/usr/bin:/bin`, `HOME` and the XDG base
/// directories of `home`, and `LANG=C.UTF-8`; and default signal dispositions (see
/// [`default_signals`]). Callers add what their test needs (`TERM`, a `PATH` of their own).
pub fn isolate<'a>(command: &'a mut Command, home: &Home) -> &'a mut Command {
    command
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("HOME", &home.home);
    for (name, dir) in home.xdg() {
        command.env(name, dir);
    }
    default_signals(command)
}

/// Removes from the environment `command` inherits what would change how a shell or shellgate
/// behaves (`SHELLGATE_*`, `BASH_ENV`, `ENV`, `ZDOTDIR`, `XDG_*`), and resets signals; the rest
/// stays. For helpers that need the machine's own settings (npm reaching the registry through
/// `NODE_EXTRA_CA_CERTS` or a proxy) and build the environment of what they start themselves.
pub fn without_shell_state(command: &mut Command) -> &mut Command {
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("SHELLGATE_")
            || text.starts_with("XDG_")
            || ["BASH_ENV", "ENV", "ZDOTDIR"].contains(&text.as_ref())
        {
            command.env_remove(&name);
        }
    }
    default_signals(command)
}

/// Resets every signal to its default disposition in the child before it runs: a test run
/// started with `&` or `nohup` ignores SIGINT (and SIGQUIT, SIGHUP), which children inherit
/// across `exec`, while the hooks rely on SIGINT reaching the shell.
pub fn default_signals(command: &mut Command) -> &mut Command {
    // SAFETY: runs in the forked child before exec; sigaction is async-signal-safe, and the
    // closure touches no memory but its own stack.
    unsafe {
        command.pre_exec(|| {
            // The standard signals; SIGKILL and SIGSTOP cannot be changed (and fail harmlessly).
            for signal in 1..32 {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = libc::SIG_DFL;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
            Ok(())
        })
    }
}

/// Whether the test runs as root.
pub fn geteuid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Runs `command` in a mount namespace of its own whose `/etc/hosts` is `hosts` (names the test
/// makes up for loopback). Root only: the unshare fails otherwise, and so does the command.
pub fn with_hosts_file<'c>(command: &'c mut Command, hosts: &Path) -> &'c mut Command {
    with_binds(command, &[(hosts, Path::new("/etc/hosts"))])
}

/// Runs `command` in a mount namespace of its own where each `(source, target)` is bound over
/// its target (the test's own `/etc/hosts`; its home over the password database's, which ssh
/// reads its config from). Root only: the unshare fails otherwise, and so does the command.
pub fn with_binds<'c>(command: &'c mut Command, binds: &[(&Path, &Path)]) -> &'c mut Command {
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
    let binds: Vec<(std::ffi::CString, std::ffi::CString)> =
        binds.iter().map(|(s, t)| (c(s), c(t))).collect();
    // SAFETY: between fork and exec: unshare and mount are async-signal-safe system calls, and
    // their arguments (the C strings) were made before the fork; nothing is allocated.
    unsafe {
        command.pre_exec(move || {
            let none: *const libc::c_char = std::ptr::null();
            let mut ok = libc::unshare(libc::CLONE_NEWNS) == 0
                && libc::mount(
                    none,
                    c"/".as_ptr(),
                    none,
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) == 0;
            for (source, target) in &binds {
                ok = ok
                    && libc::mount(
                        source.as_ptr(),
                        target.as_ptr(),
                        none,
                        libc::MS_BIND,
                        std::ptr::null(),
                    ) == 0;
            }
            if ok {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        })
    }
}

/// Starts the child in a session of its own: no controlling terminal, as an agent's subprocess
/// or a CI job has none, whether or not the tests run in a terminal.
pub fn detach(command: &mut Command) -> &mut Command {
    // SAFETY: runs in the forked child before exec; setsid is async-signal-safe and only fails
    // when the child already leads a process group, which a freshly forked child does not.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        })
    }
}

/// `git ARGS` in `dir` as a test runs it: a test identity, no system config, `home` for its
/// global one; it must succeed.
pub fn git(dir: &Path, home: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", home)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git {args:?} in {}", dir.display());
}

/// Makes `dir` a workspace the sandbox lets a line write: a git repository (its top-level is
/// the workspace), created with no configuration of the person running the tests.
pub fn workspace(dir: &Path) {
    std::fs::create_dir_all(dir).expect("the workspace");
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "git init {}", dir.display());
}

/// A server on 127.0.0.1 that answers every request with `reply` (a whole HTTP response), for
/// the test's lifetime; its port.
pub fn serve_on_loopback(reply: impl Into<Vec<u8>>) -> u16 {
    use std::io::{Read, Write};
    let reply = reply.into();
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in server.incoming().flatten() {
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(&reply);
        }
    });
    port
}

/// The reply of a server that says `served`.
pub const SERVED: &[u8] =
    b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nserved";
