//! The audit log and the state replayed from it.
//!
//! - [`paths`]: where state lives (`$XDG_STATE_HOME/shellgate`), session and request ids.
//! - [`event`]: the typed events, one JSON line each.
//! - [`describe`]: an event as one readable line (`log`, `auto-review`, the panel).
//! - [`log`]: appending (the one seam, [`Session::append`]), reading, verifying the hash chain.
//! - [`fold`]: the session state as a pure fold over the events.
//! - [`actions`]: turning auto review on or off, approving a denial once (CLI and panel).
//! - [`settings`]: what a person saves across sessions, written atomically.

pub mod actions;
pub mod describe;
pub mod event;
pub mod fold;
mod lock;
pub mod log;
pub mod memo;
pub mod paths;
pub mod settings;

pub use event::{Event, EventBody};
pub use fold::{FoldParams, SessionState, fold};
pub use log::{LogContents, Session};
pub use paths::{RequestId, SessionId, StatePaths};
