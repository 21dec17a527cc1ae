//! One line from an interactive shell's hook function (`__shellgate_run`): the line runs with the
//! person's shell state in the sandbox, and what it changed comes back to the shell.
//!
//! The hook's Enter binding hands a complete line typed at the prompt to its function instead of
//! letting the shell run it (see `shell/bash.sh`, `shell/zsh.zsh`). The function dumps the shell's
//! state to `TOKEN.snapshot` in the shell's private directory and calls `shellgate hook SHELL
//! --shell-dir DIR --token TOKEN -- LINE`, which lands here:
//!
//! 1. the snapshot is read ([`State`]) and written as the input script `TOKEN.in`;
//! 2. the line goes through the gate like every other ([`crate::broker::route`]), run by the real
//!    shell as `-c RUNNER`: the runner sources the input, sets `$?` and `PIPESTATUS` to the
//!    previous line's, `eval`s the line, and dumps the state after it on descriptor 3, a socket
//!    whose other end keeps only the shell's own bytes ([`crate::shell::channel`]);
//! 3. the changes are sorted ([`crate::shell::state::treatment`]), the person is asked about
//!    the ones that need a yes, and `TOKEN.apply` is written: the changes to make, the line's
//!    status and `PIPESTATUS`, or — for a line that runs in the shell itself — the `eval` of that
//!    line (or shellgate's own command, by the binary's path).
//!
//! The function sources `TOKEN.apply` and returns the line's status: `$?`, `PIPESTATUS` and the
//! prompt are the line's. Nothing the function runs comes from anywhere but this apply script,
//! which only shellgate writes (the private directory is 0700, and read-only in the sandbox).
//! This process prints nothing of its own for a line that ran; a refusal is one short message.

use crate::error::{Code, Error, Reader, Result, print_refusal};
use crate::gate::{self, Execution, LineRequest, Origin, Outcome, ShellSide};
use crate::parse::ShellKind;
use crate::shell::channel::{Collected, StateChannel};
use crate::shell::state::{self, Change, Dialect, Limits, State, Treatment};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// What the hook's function hands over.
pub struct Call<'a> {
    pub shell: ShellKind,
    /// The shell's private directory ([`prepare_dir`]).
    pub dir: &'a Path,
    /// This line's token (the function's argument): names its files.
    pub token: &'a str,
    pub line: &'a [u8],
    /// The function runs as a background job: the line's changes are not applied (as for any
    /// background job), and nothing is asked after it.
    pub background: bool,
}

/// Runs the line; returns the exit status the hook exits with (the line's, or its refusal's).
/// The apply script is written in every case; if even that fails, the function sees no apply
/// script and reports that shellgate failed.
pub fn run(call: &Call) -> u8 {
    let dialect = match call.shell {
        ShellKind::Zsh => Dialect::Zsh,
        _ => Dialect::Bash,
    };
    let files = match Files::new(call.dir, call.token) {
        Ok(files) => files,
        Err(e) => return print_refusal(&e, Reader::Person),
    };
    let (status, apply) = match run_line(call, dialect, &files) {
        Ok(done) => done,
        Err(e) => (print_refusal(&e, Reader::Person), Apply::nothing()),
    };
    let token = state::quote(call.token);
    let calls_again = matches!(apply, Apply::NeedsState);
    // A line that runs in the shell sets its own status in the script; any other has it here.
    let script = match apply {
        Apply::InShell(script) => format!("{script}__shellgate_done={token}\n"),
        Apply::After { script, pipestatus } => format!(
            "{script}__shellgate_status={status}\n__shellgate_pipestatus=({})\n\
             __shellgate_done={token}\n",
            pipestatus.unwrap_or_else(|| status.to_string())
        ),
        // Nothing ran: the function calls again with the whole state, and the history it wrote
        // for the line stays for that call.
        Apply::NeedsState => format!("__shellgate_more={token}\n"),
    };
    if let Err(e) = crate::audit::paths::write_private(&files.apply, script.as_bytes()) {
        print_refusal(&Error::internal(e.to_string()), Reader::Person);
    }
    let _ = std::fs::remove_file(&files.snapshot);
    if !calls_again {
        for stale in [&files.input, &files.history] {
            let _ = std::fs::remove_file(stale);
        }
    }
    status
}

/// Whether no process `pid` exists (`kill(pid, 0)` says `ESRCH`; one we may not signal exists).
fn process_gone(pid: i32) -> bool {
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    kill(Pid::from_raw(pid), None) == Err(nix::errno::Errno::ESRCH)
}

/// What the apply script does besides saying the line is done.
enum Apply {
    /// Runs the line in the shell; the script sets `__shellgate_status` from it.
    InShell(String),
    /// Applies what the line changed; `pipestatus` is the line's `PIPESTATUS`, when known.
    After {
        script: String,
        pipestatus: Option<String>,
    },
    /// The shell sent the names of its state only, and the line needs the whole of it: nothing
    /// was decided or run, and the function calls again with the whole state.
    NeedsState,
}

impl Apply {
    fn nothing() -> Apply {
        Apply::After {
            script: String::new(),
            pipestatus: None,
        }
    }
}

/// The files of one line in the shell's private directory.
struct Files {
    snapshot: PathBuf,
    input: PathBuf,
    history: PathBuf,
    apply: PathBuf,
    /// The values of `PATH` and the prompts this shell has had (see [`held_values`]); kept for
    /// the shell's life.
    held: PathBuf,
}

/// The file, in the shell's private directory, of the values the shell has had.
const HELD_VALUES: &str = "held-values";

/// How many values of each name are remembered (the latest).
const HELD_MAX: usize = 32;

