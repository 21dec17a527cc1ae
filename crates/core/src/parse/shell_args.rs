//! How a shell would interpret its own command-line arguments: for the shell entry point `wrap`
//! puts in front of the real shells (`/bin/bash -c '…'` started by an agent by absolute path), and
//! for unwrapping `bash -c '…'` on a line, so the two cannot disagree.
//!
//! Parsing follows each shell's rules: for bash/zsh/sh, options (clusters like `-lc` or `-xec`,
//! `-o NAME`, `--rcfile FILE` …) come first, and with `-c` the first operand is the command string,
//! then `$0` and the positional parameters; for pwsh, parameters are case-insensitive and may be
//! abbreviated, `-Command` takes the rest of the line, `-EncodedCommand` is base64 UTF-16LE.
//! Anything that cannot be classified is [`Invocation::Unknown`], which the entry point refuses.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

/// What a shell invocation will run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// `-c STRING`: the command string.
    Command { script: OsString },
    /// A script file (the first operand).
    Script { path: OsString },
    /// Commands read from standard input (`-s`, or no operand and standard input is not a terminal).
    Stdin,
    /// An interactive shell.
    Interactive,
    /// `--version`, `--help` and the like: prints information, runs nothing.
    Info,
    /// Not understood: refused.
    Unknown(String),
}

/// Whose rules a POSIX-family shell reads its options by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellFamily {
    /// bash, sh, dash, ksh …: each `o` or `O` in a cluster takes the next word (`-eo pipefail`,
    /// `-O extglob`).
    Bourne,
    /// zsh: `o` takes the rest of its cluster or else the next word (`-oerrexit`), `-O` is a flag,
    /// and `b` ends the options after its word.
    Zsh,
}

impl ShellFamily {
    /// The family of a shell by its program name.
    pub fn of(program: &str) -> ShellFamily {
        if program == "zsh" {
            ShellFamily::Zsh
        } else {
            ShellFamily::Bourne
        }
    }
}

/// What a POSIX-family shell's options say, read the way the shell reads them. The one scanner
/// both the policy (`bash -c '…'` in a line) and the shell entry point (`/bin/bash -c '…'` run by
/// an agent) use, so they cannot disagree about what runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShellOptions {
    /// `-c` or `+c`, alone or in a cluster (`-lc`, `-xec`): the first operand is the command
    /// string (every shell tested, bash, dash and zsh, runs it for `+c` too).
    pub command: bool,
    /// `-s`: commands are read from standard input; the operands are positional parameters.
    pub stdin: bool,
    /// `-i`.
    pub interactive: bool,
    /// `--version` or `--help` among the options: the shell prints and exits (or, for a shell
    /// without long options, refuses them); nothing runs.
    pub info: bool,
    /// The index of the first operand (the number of arguments when there is none).
    pub operand: usize,
    /// An option that takes a value had none.
    pub missing_value: Option<String>,
}

