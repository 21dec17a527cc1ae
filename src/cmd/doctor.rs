//! `shellgate doctor`: what this system can enforce, checked by detection *and* by a real launch.

use crate::error::Code;
use crate::mode::SandboxPolicy;
use crate::parse::ShellKind;
use crate::sandbox::{self, Policy, Spec, Support};
use clap::Args as ClapArgs;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};

/// Report the kernel's sandbox features, whether each policy can be enforced here, what the
/// sandbox would protect in the current workspace (and what it cannot), the installed shells and
/// the config files in effect. Exits 211 when the default policy (workspace-write) cannot be
/// enforced.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// The policy `run` uses when nothing else is configured.
const DEFAULT_POLICY: Policy = Policy::WorkspaceWrite;

#[derive(Debug, Serialize)]
struct Report {
    /// How this binary was built: `static musl` or `glibc` (see install.sh).
    build: &'static str,
    #[serde(flatten)]
    support: Support,
    /// A real `shellgate sandbox` launch per policy, in a scratch git workspace.
    probes: Vec<Probe>,
    /// What workspace-write would protect in the current directory's workspace.
    workspace: WorkspaceReport,
    /// What one line may take of the machine, and how each limit is held here.
    limits: LimitsReport,
    /// How a grant that names hosts is held here (see `sandbox::proxy`).
    network_by_host: &'static str,
    shells: Vec<Shell>,
    /// CONFIG FILES IN EFFECT: filled in by the caller (the config module), in precedence
    /// order; `null` while no caller reports them.
    config_files: Option<Vec<PathBuf>>,
    default_policy: Policy,
    default_policy_enforceable: bool,
}

#[derive(Debug, Serialize)]
struct Probe {
    policy: Policy,
    ok: bool,
    reason: Option<String>,
}

/// The sandbox `shellgate sandbox` would make from the current directory (workspace-write),
/// planned without creating anything.
#[derive(Debug, Default, Serialize)]
struct WorkspaceReport {
    /// The writable workspace, if the directory has one.
    path: Option<PathBuf>,
    /// Why it has none.
    no_workspace: Option<String>,
    /// Writable temp dirs.
    temp_dirs: Vec<PathBuf>,
    /// `$TMPDIR` when it is not accepted as a writable root.
    ignored_tmpdir: Option<PathBuf>,
    /// Bound read-only inside the writable roots (created first where git would create them).
    read_only: Vec<PathBuf>,
    /// Homes and other trees that stay read-only although they lie beneath a writable root.
    read_only_trees: Vec<PathBuf>,
    /// Protected names that do not exist: watched while a line runs and checked after it;
    /// whatever appears is moved aside and the line fails (`SANDBOX_VIOLATION`).
    guarded: Vec<PathBuf>,
    /// Credential stores hidden behind an empty read-only view.
    hidden: Vec<PathBuf>,
    /// This environment's variables that lines do not get (names only): credentials.
    withheld_env: Vec<String>,
    /// The variables `[sandbox] pass_env` gives every line although they look like credentials.
    passed_env: Vec<String>,
    /// Why the launcher would refuse to run here.
    error: Option<String>,
}

/// The limits of a line (`[sandbox.limits]` or the defaults) and the mechanism of each.
#[derive(Debug, Serialize)]
struct LimitsReport {
    processes: u64,
    /// How the process limit is held on this kernel, for this user.
    processes_by: &'static str,
    memory_per_process: u64,
    file_size: u64,
    /// Control groups are not used (no limit on a line's total memory or on disk written).
    cgroup: &'static str,
}

#[derive(Debug, Serialize)]
struct Shell {
    name: &'static str,
    path: Option<PathBuf>,
    version: Option<String>,
}