/// The values of `PATH` and the prompt strings this shell has had when a line started, the current
/// ones among them (added when new). Each was the person's: set by their startup files, typed, or
/// applied after their yes. A line that sets one back (a venv's `deactivate`) brings back nothing
/// the person has not run with (see [`state::seal::set_back`]). The file (`NAME\0VALUE\0` records)
/// lives in the shell's private directory, which no line can write; one that cannot be read counts
/// as empty.
fn held_values(file: &Path, before: &State) -> state::Held {
    let mut held = state::Held::new();
    let text = std::fs::read(file)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_default();
    let fields: Vec<&str> = text.split('\0').collect();
    for pair in fields.chunks_exact(2) {
        held.entry(pair[0].to_owned())
            .or_default()
            .push(pair[1].to_owned());
    }
    let mut changed = false;
    for name in before.vars.keys() {
        let Some(current) = before.scalar(name) else {
            continue;
        };
        if !state::seal::held_name(name) || current.contains('\0') {
            continue;
        }
        let values = held.entry(name.clone()).or_default();
        if !values.iter().any(|v| v == current) {
            values.push(current.to_owned());
            let excess = values.len().saturating_sub(HELD_MAX);
            values.drain(..excess);
            changed = true;
        }
    }
    if changed {
        let mut out = String::new();
        for (name, values) in &held {
            for value in values {
                out.push_str(name);
                out.push('\0');
                out.push_str(value);
                out.push('\0');
            }
        }
        let _ = crate::audit::paths::write_private(file, out.as_bytes());
    }
    held
}

impl Files {
    fn new(dir: &Path, token: &str) -> Result<Files> {
        // The directory comes from the shell's read-only `__shellgate_dir`; checked anyway:
        // a private directory of this user's, in a `shells` directory.
        let private = std::fs::canonicalize(dir).ok().filter(|d| {
            d.parent().and_then(Path::file_name)
                == Some(std::ffi::OsStr::new(crate::audit::paths::SHELLS_DIR))
                && std::fs::symlink_metadata(d).is_ok_and(|m| {
                    use std::os::unix::fs::MetadataExt;
                    // SAFETY: geteuid has no preconditions.
                    m.is_dir() && m.mode() & 0o077 == 0 && m.uid() == unsafe { libc::geteuid() }
                })
        });
        let valid_token = !token.is_empty()
            && token.len() <= 32
            && token.bytes().all(|b| b.is_ascii_alphanumeric());
        let (Some(dir), true) = (private, valid_token) else {
            return Err(Error::internal(format!(
                "the hook's directory {} or token is not shellgate's",
                dir.display()
            )));
        };
        clean_stale(&dir);
        Ok(Files {
            snapshot: dir.join(format!("{token}.snapshot")),
            input: dir.join(format!("{token}.in")),
            history: dir.join(format!("{token}.history")),
            apply: dir.join(format!("{token}.apply")),
            held: dir.join(HELD_VALUES),
        })
    }
}

