//! Programs that run a small program of their own: `sed`, `awk` and `jq`. They are known to be
//! read-only only when that program is given on the line and can be read to contain nothing that
//! writes a file or runs a command.
//!
//! sed scripts are parsed command by command (GNU sed 4.9 syntax); only addresses and the
//! commands that edit the stream (`p`, `d`, `s///` without the `w` and `e` flags, `y`, `n`, `N`,
//! labels and branches, `a`/`i`/`c` text, …) are accepted: `w`/`W` write files, `e` and `s///e`
//! run commands, `r`/`R` read other files. Anything not understood is refused. awk programs are
//! not parsed: they are refused when they hold anything that can start a command or write a
//! file — `system`, `|`, `>` (a redirection or a comparison: both refused), `getline`, `close`,
//! `@` (gawk's `@load`, `@include` and indirect calls). jq cannot write files or run commands; only
//! `-f`/`--from-file` (a program from a file) is refused.

use super::options::{Arg, Operands, Refusal, Spec, Style, scan};

const SED: Spec = Spec {
    flags: "Enrsuz",
    values: "el",
    optional: "",
    long: &[
        "debug",
        "expression=",
        "follow-symlinks",
        "help",
        "line-length=",
        "null-data",
        "posix",
        "quiet",
        "regexp-extended",
        "sandbox",
        "separate",
        "silent",
        "unbuffered",
        "version",
        "zero-terminated",
    ],
    long_unsafe: &["in-place", "file"],
    operands: Operands::Any,
    style: Style::Gnu,
    numbers: false,
};

/// `sed [options] SCRIPT [FILE…]` or `sed -e SCRIPT… [FILE…]`, without `-i` or `-f`.
pub fn sed(args: &[Arg]) -> Result<(), Refusal> {
    let found = scan(&SED, args)?;
    if found.has("help") || found.has("version") {
        return Ok(());
    }
    let scripts: Vec<&str> = found
        .options
        .iter()
        .filter(|(name, _)| matches!(*name, "e" | "expression"))
        .filter_map(|(_, value)| *value)
        .collect();
    let scripts = if scripts.is_empty() {
        match found.operands.first() {
            Some(script) => vec![*script],
            None => return Err(Refusal("`sed` without a script".to_owned())),
        }
    } else {
        scripts
    };
    for script in scripts {
        sed_script(script)?;
    }
    Ok(())
}

/// Check one sed script: every command must only edit the stream.
fn sed_script(script: &str) -> Result<(), Refusal> {
    let chars: Vec<char> = script.chars().collect();
    let mut p = SedParser { chars, at: 0 };
    p.script()
}

struct SedParser {
    chars: Vec<char>,
    at: usize,
}

fn refuse(why: impl Into<String>) -> Refusal {
    Refusal(format!("the sed script {}", why.into()))
}