/// Runs `doctor`. `config_files` is the list of configuration files in effect, or `None` when
/// the caller cannot tell (printed as "not reported").
pub fn run(args: &Args, config_files: Option<Vec<PathBuf>>) -> ExitCode {
    let support = sandbox::detect();
    let probes = Policy::ALL.into_iter().map(probe).collect::<Vec<_>>();
    let default_policy_enforceable = verdict(&support, &probes, DEFAULT_POLICY);
    let network_by_host = if support.seccomp {
        "through each line's own proxy (HTTPS_PROXY and the other proxy variables: CONNECT, the \
         TLS server name checked; plain HTTP); names resolved by shellgate, granted ones only; \
         clients that take no proxy reach only granted addresses (localhost, literals)"
    } else {
        "NOT available: without seccomp the supervisor cannot make the line's connections (such a line does not run)"
    };
    let report = Report {
        build: BUILD,
        network_by_host,
        support,
        probes,
        workspace: workspace_report(),
        limits: limits_report(),
        shells: shells(),
        config_files,
        default_policy: DEFAULT_POLICY,
        default_policy_enforceable,
    };
    let text = if args.json {
        serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"
    } else {
        render(&report)
    };
    // A closed pipe (`doctor | head`) is not an error worth a panic.
    let _ = std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes());
    if default_policy_enforceable {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(Code::SandboxUnavailable.exit_status())
    }
}

fn verdict(support: &Support, probes: &[Probe], policy: Policy) -> bool {
    let detected = support
        .policies
        .iter()
        .any(|p| p.policy == policy && p.enforceable);
    let probed = probes.iter().any(|p| p.policy == policy && p.ok);
    detected && probed
}

/// Launches `/bin/sh -c :` under `policy` in a scratch workspace that has a `.git`, so the
/// protected-path mounts are exercised too.
fn probe(policy: Policy) -> Probe {
    let result = scratch_workspace().and_then(|dir| launch_probe(policy, dir.path()));
    Probe {
        policy,
        ok: result.is_ok(),
        reason: result.err(),
    }
}

fn launch_probe(policy: Policy, workspace: &Path) -> Result<(), String> {
    let spec = Spec::new(SandboxPolicy::from(policy), Some(workspace))
        .map_err(|e| e.to_string())?
        .with_home(crate::spec::home_env().map_err(|e| e.to_string())?);
    let null = || {
        std::fs::File::open("/dev/null")
            .map(std::os::fd::OwnedFd::from)
            .map_err(|e| format!("cannot open /dev/null: {e}"))
    };
    let mut command = sandbox::Command::new(
        PathBuf::from("/bin/sh"),
        vec!["-c".into(), ":".into()],
        workspace.to_path_buf(),
        crate::env::get().vars().to_vec(),
    );
    command.stdio = Some([null()?, null()?, null()?]);
    let running = sandbox::spawn(&spec, command).map_err(|e| e.to_string())?;
    match running.wait(None) {
        Ok(finished) if finished.status.success() => Ok(()),
        Ok(finished) => Err(format!(
            "the probe program failed inside the sandbox: {}",
            finished.status
        )),
        Err(e) => Err(e.to_string()),
    }
}

