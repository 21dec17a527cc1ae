//! The option scanner wrappers are read with, and the wrappers that run a command as another user,
//! in another root or namespace, or under a tracer: `script`, `su`, `runuser`, `chroot`,
//! `unshare`, `nsenter`, `strace`, `pkexec`, `systemd-run`, `run0`, `flatpak-spawn`, and bash's
//! `jobs -x`.
//!
//! Each is read with its full option list as its own getopt reads it (clusters such as `-qc CMD`,
//! attached values, `--opt=value`, `--`, and for `script` and `su` options after operands, which
//! their getopt_long permutes). An option that is not on the list makes the line opaque rather than
//! a guess: whether it takes a value decides where the real command starts.

use super::unwrap::{Step, strip};
use super::words::Word;

/// The options a wrapper accepts, as its getopt reads them.
pub(super) struct WrapperOptions {
    /// Options that take a value: the next word, or attached (`-n5`, `--adjustment=5`).
    pub value: &'static [&'static str],
    /// Options without a value.
    pub flags: &'static [&'static str],
    /// Options whose value can only be attached (`-i{}`, `--replace=R`, `--block-signal=INT`).
    pub optional: &'static [&'static str],
}

/// One option a wrapper was given.
pub(super) struct Seen {
    /// Its name as listed in [`WrapperOptions`].
    pub name: &'static str,
    /// The word it was in.
    pub at: usize,
    /// Its value (attached or the next word), for options that take one.
    pub value: Option<Word>,
}

/// The options a wrapper was given.
pub(super) struct Scanned {
    /// The index of the first operand (`args.len()` when there is none).
    pub operands: usize,
    pub seen: Vec<Seen>,
}

impl Scanned {
    pub fn has(&self, names: &[&str]) -> bool {
        self.seen.iter().any(|s| names.contains(&s.name))
    }

    /// The value of the first of `names` that was given.
    pub fn value(&self, names: &[&str]) -> Option<(usize, &Word)> {
        self.seen
            .iter()
            .find(|s| names.contains(&s.name))
            .and_then(|s| s.value.as_ref().map(|v| (s.at, v)))
    }
}

/// Read a wrapper's options the way its getopt does: clusters (`-iv`), attached values (`-n5`,
/// `--opt=v`), `--`, stopping at the first operand. An option the wrapper is not known to have is
/// an error (its name): whether it takes a value decides where the real command starts, and a
/// guess there lets a command hide behind the wrapper (`env -a ls rm -rf ~` runs `rm`).
pub(super) fn skip_options(args: &[Word], opts: &WrapperOptions) -> Result<Scanned, String> {
    scan(args, opts, false).map(|(scanned, _)| scanned)
}

/// [`skip_options`] for a wrapper whose getopt_long permutes (options may follow operands, until
/// `--`): every option anywhere, and the indices of the operands.
pub(super) fn scan_permuted(
    args: &[Word],
    opts: &WrapperOptions,
) -> Result<(Scanned, Vec<usize>), String> {
    scan(args, opts, true)
}

