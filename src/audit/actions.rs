//! What a person (or an agent) does to a session's auto review: turn it on or off, approve a
//! denied line once. `shellgate auto-review` and the panel's buttons both call these, so both
//! append exactly the same events; who may do what is decided here, once.

use crate::audit::event::{
    Actor, CircuitChange, CircuitTransition, EventBody, OneShotApproval, ReviewSwitch,
};
use crate::audit::fold::{DEFAULT_OVERRIDE_TTL_SECS, SessionState};
use crate::audit::{Event, Session};
use crate::error::{Code, Error, Result};

fn actor(person: bool) -> Actor {
    if person { Actor::Person } else { Actor::Agent }
}

/// Turns review on or off and returns the events appended. `person` says whether the caller is a
/// person at a terminal (see [`crate::approval::person_present`]).
///
/// - `off` always appends (recording who turned it off matters: a person's off can only be undone
///   by a person).
/// - `on` after a person's `off` needs a person; `on` when already on appends nothing.
/// - A person's `on` also resets a tripped breaker; an agent's `on` never does.
pub fn switch_review(
    session: &Session,
    state: &SessionState,
    enable: bool,
    person: bool,
) -> Result<Vec<Event>> {
    let by = actor(person);
    let mut written = Vec::new();
    if !enable {
        written.push(session.append(
            None,
            EventBody::AutoReviewState(ReviewSwitch { enabled: false, by }),
        )?);
        return Ok(written);
    }
    if !person && !state.review.enabled && state.review.by == Actor::Person {
        return Err(Error::new(
            Code::TerminalRequired,
            "auto review was turned off by a person; only a person at a terminal can turn it \
             back on (run `shellgate auto-review on` in your own shell)",
        ));
    }
    if person && state.breaker.open {
        let reason = state
            .breaker
            .cause
            .as_ref()
            .map_or("reset".to_string(), |cause| {
                format!("reset after {}", cause.describe())
            });
        written.push(session.append(
            None,
            EventBody::AutoReviewCircuit(CircuitChange {
                transition: CircuitTransition::Reset,
                reason,
                by,
            }),
        )?);
    }
    if !state.review.enabled {
        written.push(session.append(
            None,
            EventBody::AutoReviewState(ReviewSwitch { enabled: true, by }),
        )?);
    }
    Ok(written)
}

/// Records a single-use approval of the `n`-th most recent denial (1 = the latest). A person only.
pub fn approve_denial(
    session: &Session,
    state: &SessionState,
    n: usize,
    person: bool,
) -> Result<Event> {
    if !person {
        return Err(Error::new(
            Code::TerminalRequired,
            "only a person at a terminal can approve a denied command \
             (run `shellgate auto-review approve` in your own shell)",
        ));
    }
    let denial = state.denial(n).ok_or_else(|| {
        Error::usage(format!(
            "there is no denial #{n}: the session has {} recent denial(s)",
            state.denials.len()
        ))
    })?;
    session.append(
        None,
        EventBody::AutoReviewOverride(OneShotApproval {
            target_request: denial.request.clone(),
            program: denial.verdict.program.clone(),
            line: denial.verdict.line.clone(),
            ttl_secs: DEFAULT_OVERRIDE_TTL_SECS,
            by: Actor::Person,
        }),
    )
}
