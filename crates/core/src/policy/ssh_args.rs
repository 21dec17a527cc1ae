//! The words of an ssh-family command (`ssh`, `scp`, `sftp`, `rsync`), read once: which are its
//! operands, which port the line gives, and whether ssh may connect somewhere the words do not
//! say. What a line is granted ([`super::needs`]) and where an alias in the person's ssh config is
//! resolved ([`super::ssh_config`]) both read this, so the two cannot disagree about which word
//! is the destination.

/// What the words of an ssh-family command say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshArgs<'a> {
    /// The operands, each with its index among the words: ssh's destination (its first operand;
    /// what follows is the remote command), every operand of scp, sftp and rsync.
    pub operands: Vec<(usize, &'a str)>,
    /// The port the line gives with an option (`-p`, `-P` for scp and sftp, `-o Port=N`), when it
    /// is a port number.
    pub port: Option<u16>,
    /// The line gives a port with an option at all (valid or not).
    pub sets_port: bool,
    /// ssh may connect somewhere the words do not say: a jump host or proxy command (`-J`,
    /// `-o ProxyJump=`, `-o ProxyCommand=`), a host name set apart from the destination
    /// (`-o HostName=`), a config file of the line's own (`-F`), rsync's own remote shell (`-e`,
    /// `--rsh`).
    pub elsewhere: bool,
    /// A word read is one the shell expands at run time (`$`, a backquote): what it says cannot
    /// be told.
    pub expanded: bool,
}

/// The options of each program that take a value (the rest of the word, or the next word).
fn value_options(program: &str) -> &'static str {
    match program {
        "scp" => "cDFiJlOoPSX",
        "sftp" => "BbcDFiJlOoPRSs",
        "rsync" => "",
        _ => "BbcDEeFIiJLlmOoPpQRSWw",
    }
}

/// Reads `words` (the arguments after the program's name) of `program`.
pub fn scan<'a>(program: &str, words: &[&'a str]) -> SshArgs<'a> {
    let values = value_options(program);
    let port_flag = if matches!(program, "scp" | "sftp") {
        'P'
    } else {
        'p'
    };
    let mut args = SshArgs {
        operands: Vec::new(),
        port: None,
        sets_port: false,
        elsewhere: false,
        expanded: false,
    };
    let mut i = 0;
    while i < words.len() {
        let word = words[i];
        args.expanded |= expands(word);
        i += 1;
        if program == "rsync" && word.starts_with("--") {
            args.elsewhere |= word == "--rsh" || word.starts_with("--rsh=");
            continue;
        }
        let Some(flags) = word.strip_prefix('-').filter(|f| !f.is_empty()) else {
            args.operands.push((i - 1, word));
            if program == "ssh" {
                break;
            }
            continue;
        };
        if program == "rsync" {
            args.elsewhere |= flags.contains('e');
            continue;
        }
        // A cluster of flags; the first that takes a value takes the rest of the word, or the
        // next word.
        for (at, flag) in flags.char_indices() {
            if !values.contains(flag) {
                continue;
            }
            let glued = &flags[at + flag.len_utf8()..];
            let value = if glued.is_empty() {
                i += 1;
                words.get(i - 1).copied().unwrap_or_default()
            } else {
                glued
            };
            args.expanded |= expands(value);
            let option = (flag == 'o').then(|| option_key_value(value));
            args.elsewhere |= flag == 'J'
                || flag == 'F'
                || option.as_ref().is_some_and(|(key, _)| {
                    ["proxyjump", "proxycommand", "hostname"].contains(&key.as_str())
                });
            let port = if flag == port_flag {
                Some(value)
            } else {
                option.filter(|(key, _)| key == "port").map(|(_, v)| v)
            };
            if let Some(port) = port {
                args.sets_port = true;
                args.port = args
                    .port
                    .or_else(|| port.parse::<u16>().ok().filter(|p| *p != 0));
            }
            break;
        }
    }
    args
}

fn expands(word: &str) -> bool {
    word.contains('$') || word.contains('`')
}

/// `-o`'s value as ssh reads it: `Key=value` or `Key value`, the key in lower case.
fn option_key_value(value: &str) -> (String, &str) {
    let (key, rest) = value.split_once(['=', ' ', '\t']).unwrap_or((value, ""));
    (
        key.trim().to_ascii_lowercase(),
        rest.trim_start_matches(['=', ' ', '\t']).trim(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(program: &str, line: &str) -> SshArgs<'static> {
        let words: Vec<&'static str> = line
            .split_whitespace()
            .map(|w| &*Box::leak(w.to_owned().into_boxed_str()))
            .collect();
        scan(program, &words)
    }

    #[test]
    fn the_destination_is_the_first_operand_and_the_remote_command_is_not_read() {
        let args = read("ssh", "-v -i key -p 2222 dev@box ls -p 3000");
        assert_eq!(args.operands, [(5, "dev@box")]);
        assert_eq!(
            (args.port, args.sets_port, args.elsewhere),
            (Some(2222), true, false)
        );
        // Clustered and glued flags; -o as `Key=value` or `Key value`, any case.
        let args = read("ssh", "-vp2200 box");
        assert_eq!(
            (args.port, args.operands.clone()),
            (Some(2200), vec![(1, "box")])
        );
        let args = read("ssh", "-oPort=2201 box");
        assert_eq!(args.port, Some(2201));
        let args = read("ssh", "-o port=2202 box");
        assert_eq!(args.port, Some(2202));
        let args = read("ssh", "-p nope box");
        assert_eq!((args.port, args.sets_port), (None, true));
    }

    #[test]
    fn a_connection_the_words_do_not_say_is_elsewhere() {
        for line in [
            "-J bastion box",
            "-F cfg box",
            "-o ProxyJump=bastion box",
            "-o ProxyCommand=nc box",
            "-oHostName=other box",
        ] {
            assert!(read("ssh", line).elsewhere, "{line}");
        }
        assert!(read("rsync", "-av -e ssh src/ box:/srv/").elsewhere);
        assert!(read("rsync", "--rsh=ssh src/ box:/srv/").elsewhere);
        assert!(!read("rsync", "-av src/ box:/srv/").elsewhere);
        assert!(read("ssh", "$HOST").expanded);
        assert!(read("ssh", "-p $PORT box").expanded);
        assert!(!read("ssh", "box echo $HOME").expanded);
    }

    #[test]
    fn scp_sftp_and_rsync_have_every_operand() {
        let args = read("scp", "-P 2222 -r a b:/tmp c");
        assert_eq!(args.operands, [(3, "a"), (4, "b:/tmp"), (5, "c")]);
        assert_eq!(args.port, Some(2222));
        // scp's -p keeps times; it is not a port.
        let args = read("scp", "-p a b:/tmp");
        assert_eq!((args.port, args.sets_port), (None, false));
        let args = read("rsync", "-av --delete src/ box:/srv/");
        assert_eq!(args.operands, [(2, "src/"), (3, "box:/srv/")]);
    }
}
