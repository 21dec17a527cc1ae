//! `shellgate run`: the whole path for one line — decide, ask, run in the sandbox, record.

use crate::error::{Code, Error, Reader, print_refusal};
use crate::gate::{self, Execution, LineRequest, Origin, Outcome};
use crate::parse::ShellKind;
use clap::Args;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Mode to decide in (default: the session's, else the saved one, else the config's).
    #[arg(long)]
    pub mode: Option<String>,
    /// Syntax of the line, and the shell that runs it.
    #[arg(long, value_enum, default_value = "bash")]
    pub shell: ShellKind,
    /// Working directory (default: the current one).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Print a refusal as one JSON object on stderr (also SHELLGATE_JSON=1).
    #[arg(long)]
    pub json: bool,
    /// Called by a hook in place of the shell (for the record; behaviour is the same).
    #[arg(long, hide = true)]
    pub from_hook: bool,
    /// The operands are a script (or the shell's name, for a script on standard input) and its
    /// arguments, as a hook saw them, rather than a line.
    #[arg(long, hide = true)]
    pub script: bool,
    /// The line (one argument; `-` reads it from standard input), then optional `$0` and
    /// positional parameters for the shell.
    #[arg(value_name = "LINE", required = true, num_args = 1.., allow_hyphen_values = true)]
    pub operands: Vec<OsString>,
}

/// Standard input beyond this many bytes is refused as too long without reading further.
const MAX_STDIN_BYTES: u64 = 1 << 20;

pub fn run(args: RunArgs) -> ExitCode {
    let json = args.json || crate::env::get().own.json;
    let cwd = crate::session::working_dir(args.cwd.as_deref());
    let (line, execution) = match line_and_execution(&args) {
        Ok(parts) => parts,
        Err(e) => return refuse(&e, json),
    };
    let request = LineRequest::new(&line, args.shell, &cwd, Origin::Run, execution)
        .with_mode(args.mode.as_deref())
        .with_progress(!json);
    match crate::broker::route(&request, &crate::shell::side(args.shell, Origin::Run)) {
        Outcome::Ran { status, .. } => ExitCode::from(gate::exit_code(&status)),
        Outcome::Refused(e) => refuse(&e, json),
        Outcome::RunInShell { .. } => ExitCode::SUCCESS,
    }
}

/// The line to judge and how to run it.
fn line_and_execution(args: &RunArgs) -> Result<(Vec<u8>, Execution), Error> {
    let (first, rest) = args
        .operands
        .split_first()
        .ok_or_else(|| Error::usage("run needs a line"))?;
    if args.script {
        return Ok(script_line(args.shell, first, rest));
    }
    let line = if first == "-" {
        read_stdin()?
    } else {
        first.as_bytes().to_vec()
    };
    Ok((
        line,
        Execution::ShellC {
            positional: rest.to_vec(),
        },
    ))
}

/// A hook could not see a line, only a script file (or standard input) and its arguments: the
/// invocation itself is judged, and run with the same arguments.
fn script_line(shell: ShellKind, script: &OsString, args: &[OsString]) -> (Vec<u8>, Execution) {
    let is_file = std::path::Path::new(script).is_file();
    let mut words = vec![shell.as_str().to_owned()];
    let mut exec_args = Vec::new();
    if is_file {
        words.push(crate::parse::posix_quote(&script.to_string_lossy()));
        exec_args.push(script.clone());
    }
    for a in args {
        words.push(crate::parse::posix_quote(&a.to_string_lossy()));
        exec_args.push(a.clone());
    }
    (
        words.join(" ").into_bytes(),
        Execution::ShellArgs(exec_args),
    )
}

fn read_stdin() -> Result<Vec<u8>, Error> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            Error::new(
                Code::InputRejected,
                format!("standard input could not be read: {e}"),
            )
        })?;
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        return Err(Error::new(
            Code::LineTooLong,
            format!(
                "the line on standard input is longer than {MAX_STDIN_BYTES} bytes; the limit is {} characters. \
                 Nothing was run. Write the script to a file in the workspace and run that file instead",
                crate::intake::MAX_LINE_CHARS
            ),
        ));
    }
    Ok(bytes)
}

/// Print the agent-facing refusal on stderr (a block, or one JSON object) and exit with its code.
fn refuse(e: &Error, json: bool) -> ExitCode {
    let reader = if json {
        Reader::AgentJson
    } else {
        Reader::Agent
    };
    ExitCode::from(print_refusal(e, reader))
}
