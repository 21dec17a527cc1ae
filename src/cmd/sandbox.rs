//! `shellgate sandbox`: run a program in the sandbox and end the way it ended.

use crate::error::{Error, Reader, Result, print_refusal};
use crate::mode::SandboxPolicy;
use crate::sandbox::{self, Policy, Protection, Spec};
use clap::Args as ClapArgs;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run PROGRAM inside the OS sandbox: a read-only view of the system with only the workspace and
/// temp dirs writable, credential stores hidden, a PID namespace that ends with the program,
/// Landlock and seccomp.
///
/// The program's exit status and signals pass through unchanged. shellgate's own failures exit
/// 211 (SANDBOX_UNAVAILABLE: this system cannot enforce the sandbox), 212 (SANDBOX_EXEC_FAILED:
/// the program could not be started) or 216 (SANDBOX_VIOLATION: the program planted a guarded
/// name, which was moved aside), with a one-line reason on stderr.
#[derive(Debug, ClapArgs)]
pub struct Args {
    /// workspace-write or read-only (full-access means no sandbox and is not accepted here).
    #[arg(long, default_value = "workspace-write", value_name = "POLICY")]
    pub policy: String,
    /// The writable workspace [default: the git top-level of the current directory, or a
    /// configured project root; never a home or a system directory].
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// An extra writable directory (repeatable; skipped when it does not exist).
    #[arg(long = "writable", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// Allow network access.
    #[arg(long)]
    pub network: bool,
    /// Without --network: allow TCP connections to this port (repeatable; enforced by Landlock;
    /// port 53 comes with it, for name lookups over TCP).
    #[arg(long = "tcp-port", value_name = "PORT", conflicts_with = "network")]
    pub tcp_port: Vec<u16>,
    /// Without --network: allow TCP connections to this host and port (`host:port`,
    /// `*.domain:port`, `[::1]:port`; repeatable), through a proxy of the sandbox's own that
    /// the program is given in HTTPS_PROXY and the other proxy variables; nothing else is
    /// reached by name.
    #[arg(long = "host", value_name = "HOST:PORT", conflicts_with = "network",
          value_parser = parse_endpoint)]
    pub host: Vec<crate::policy::endpoint::Endpoint>,
    /// Without --network: allow TCP connections straight to this host and port (`host:port`,
    /// `[::1]:port`; repeatable), for clients that read no proxy variable (ssh): shellgate
    /// resolves the name before the program starts, allows exactly those addresses on that port,
    /// and gives the program an /etc/hosts naming them.
    #[arg(long = "direct", value_name = "HOST:PORT", conflicts_with = "network",
          value_parser = parse_endpoint)]
    pub direct: Vec<crate::policy::endpoint::Endpoint>,
    /// Without --network: let the program listen on this TCP port, on loopback (repeatable; a
    /// wildcard address becomes 127.0.0.1 or ::1; shellgate makes each bind and listen).
    #[arg(long = "listen", value_name = "PORT", conflicts_with = "network",
          value_parser = clap::value_parser!(u16).range(1..))]
    pub listen: Vec<u16>,
    /// Let the program connect to this unix socket by name (repeatable; a contained agent
    /// reaching `wrap`'s broker): every connect is made by shellgate, to these only.
    #[arg(long = "unix-socket", value_name = "PATH", hide = true)]
    pub unix_socket: Vec<PathBuf>,
    /// Keep this directory read-only inside a writable one (a contained agent's shell snapshots).
    #[arg(long = "read-only", value_name = "DIR", hide = true)]
    pub read_only: Vec<PathBuf>,
    /// Keep this mount beneath a writable root writable (a contained agent's own file mounts).
    #[arg(long = "writable-mount", value_name = "PATH", hide = true)]
    pub writable_mount: Vec<PathBuf>,
    /// Let the program read this credential store (a contained agent's own login).
    #[arg(long = "unhide", value_name = "PATH", hide = true)]
    pub unhide: Vec<PathBuf>,
    /// Explicitly run without one protection this system cannot enforce (repeatable).
    #[arg(long = "drop-protection", value_enum, value_name = "PROTECTION")]
    pub drop_protection: Vec<Protection>,
    /// The program and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM"
    )]
    pub command: Vec<OsString>,
}

pub fn run(args: Args) -> ExitCode {
    match supervise(&args) {
        Ok(code) => code,
        Err(error) => ExitCode::from(print_refusal(&error, Reader::OneLine)),
    }
}

fn supervise(args: &Args) -> Result<ExitCode> {
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| Error::usage("sandbox needs a program"))?;
    let spec = spec(args)?;
    let cwd = crate::session::working_dir(None);
    let env = crate::env::get();
    let path = sandbox::resolve_program(program, env.var("PATH"))?;
    let mut command = sandbox::Command::new(path, rest.to_vec(), cwd, env.vars().to_vec());
    command.arg0 = program.clone();
    let mut running = sandbox::spawn(&spec, command)?;
    // This process ends with the program.
    running.leave_init_at_exit();
    // Like a shell waiting for its foreground job: Ctrl-C and Ctrl-\ are the program's.
    let _foreground = crate::gate::ForegroundSignals::ignore();
    let finished = running.wait(None)?;
    if let Some(refusal) = crate::gate::violation_refusal(&finished.violations) {
        return Err(refusal);
    }
    if let Some(refusal) = sandbox::limit_refusal(&finished.status, &spec.limits) {
        return Err(refusal);
    }
    if !finished.denials.is_empty() {
        let what: Vec<String> = finished.denials.iter().map(|d| d.describe()).collect();
        eprintln!("[shellgate] the sandbox refused {}", what.join(", "));
    }
    Ok(crate::gate::end_like(&finished.status))
}

fn spec(args: &Args) -> Result<Spec> {
    let policy = SandboxPolicy::from(Policy::parse(&args.policy)?);
    let cwd = crate::session::working_dir(None);
    let config = crate::config::load_for(&cwd)?;
    let mut spec = match &args.workspace {
        Some(dir) => {
            crate::spec::line_spec(policy, &cwd, None, Some(dir), &config.sandbox, args.network)?
        }
        None => crate::spec::line_spec(policy, &cwd, None, None, &config.sandbox, args.network)?,
    };
    if args.workspace.is_some()
        && spec.workspace.is_none()
        && policy == SandboxPolicy::WorkspaceWrite
    {
        return Err(Error::new(
            crate::error::Code::SandboxUnavailable,
            spec.no_workspace
                .clone()
                .unwrap_or_else(|| "the workspace cannot be writable".to_owned()),
        ));
    }
    for dir in &args.writable {
        spec = spec.with_writable(dir)?;
    }
    for dir in &args.read_only {
        spec = spec.with_read_only(dir)?;
    }
    for path in &args.writable_mount {
        spec = spec.with_writable_mount(path)?;
    }
    for path in &args.unhide {
        spec = spec.unhiding(path);
    }
    spec = spec.with_tcp_ports(&args.tcp_port);
    spec = spec.with_hosts(&args.host).with_direct(&args.direct);
    spec = spec.with_listen(&args.listen);
    spec.unix_sockets.clone_from(&args.unix_socket);
    for protection in &args.drop_protection {
        spec = spec.dropping(*protection);
    }
    Ok(spec)
}

/// `--host`'s value.
fn parse_endpoint(text: &str) -> std::result::Result<crate::policy::endpoint::Endpoint, String> {
    crate::policy::endpoint::Endpoint::parse(text).ok_or_else(|| {
        format!("{text:?} is not HOST:PORT (a name, *.domain or an address, and a port 1-65535)")
    })
}