impl SedParser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.at += usize::from(c.is_some());
        c
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.at += 1;
        }
    }

    fn script(&mut self) -> Result<(), Refusal> {
        loop {
            while matches!(self.peek(), Some(' ' | '\t' | '\n' | ';')) {
                self.at += 1;
            }
            let Some(c) = self.peek() else {
                return Ok(());
            };
            if c == '#' {
                self.skip_line();
                continue;
            }
            if c == '}' {
                self.at += 1;
                continue;
            }
            self.address_range()?;
            self.skip_blanks();
            while self.peek() == Some('!') {
                self.at += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            if c == '\n' {
                break;
            }
        }
    }

    fn address_range(&mut self) -> Result<(), Refusal> {
        if !self.address()? {
            return Ok(());
        }
        self.skip_blanks();
        if self.peek() == Some(',') {
            self.at += 1;
            self.skip_blanks();
            if matches!(self.peek(), Some('+' | '~')) {
                self.at += 1;
            }
            if !self.address()? {
                return Err(refuse("has an address range without its end"));
            }
        }
        Ok(())
    }

    /// One address: `N`, `N~S`, `$`, `/re/`, `\cREc` (with `I`/`M` flags). Returns whether one
    /// was there.
    fn address(&mut self) -> Result<bool, Refusal> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                if self.peek() == Some('~') {
                    self.at += 1;
                    self.digits();
                }
                Ok(true)
            }
            Some('$') => {
                self.at += 1;
                Ok(true)
            }
            Some('/') => {
                self.at += 1;
                self.delimited('/')?;
                self.address_flags();
                Ok(true)
            }
            Some('\\') => {
                self.at += 1;
                let delimiter = self
                    .next()
                    .ok_or_else(|| refuse("ends inside an address"))?;
                if delimiter == '\n' || delimiter == '\\' {
                    return Err(refuse("has an address delimiter sed may read otherwise"));
                }
                self.delimited(delimiter)?;
                self.address_flags();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    fn address_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.at += 1;
        }
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
    }

    /// Text up to an unescaped `delimiter` (consumed), as GNU sed's `match_slash` reads it: a
    /// backslash quotes the next character; a bracket expression is not special.
    fn delimited(&mut self, delimiter: char) -> Result<(), Refusal> {
        while let Some(c) = self.next() {
            if c == '\\' {
                if self.next().is_none() {
                    break;
                }
            } else if c == delimiter {
                return Ok(());
            } else if c == '\n' && delimiter != '\n' {
                return Err(refuse("has a newline inside a regular expression"));
            }
        }
        Err(refuse(
            "has an unterminated regular expression or replacement",
        ))
    }

    fn command(&mut self) -> Result<(), Refusal> {
        let Some(c) = self.next() else {
            return Err(refuse("ends after an address"));
        };
        match c {
            '{' => Ok(()),
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z' | 'F' => {
                self.end_of_command()
            }
            'l' | 'q' | 'Q' | 'L' => {
                self.skip_blanks();
                self.digits();
                self.end_of_command()
            }
            ':' => {
                self.skip_blanks();
                self.label(true)
            }
            'b' | 't' | 'T' => {
                self.skip_blanks();
                self.label(false)
            }
            'a' | 'i' | 'c' => {
                self.text_argument();
                Ok(())
            }
            's' => self.substitute(),
            'y' => {
                let delimiter = self.next().ok_or_else(|| refuse("ends inside `y`"))?;
                if delimiter == '\\' || delimiter == '\n' {
                    return Err(refuse("has a `y` delimiter sed may read otherwise"));
                }
                self.delimited(delimiter)?;
                self.delimited(delimiter)?;
                self.end_of_command()
            }
            'w' | 'W' => Err(refuse("writes a file (`w`)")),
            'e' => Err(refuse("runs a command (`e`)")),
            'r' | 'R' => Err(refuse("reads another file (`r`)")),
            other => Err(refuse(format!(
                "has a command `{other}` not known to only edit"
            ))),
        }
    }

    /// After a command: blanks, then `;`, a newline, `}`, `#` or the end.
    fn end_of_command(&mut self) -> Result<(), Refusal> {
        self.skip_blanks();
        match self.peek() {
            None | Some(';' | '\n' | '}' | '#') => Ok(()),
            Some(other) => Err(refuse(format!("has `{other}` where a command ends"))),
        }
    }

    /// A label: letters, digits, `_`, `.` and `-`, up to `;`, a newline or the end.
    fn label(&mut self, required: bool) -> Result<(), Refusal> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        {
            self.at += 1;
        }
        if required && self.at == start {
            return Err(refuse("has a label without a name"));
        }
        self.end_of_command()
    }

    /// `a text`, `a\` + newline + text (lines ending in `\` continue): only written to output.
    fn text_argument(&mut self) {
        while let Some(c) = self.next() {
            match c {
                '\\' => {
                    self.next();
                }
                '\n' => break,
                _ => {}
            }
        }
    }

    /// `s/re/replacement/flags`: flags `g`, `p`, `i`, `I`, `m`, `M` and a number only.
    fn substitute(&mut self) -> Result<(), Refusal> {
        let delimiter = self.next().ok_or_else(|| refuse("ends inside `s`"))?;
        if delimiter == '\\' || delimiter == '\n' {
            return Err(refuse("has an `s` delimiter sed may read otherwise"));
        }
        self.delimited(delimiter)?;
        self.delimited(delimiter)?;
        while let Some(flag) = self.peek() {
            match flag {
                'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => self.at += 1,
                'w' | 'W' => return Err(refuse("writes a file (`s///w`)")),
                'e' => return Err(refuse("runs the pattern space as a command (`s///e`)")),
                _ => break,
            }
        }
        self.end_of_command()
    }
}

