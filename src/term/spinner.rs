//! A spinner with the elapsed time on the person's terminal while something slow runs (the
//! reviewer model thinking): `⠹ reviewing… 1.2s`, redrawn at most ten times a second and erased
//! (carriage return, erase line) before the caller goes on.
//!
//! It draws from a thread of its own, so the work it waits for runs exactly as without it: the
//! review's current-thread tokio runtime, its deadline and its HTTP calls never see it. The thread
//! is stopped and joined before [`while_waiting`] returns, so nothing of it outlives the work (the
//! sandbox that runs the line next may need a single-threaded process) and its last write, the
//! erase, comes before anything the caller prints.
//!
//! It draws only where a person watches: when the caller wants it (never for `--json`, never for
//! a caller's descriptors under `wrap`), standard output and standard error are terminals (not
//! redirected), and standard error is the person's terminal ([`super::is_persons_terminal`]:
//! the controlling terminal, in its foreground, with a `TERM` that can erase a line); the last is
//! checked again before every frame, so a job moved to the background stops drawing.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Time between frames: at most ten updates a second. A wait shorter than this draws nothing.
const TICK: Duration = Duration::from_millis(100);

/// The spinner's frames.
const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Carriage return, then erase the whole line: the cursor is back where the spinner started.
const ERASE: &str = "\r\x1b[2K";

/// Runs `work`, with a spinner labelled `label` on the person's terminal while it runs when
/// `wanted` and the terminal is the person's; the spinner is erased before this returns.
pub fn while_waiting<R>(label: &str, wanted: bool, work: impl FnOnce() -> R) -> R {
    let spinner = (wanted && may_draw()).then(|| Spinner::start(label.to_owned()));
    let result = work();
    drop(spinner);
    result
}

/// Neither standard stream is redirected, and standard error is the person's terminal.
fn may_draw() -> bool {
    std::io::stdout().is_terminal() && super::is_persons_terminal(&std::io::stderr())
}

/// The drawing thread; stopped, and its line erased, when dropped.
struct Spinner {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    fn start(label: String) -> Spinner {
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("spinner".to_owned())
            .spawn(move || draw_until(&stopped, &label))
            .ok();
        Spinner {
            stop: Some(stop),
            thread,
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        // Dropping the sender wakes the thread at once.
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Draws a frame every [`TICK`] until `stopped` says so (or its sender is gone), then erases what
/// it drew.
fn draw_until(stopped: &mpsc::Receiver<()>, label: &str) {
    let started = Instant::now();
    let styled = super::styling(&std::io::stderr());
    let mut drawn = false;
    let mut frame = 0;
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
        if !super::is_persons_terminal(&std::io::stderr()) {
            continue;
        }
        write_stderr(&render(frame, label, started.elapsed(), styled));
        drawn = true;
        frame += 1;
    }
    if drawn && super::is_persons_terminal(&std::io::stderr()) {
        write_stderr(ERASE);
    }
}

/// One frame: back to the start of the line, the frame, the label and the elapsed time, and the
/// rest of the line erased.
fn render(frame: usize, label: &str, elapsed: Duration, styled: bool) -> String {
    let glyph = FRAMES[frame % FRAMES.len()];
    let text = format!("{glyph} {label} {:.1}s", elapsed.as_secs_f64());
    format!("\r{}\x1b[K", super::dim(&text, styled))
}

/// One write of the whole frame (standard error is unbuffered); a failed write is not worth a
/// word: the spinner is decoration.
fn write_stderr(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_shows_the_label_and_the_elapsed_time() {
        let frame = render(2, "reviewing…", Duration::from_millis(1234), false);
        assert_eq!(frame, "\r⠹ reviewing… 1.2s\x1b[K");
        let styled = render(0, "reviewing…", Duration::from_millis(60), true);
        assert_eq!(styled, "\r\x1b[2m⠋ reviewing… 0.1s\x1b[22m\x1b[K");
    }

    #[test]
    fn the_work_s_result_comes_back_whether_or_not_it_is_drawn() {
        assert_eq!(while_waiting("reviewing…", true, || 42), 42);
        assert_eq!(while_waiting("reviewing…", false, || "done"), "done");
    }
}
