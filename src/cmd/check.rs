//! `shellgate check`: decide a line without running anything.

use crate::error::{Code, Error};
use crate::intake::visible;
use crate::mode::{Resolved, SessionFacts};
use crate::parse::ShellKind;
use crate::policy::{self, Decision, Route};
use clap::Args;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Mode to decide in: ask, auto, full, read-only, custom or profile:<id> (default: the config's).
    #[arg(long)]
    pub mode: Option<String>,
    /// Working directory the line would run in (default: the current one).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Syntax of the line.
    #[arg(long, value_enum, default_value = "bash")]
    pub shell: ShellKind,
    /// Print one JSON object instead of a readable line.
    #[arg(long)]
    pub json: bool,
    /// The line, as one argument; `-` reads it from standard input exactly as received.
    #[arg(value_name = "LINE", required = true, num_args = 1.., allow_hyphen_values = true)]
    pub line: Vec<OsString>,
}

/// Standard input beyond this many bytes is refused as too long without reading further.
const MAX_STDIN_BYTES: usize = 1 << 20;

pub fn run(args: CheckArgs) -> ExitCode {
    let cwd = super::working_dir(args.cwd.as_deref());
    let decision = match line_bytes(&args.line) {
        Ok(bytes) => decide(&bytes, args.shell, &cwd, args.mode.as_deref()),
        Err(e) => Decision::refused(
            e.code,
            Route::Intake,
            e.reason,
            &Resolved::safe_default(None),
        ),
    };
    if args.json {
        super::print_json(&decision);
    } else {
        println!("{}", one_line(&decision));
    }
    ExitCode::from(decision.code.exit_status())
}

/// Load the config, resolve the mode and decide. A broken config denies the line.
pub fn decide(
    bytes: &[u8],
    shell: ShellKind,
    cwd: &std::path::Path,
    mode: Option<&str>,
) -> Decision {
    let cwd_text = cwd.to_string_lossy();
    match super::load_config(cwd) {
        Ok(config) => {
            let resolved = super::resolve_mode(mode, &config, SessionFacts::default());
            policy::decide_bytes(bytes, shell, &cwd_text, &config, &resolved)
        }
        Err(e) => Decision::refused(
            e.code,
            Route::Config,
            e.reason,
            &Resolved::safe_default(None),
        ),
    }
}

/// The line from the arguments: one argument, or `-` for standard input.
fn line_bytes(args: &[OsString]) -> Result<Vec<u8>, Error> {
    match args {
        [one] if one == "-" => read_stdin(),
        [one] => Ok(one.as_bytes().to_vec()),
        _ => Err(Error::usage(format!(
            "check takes the line as one argument ({} were given): quote it, e.g. shellgate check -- 'rm -rf x'",
            args.len()
        ))),
    }
}

fn read_stdin() -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_STDIN_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            Error::new(
                Code::InputRejected,
                format!("standard input could not be read: {e}"),
            )
        })?;
    if bytes.len() > MAX_STDIN_BYTES {
        return Err(Error::new(
            Code::LineTooLong,
            format!(
                "the line on standard input is longer than {MAX_STDIN_BYTES} bytes; the limit is {} \
                 characters. Nothing was run. Write the script to a file in the workspace and run that file instead",
                crate::intake::MAX_LINE_CHARS
            ),
        ));
    }
    Ok(bytes)
}

/// `deny NEVER_POLICY [rule builtin.rm-system] mode=ask sandbox=workspace-write network=off: …`
pub fn one_line(d: &Decision) -> String {
    let route = match &d.rule {
        Some(rule) => format!("rule {rule}"),
        None => serde_json::to_value(d.route)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
    };
    let verdict = serde_json::to_value(d.decision)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let note = d
        .note
        .as_ref()
        .map(|n| format!(" (note: {})", visible(n)))
        .unwrap_or_default();
    format!(
        "{verdict} {} [{route}] mode={} sandbox={} network={}: {}{note}",
        d.code,
        d.mode,
        d.sandbox,
        if d.network { "on" } else { "off" },
        visible(&d.reason)
    )
}