fn scan(
    args: &[Word],
    opts: &WrapperOptions,
    permute: bool,
) -> Result<(Scanned, Vec<usize>), String> {
    let short = |list: &[&'static str], c: char| {
        list.iter()
            .copied()
            .find(|o| o.len() == 2 && o.starts_with('-') && o[1..].starts_with(c))
    };
    let mut seen = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        let a = word.text.as_str();
        if a == "--" {
            i += 1;
            operands.extend(i..args.len());
            break;
        }
        if !a.starts_with('-') || a == "-" {
            if !permute {
                operands.extend(i..args.len());
                break;
            }
            operands.push(i);
            i += 1;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (&a[..n.len() + 2], Some(v)),
                None => (a, None),
            };
            let find = |list: &[&'static str]| list.iter().copied().find(|o| *o == name);
            if let Some(o) = find(opts.value) {
                let value = match attached {
                    Some(v) => Some(word.part(v)),
                    None => args.get(i + 1).cloned(),
                };
                seen.push(Seen {
                    name: o,
                    at: i,
                    value,
                });
                i += if attached.is_some() { 1 } else { 2 };
            } else if let Some(o) = find(opts.optional) {
                let value = attached.map(|v| word.part(v));
                seen.push(Seen {
                    name: o,
                    at: i,
                    value,
                });
                i += 1;
            } else if let Some(o) = find(opts.flags).filter(|_| attached.is_none()) {
                seen.push(Seen {
                    name: o,
                    at: i,
                    value: None,
                });
                i += 1;
            } else {
                return Err(name.to_owned());
            }
            continue;
        }
        let mut next = i + 1;
        for (at, c) in a.char_indices().skip(1) {
            let rest = &a[at + c.len_utf8()..];
            if let Some(o) = short(opts.value, c) {
                let value = if rest.is_empty() {
                    next = i + 2;
                    args.get(i + 1).cloned()
                } else {
                    Some(word.part(rest))
                };
                seen.push(Seen {
                    name: o,
                    at: i,
                    value,
                });
                break;
            } else if let Some(o) = short(opts.optional, c) {
                let value = (!rest.is_empty()).then(|| word.part(rest));
                seen.push(Seen {
                    name: o,
                    at: i,
                    value,
                });
                break;
            } else if let Some(o) = short(opts.flags, c) {
                seen.push(Seen {
                    name: o,
                    at: i,
                    value: None,
                });
            } else {
                return Err(format!("-{c}"));
            }
        }
        i = next;
    }
    let first = operands.first().copied().unwrap_or(args.len());
    Ok((
        Scanned {
            operands: first.min(args.len()),
            seen,
        },
        operands,
    ))
}

pub(super) fn unknown_option(option: &str, wrapper: &str) -> Step {
    Step::Opaque(format!(
        "unknown option `{option}` to `{wrapper}`: where the command it runs starts cannot be known"
    ))
}

/// A script run by the wrapper (`-c SCRIPT`), parsed like `bash -c`.
fn script_step(script: Word, at: usize, label: &str) -> Step {
    Step::Script {
        script,
        label: label.to_owned(),
        opaque: None,
        args_used: at..at + 1,
    }
}

/// util-linux `script [options] [file]` (2.38).
const SCRIPT: WrapperOptions = WrapperOptions {
    value: &[
        "-B",
        "-c",
        "-E",
        "-I",
        "-m",
        "-O",
        "-o",
        "-T",
        "--command",
        "--echo",
        "--log-in",
        "--log-io",
        "--log-out",
        "--log-timing",
        "--logging-format",
        "--output-limit",
    ],
    flags: &[
        "-a",
        "-e",
        "-f",
        "-h",
        "-q",
        "-V",
        "--append",
        "--flush",
        "--force",
        "--help",
        "--quiet",
        "--return",
        "--version",
    ],
    optional: &["-t", "--timing"],
};

/// `script -c CMD` (also `-qc CMD`, `-cCMD`, `--command=CMD`, and after the typescript file:
/// getopt_long permutes) runs CMD with the user's shell. Without `-c` it starts an interactive
/// shell: the command is `script` itself.
pub(super) fn script(args: &[Word]) -> Step {
    match scan_permuted(args, &SCRIPT) {
        Ok((scanned, _)) => match scanned.value(&["-c", "--command"]) {
            Some((at, command)) => script_step(command.clone(), at, "script -c"),
            None => Step::Final,
        },
        Err(option) => unknown_option(&option, "script"),
    }
}

/// util-linux `su [options] [-] [user [argument…]]`.
const SU: WrapperOptions = WrapperOptions {
    value: &[
        "-c",
        "-g",
        "-G",
        "-s",
        "-w",
        "--command",
        "--group",
        "--session-command",
        "--shell",
        "--supp-group",
        "--whitelist-environment",
    ],
    flags: &[
        "-f",
        "-h",
        "-l",
        "-m",
        "-p",
        "-P",
        "-V",
        "--fast",
        "--help",
        "--login",
        "--preserve-environment",
        "--pty",
        "--version",
    ],
    optional: &[],
};

