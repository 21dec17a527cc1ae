//! How a refusal reaches its reader: the one error type is the core's ([`shellgate_core::error`],
//! re-exported here whole), and this is the one place it is printed — in the form its reader
//! needs, settled on this process's terminals.

pub use shellgate_core::error::*;

/// Who reads a refusal, and so which of its forms is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// An agent or a script (`run`, the non-interactive doors): the [`refusal_block`], with its
    /// instruction not to route around the refusal.
    Agent,
    /// An agent that asked for JSON (`run --json`, `SHELLGATE_JSON=1`): [`refusal_json`] on one
    /// line.
    AgentJson,
    /// A person at an interactive prompt (the hooks): the [`person_message`].
    Person,
    /// Whoever runs `shellgate sandbox` (`wrap`'s launcher, a script): the marker and the error
    /// on one line, no instruction (it refuses a program, not an agent's line).
    OneLine,
    /// Whoever runs one of shellgate's own commands: a person when standard input and error are
    /// both terminals, anyone else (an agent, a script, a log) an agent.
    Whoever,
}

impl Reader {
    /// [`Reader::Whoever`] settled on the terminals of this process; the others as they are.
    fn settled(self) -> Reader {
        use std::io::IsTerminal;
        match self {
            Reader::Whoever
                if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() =>
            {
                Reader::Person
            }
            Reader::Whoever => Reader::Agent,
            other => other,
        }
    }
}

/// The refusal's text for `reader`, exactly as it is printed on standard error.
pub fn refusal_text(err: &Error, reader: Reader) -> String {
    match reader.settled() {
        Reader::AgentJson => format!("{}\n", refusal_json(err.code, &err.reason)),
        Reader::Person => person_message(err.code, &err.reason),
        Reader::OneLine => format!("{} {err}\n", err.code.marker()),
        Reader::Agent | Reader::Whoever => refusal_block(err.code, &err.reason),
    }
}

/// The one place a refusal is printed: its form for `reader` on standard error. Returns the exit
/// status of its code, which the caller exits with.
pub fn print_refusal(err: &Error, reader: Reader) -> u8 {
    eprint!("{}", refusal_text(err, reader));
    err.code.exit_status()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_reader_gets_its_form_of_the_refusal() {
        let err = Error::new(Code::NeverPolicy, "no");
        assert_eq!(
            refusal_text(&err, Reader::Agent),
            refusal_block(err.code, "no")
        );
        assert_eq!(
            refusal_text(&err, Reader::Person),
            person_message(err.code, "no")
        );
        assert_eq!(
            refusal_text(&err, Reader::OneLine),
            "[auto-review-never] NEVER_POLICY: no\n"
        );
        let json = refusal_text(&err, Reader::AgentJson);
        assert_eq!(json.matches('\n').count(), 1, "{json}");
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["code"], "NEVER_POLICY");
        assert_eq!(value["instruction"], DO_NOT_WORK_AROUND);
    }
}