/// Apply scripts older than a minute were sourced long ago (or never will be).
fn clean_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name() == HELD_VALUES {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age.as_secs() > 60);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn run_line(call: &Call, dialect: Dialect, files: &Files) -> Result<(u8, Apply)> {
    let (before, known) = read_snapshot(dialect, files, call.dir);
    // The snapshot holds every variable of the shell, credentials included, and the line can
    // read this directory: it goes before the line runs, or the line does not run.
    match std::fs::remove_file(&files.snapshot) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(Error::internal(format!(
                "cannot remove the shell's state snapshot {} before the line runs: {e}",
                files.snapshot.display()
            )));
        }
        _ => {}
    }
    let before = without_credentials(before);
    let line = std::str::from_utf8(call.line)
        .map_err(|_| Error::new(Code::InputRejected, "the line is not valid UTF-8"))?;
    // A background line is already a job of the shell: inside the sandbox it runs in the
    // foreground of its own shell (with `&` there it would end with that shell).
    let text = if call.background {
        without_background(line)
    } else {
        line
    };
    // A directory typed as a command with `autocd` on is the `cd` the person's shell makes of
    // it: decided, recorded and run as that (the sandbox's shell, not interactive, would not).
    let autocd = (!call.background)
        .then(|| super::stateless::autocd_directory(dialect, text, &before))
        .flatten()
        .map(|dir| format!("cd -- {}", crate::parse::posix_quote(&dir)));
    let (line, text) = match &autocd {
        Some(cd) => (cd.as_str(), cd.as_str()),
        None => (line, text),
    };
    // Parsed once here for all that follows (`text` is the line but for a background line's
    // `&`, which changes none of its commands).
    let parsed = crate::parse::parse(text, call.shell);
    let mut shadowed = before.shadowing_names();
    if dialect == Dialect::Zsh && before.global_alias_in(line) {
        // A global alias expands anywhere on the line: no word is what it looks like.
        shadowed.extend(parsed.commands.iter().map(|c| c.program.clone()));
    }
    // Inside a wrapped agent the `wrap` broker runs the line, and its protocol carries no
    // descriptors: the line runs with the shell's state, and gives none back.
    let under_wrap = crate::broker::broker_path().is_some();
    let no_state = call.background || under_wrap;
    // A line that needs none of the shell's state and changes none of it runs without it, and
    // only its status comes back (see `stateless`).
    let plan = (known && !no_state && !files.history.exists())
        .then(|| super::stateless::plan(dialect, text, &parsed, &before))
        .flatten();
    let stateless = plan.is_some();
    if before.names_only && !stateless {
        return Ok((0, Apply::NeedsState));
    }
    // One command and no alias to define: its status is all there is to report, and the shell
    // runs it after the variables it expands are defined (by `exec`, as `bash -c` does for `run`,
    // when there are none); the runner's status report would keep the shell waiting.
    let one_command = plan
        .as_ref()
        .is_some_and(|p| p.aliases.is_empty() && parsed.commands.len() == 1);
    if no_state && !call.background {
        note_once(
            call.dir,
            "no-state-under-wrap",
            "shellgate: under `wrap`, a line's changes to this shell (cd, variables, a venv) are \
             not applied\n",
        );
    }
    // The shell reports on descriptor 3 (its state, or a stateless line's status) unless nothing
    // comes back: its `-c` program then greets the channel first (`channel::hello`).
    let reports = !(no_state || one_command);
    let hello = if reports {
        super::channel::hello(dialect)
    } else {
        ""
    };
    let args = if let Some(plan) = plan.as_ref().filter(|_| one_command) {
        let script = format!("{}{text}", super::stateless::definitions(dialect, plan));
        shell_args(dialect, &script, None)
    } else if let Some(plan) = &plan {
        let runner = format!(
            "{hello}{}{}",
            super::stateless::definitions(dialect, plan),
            super::stateless::runner(dialect)
        );
        shell_args(dialect, &runner, Some(text))
    } else {
        let runner = write_input(dialect, files, &before, text, no_state)?;
        shell_args(dialect, &format!("{hello}{runner}"), None)
    };
    // One command of plain words, or a pipeline of them, starts its programs without a shell
    // first, as the person's shell would (`stateless::direct_pipeline`); the arguments above run
    // it when that cannot be.
    let direct = plan
        .as_ref()
        .and_then(|plan| super::stateless::direct_pipeline(text, &parsed, plan));
    let execution = match direct {
        Some(pipeline) => Execution::Program {
            pipeline: pipeline
                .into_iter()
                .map(|argv| argv.into_iter().map(Into::into).collect())
                .collect(),
            shell_args: args,
        },
        None => Execution::ShellArgs(args),
    };
    let cwd = crate::session::working_dir(None);
    let request = LineRequest::new(line.as_bytes(), call.shell, &cwd, Origin::Hook, execution);
    let limit = if stateless {
        STATUS_BYTES
    } else {
        Limits::DEFAULT.total_bytes
    };
    let channel = reports.then(|| StateChannel::new(limit));
    let side = ShellSide {
        passed: channel
            .as_ref()
            .map(|c| c as &dyn crate::gate::PassedPerRun),
        shadowed: &shadowed,
        ..crate::shell::side(call.shell, Origin::Hook)
    };
    let outcome = crate::broker::route(&request, &side);
    match outcome {
        Outcome::Refused(e) => Ok((print_refusal(&e, Reader::Person), Apply::nothing())),
        Outcome::RunInShell { once_outside } => {
            let apply = in_shell_apply(dialect, call, line, &shadowed);
            let apply = if once_outside {
                let path = crate::env::get().var("PATH").unwrap_or_default();
                outside_once_apply(dialect, call.shell, path, line, apply)
            } else {
                apply
            };
            Ok((0, Apply::InShell(apply)))
        }
        Outcome::Ran { status, pipeline } => {
            let code = gate::exit_code(&status);
            if stateless {
                held_values(&files.held, &before);
                // `$?` and each program's status: a pipeline started without a shell has them
                // from the sandbox, a line run by the shell's runner reports them.
                let reported = if pipeline.is_empty() {
                    reported_statuses(channel.as_ref().and_then(report))
                } else {
                    std::iter::once(&status)
                        .chain(&pipeline)
                        .map(|s| i32::from(gate::exit_code(s)))
                        .collect()
                };
                let apply = Apply::After {
                    script: String::new(),
                    pipestatus: pipestatus(code, &reported),
                };
                return Ok((code, apply));
            }
            // Without the state the line started from there is nothing to compare with.
            let dump = channel.as_ref().and_then(report);
            let Some(dump) = dump.filter(|_| known) else {
                return Ok((code, Apply::nothing()));
            };
            let held = held_values(&files.held, &before);
            let typed = state::Typed::of(&parsed);
            let cx = Seen {
                typed: &typed,
                held: &held,
            };
            Ok((code, apply_changes(dialect, code, &before, dump, &cx)))
        }
    }
}

/// The bound on what a stateless line's runner reports: its `$?` and `PIPESTATUS`.
const STATUS_BYTES: usize = 4096;

/// `$?` and `PIPESTATUS` as a stateless line's runner reported them (none when it did not: a
/// line of one command has no runner, its status is all of it).
fn reported_statuses(dump: Option<Collected>) -> Vec<i32> {
    match dump {
        Some(Collected::Bytes(bytes)) => state::statuses(&String::from_utf8_lossy(&bytes)),
        _ => Vec::new(),
    }
}

/// The sandboxed shell's arguments: `-c RUNNER`, `$0`, and the line as `$1` when given.
fn shell_args(dialect: Dialect, runner: &str, line: Option<&str>) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = match dialect {
        Dialect::Bash => vec![
            "--noprofile".into(),
            "--norc".into(),
            "-c".into(),
            runner.into(),
            "bash".into(),
        ],
        Dialect::Zsh => vec!["-f".into(), "-c".into(), runner.into(), "zsh".into()],
    };
    args.extend(line.map(std::ffi::OsString::from));
    args
}