/// `su -c CMD`, `su -lc CMD`, `su - root -c CMD` (getopt_long permutes) run CMD with the target
/// user's shell; arguments after the user go to that shell (`su root -- -c CMD`).
pub(super) fn su(args: &[Word], label: &str) -> Step {
    let (scanned, operands) = match scan_permuted(args, &SU) {
        Ok(result) => result,
        Err(option) => return unknown_option(&option, label),
    };
    if let Some((at, command)) = scanned.value(&["-c", "--command", "--session-command"]) {
        return script_step(command.clone(), at, &format!("{label} -c"));
    }
    // `-` (a login shell) and the user name are operands; anything after them is for the shell.
    let mut rest = operands.into_iter().skip_while(|&i| args[i].text == "-");
    let Some(_user) = rest.next() else {
        return Step::Final;
    };
    let shell_args: Vec<usize> = rest.collect();
    match shell_args.first() {
        None => Step::Final,
        Some(&first) => super::unwrap::shell_arguments(args, first, &format!("{label} USER")),
    }
}

/// util-linux `runuser`: like `su`, plus `runuser -u USER [--] COMMAND…`, which runs COMMAND
/// directly.
pub(super) fn runuser(args: &[Word]) -> Step {
    const RUNUSER: WrapperOptions = WrapperOptions {
        value: &[
            "-c",
            "-g",
            "-G",
            "-s",
            "-u",
            "-w",
            "--command",
            "--group",
            "--session-command",
            "--shell",
            "--supp-group",
            "--user",
            "--whitelist-environment",
        ],
        flags: SU.flags,
        optional: &[],
    };
    match skip_options(args, &RUNUSER) {
        Ok(scanned) if scanned.has(&["-u", "--user"]) => strip(scanned.operands, "runuser -u"),
        Ok(_) => su(args, "runuser"),
        Err(option) => unknown_option(&option, "runuser"),
    }
}

/// GNU `chroot [options] NEWROOT [COMMAND…]`; without a command it runs `$SHELL -i`.
pub(super) fn chroot(args: &[Word]) -> Step {
    const CHROOT: WrapperOptions = WrapperOptions {
        value: &["--groups", "--userspec"],
        flags: &["--skip-chdir", "--help", "--version"],
        optional: &[],
    };
    match skip_options(args, &CHROOT) {
        Ok(scanned) if scanned.operands + 1 < args.len() => strip(scanned.operands + 1, "chroot"),
        Ok(_) => Step::Final,
        Err(option) => unknown_option(&option, "chroot"),
    }
}

/// util-linux `unshare [options] [program [arguments]]` (2.38); without a program it runs `$SHELL`.
pub(super) fn unshare(args: &[Word]) -> Step {
    const UNSHARE: WrapperOptions = WrapperOptions {
        value: &[
            "-G",
            "-l",
            "-R",
            "-S",
            "-w",
            "--boottime",
            "--load-interp",
            "--map-group",
            "--map-groups",
            "--map-user",
            "--map-users",
            "--monotonic",
            "--propagation",
            "--root",
            "--setgid",
            "--setgroups",
            "--setuid",
            "--wd",
        ],
        flags: &[
            "-c",
            "-C",
            "-f",
            "-h",
            "-i",
            "-m",
            "-n",
            "-p",
            "-r",
            "-T",
            "-u",
            "-U",
            "-V",
            "--fork",
            "--help",
            "--map-auto",
            "--map-current-user",
            "--map-root-user",
            "--version",
        ],
        optional: &[
            "--cgroup",
            "--ipc",
            "--kill-child",
            "--mount",
            "--mount-proc",
            "--net",
            "--pid",
            "--time",
            "--user",
            "--uts",
        ],
    };
    match skip_options(args, &UNSHARE) {
        Ok(scanned) => strip(scanned.operands, "unshare"),
        Err(option) => unknown_option(&option, "unshare"),
    }
}

/// util-linux `nsenter [options] [program [arguments]]`; without a program it runs `$SHELL`.
pub(super) fn nsenter(args: &[Word]) -> Step {
    const NSENTER: WrapperOptions = WrapperOptions {
        value: &[
            "-G", "-S", "-t", "-W", "--setgid", "--setuid", "--target", "--wdns",
        ],
        flags: &[
            "-a",
            "-c",
            "-e",
            "-F",
            "-h",
            "-V",
            "-Z",
            "--all",
            "--env",
            "--follow-context",
            "--help",
            "--join-cgroup",
            "--keep-caps",
            "--no-fork",
            "--preserve-credentials",
            "--user-parent",
            "--version",
        ],
        optional: &[
            "-C", "-i", "-m", "-n", "-p", "-r", "-T", "-u", "-U", "-w", "--cgroup", "--ipc",
            "--mount", "--net", "--pid", "--root", "--time", "--user", "--uts", "--wd",
        ],
    };
    match skip_options(args, &NSENTER) {
        Ok(scanned) => strip(scanned.operands, "nsenter"),
        Err(option) => unknown_option(&option, "nsenter"),
    }
}