/// Read a POSIX-family shell's options (arguments without argv\[0\]).
///
/// Options end at `--`, `-`, or the first word that is not an option. Long options are skipped,
/// `--rcfile`, `--init-file` and `--emulate` with their value. `-C` is noclobber, a flag; `-V`,
/// `-D` and the other letters are flags too (bash refuses `-V`, which also runs nothing).
pub fn posix_shell_options<A: AsRef<[u8]>>(family: ShellFamily, args: &[A]) -> ShellOptions {
    const LONG_WITH_VALUE: [&[u8]; 3] = [b"--rcfile", b"--init-file", b"--emulate"];
    let mut options = ShellOptions::default();
    let missing = |word: &[u8]| Some(String::from_utf8_lossy(word).into_owned());
    let mut i = 0;
    while i < args.len() {
        let word = args[i].as_ref();
        if word == b"--" || word == b"-" {
            i += 1;
            break;
        }
        if word.starts_with(b"--") {
            if word == b"--version" || word == b"--help" {
                options.info = true;
                break;
            }
            if LONG_WITH_VALUE.contains(&word) {
                if i + 1 >= args.len() {
                    options.missing_value = missing(word);
                    break;
                }
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        if !(word.starts_with(b"-") || word.starts_with(b"+")) || word.len() < 2 {
            break;
        }
        let dash = word[0] == b'-';
        let letters = &word[1..];
        let mut next = i + 1;
        let mut last_options_word = false;
        for (k, letter) in letters.iter().enumerate() {
            match (family, letter) {
                (_, b'c') => options.command = true,
                (_, b's') if dash => options.stdin = true,
                (_, b'i') if dash => options.interactive = true,
                (ShellFamily::Zsh, b'b') => last_options_word = true,
                (ShellFamily::Zsh, b'o') => {
                    if k + 1 == letters.len() {
                        next += 1;
                    }
                    break;
                }
                (ShellFamily::Bourne, b'o' | b'O') => next += 1,
                _ => {}
            }
        }
        if next > args.len() {
            options.missing_value = missing(word);
            break;
        }
        i = next;
        if last_options_word {
            break;
        }
    }
    options.operand = i.min(args.len());
    options
}

/// Parse the arguments (without argv\[0\]) of bash, zsh, sh or another POSIX shell.
///
/// The entry point does not say which shell it stands in for, so the arguments are read by both
/// families' rules; where they disagree (`-O NAME`, `-b`, `-oNAME`), what would run depends on
/// the shell, and the invocation is refused rather than guessed.
pub fn parse_posix(args: &[OsString], stdin_is_tty: bool) -> Invocation {
    let words: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
    let bourne = posix_shell_options(ShellFamily::Bourne, &words);
    if bourne != posix_shell_options(ShellFamily::Zsh, &words) {
        return Invocation::Unknown(
            "bash and zsh read these options differently (`-O`, `-b` or `-oNAME`), so what \
             would run depends on the shell"
                .to_owned(),
        );
    }
    invocation(&bourne, args, stdin_is_tty)
}

/// What the options scanned from `args` run (`parse_posix` for one family's reading).
pub fn invocation(options: &ShellOptions, args: &[OsString], stdin_is_tty: bool) -> Invocation {
    if options.info {
        return Invocation::Info;
    }
    if let Some(option) = &options.missing_value {
        return Invocation::Unknown(format!("option {option} has no value"));
    }
    if options.command {
        return match args.get(options.operand) {
            Some(script) => Invocation::Command {
                script: script.clone(),
            },
            None => Invocation::Unknown("-c was given without a command string".to_owned()),
        };
    }
    if options.stdin {
        return Invocation::Stdin;
    }
    match args.get(options.operand) {
        Some(path) => Invocation::Script { path: path.clone() },
        None if options.interactive || stdin_is_tty => Invocation::Interactive,
        None => Invocation::Stdin,
    }
}

/// Parse the arguments (without argv\[0\]) of `pwsh`.
pub fn parse_pwsh(args: &[OsString], stdin_is_tty: bool) -> Invocation {
    let mut i = 0;
    while i < args.len() {
        let raw = args[i].to_string_lossy().to_string();
        if !raw.starts_with('-') && !raw.starts_with('/') {
            // A bare first operand is -File.
            return Invocation::Script {
                path: args[i].clone(),
            };
        }
        let name = raw.trim_start_matches(['-', '/']).to_ascii_lowercase();
        let param = pwsh_parameter(&name);
        match param {
            Some("command") => {
                let rest: Vec<String> = args[i + 1..]
                    .iter()
                    .map(|a| a.to_string_lossy().to_string())
                    .collect();
                if rest.first().map(String::as_str) == Some("-") {
                    return Invocation::Stdin;
                }
                if rest.is_empty() {
                    return Invocation::Unknown("-Command was given without a command".to_owned());
                }
                return Invocation::Command {
                    script: OsString::from(rest.join(" ")),
                };
            }
            Some("commandwithargs") => {
                return match args.get(i + 1) {
                    Some(script) => Invocation::Command {
                        script: script.clone(),
                    },
                    None => Invocation::Unknown("-CommandWithArgs without a command".to_owned()),
                };
            }
            Some("encodedcommand") => {
                return match args.get(i + 1).and_then(|a| decode_utf16le_base64(a)) {
                    Some(script) => Invocation::Command { script },
                    None => {
                        Invocation::Unknown("-EncodedCommand is not base64 UTF-16LE".to_owned())
                    }
                };
            }
            Some("file") => {
                return match args.get(i + 1) {
                    Some(p) if p == "-" => Invocation::Stdin,
                    Some(p) => Invocation::Script { path: p.clone() },
                    None => Invocation::Unknown("-File without a path".to_owned()),
                };
            }
            Some("version") | Some("help") => return Invocation::Info,
            Some(p) if PWSH_VALUE_PARAMS.contains(&p) => i += 2,
            Some(_) => i += 1,
            None => return Invocation::Unknown(format!("unknown pwsh parameter {raw}")),
        }
    }
    if stdin_is_tty {
        Invocation::Interactive
    } else {
        Invocation::Stdin
    }
}

/// pwsh's parameters in the order pwsh itself tries them, each with the shortest prefix it accepts
/// (from PowerShell's `CommandLineParameterParser`): the first match wins.
const PWSH_PARAMS: [(&str, &str); 22] = [
    ("version", "v"),
    ("help", "h"),
    ("login", "l"),
    ("noexit", "noe"),
    ("noprofile", "nop"),
    ("nologo", "nol"),
    ("noninteractive", "noni"),
    ("interactive", "i"),
    ("command", "c"),
    ("commandwithargs", "commandwithargs"),
    ("configurationname", "config"),
    ("encodedcommand", "e"),
    ("executionpolicy", "ex"),
    ("file", "f"),
    ("inputformat", "in"),
    ("outputformat", "o"),
    ("workingdirectory", "wo"),
    ("windowstyle", "w"),
    ("settingsfile", "settings"),
    ("mta", "mta"),
    ("sta", "sta"),
    ("configurationfile", "configurationf"),
];
const PWSH_VALUE_PARAMS: [&str; 8] = [
    "configurationname",
    "executionpolicy",
    "inputformat",
    "outputformat",
    "workingdirectory",
    "windowstyle",
    "settingsfile",
    "configurationfile",
];
/// pwsh's extra short aliases.
const PWSH_ALIASES: [(&str, &str); 7] = [
    ("cwa", "commandwithargs"),
    ("ec", "encodedcommand"),
    ("ep", "executionpolicy"),
    ("if", "inputformat"),
    ("of", "outputformat"),
    ("wd", "workingdirectory"),
    ("?", "help"),
];

/// A pwsh parameter by alias or accepted prefix.
fn pwsh_parameter(name: &str) -> Option<&'static str> {
    if let Some((_, full)) = PWSH_ALIASES.iter().find(|(alias, _)| *alias == name) {
        return Some(full);
    }
    PWSH_PARAMS
        .iter()
        .find(|(full, shortest)| full.starts_with(name) && name.len() >= shortest.len())
        .map(|(full, _)| *full)
}

fn decode_utf16le_base64(text: &OsStr) -> Option<OsString> {
    let bytes = base64_decode(text.as_bytes())?;
    if bytes.len() % 2 != 0 {
        return None;
    }
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16(&units).ok().map(OsString::from)
}

/// Standard base64 (with or without padding).
fn base64_decode(input: &[u8]) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let data: Vec<u8> = input.iter().copied().filter(|c| *c != b'=').collect();
    let mut out = Vec::with_capacity(data.len() * 3 / 4);
    for chunk in data.chunks(4) {
        let mut acc: u32 = 0;
        for (k, c) in chunk.iter().enumerate() {
            acc |= value(*c)? << (18 - 6 * k);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posix(args: &[&str]) -> Invocation {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        parse_posix(&args, false)
    }

    fn cmd(s: &str) -> Invocation {
        Invocation::Command {
            script: OsString::from(s),
        }
    }

    #[test]
    fn posix_command_strings() {
        assert_eq!(posix(&["-c", "ls", "zero", "a"]), cmd("ls"));
        assert_eq!(posix(&["-lc", "ls"]), cmd("ls"));
        assert_eq!(posix(&["-c", "-l", "ls"]), cmd("ls"));
        assert_eq!(posix(&["-o", "pipefail", "-xec", "ls"]), cmd("ls"));
        assert_eq!(posix(&["-eo", "pipefail", "-c", "ls"]), cmd("ls"));
        assert_eq!(posix(&["--norc", "--noprofile", "-c", "ls"]), cmd("ls"));
        assert_eq!(posix(&["--rcfile", "x", "-ic", "ls"]), cmd("ls"));
        assert_eq!(posix(&["+o", "history", "-c", "ls"]), cmd("ls"));
        assert_eq!(
            posix(&["-c", "source /x/snap.sh && eval 'ls'"]),
            cmd("source /x/snap.sh && eval 'ls'")
        );
    }

    #[test]
    fn posix_scripts_stdin_interactive_info() {
        assert_eq!(
            posix(&["script.sh", "a"]),
            Invocation::Script {
                path: "script.sh".into()
            }
        );
        assert_eq!(
            posix(&["--", "-weird.sh"]),
            Invocation::Script {
                path: "-weird.sh".into()
            }
        );
        assert_eq!(posix(&["-s", "a"]), Invocation::Stdin);
        assert_eq!(posix(&[]), Invocation::Stdin);
        assert_eq!(parse_posix(&[], true), Invocation::Interactive);
        assert_eq!(posix(&["-i"]), Invocation::Interactive);
        assert_eq!(posix(&["--version"]), Invocation::Info);
        assert!(matches!(posix(&["-c"]), Invocation::Unknown(_)));
        assert!(matches!(posix(&["-o"]), Invocation::Unknown(_)));
    }

    #[test]
    fn posix_options_as_the_shells_read_them() {
        // -C is noclobber, a flag: `x` is a script file.
        assert_eq!(
            posix(&["-C", "x", "-c", "echo hi"]),
            Invocation::Script { path: "x".into() }
        );
        // -V is a flag (dash: vi mode; zsh: an option; bash refuses it), not --version.
        assert_eq!(posix(&["-V", "-c", "ls"]), cmd("ls"));
        assert_eq!(posix(&["--dump-strings", "-c", "ls"]), cmd("ls"));
        assert_eq!(posix(&["+c", "ls"]), cmd("ls"));
        assert_eq!(posix(&["-co", "pipefail", "ls"]), cmd("ls"));
        assert_eq!(posix(&["--help", "-c", "ls"]), Invocation::Info);
        // bash and zsh disagree: refused rather than guessed.
        for args in [
            &["-O", "extglob", "-c", "ls"][..],
            &["-b", "-c", "ls"],
            &["-onoclobber", "-c", "ls"],
        ] {
            assert!(matches!(posix(args), Invocation::Unknown(_)), "{args:?}");
        }
        let zsh = |args: &[&str]| posix_shell_options(ShellFamily::Zsh, args);
        assert_eq!(zsh(&["-oerrexit", "-c", "ls"]).operand, 2);
        assert_eq!(zsh(&["-O", "x", "-c", "ls"]).operand, 1);
        assert_eq!(zsh(&["-xb", "-c", "ls"]).operand, 1);
        let bourne = |args: &[&str]| posix_shell_options(ShellFamily::Bourne, args);
        assert_eq!(bourne(&["-oe", "pipefail", "-c", "ls"]).operand, 3);
        assert_eq!(bourne(&["-O", "extglob", "-c", "ls"]).operand, 3);
    }

    fn pwsh(args: &[&str]) -> Invocation {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        parse_pwsh(&args, false)
    }

    #[test]
    fn pwsh_parameters() {
        assert_eq!(
            pwsh(&["-NoProfile", "-Command", "Get-ChildItem", "x"]),
            cmd("Get-ChildItem x")
        );
        assert_eq!(pwsh(&["-nop", "-c", "ls"]), cmd("ls"));
        assert_eq!(pwsh(&["-NoLogo", "-Comm", "ls"]), cmd("ls"));
        assert_eq!(pwsh(&["-ExecutionPolicy", "Bypass", "-c", "ls"]), cmd("ls"));
        // "rm x" as UTF-16LE base64.
        assert_eq!(pwsh(&["-EncodedCommand", "cgBtACAAeAA="]), cmd("rm x"));
        assert_eq!(
            pwsh(&["-File", "a.ps1"]),
            Invocation::Script {
                path: "a.ps1".into()
            }
        );
        assert_eq!(
            pwsh(&["a.ps1"]),
            Invocation::Script {
                path: "a.ps1".into()
            }
        );
        assert_eq!(pwsh(&["-c", "-"]), Invocation::Stdin);
        assert_eq!(pwsh(&["-Version"]), Invocation::Info);
        assert!(matches!(pwsh(&["-Bogus"]), Invocation::Unknown(_)));
        assert!(matches!(
            pwsh(&["-EncodedCommand", "!!!"]),
            Invocation::Unknown(_)
        ));
        assert!(
            matches!(pwsh(&["-n"]), Invocation::Unknown(_)),
            "-n is too short for noprofile/nologo"
        );
        assert_eq!(pwsh(&["-cwa", "ls $args", "x"]), cmd("ls $args"));
    }
}