/// Writes the input script (the person's state, the history when the line mentions it, the
/// runner's prelude) and returns the runner that sources it.
fn write_input(
    dialect: Dialect,
    files: &Files,
    before: &State,
    text: &str,
    no_state: bool,
) -> Result<String> {
    let mut input = state::render_input(dialect, before);
    if files.history.exists() {
        let file = state::quote(&files.history.to_string_lossy());
        input.push_str(&match dialect {
            Dialect::Bash => format!("builtin history -c; builtin history -r {file}\n"),
            // zsh locks every history file it reads, and this one lies where the sandbox lets
            // nothing write: it reads it anyway, after a "locking failed" the person need not see.
            Dialect::Zsh => format!("builtin fc -R {file} 2>/dev/null\n"),
        });
    }
    input.push_str(&runner_prelude(dialect, text, no_state));
    crate::audit::paths::write_private(&files.input, input.as_bytes())
        .map_err(|e| Error::internal(format!("cannot write the line's input: {e}")))?;
    Ok(runner(dialect, &files.input, &before.status, no_state))
}

/// The shell's state without the variables that carry credentials
/// ([`crate::policy::environment::withheld_because`]): they are not restored for the line, which
/// runs without them as every line does, and not compared after it — their absence there is no
/// change, and a line's own value for one is not brought back to the shell.
fn without_credentials(mut state: State) -> State {
    state.vars.retain(|name, var| {
        let values: Vec<&str> = match &var.value {
            state::Value::Unset => Vec::new(),
            state::Value::Scalar(v) => vec![v.as_str()],
            state::Value::Indexed(items) => items.iter().map(|(_, v)| v.as_str()).collect(),
            state::Value::Assoc(items) => items.iter().map(|(_, v)| v.as_str()).collect(),
        };
        let name = std::ffi::OsStr::new(name);
        let empty = std::ffi::OsStr::new("");
        crate::policy::environment::withheld_because(name, empty).is_none()
            && values.iter().all(|v| {
                crate::policy::environment::withheld_because(empty, std::ffi::OsStr::new(v))
                    .is_none()
            })
    });
    state
}

/// `LINE &` (also zsh's `&!` and `&|`) without its `&`.
fn without_background(line: &str) -> &str {
    let trimmed = line.trim_end();
    trimmed
        .strip_suffix("&!")
        .or_else(|| trimmed.strip_suffix("&|"))
        .or_else(|| trimmed.strip_suffix('&'))
        .filter(|rest| !rest.ends_with('&') && !rest.ends_with('\\'))
        .unwrap_or(line)
}

/// The person's state and whether it could be read; else an empty one (the line then runs
/// without it, and nothing comes back) with a note: an unreadable dump of the shell's own state
/// must not stop every line.
fn read_snapshot(dialect: Dialect, files: &Files, dir: &Path) -> (State, bool) {
    let bytes = match std::fs::File::open(&files.snapshot) {
        Ok(file) => {
            let mut bytes = Vec::new();
            let _ = file
                .take(Limits::DEFAULT.total_bytes as u64 + 1)
                .read_to_end(&mut bytes);
            bytes
        }
        Err(_) => return (State::default(), false),
    };
    match State::parse_snapshot(dialect, &bytes, Limits::DEFAULT) {
        Ok(state) => {
            if state.functions_omitted {
                note_once(
                    dir,
                    "functions-omitted",
                    "shellgate: this shell's functions are over 1 MiB together, so gated lines \
                     run without them (aliases and variables still go along)\n",
                );
            }
            (state, true)
        }
        // A dump of names that cannot be read: the whole state is asked for (the line runs
        // with it, or, if that cannot be read either, without it and with the note below).
        Err(_) if bytes.starts_with(names_header(dialect).as_bytes()) => (
            State {
                names_only: true,
                ..State::default()
            },
            false,
        ),
        Err(e) => {
            note_once(
                dir,
                "snapshot-unreadable",
                &format!(
                    "shellgate: this shell's state could not be read ({e}); gated lines run \
                     without your aliases, functions and unexported variables\n"
                ),
            );
            (State::default(), false)
        }
    }
}

fn names_header(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Bash => state::bash::NAMES_HEADER,
        Dialect::Zsh => state::zsh::NAMES_HEADER,
    }
}

/// A note told once per shell (a marker file in its private directory).
fn note_once(dir: &Path, key: &str, text: &str) {
    let marker = dir.join(format!("{key}.noted"));
    if std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&marker)
        .is_ok()
    {
        crate::approval::tell(text);
    }
}

/// The end of the input script: the line, shellgate's helpers, and (foreground only) the state
/// after the line on descriptor 3, from an EXIT trap so that `exit` in the line still reports it.
/// Descriptor 3 is moved to a number of 10 or more first, out of the way of the line's own
/// redirections; the line's programs still inherit it (bash cannot mark it close-on-exec, and
/// descriptor 3 stays open where the input is sourced), but what they write there is dropped:
/// only the shell's own bytes are its report ([`crate::shell::channel`]), which is still
/// untrusted and bounded.
pub fn runner_prelude(dialect: Dialect, line: &str, background: bool) -> String {
    let line = state::quote(line);
    match (dialect, background) {
        (Dialect::Bash, true) => {
            format!("__shellgate_line={line}\n__shellgate_ret() {{ return \"$1\"; }}\n")
        }
        (Dialect::Bash, false) => format!(
            "__shellgate_line={line}\n{dump}\n__shellgate_ret() {{ return \"$1\"; }}\n\
             __shellgate_end() {{\n  __shellgate_st=${{__shellgate_ps-$?}}\n  builtin trap - EXIT\n  \
             __shellgate_dump >&\"$__shellgate_out\" 2>/dev/null\n  \
             builtin exit \"${{__shellgate_st%% *}}\"\n}}\n\
             builtin exec {{__shellgate_out}}>&3 3>&-\nbuiltin trap __shellgate_end EXIT\n",
            dump = state::bash::DUMP_FUNCTION,
        ),
        (Dialect::Zsh, true) => {
            format!("__shellgate_line={line}\n__shellgate_ret() {{ return $1 }}\n")
        }
        (Dialect::Zsh, false) => format!(
            "__shellgate_line={line}\n{dump}\n__shellgate_ret() {{ return $1 }}\n\
             __shellgate_end() {{\n  __shellgate_st=${{__shellgate_ps-$?}}\n  \
             __shellgate_dump >&$__shellgate_out 2>/dev/null\n  exit ${{__shellgate_st%% *}}\n}}\n\
             exec {{__shellgate_out}}>&3 3>&-\nbuiltin trap __shellgate_end EXIT\n",
            dump = state::zsh::DUMP_FUNCTION,
        ),
    }
}