/// A fresh, unpredictable scratch git workspace, removed when dropped.
fn scratch_workspace() -> Result<tempfile::TempDir, String> {
    let dir = tempfile::Builder::new()
        .prefix("shellgate-doctor-")
        .tempdir()
        .map_err(|e| format!("cannot create a scratch workspace: {e}"))?;
    let git = dir.path().join(".git");
    std::fs::create_dir_all(git.join("hooks"))
        .and_then(|()| std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n"))
        .and_then(|()| std::fs::write(git.join("config"), ""))
        .map_err(|e| {
            format!(
                "cannot create a scratch workspace in {}: {e}",
                dir.path().display()
            )
        })?;
    Ok(dir)
}

/// What workspace-write would make of the current directory, or why it would refuse.
fn workspace_report() -> WorkspaceReport {
    let cwd = crate::session::working_dir(None);
    let config = crate::config::load_for(&cwd).ok();
    let settings = config.map(|c| c.sandbox).unwrap_or_default();
    let withheld_env =
        crate::policy::environment::withhold(crate::env::get().vars().to_vec(), &settings.pass_env)
            .withheld;
    let passed_env = settings.pass_env.clone();
    let spec = crate::spec::line_spec(
        SandboxPolicy::WorkspaceWrite,
        &cwd,
        None,
        None,
        &settings,
        false,
    );
    let spec = match spec {
        Ok(spec) => spec,
        Err(error) => {
            return WorkspaceReport {
                error: Some(error.to_string()),
                withheld_env,
                passed_env,
                ..WorkspaceReport::default()
            };
        }
    };
    let (plan, error) = match sandbox::preview(&spec) {
        Ok(plan) => (plan, None),
        Err(e) => (sandbox::Plan::default(), Some(e.to_string())),
    };
    WorkspaceReport {
        path: spec.workspace,
        no_workspace: spec.no_workspace,
        temp_dirs: spec.temp_dirs,
        ignored_tmpdir: spec.ignored_tmpdir,
        read_only: plan.read_only,
        guarded: plan.guarded,
        hidden: plan.hidden,
        withheld_env,
        passed_env,
        read_only_trees: plan
            .layers
            .iter()
            .filter_map(|l| match l {
                sandbox::Layer::ReadOnly(p) => Some(p.clone()),
                sandbox::Layer::Writable(_) => None,
            })
            .collect(),
        error,
    }
}

fn limits_report() -> LimitsReport {
    let cwd = crate::session::working_dir(None);
    let limits = crate::config::load_for(&cwd)
        .map(|c| c.sandbox.limits)
        .unwrap_or_default();
    let processes_by = if sandbox::per_namespace_pid_max() {
        "the line's own pid_max (its PID namespace, Linux 6.14+) and RLIMIT_NPROC"
    } else if sandbox::geteuid() != 0 {
        "RLIMIT_NPROC in the line's user namespace"
    } else {
        "NOT limited: root is exempt from RLIMIT_NPROC, and this kernel (before 6.14) has no pid_max per namespace"
    };
    LimitsReport {
        processes: limits.processes,
        processes_by,
        memory_per_process: limits.memory,
        file_size: limits.file_size,
        cgroup: "not used: each process's memory and each file's size are limited (rlimits), not a line's total memory or the disk it writes",
    }
}

fn shells() -> Vec<Shell> {
    ShellKind::ALL
        .into_iter()
        .filter(|kind| kind.has_hook())
        .map(|kind| {
            let name = kind.as_str();
            let path = find_in_path(name);
            let version = path.as_deref().and_then(version_of);
            Shell {
                name,
                path,
                version,
            }
        })
        .collect()
}

fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = crate::env::get().var("PATH")?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn version_of(shell: &Path) -> Option<String> {
    let output = std::process::Command::new(shell)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines().next().map(|l| l.trim().to_string())
}

/// The C library this binary is linked with. musl looks users up in `/etc/passwd` (and nscd)
/// only, glibc through NSS as well: the home the password database gives can differ.
const BUILD: &str = if cfg!(target_env = "musl") {
    "static musl (users from /etc/passwd or nscd; no NSS modules)"
} else {
    "glibc"
};

fn render(report: &Report) -> String {
    let s = &report.support;
    let mut out = String::new();
    let mut line = |label: &str, value: String| out.push_str(&format!("{label:<28} {value}\n"));
    line("build", report.build.to_owned());
    line("kernel", format!("Linux {} ({})", s.kernel, s.arch));
    line("landlock", landlock_line(s));
    line(
        "lsm list",
        s.lsm
            .clone()
            .unwrap_or_else(|| "unknown (securityfs not mounted)".into()),
    );
    line(
        "seccomp",
        if s.seccomp {
            "filters available".into()
        } else {
            "NOT available".into()
        },
    );
    line("mount namespace", namespace_line(s));
    render_workspace(&report.workspace, &mut line);
    let l = &report.limits;
    line(
        "limit processes",
        format!("{} alive at once, by {}", l.processes, l.processes_by),
    );
    line(
        "limit memory",
        format!("{} bytes per process (RLIMIT_DATA)", l.memory_per_process),
    );
    line(
        "limit file size",
        format!("{} bytes per file (RLIMIT_FSIZE)", l.file_size),
    );
    line("limit cgroup", l.cgroup.to_owned());
    line("network by host", report.network_by_host.to_owned());
    for p in &s.protections {
        let value = match &p.reason {
            None => "enforceable".to_string(),
            Some(reason) => format!("NOT enforceable: {reason}"),
        };
        line(&format!("protection {}", p.protection), value);
    }
    for policy in &s.policies {
        let probe = report.probes.iter().find(|p| p.policy == policy.policy);
        line(
            &format!("policy {}", policy.policy),
            policy_line(policy, probe),
        );
    }
    for shell in &report.shells {
        let value = match (&shell.path, &shell.version) {
            (Some(path), Some(version)) => format!("{version} ({})", path.display()),
            (Some(path), None) => path.display().to_string(),
            (None, _) => "not installed".into(),
        };
        line(&format!("shell {}", shell.name), value);
    }
    let config = match &report.config_files {
        None => "(not reported yet)".to_string(),
        Some(files) if files.is_empty() => "none".into(),
        Some(files) => files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    line("config files", config);
    let verdict = if report.default_policy_enforceable {
        "enforceable"
    } else {
        "NOT enforceable"
    };
    line(
        "default policy",
        format!("{} {verdict}", report.default_policy),
    );
    out
}

fn render_workspace(w: &WorkspaceReport, line: &mut impl FnMut(&str, String)) {
    let names = |list: &[String]| {
        if list.is_empty() {
            "none".to_owned()
        } else {
            list.join(", ")
        }
    };
    line("withheld variables", names(&w.withheld_env));
    line("passed variables", names(&w.passed_env));
    if let Some(error) = &w.error {
        line("workspace", format!("cannot sandbox here: {error}"));
        return;
    }
    match (&w.path, &w.no_workspace) {
        (Some(workspace), _) => line("workspace", workspace.display().to_string()),
        (None, Some(why)) => line("workspace", format!("none: {why}")),
        (None, None) => line("workspace", "none".to_owned()),
    }
    let mut temp = paths(&w.temp_dirs, None);
    if let Some(tmpdir) = &w.ignored_tmpdir {
        temp.push_str(&format!(
            " ($TMPDIR {} ignored: not a private directory beneath /tmp or /var/tmp; name it in sandbox.writable)",
            tmpdir.display()
        ));
    }
    line("temp dirs", temp);
    let base = w.path.as_ref();
    line("read-only paths", paths(&w.read_only, base));
    if !w.read_only_trees.is_empty() {
        line("read-only trees", paths(&w.read_only_trees, None));
    }
    line("guarded (missing)", paths(&w.guarded, base));
    line("hidden", paths(&w.hidden, None));
}

/// A list of paths, relative to `base` where they lie beneath it.
fn paths(list: &[PathBuf], base: Option<&PathBuf>) -> String {
    if list.is_empty() {
        return "none".into();
    }
    list.iter()
        .map(|p| {
            base.and_then(|b| p.strip_prefix(b).ok())
                .unwrap_or(p)
                .display()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn landlock_line(s: &Support) -> String {
    let abi = &s.landlock;
    if abi.effective == 0 {
        return format!(
            "unavailable: {}",
            abi.unavailable_reason().unwrap_or_default()
        );
    }
    let features: Vec<&str> = s.landlock_features.iter().map(|f| f.as_str()).collect();
    let limit = abi
        .limit
        .map(|l| format!(", limited to {l} by {}", sandbox::ABI_MAX_ENV))
        .unwrap_or_default();
    format!("ABI {}{limit}: {}", abi.effective, features.join(", "))
}

fn namespace_line(s: &Support) -> String {
    match (&s.namespaces.via, &s.namespaces.reason) {
        (Some(via), _) => format!(
            "available ({})",
            serde_json::to_string(via)
                .unwrap_or_default()
                .trim_matches('"')
        ),
        (None, Some(reason)) => format!("unavailable: {reason}"),
        (None, None) => "unavailable".into(),
    }
}

fn policy_line(policy: &sandbox::support::PolicySupport, probe: Option<&Probe>) -> String {
    match (policy.enforceable, probe) {
        (true, Some(p)) if p.ok => "enforceable (probe launched)".into(),
        (true, Some(p)) => format!(
            "NOT enforceable: probe failed: {}",
            p.reason.clone().unwrap_or_default()
        ),
        (true, None) => "enforceable".into(),
        (false, _) => format!(
            "NOT enforceable: {}",
            policy.reason.clone().unwrap_or_default()
        ),
    }
}
