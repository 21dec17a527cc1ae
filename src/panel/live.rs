//! The live stream: server-sent events that tell the page the session changed.
//!
//! The stream does not carry the state; it says "changed", and the page fetches its live part again
//! (one fold, one rendering, one place that escapes). It notices a change by looking at the files
//! the page is drawn from (the session's log, the sessions directory, the saved settings) every
//! [`POLL`]: their length and modification time. Appends never shrink a log and always touch its
//! time, so a new event is seen within one poll.

use bytes::Bytes;
use std::path::{Path, PathBuf};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};
use tokio::time::{Interval, MissedTickBehavior};

/// How often the watched files are looked at. Well under the one second the page promises.
pub const POLL: Duration = Duration::from_millis(200);

/// A comment line every so often keeps idle connections (and proxies, were there any) from
/// deciding the stream is dead.
const KEEPALIVE_POLLS: u32 = 75; // 15 s

/// What is known about one watched file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileMark {
    len: u64,
    modified: Option<SystemTime>,
}

fn mark(path: &Path) -> Option<FileMark> {
    let meta = std::fs::metadata(path).ok()?;
    Some(FileMark {
        len: meta.len(),
        modified: meta.modified().ok(),
    })
}

/// The stream of one page.
pub struct EventStream {
    watched: Vec<PathBuf>,
    marks: Vec<Option<FileMark>>,
    interval: Interval,
    /// Sends so far: the `id:` of each change (0 is the greeting).
    changes: u64,
    quiet_polls: u32,
    greeted: bool,
}

impl EventStream {
    /// A stream over `watched` files.
    pub fn new(watched: Vec<PathBuf>) -> EventStream {
        let marks = watched.iter().map(|path| mark(path)).collect();
        let mut interval = tokio::time::interval(POLL);
        interval.set_missed_tick_behavior(MissedTickBehavior::Delay);
        EventStream {
            watched,
            marks,
            interval,
            changes: 0,
            quiet_polls: 0,
            greeted: false,
        }
    }

    /// The next chunk of the stream; never ends (the client closing the connection ends it).
    pub fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Bytes> {
        if !self.greeted {
            self.greeted = true;
            // `retry`: how soon the browser reconnects after a drop. The greeting tells the page
            // the stream is up (and to redraw, in case something changed while it connected).
            return Poll::Ready(Bytes::from_static(
                b"retry: 1000\nid: 0\nevent: ready\ndata: connected\n\n",
            ));
        }
        loop {
            if self.interval.poll_tick(cx).is_pending() {
                return Poll::Pending;
            }
            let marks: Vec<Option<FileMark>> = self.watched.iter().map(|path| mark(path)).collect();
            if marks != self.marks {
                self.marks = marks;
                self.changes += 1;
                self.quiet_polls = 0;
                return Poll::Ready(Bytes::from(format!(
                    "id: {0}\nevent: change\ndata: {0}\n\n",
                    self.changes
                )));
            }
            self.quiet_polls += 1;
            if self.quiet_polls >= KEEPALIVE_POLLS {
                self.quiet_polls = 0;
                return Poll::Ready(Bytes::from_static(b": keepalive\n\n"));
            }
        }
    }
}