/// strace 6: `strace [options] COMMAND…`, or `strace -p PID` (attaches; runs nothing).
pub(super) fn strace(args: &[Word]) -> Step {
    const STRACE: WrapperOptions = WrapperOptions {
        value: &[
            "-a",
            "-b",
            "-e",
            "-E",
            "-I",
            "-o",
            "-O",
            "-p",
            "-P",
            "-s",
            "-S",
            "-u",
            "-U",
            "-X",
            "--abbrev",
            "--attach",
            "--columns",
            "--const-print-style",
            "--detach-on",
            "--env",
            "--fault",
            "--inject",
            "--kvm",
            "--output",
            "--raw",
            "--read",
            "--signal",
            "--status",
            "--string-limit",
            "--summary-columns",
            "--summary-sort-by",
            "--trace",
            "--trace-fds",
            "--trace-path",
            "--user",
            "--verbose",
            "--write",
        ],
        flags: &[
            "-A",
            "-c",
            "-C",
            "-d",
            "-D",
            "-f",
            "-F",
            "-h",
            "-i",
            "-k",
            "-n",
            "-N",
            "-q",
            "-r",
            "-t",
            "-T",
            "-v",
            "-V",
            "-w",
            "-x",
            "-y",
            "-Y",
            "-z",
            "-Z",
            "--debug",
            "--failed-only",
            "--follow-forks",
            "--help",
            "--instruction-pointer",
            "--no-abbrev",
            "--output-append-mode",
            "--output-separately",
            "--seccomp-bpf",
            "--stack-trace",
            "--successful-only",
            "--summary",
            "--summary-only",
            "--summary-wall-clock",
            "--syscall-number",
            "--syscall-times",
            "--version",
        ],
        optional: &[
            "--absolute-timestamps",
            "--daemonize",
            "--decode-fds",
            "--decode-pids",
            "--quiet",
            "--relative-timestamps",
            "--secontext",
            "--silent",
            "--timestamps",
            "--tips",
        ],
    };
    match skip_options(args, &STRACE) {
        Ok(scanned) if scanned.has(&["-p", "--attach"]) && scanned.operands >= args.len() => {
            Step::Final
        }
        Ok(scanned) => strip(scanned.operands, "strace"),
        Err(option) => unknown_option(&option, "strace"),
    }
}

/// polkit `pkexec [--user USER] [--disable-internal-agent] [--keep-cwd] PROGRAM…`.
pub(super) fn pkexec(args: &[Word]) -> Step {
    const PKEXEC: WrapperOptions = WrapperOptions {
        value: &["--user"],
        flags: &[
            "--disable-internal-agent",
            "--keep-cwd",
            "--help",
            "--version",
        ],
        optional: &[],
    };
    match skip_options(args, &PKEXEC) {
        Ok(scanned) if scanned.has(&["--help", "--version"]) => Step::Final,
        Ok(scanned) => strip(scanned.operands, "pkexec"),
        Err(option) => unknown_option(&option, "pkexec"),
    }
}