/// The awk options known only to read: `-F FS`, `-v VAR=VALUE`, `--` (and gawk's long forms and
/// `--sandbox`, which turns off `system()`, redirections and `getline` from commands).
const AWK: Spec = Spec {
    flags: "",
    values: "Fv",
    optional: "",
    long: &["assign=", "field-separator=", "sandbox", "help", "version"],
    long_unsafe: &[],
    operands: Operands::Any,
    style: Style::Posix,
    numbers: false,
};

/// What an awk program may not hold (see the module documentation).
const AWK_REFUSED: [&str; 7] = ["system", "|", ">", "getline", "close", "@", "fflush"];

/// `awk [-F FS] [-v VAR=VALUE] 'PROGRAM' [FILE…]`.
pub fn awk(args: &[Arg]) -> Result<(), Refusal> {
    let found = scan(&AWK, args)?;
    if found.has("help") || found.has("version") {
        return Ok(());
    }
    let Some(program) = found.operands.first() else {
        return Err(Refusal("`awk` without a program".to_owned()));
    };
    match AWK_REFUSED.iter().find(|token| program.contains(*token)) {
        Some(token) => Err(Refusal(format!(
            "the awk program holds `{token}`, which can write a file or run a command"
        ))),
        None => Ok(()),
    }
}