/// The program the sandboxed shell runs with `-c`, on one line (so that the shell's messages
/// about the line say `line 1`): source the input, set `$?` and `PIPESTATUS` as the previous line
/// left them, and `eval` the line, keeping its own `$?` and `PIPESTATUS` for the state after it.
pub fn runner(dialect: Dialect, input: &Path, previous: &[i32], background: bool) -> String {
    let restore = restore_status(previous);
    let input = state::quote(&input.to_string_lossy());
    let keep = match dialect {
        Dialect::Bash => "$'\\n''__shellgate_ps=\"$? ${PIPESTATUS[*]}\"'",
        Dialect::Zsh => "$'\\n''__shellgate_ps=\"$? ${pipestatus[*]}\"'",
    };
    let keep = if background { "" } else { keep };
    format!("builtin source -- {input}; {restore}; builtin eval -- \"$__shellgate_line\"{keep}")
}

/// `$?` and `PIPESTATUS` as `previous` has them (`$?` first): a pipeline of returns when the
/// previous line was a pipeline, one return otherwise.
fn restore_status(previous: &[i32]) -> String {
    let status = |n: i32| format!("__shellgate_ret {}", n.clamp(0, 255));
    match previous {
        [] => status(0),
        [last] | [last, _] => status(*last),
        [_, pipes @ ..] => pipes
            .iter()
            .map(|n| status(*n))
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

/// `apply` for a line a person let run once outside the sandbox (`gate::outside`): it runs with
/// the directories lines may write last on `PATH` (`prompt_path`, as the prompt has it), and every
/// name of the line that no directory lines cannot write has — and that is not a builtin, a
/// keyword, a function or an alias here — is, for the line, a function that refuses: a program
/// planted after the gate's last check (while the person answered, or in the moment since) does
/// not run by that name. (A nowhere `hash` entry would do in bash; zsh searches `PATH` again
/// when a hashed file is missing.) `PATH` is put back after the line unless the line changed
/// it, and the functions are removed. Names a wrapper looks up itself (`env X`, `xargs X`)
/// follow the reordered `PATH` only.
fn outside_once_apply(
    dialect: Dialect,
    shell: ShellKind,
    path: &std::ffi::OsStr,
    line: &str,
    apply: String,
) -> String {
    let cwd = crate::session::working_dir(None);
    let settings = crate::config::load_or_strictest(&cwd).sandbox;
    let ordered = crate::shell::prompt_path::prompt_path(path, &settings).path;
    let parsed = crate::parse::parse(line, shell);
    let mut names: Vec<&str> = parsed
        .commands
        .iter()
        .flat_map(|c| {
            let wrappers = c.via.iter().filter_map(|v| v.split_whitespace().next());
            wrappers.chain(c.path.is_none().then_some(c.program.as_str()))
        })
        .filter(|name| !name.is_empty() && !name.contains('/'))
        .collect();
    names.sort_unstable();
    names.dedup();
    let safe = |name: &str| {
        crate::sandbox::resolve_program(std::ffi::OsStr::new(name), Some(&ordered))
            .is_ok_and(|file| matches!(crate::spec::writable_by_lines(&file, &settings), Ok(None)))
    };
    let nowhere: Vec<&str> = names.into_iter().filter(|name| !safe(name)).collect();
    if nowhere.iter().any(|name| !state::valid_function_name(name)) {
        return format!(
            "builtin printf '%s\\n' {} >&2\n__shellgate_status=126\n__shellgate_pipestatus=(126)\n",
            state::quote(
                "shellgate: not run: a program of this line is found only where lines in the \
                 sandbox may write"
            )
        );
    }
    let message = |name: &str| {
        state::quote(&format!(
            "shellgate: {name}: not run: outside the sandbox it is found only where lines in \
             the sandbox may write"
        ))
    };
    let kind = match dialect {
        Dialect::Bash => "builtin type -t --",
        Dialect::Zsh => "builtin whence -w --",
    };
    let guards: String = nowhere
        .iter()
        .map(|name| {
            format!(
                "case $({kind} {q} 2>/dev/null) in\n  builtin | keyword | function | alias | \
                 *': builtin' | *': reserved' | *': function' | *': alias') ;;\n  \
                 *) {name}() {{ builtin printf '%s\\n' {m} >&2; return 127; }}\n     \
                 __shellgate_nowhere+=({q}) ;;\nesac\n",
                q = state::quote(name),
                m = message(name),
            )
        })
        .collect();
    let ordered = state::quote(&String::from_utf8_lossy(
        std::os::unix::ffi::OsStrExt::as_bytes(ordered.as_os_str()),
    ));
    // The hook's `__shellgate_outside_end` undoes it, here or, after an interrupted line, at the
    // next prompt.
    format!(
        "__shellgate_outside_path=$PATH\n__shellgate_outside_ordered={ordered}\n\
         __shellgate_nowhere=()\n{guards}PATH={ordered}\n{apply}__shellgate_outside_end\n"
    )
}

/// The apply script for a line that runs in the shell: shellgate's own command by the binary's
/// path, or the line itself with `eval` — checking once more that none of its commands is an
/// alias or a function there (unless the whole line runs as typed: confirmed Full access, where
/// the snapshot already named a shadowed command).
fn in_shell_apply(dialect: Dialect, call: &Call, line: &str, shadowed: &[String]) -> String {
    let parsed = crate::parse::parse(line, call.shell);
    if let [only] = parsed.commands.as_slice()
        && crate::shell::in_shell::self_command(only).is_some()
        && let Some(binary) = crate::paths::binary()
    {
        let mut words = vec![state::quote(&binary.to_string_lossy())];
        words.extend(only.argv.iter().map(|a| state::quote(a)));
        return format!(
            "{}\n__shellgate_status=$?\n__shellgate_pipestatus=(\"$__shellgate_status\")\n",
            words.join(" ")
        );
    }
    if let [only] = parsed.commands.as_slice()
        && crate::shell::in_shell::starts_own_shell(only, call.shell)
    {
        // A new shell of the person's, by the real shell's path: never a `bash` that a directory
        // on PATH which sandboxed lines may write (a venv's `bin`) could hold.
        let Some(program) = crate::shell::real_shell(call.shell) else {
            let message = format!("shellgate: no {} is installed", call.shell.as_str());
            return format!(
                "builtin printf '%s\\n' {} >&2\n__shellgate_status=127\n\
                 __shellgate_pipestatus=(127)\n",
                state::quote(&message)
            );
        };
        let mut words = vec![state::quote(&program.to_string_lossy())];
        words.extend(only.argv.iter().map(|a| state::quote(a)));
        return format!(
            "{}\n__shellgate_status=$?\n__shellgate_pipestatus=(\"$__shellgate_status\")\n",
            words.join(" ")
        );
    }
    if let [only] = parsed.commands.as_slice()
        && crate::shell::in_shell::starts_agent(only)
        && let Some(binary) = crate::paths::binary()
    {
        // `shellgate wrap …` as typed, with the hook's binary for `shellgate`: a function for the
        // duration of the line (no alias or function of that name exists, or it would not run
        // here).
        return format!(
            "shellgate() {{ {} \"$@\"; }}\n__shellgate_ret \"${{__shellgate_st%% *}}\"\n\
             builtin eval -- {}\n__shellgate_status=$?\nbuiltin unset -f shellgate\n\
             __shellgate_pipestatus=(\"$__shellgate_status\")\n",
            state::quote(&binary.to_string_lossy()),
            state::quote(line)
        );
    }
    let as_typed = parsed
        .commands
        .iter()
        .any(|c| shadowed.contains(&c.program));
    let mut programs: Vec<&str> = parsed.commands.iter().map(|c| c.program.as_str()).collect();
    programs.sort_unstable();
    programs.dedup();
    let programs: Vec<&str> = programs
        .into_iter()
        .filter(|p| state::valid_function_name(p) || *p == "[" || *p == ":")
        .collect();
    let check = if as_typed || programs.is_empty() {
        "false".to_owned()
    } else {
        programs
            .iter()
            .map(|p| match dialect {
                Dialect::Bash => format!(
                    "[[ -n ${{BASH_ALIASES[{q}]+x}} ]] || builtin declare -F -- {q} >/dev/null",
                    q = state::quote(p)
                ),
                Dialect::Zsh => format!(
                    "(( ${{+aliases[{q}]}} || ${{+functions[{q}]}} ))",
                    q = state::quote(p)
                ),
            })
            .collect::<Vec<_>>()
            .join(" || ")
    };
    let line = state::quote(line);
    let (print, pipestatus, split) = match dialect {
        Dialect::Bash => (
            "builtin printf '%s\\n'",
            "${PIPESTATUS[*]}",
            "${__shellgate_ps#* }",
        ),
        Dialect::Zsh => (
            "builtin print -r --",
            "${pipestatus[*]}",
            "${=__shellgate_ps#* }",
        ),
    };
    format!(
        "if {check}; then\n  {print} {} >&2\n  __shellgate_status=126\n  \
         __shellgate_pipestatus=(126)\nelse\n  __shellgate_ps=''\n  \
         __shellgate_ret \"${{__shellgate_st%% *}}\"\n  \
         builtin eval -- {line}$'\\n''__shellgate_ps=\"$? {pipestatus}\"'\n  __shellgate_status=$?\n  \
         if [[ -n $__shellgate_ps ]]; then\n    __shellgate_status=${{__shellgate_ps%% *}}\n    \
         __shellgate_pipestatus=({split})\n  else\n    __shellgate_pipestatus=(\"$__shellgate_status\")\n  fi\nfi\n",
        state::quote(
            "shellgate: not run: a command on this line is an alias or a function here, not the builtin"
        )
    )
}

/// What the person has seen, besides the state the line started from: the typed line, and the
/// values of `PATH` and the prompts the shell has had.
struct Seen<'a> {
    typed: &'a state::Typed,
    held: &'a state::Held,
}

/// What the line changed, sorted, asked about, and written as apply lines.
fn apply_changes(
    dialect: Dialect,
    code: u8,
    before: &State,
    dump: Collected,
    seen: &Seen,
) -> Apply {
    let bytes = match dump {
        Collected::Bytes(bytes) if bytes.is_empty() => return Apply::nothing(),
        Collected::Bytes(bytes) => bytes,
        Collected::TooLong => {
            crate::approval::tell(
                "shellgate: the line's shell state was too large to read; none of it was applied\n",
            );
            return Apply::nothing();
        }
        Collected::Unreadable(e) => {
            crate::approval::tell(&format!(
                "shellgate: the line's shell state could not be read back ({e}); none of it was \
                 applied to this shell\n"
            ));
            return Apply::nothing();
        }
    };
    let after = match State::parse(dialect, &bytes, Limits::DEFAULT) {
        Ok(after) => without_credentials(after),
        Err(e) => {
            crate::approval::tell(&format!(
                "shellgate: the line's shell state could not be read ({e}); none of it was \
                 applied to this shell\n"
            ));
            return Apply::nothing();
        }
    };
    let unasked = state::seal::Unasked::of(&[before, &after]);
    let cx = state::Context {
        before,
        unasked: &unasked,
        typed: seen.typed,
        held: seen.held,
    };
    let mut silent = Vec::new();
    let mut asked = Vec::new();
    let mut refused: Vec<(String, &'static str)> = Vec::new();
    for change in state::changes(dialect, before, &after) {
        match treatment(dialect, &change, &cx) {
            Treatment::Silent => silent.push(change),
            Treatment::Ask => asked.push(change),
            Treatment::Never(why) => refused.push((change.label(), why)),
        }
    }
    if dialect == Dialect::Bash {
        let functions: Vec<(String, String)> = asked
            .iter()
            .filter_map(|c| match c {
                Change::Function(name, text) => Some((name.clone(), text.clone())),
                _ => None,
            })
            .collect();
        if !functions.is_empty() {
            let accepted = crate::shell::real_shell(ShellKind::Bash)
                .map(|bash| state::bash::verify_functions(&bash, &functions))
                .unwrap_or_default();
            asked.retain(|c| match c {
                Change::Function(name, _) if !accepted.contains(name) => {
                    refused.push((
                        c.label(),
                        "bash could not confirm it is exactly one function definition",
                    ));
                    false
                }
                _ => true,
            });
        }
    }
    for (label, why) in &refused {
        crate::approval::tell(&format!(
            "shellgate: not applied to this shell: {label} ({why})\n"
        ));
    }
    if !asked.is_empty() {
        let refs: Vec<&Change> = asked.iter().collect();
        match crate::approval::confirm(
            &state::question(&refs, &cx),
            crate::approval::DEFAULT_TIMEOUT,
        ) {
            Ok(true) => silent.extend(asked),
            Ok(false) => crate::approval::tell("shellgate: not applied\n"),
            Err(e) => crate::approval::tell(&format!("shellgate: not applied: {}\n", e.reason)),
        }
    }
    let script = state::render_apply(dialect, &silent, before);
    Apply::After {
        script,
        pipestatus: pipestatus(code, &after.status),
    }
}

/// The line's `PIPESTATUS` as the apply script sets it, from `$?` and each element as the line's
/// shell reported them: only when its `$?` is the status the line ended with.
fn pipestatus(code: u8, reported: &[i32]) -> Option<String> {
    match reported {
        [last, pipes @ ..] if i32::from(code) == *last && !pipes.is_empty() => Some(
            pipes
                .iter()
                .map(|p| (*p).clamp(0, 255).to_string())
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

fn treatment(dialect: Dialect, change: &Change, cx: &state::Context) -> Treatment {
    let builtin_named = |name: &str| match dialect {
        Dialect::Bash => state::bash::BUILTINS.contains(&name),
        Dialect::Zsh => state::zsh::BUILTINS.contains(&name),
    };
    match change {
        Change::Function(name, _) if builtin_named(name) => Treatment::Never(
            "a function named like a shell builtin: define it in your startup file",
        ),
        _ => state::treatment(dialect, change, cx),
    }
}

/// The shell's report on the line's channel. Bytes another process of the line wrote there are
/// dropped, and the person is told: a program of the line tried to speak for the shell.
fn report(channel: &StateChannel) -> Option<Collected> {
    let report = channel.collect()?;
    if report.foreign > 0 {
        crate::approval::tell(&format!(
            "shellgate: a program of this line wrote {} bytes to the report of this shell's state; \
             they were ignored (only the shell itself reports its state)\n",
            report.foreign
        ));
    }
    Some(report.collected)
}

/// Creates (0700) and returns this shell's private directory, `shells/SESSION-PID` in shellgate's
/// state directory, removing the directories of shells that are gone.
pub fn prepare_dir(pid: i32) -> Result<PathBuf> {
    let paths = crate::audit::StatePaths::from_env()?;
    let Ok(Some(session)) = crate::audit::SessionId::from_env() else {
        return Err(Error::usage(
            "no valid SHELLGATE_SESSION in the environment",
        ));
    };
    let session = session.as_str();
    let root = paths.root().join(crate::audit::paths::SHELLS_DIR);
    crate::audit::paths::ensure_private_dir(&root)?;
    if let Ok(entries) = std::fs::read_dir(&root) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let gone = name
                .rsplit_once('-')
                .and_then(|(_, pid)| pid.parse::<i32>().ok())
                .is_some_and(|p| p > 1 && process_gone(p));
            if gone {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = root.join(format!("{session}-{pid}"));
    crate::audit::paths::ensure_private_dir(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A names dump that cannot be read asks for the whole state; a whole dump that cannot be
    /// read is noted, and the line runs without the state.
    #[test]
    fn a_names_dump_that_cannot_be_read_asks_for_the_whole_state() {
        let dir = tempfile::tempdir().unwrap();
        let path = |name: &str| dir.path().join(name);
        let files = Files {
            snapshot: path("t.snapshot"),
            input: path("t.in"),
            history: path("t.history"),
            apply: path("t.apply"),
            held: path("held"),
        };
        std::fs::write(&files.snapshot, "shellgate-zsh-names 1\0Q\0E\0").unwrap();
        let (state, known) = read_snapshot(Dialect::Zsh, &files, dir.path());
        assert!(state.names_only && !known);
        assert!(!path("snapshot-unreadable.noted").exists());
        // A whole dump that cannot be read is noted, and the line runs without the state.
        std::fs::write(&files.snapshot, "shellgate-zsh-state 1\0Q\0E\0").unwrap();
        let (state, known) = read_snapshot(Dialect::Zsh, &files, dir.path());
        assert!(!state.names_only && !known);
        assert!(path("snapshot-unreadable.noted").exists());
    }

    #[test]
    fn a_background_line_runs_in_the_foreground_of_its_sandbox() {
        assert_eq!(without_background("sleep 30 &"), "sleep 30 ");
        assert_eq!(without_background("sleep 30 &! "), "sleep 30 ");
        assert_eq!(without_background("a && b"), "a && b");
        assert_eq!(without_background("echo \\&"), "echo \\&");
    }

    #[test]
    fn the_previous_status_is_restored_as_it_was() {
        assert_eq!(restore_status(&[]), "__shellgate_ret 0");
        assert_eq!(restore_status(&[7, 7]), "__shellgate_ret 7");
        assert_eq!(
            restore_status(&[1, 0, 1]),
            "__shellgate_ret 0 | __shellgate_ret 1"
        );
    }

    /// The runner in the real shell: the line sees the state and `$?` of the previous line, and
    /// its own state comes out on descriptor 3, even when it exits.
    #[test]
    fn the_bash_runner_reports_state_after_the_line_even_on_exit() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in");
        let state = "greet() { echo \"hi $1\"; }\nbuiltin alias ll='echo listed'\n\
                     builtin shopt -s expand_aliases\nSECRET=unexported\n";
        let bash = crate::shell::real_shell(ShellKind::Bash).unwrap();
        let out_file = dir.path().join("out");
        for (line, status) in [
            ("echo \"$? $SECRET\"; greet you; ll; X=1; cd /", 0),
            ("true | false; exit 3", 3),
            ("nosuchcommand-x", 127),
        ] {
            std::fs::write(
                &input,
                format!("{state}{}", runner_prelude(Dialect::Bash, line, false)),
            )
            .unwrap();
            let out = std::process::Command::new("/bin/sh")
                .arg("-c")
                .arg("exec \"$0\" --noprofile --norc -c \"$1\" bash 3>\"$2\"")
                .arg(&bash)
                .arg(runner(Dialect::Bash, &input, &[4, 4], false))
                .arg(&out_file)
                .env_clear()
                .env("PATH", "/usr/bin:/bin")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(status), "{stderr}");
            let after = State::parse(
                Dialect::Bash,
                &std::fs::read(&out_file).unwrap(),
                Limits::DEFAULT,
            )
            .unwrap();
            match status {
                0 => {
                    assert_eq!(
                        String::from_utf8_lossy(&out.stdout),
                        "4 unexported\nhi you\nlisted\n"
                    );
                    assert_eq!(after.cwd.as_deref(), Some("/"));
                    assert!(after.vars.contains_key("X"));
                }
                3 => assert_eq!(after.status, vec![3], "exit reports its own status"),
                _ => assert!(
                    stderr.starts_with("bash: line 1: nosuchcommand-x"),
                    "{stderr}"
                ),
            }
        }
    }

    #[test]
    fn the_line_is_quoted_into_the_runner_not_spliced() {
        let text = runner_prelude(Dialect::Bash, "echo '$(x)'; \"", false);
        assert!(
            text.starts_with("__shellgate_line='echo '\\''$(x)'\\''; \"'\n"),
            "{text}"
        );
    }

    /// A line run once outside with a name found only in a temp dir on PATH (where a line may
    /// have put it): in real bash and zsh the name refuses instead of running the file; a builtin
    /// of the line still runs, the person's PATH is back after it, and nothing stays defined.
    #[test]
    fn a_name_found_only_where_lines_write_refuses_in_a_line_run_outside() {
        let planted = tempfile::tempdir_in("/tmp").unwrap();
        let marker = planted.path().join("ran");
        let tool = planted.path().join("sgplanted");
        std::fs::write(&tool, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let path = format!("{}:/usr/bin:/bin", planted.path().display());
        let line = "cd / && sgplanted";
        for (dialect, shell) in [
            (Dialect::Bash, ShellKind::Bash),
            (Dialect::Zsh, ShellKind::Zsh),
        ] {
            let Some(program) = crate::shell::real_shell(shell) else {
                assert_eq!(shell, ShellKind::Zsh, "bash must be installed");
                continue;
            };
            let apply = format!("__shellgate_status=0\n{line}\n__shellgate_status=$?\n");
            let script =
                outside_once_apply(dialect, shell, std::ffi::OsStr::new(&path), line, apply);
            // The hook's own function that ends it, taken from the hook itself.
            let hook = match shell {
                ShellKind::Zsh => include_str!("../../shell/zsh.zsh"),
                _ => include_str!("../../shell/bash.sh"),
            };
            let start = hook.find("  __shellgate_outside_end() {").unwrap();
            let end = start + hook[start..].find("\n  }\n").unwrap() + 5;
            let script = format!("{}\n{script}", &hook[start..end]);
            let out = std::process::Command::new(&program)
                .arg(if shell == ShellKind::Zsh { "-fc" } else { "-c" })
                .arg(format!(
                    "PATH='{path}'\n{script}echo \"status=$__shellgate_status path=$PATH \
                     left=$(typeset -f sgplanted | head -1)\""
                ))
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(!marker.exists(), "{shell:?}: the planted file ran: {text}");
            assert!(text.contains("sgplanted: not run"), "{shell:?}: {text}");
            assert!(text.contains("status=127"), "{shell:?}: {text}");
            assert!(text.contains(&format!("path={path} ")), "{shell:?}: {text}");
            assert!(
                String::from_utf8_lossy(&out.stdout)
                    .trim_end()
                    .ends_with("left="),
                "{shell:?}: {text}"
            );
        }
    }
}
