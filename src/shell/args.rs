//! How a shell would interpret its own command-line arguments, for the shell entry point `wrap`
//! puts in front of the real shells (`/bin/bash -c '…'` started by an agent by absolute path).
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

/// Parse the arguments (without argv\[0\]) of bash, zsh, sh or another POSIX shell.
pub fn parse_posix(args: &[OsString], stdin_is_tty: bool) -> Invocation {
    const VALUE_OPTIONS: [&[u8]; 8] = [
        b"-o",
        b"+o",
        b"-O",
        b"+O",
        b"--rcfile",
        b"--init-file",
        b"--emulate",
        b"-C",
    ];
    const INFO: [&[u8]; 4] = [b"--version", b"--help", b"-V", b"--dump-strings"];
    let mut i = 0;
    let mut command = false;
    let mut from_stdin = false;
    let mut interactive = false;
    while i < args.len() {
        let a = args[i].as_bytes();
        if a == b"--" || a == b"-" || a == b"-b" {
            i += 1;
            break;
        }
        if INFO.contains(&a) {
            return Invocation::Info;
        }
        if VALUE_OPTIONS.contains(&a) {
            if i + 1 >= args.len() {
                return Invocation::Unknown(format!(
                    "option {} has no value",
                    String::from_utf8_lossy(a)
                ));
            }
            i += 2;
            continue;
        }
        if a.starts_with(b"--") {
            i += 1;
            continue;
        }
        if (a.starts_with(b"-") || a.starts_with(b"+")) && a.len() > 1 {
            let letters = &a[1..];
            let dash = a[0] == b'-';
            command |= dash && letters.contains(&b'c');
            from_stdin |= dash && letters.contains(&b's');
            interactive |= dash && letters.contains(&b'i');
            // `-o NAME` may also be clustered last: `-eo pipefail`.
            let takes_value = letters.last().is_some_and(|l| *l == b'o' || *l == b'O');
            i += if takes_value && letters.len() > 1 {
                2
            } else {
                1
            };
            continue;
        }
        break;
    }
    if command {
        return match args.get(i) {
            Some(script) => Invocation::Command {
                script: script.clone(),
            },
            None => Invocation::Unknown("-c was given without a command string".to_owned()),
        };
    }
    if from_stdin {
        return Invocation::Stdin;
    }
    match args.get(i) {
        Some(path) => Invocation::Script { path: path.clone() },
        None if interactive || stdin_is_tty => Invocation::Interactive,
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