/// jq 1.6/1.7 (its own parser: short flags cluster, long options by full name, `--arg NAME VALUE`
/// and friends take two words).
pub fn jq(args: &[Arg]) -> Result<(), Refusal> {
    const FLAGS: &str = "aCceMjnRrSsh";
    const LONG_FLAGS: [&str; 25] = [
        "--args",
        "--ascii-output",
        "--color-output",
        "--compact-output",
        "--exit-status",
        "--help",
        "--join-output",
        "--jsonargs",
        "--monochrome-output",
        "--null-input",
        "--raw-input",
        "--raw-output",
        "--raw-output0",
        "--seq",
        "--slurp",
        "--sort-keys",
        "--stream",
        "--stream-errors",
        "--tab",
        "--unbuffered",
        "--version",
        "--build-configuration",
        "--binary",
        "--debug-trace",
        "--debug-dump-disasm",
    ];
    const TWO_VALUES: [&str; 5] = [
        "--arg",
        "--argjson",
        "--slurpfile",
        "--rawfile",
        "--argfile",
    ];
    let mut i = 0;
    let mut positional_only = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        if positional_only {
            continue;
        }
        if arg.shape.multi || arg.shape.start_unknown {
            return Err(Refusal(format!(
                "`{}` is only known at run time and could be an option",
                arg.text
            )));
        }
        let text = arg.text;
        if text == "--" {
            positional_only = true;
        } else if TWO_VALUES.contains(&text) {
            i += 2;
        } else if text == "--indent" || text == "-L" || text == "--library-path" {
            i += 1;
        } else if text.starts_with("-L") || LONG_FLAGS.contains(&text) {
            // `-Ldir`, and the flags.
        } else if text.starts_with("--") {
            return Err(Refusal(format!("jq's `{text}` is not known to only read")));
        } else if let Some(cluster) = text.strip_prefix('-').filter(|c| !c.is_empty())
            && let Some(c) = cluster.chars().find(|c| !FLAGS.contains(*c))
        {
            return Err(Refusal(format!(
                "jq's `-{c}` is not known to only read (`-f` reads the program from a file)"
            )));
        }
    }
    if i > args.len() {
        return Err(Refusal("a jq option is missing its value".to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::ArgShape;

    fn args(words: &[&'static str]) -> Vec<Arg<'static>> {
        words
            .iter()
            .map(|text| Arg {
                text,
                shape: ArgShape::default(),
            })
            .collect()
    }

    #[test]
    fn sed_scripts_that_only_edit() {
        for words in [
            &["-n", "1,40p", "f"][..],
            &["-n", "/start/,/end/p", "f"][..],
            &["s/a/b/g", "f"][..],
            &["-e", "s/a/b/", "-e", "/x/d", "f"][..],
            &["-E", "s|a(b)|\\1|2", "f"][..],
            &["$!N;s/\\n/ /;P;D", "f"][..],
            &[":a;N;$!ba;s/\\n/,/g", "f"][..],
            &["-n", "$=", "f"][..],
            &["10q", "f"][..],
            &["1~2d", "f"][..],
            &["/x/{p;d}", "f"][..],
            &["y/abc/xyz/", "f"][..],
            &["1i\\\nheader", "f"][..],
            &["0,/re/s//X/", "f"][..],
            &["--sandbox", "s/a/b/", "f"][..],
            &["--version"][..],
        ] {
            assert!(sed(&args(words)).is_ok(), "{words:?}");
        }
    }

    #[test]
    fn sed_scripts_that_write_or_run() {
        for words in [
            &["-i", "s/a/b/", "f"][..],
            &["-i.bak", "s/a/b/", "f"][..],
            &["-ni", "p", "f"][..],
            &["--in-place", "s/a/b/", "f"][..],
            &["--in-pl", "s/a/b/", "f"][..],
            &["-f", "script.sed", "f"][..],
            &["w out", "f"][..],
            &["s/a/b/w out", "f"][..],
            &["s/a/b/gw out", "f"][..],
            &["s/.*/id/e", "f"][..],
            &["e id", "f"][..],
            &["1e id", "f"][..],
            &["/x/w out", "f"][..],
            &["r /etc/shadow", "f"][..],
            &["-e", "p", "-e", "W out", "f"][..],
            &["s/a/b", "f"][..],
            &["s\\a\\b\\", "f"][..],
            &["f", "-i", "p"][..],
            // GNU sed ends the regex at the `/` inside the brackets: `x/` are then flags.
            &["s/[/]/x/", "f"][..],
            &[][..],
        ] {
            assert!(sed(&args(words)).is_err(), "{words:?}");
        }
    }

    #[test]
    fn awk_programs() {
        assert!(awk(&args(&["{print $1}", "f"])).is_ok());
        assert!(awk(&args(&["-F:", "{print $1}", "/etc/passwd"])).is_ok());
        assert!(awk(&args(&["-v", "n=3", "NR<=n", "f"])).is_ok());
        for program in [
            "{system(\"id\")}",
            "{print | \"sh\"}",
            "{print > \"out\"}",
            "{\"date\" | getline d}",
            "BEGIN{getline x < \"/etc/shadow\"}",
            "@load \"x\"",
            "{close(\"x\")}",
        ] {
            let words = [program, "f"];
            let list: Vec<Arg> = words
                .iter()
                .map(|text| Arg {
                    text,
                    shape: ArgShape::default(),
                })
                .collect();
            assert!(awk(&list).is_err(), "{program}");
        }
        assert!(awk(&args(&["-f", "prog.awk", "f"])).is_err());
        assert!(awk(&args(&["-E", "prog.awk"])).is_err());
        assert!(awk(&args(&["--exec=prog.awk"])).is_err());
    }

    #[test]
    fn jq_options() {
        for words in [
            &[".", "f.json"][..],
            &["-r", ".a", "f.json"][..],
            &["-rc", ".[]", "f.json"][..],
            &["--arg", "x", "1", ".a == $x", "f.json"][..],
            &["-n", "--argjson", "v", "{}", "$v"][..],
            &["--indent", "4", "."][..],
            &["--version"][..],
        ] {
            assert!(jq(&args(words)).is_ok(), "{words:?}");
        }
        for words in [
            &["-f", "prog.jq", "f.json"][..],
            &["--from-file", "prog.jq"][..],
            &["-rf", "prog.jq"][..],
            &["--arg", "x"][..],
            &["--nope", "."][..],
        ] {
            assert!(jq(&args(words)).is_err(), "{words:?}");
        }
    }
}