/// `systemd-run [options] COMMAND…` (systemd 252–256); `--shell`/`-S` starts a shell.
pub(super) fn systemd_run(args: &[Word]) -> Step {
    const SYSTEMD_RUN: WrapperOptions = WrapperOptions {
        value: &[
            "-E",
            "-H",
            "-M",
            "-p",
            "-u",
            "--background",
            "--description",
            "--gid",
            "--host",
            "--machine",
            "--nice",
            "--on-active",
            "--on-boot",
            "--on-calendar",
            "--on-clock-change",
            "--on-startup",
            "--on-timezone-change",
            "--on-unit-active",
            "--on-unit-inactive",
            "--path-property",
            "--property",
            "--service-type",
            "--setenv",
            "--slice",
            "--socket-property",
            "--timer-property",
            "--uid",
            "--unit",
            "--working-directory",
        ],
        flags: &[
            "-d",
            "-G",
            "-h",
            "-P",
            "-q",
            "-r",
            "-S",
            "-t",
            "--collect",
            "--expand-environment",
            "--help",
            "--ignore-failure",
            "--no-ask-password",
            "--no-block",
            "--pipe",
            "--pty",
            "--quiet",
            "--remain-after-exit",
            "--same-dir",
            "--scope",
            "--send-sighup",
            "--shell",
            "--slice-inherit",
            "--system",
            "--user",
            "--version",
            "--wait",
        ],
        optional: &[],
    };
    match skip_options(args, &SYSTEMD_RUN) {
        Ok(scanned) => strip(scanned.operands, "systemd-run"),
        Err(option) => unknown_option(&option, "systemd-run"),
    }
}

/// systemd's `run0 [options] [COMMAND…]` (systemd 256); without a command it starts a shell.
pub(super) fn run0(args: &[Word]) -> Step {
    const RUN0: WrapperOptions = WrapperOptions {
        value: &[
            "-D",
            "-g",
            "-u",
            "--background",
            "--chdir",
            "--description",
            "--group",
            "--machine",
            "--nice",
            "--property",
            "--setenv",
            "--slice",
            "--unit",
            "--user",
        ],
        flags: &[
            "-h",
            "-V",
            "--help",
            "--no-ask-password",
            "--slice-inherit",
            "--version",
        ],
        optional: &[],
    };
    match skip_options(args, &RUN0) {
        Ok(scanned) => strip(scanned.operands, "run0"),
        Err(option) => unknown_option(&option, "run0"),
    }
}

/// `flatpak-spawn [options] COMMAND…` (GLib option parsing: `--opt=value` or `--opt value`);
/// `--host` runs COMMAND outside the Flatpak sandbox.
pub(super) fn flatpak_spawn(args: &[Word]) -> Step {
    const FLATPAK_SPAWN: WrapperOptions = WrapperOptions {
        value: &[
            "--app-path",
            "--directory",
            "--env",
            "--forward-fd",
            "--sandbox-expose",
            "--sandbox-expose-path",
            "--sandbox-expose-path-ro",
            "--sandbox-expose-path-ro-try",
            "--sandbox-expose-path-try",
            "--sandbox-expose-ro",
            "--sandbox-flag",
            "--unset-env",
            "--usr-path",
        ],
        flags: &[
            "-h",
            "-v",
            "--clear-env",
            "--expose-pids",
            "--help",
            "--host",
            "--latest-version",
            "--no-network",
            "--sandbox",
            "--share-pids",
            "--verbose",
            "--watch-bus",
        ],
        optional: &[],
    };
    match skip_options(args, &FLATPAK_SPAWN) {
        Ok(scanned) => strip(scanned.operands, "flatpak-spawn"),
        Err(option) => unknown_option(&option, "flatpak-spawn"),
    }
}

/// bash's `jobs -x COMMAND…` replaces job specs in its arguments and runs COMMAND — in the
/// interactive shell itself. bash reads `-x` only at the start of the first argument (`-x`,
/// `-xl`), then an optional `--`; `-lx` and `-l -x` are errors.
pub(super) fn jobs(args: &[Word]) -> Step {
    const JOBS_FLAGS: &str = "lnprsx";
    let is_cluster = |w: &Word| {
        w.text.len() > 1
            && w.text.starts_with('-')
            && w.text[1..].chars().all(|c| JOBS_FLAGS.contains(c))
    };
    match args.first() {
        Some(first) if first.text.starts_with("-x") && is_cluster(first) => {
            let skip = if args.get(1).is_some_and(|w| w.text == "--") {
                2
            } else {
                1
            };
            if skip >= args.len() {
                Step::Final
            } else {
                strip(skip, "jobs -x")
            }
        }
        _ if args
            .iter()
            .any(|w| !w.is_literal() || w.text.contains('x') && is_cluster(w)) =>
        {
            Step::Opaque(
                "`jobs` with `-x` or an argument only known at run time may run a command"
                    .to_owned(),
            )
        }
        _ => Step::Final,
    }
}
