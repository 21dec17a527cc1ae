//! `shellgate panel [--session ID|--all] [--port N] [--open]`: serve the review panel on
//! 127.0.0.1 and print its URL (see [`crate::panel`]).

use super::log::resolve_session;
use crate::approval::person_present;
use crate::audit::StatePaths;
use crate::audit::paths::ensure_private_dir;
use crate::error::{Error, Result};
use crate::panel::security::{Loopback, Secrets};
use crate::panel::{Panel, Scope};
use clap::Args;
use std::io::Write;
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};

#[derive(Debug, Args)]
pub struct PanelArgs {
    /// Show this session only (default: $SHELLGATE_SESSION, else the most recent session).
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    pub session: Option<String>,
    /// Show every session, with a list to choose from.
    #[arg(long)]
    pub all: bool,
    /// The port on 127.0.0.1 (default: a free one the system picks).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub port: u16,
    /// Open the page in the default browser (xdg-open).
    #[arg(long)]
    pub open: bool,
}

pub fn run(args: PanelArgs) -> ExitCode {
    super::exit_with(execute(&args).map(|()| ExitCode::SUCCESS))
}

fn scope(paths: &StatePaths, args: &PanelArgs) -> Result<Scope> {
    if args.all {
        return Ok(Scope::All);
    }
    let id = resolve_session(paths, args.session.as_deref(), true)?;
    if !paths.session_log(&id).is_file() {
        return Err(Error::usage(format!(
            "session {id} has no log (list the sessions with `shellgate panel --all`)"
        )));
    }
    Ok(Scope::One(id))
}

fn execute(args: &PanelArgs) -> Result<()> {
    let paths = StatePaths::from_env()?;
    let scope = scope(&paths, args)?;
    // 127.0.0.1 only, never a wildcard address: the panel is for the person at this machine.
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, args.port))
        .map_err(|err| Error::usage(format!("cannot listen on 127.0.0.1:{}: {err}", args.port)))?;
    let port = listener
        .local_addr()
        .map_err(|err| Error::internal(format!("panel: no local address: {err}")))?
        .port();
    let panel = Panel {
        scope,
        paths,
        cwd: crate::session::working_dir(None),
        secrets: Secrets::generate()?,
        loopback: Loopback::new(port),
        person: person_present(),
        sandbox: crate::sandbox::detect().summary(),
        launcher: std::sync::Mutex::new(None),
    };
    announce(&panel)?;
    if args.open {
        open_browser(&panel);
    }
    let panel = std::sync::Arc::new(panel);
    if args.open {
        let later = std::sync::Arc::clone(&panel);
        std::thread::spawn(move || {
            std::thread::sleep(crate::panel::LAUNCHER_LIFETIME);
            later.forget_launcher();
        });
    }
    crate::panel::server::serve(panel, listener)
}

/// The URL on stdout (one line, first, for scripts and tests); what it shows, on stderr.
fn announce(panel: &Panel) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", panel.url())
        .and_then(|()| out.flush())
        .map_err(|err| Error::internal(format!("cannot write to stdout: {err}")))?;
    let what = match &panel.scope {
        Scope::One(id) => format!("session {id}"),
        Scope::All => "every session".to_string(),
    };
    eprintln!(
        "shellgate panel: serving {what} on {} until stopped (Ctrl-C). \
         The URL holds this run's token: do not share it.",
        panel.loopback.authority()
    );
    if !panel.person {
        eprintln!(
            "shellgate panel: no person at a terminal started this panel, so its buttons act as \
             an agent's `shellgate auto-review` would"
        );
    }
    Ok(())
}

/// Opens the page without putting the token on a command line (where `ps` would show it to any
/// user): the browser is handed a private file (0600, in the 0700 state directory) that redirects
/// to the URL, removed once the browser has used it. A failure to open is reported, not fatal: the
/// URL is printed anyway.
fn open_browser(panel: &Panel) {
    let opened = write_launcher(panel).and_then(|file| {
        if let Ok(mut slot) = panel.launcher.lock() {
            *slot = Some(file.clone());
        }
        Command::new("xdg-open")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| Error::internal(format!("cannot run xdg-open: {err}")))
    });
    if let Err(err) = opened {
        eprintln!(
            "shellgate panel: {}; open the URL above yourself",
            err.reason
        );
    }
}

fn write_launcher(panel: &Panel) -> Result<PathBuf> {
    ensure_private_dir(panel.paths.root())?;
    let file = panel.paths.root().join("panel-open.html");
    let page = format!(
        "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0; url={0}\">\
         <title>shellgate panel</title><a href=\"{0}\">Open the shellgate panel</a>\n",
        panel.url()
    );
    let failed =
        |err: std::io::Error| Error::internal(format!("cannot write {}: {err}", file.display()));
    // Replace any earlier file (perhaps someone else's symlink) rather than write through it.
    let _ = std::fs::remove_file(&file);
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file)
        .map_err(failed)?;
    out.write_all(page.as_bytes()).map_err(failed)?;
    Ok(file)
}
