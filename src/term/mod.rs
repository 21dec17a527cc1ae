//! The person's terminal: whether shellgate may style what it writes, and whether standard error
//! is the terminal a person is looking at.
//!
//! Every piece of styling shellgate writes itself goes through [`styling`], which honours
//! `NO_COLOR` (<https://no-color.org>: set and not empty, no styling) and never styles what is not
//! a terminal. clap styles its own help and errors the same way (through `anstream`: `NO_COLOR`,
//! then whether the stream is a terminal and `TERM` allows it).

pub mod spinner;

use std::io::IsTerminal;
use std::os::fd::{AsFd, AsRawFd};

/// Whether styling (colour, dim, bold) may be written to `stream`: it is a terminal and
/// `NO_COLOR` is unset or empty.
pub fn styling(stream: &impl IsTerminal) -> bool {
    stream.is_terminal() && !no_color()
}

/// `NO_COLOR` is set and not empty.
fn no_color() -> bool {
    crate::env::get().non_empty("NO_COLOR").is_some()
}

/// `text` dimmed when `styled` ([`styling`] decides), else `text` as it is.
pub fn dim(text: &str, styled: bool) -> String {
    if styled {
        format!("\x1b[2m{text}\x1b[22m")
    } else {
        text.to_owned()
    }
}

/// Whether `stream` is a person's terminal that shellgate may draw on right now: a terminal that is
/// this process's controlling terminal (`/dev/tty`, not some other terminal a descriptor was handed
/// over from), whose foreground process group is this process's (a background job drawing there
/// would scribble over the person's work, or be stopped by SIGTTOU), and whose `TERM` can erase a
/// line (not unset, not `dumb`).
pub fn is_persons_terminal(stream: &impl AsFd) -> bool {
    let fd = stream.as_fd().as_raw_fd();
    // SAFETY: isatty, tcgetsid, tcgetpgrp, getsid and getpgrp only read process and descriptor
    // state; an invalid or non-terminal descriptor makes them fail with -1, which never matches.
    let (controlling, foreground_group, own_group) = unsafe {
        (
            libc::isatty(fd) == 1 && libc::tcgetsid(fd) == libc::getsid(0),
            libc::tcgetpgrp(fd),
            libc::getpgrp(),
        )
    };
    controlling && foreground_group == own_group && term_can_erase()
}

/// `TERM` names a terminal that understands the erase-line sequence.
fn term_can_erase() -> bool {
    crate::env::get()
        .non_empty("TERM")
        .is_some_and(|term| term != "dumb")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dim_is_plain_text_without_styling() {
        assert_eq!(dim("reviewing", false), "reviewing");
        assert_eq!(dim("reviewing", true), "\x1b[2mreviewing\x1b[22m");
    }

    #[test]
    fn a_file_is_never_styled_nor_a_persons_terminal() {
        let file = tempfile::tempfile().unwrap();
        assert!(!styling(&file));
        assert!(!is_persons_terminal(&file));
    }
}
