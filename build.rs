//! Finds the programs that some tests need (zsh, shellcheck, groff, Chromium, npm, ...) and tells
//! the tests which are there, as `cfg(has_NAME)` flags. A test that needs a missing program carries
//! `#[cfg_attr(not(has_NAME), ignore = "why, and how to install it")]`, so `cargo test` and
//! nextest list it as ignored with that reason instead of failing, or, worse, passing without
//! having checked anything.
//!
//! `SHELLGATE_TEST_REQUIRE_ALL=1` (set by `.ci/run`) turns a missing program into a build error
//! that names it: in CI every test must run (all but the PowerShell one, which Debian cannot
//! install).
//!
//! The probes re-run when a program appears (the directories that hold them change) or `PATH`
//! changes. The shellgate binary itself uses none of this, with one exception: [`link_unwinder`].

// A build script is cargo's program, whose interface is the environment (`TARGET`, `PATH`): the
// rule that the binary reads it once (clippy.toml, src/env.rs) is not for it.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Directories searched besides `PATH` (a build may run with a reduced `PATH`; the tests name
/// several programs by these absolute paths).
const SYSTEM_DIRS: [&str; 5] = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];

/// One thing some tests need.
struct Probe {
    /// The cfg flag set when it is there: `has_<name>`.
    cfg: &'static str,
    /// What is missing, and how to get it (for the require-all error).
    hint: &'static str,
    found: bool,
    /// Whether `SHELLGATE_TEST_REQUIRE_ALL` requires it (PowerShell cannot be installed from
    /// Debian's packages, so CI cannot have it).
    required: bool,
}

/// Links GCC's unwinder statically (`libgcc_eh.a`, as a `+crt-static` build does) instead of
/// `libgcc_s.so.1`, which Rust's standard library otherwise loads in every process: shellgate
/// starts once for every shell line, and loading that library costs each start about 0.12 ms
/// (its constructor asks the CPU for its features, which traps in a VM; `benches/sandbox.sh`).
/// Named before the standard library's own `-lgcc_s`, it provides the unwinder's symbols, and
/// `--as-needed` then drops `libgcc_s`.
fn link_unwinder() {
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.ends_with("-linux-gnu") {
        println!("cargo::rustc-link-lib=static:-bundle=gcc_eh");
    }
}

fn main() {
    link_unwinder();
    // The panic test's seam (src/main.rs `panic_seam`), set only by that test's own build.
    println!("cargo::rustc-check-cfg=cfg(shellgate_panic_seam)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=SHELLGATE_TEST_REQUIRE_ALL");
    println!("cargo::rerun-if-changed=/etc/skel");
    let dirs = search_dirs();
    for dir in &dirs {
        // A directory's mtime changes when a program is installed into it or removed.
        println!("cargo::rerun-if-changed={}", dir.display());
    }
    let find = |name: &str| dirs.iter().any(|dir| is_executable(&dir.join(name)));
    let at = |path: &str| is_executable(Path::new(path));
    let at_file = |path: &str| Path::new(path).is_file();
    let python3 = at("/usr/bin/python3");
    let netns = find("unshare") && can_enter_a_network_namespace();
    let probes = [
        probe("has_zsh", "zsh (apt-get install zsh)", find("zsh")),
        probe("has_dash", "dash (apt-get install dash)", find("dash")),
        probe("has_tmux", "tmux (apt-get install tmux)", find("tmux")),
        probe(
            "has_shellcheck",
            "shellcheck (apt-get install shellcheck)",
            find("shellcheck"),
        ),
        probe(
            "has_groff",
            "groff (apt-get install groff-base)",
            find("groff"),
        ),
        Probe {
            required: false,
            ..probe(
                "has_pwsh",
                "PowerShell's pwsh (not in Debian; see docs/shell-integration.md)",
                find("pwsh"),
            )
        },
        // The tests name these by absolute path, as agents do.
        probe(
            "has_python3",
            "/usr/bin/python3 (apt-get install python3)",
            python3,
        ),
        probe(
            "has_git",
            "/usr/bin/git (apt-get install git)",
            at("/usr/bin/git"),
        ),
        probe(
            "has_make",
            "/usr/bin/make (apt-get install make)",
            at("/usr/bin/make"),
        ),
        probe(
            "has_chromium",
            "/usr/bin/chromium and /usr/bin/chromedriver (apt-get install chromium chromium-driver)",
            at("/usr/bin/chromium") && at("/usr/bin/chromedriver"),
        ),
        probe(
            "has_bwrap",
            "bubblewrap (apt-get install bubblewrap)",
            find("bwrap"),
        ),
        probe(
            "has_netns",
            "a loopback-only network namespace: util-linux unshare, run as root or with \
             unprivileged user namespaces allowed",
            netns,
        ),
        // The stock skeleton dotfiles of Debian and Ubuntu, whose ~/.profile reads ~/.bashrc
        // before it puts ~/.local/bin on PATH (the README's setup is tested against them).
        probe(
            "has_skel",
            "Debian's skeleton dotfiles /etc/skel/.profile and .bashrc (package bash, base-files)",
            at_file("/etc/skel/.profile") && at_file("/etc/skel/.bashrc"),
        ),
        // The real-agent tests install Claude Code and Codex CLI with npm (tests/agents/).
        probe(
            "has_npm",
            "node and npm (apt-get install nodejs npm)",
            find("npm") && find("node"),
        ),
    ];
    let mut missing = Vec::new();
    for p in &probes {
        println!("cargo::rustc-check-cfg=cfg({})", p.cfg);
        if p.found {
            println!("cargo::rustc-cfg={}", p.cfg);
        } else if p.required {
            missing.push(p.hint);
        }
    }
    let required = std::env::var_os("SHELLGATE_TEST_REQUIRE_ALL").is_some_and(|v| v == "1");
    if required && !missing.is_empty() {
        panic!(
            "SHELLGATE_TEST_REQUIRE_ALL=1, and these test programs are missing (their tests \
             would be skipped):\n  - {}\n.ci/run installs them on Debian.",
            missing.join("\n  - ")
        );
    }
}

fn probe(cfg: &'static str, hint: &'static str, found: bool) -> Probe {
    Probe {
        cfg,
        hint,
        found,
        required: true,
    }
}

/// `PATH`'s directories, then the system ones; each once (`/bin` is `/usr/bin` on a merged-usr
/// system) and only those that exist.
fn search_dirs() -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for dir in std::env::split_paths(&path).chain(SYSTEM_DIRS.iter().map(PathBuf::from)) {
        // A relative PATH entry depends on the directory the build runs in: not a place to look.
        if !dir.is_absolute() {
            continue;
        }
        let Ok(canonical) = std::fs::canonicalize(&dir) else {
            continue;
        };
        if canonical.is_dir() && !seen.contains(&canonical) {
            seen.push(canonical);
            dirs.push(dir);
        }
    }
    dirs
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether this user can make a network namespace, as the real-agent harness does: directly (root),
/// or else inside a new user namespace, which some systems forbid.
fn can_enter_a_network_namespace() -> bool {
    [
        &["--net", "true"][..],
        &["--map-root-user", "--net", "true"],
    ]
    .iter()
    .any(|args| {
        Command::new("unshare")
            .args(*args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}
