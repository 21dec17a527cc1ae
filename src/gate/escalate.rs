//! After a sandboxed line ran: a failure the sandbox explains (it refused the line something) is
//! escalated — the missing grant named, and whoever approves lines in this mode offered to run
//! it again, once, with exactly that grant — never a silent retry.

use super::*;

/// Run the line with its real shell, in the sandbox of its grant (none for confirmed Full
/// access). A line that fails where the sandbox refused it something is escalated (see
/// [`escalate`]).
pub(super) fn execute(run: &Decided, grant: &Grant) -> Outcome {
    match spawn_and_wait(run, grant) {
        Ok(mut ran) => {
            forget_cache_creation(&mut ran.denials, &run.decision.on_demand);
            let probed = ran
                .denials
                .iter()
                .any(|d| matches!(d, crate::sandbox::Denial::Udp));
            if probed && !super::exec::direct_hosts(grant, &run.decision.commands).is_empty() {
                forget_address_probes(&mut ran.denials);
            }
            if ran.status.success() || ran.denials.is_empty() {
                Outcome::Ran {
                    status: ran.status,
                    pipeline: ran.pipeline,
                }
            } else {
                escalate(run, grant, &ran)
            }
        }
        Err(e) => Outcome::Refused(e),
    }
}

/// Drops the refused UDP sockets of a line granted hosts it reaches directly (ssh's, see
/// `sandbox::direct`): their names resolve from the line's own hosts file, without DNS by design,
/// and what remains is glibc probing the machine's addresses (`AI_ADDRCONFIG`: a UDP socket once
/// its netlink socket is refused), which explains no failure — ssh failing to log in keeps its
/// own status — and is no need for the network.
fn forget_address_probes(denials: &mut Vec<crate::sandbox::Denial>) {
    denials.retain(|d| !matches!(d, crate::sandbox::Denial::Udp));
}

/// Drops the refused creation of a cache directory that a fetch on demand fills: npm makes its
/// cache on every run and goes on without it (the lines' caches are made before the line, so
/// this remains for a cache that is not one of them), so it explains no failure (`npx tsc` finding
/// type errors keeps its own status) and is no sign of a fetch; a write *inside* the cache is
/// both, and stays.
pub(super) fn forget_cache_creation(denials: &mut Vec<crate::sandbox::Denial>, on_demand: &Needs) {
    let is_cache = |path: &Path| {
        on_demand
            .writable
            .iter()
            .any(|dir| crate::paths::is_cache(dir, path))
    };
    denials.retain(|d| {
        !matches!(d, crate::sandbox::Denial::Write { path, operation }
            if *operation == crate::sandbox::CREATING_A_DIRECTORY && is_cache(path))
    });
}

/// A line failed where the sandbox refused it something: say so, with the grant that would have
/// allowed it, and offer whoever approves lines in this mode (a person, or the reviewer in `auto`)
/// to run it again, once, with exactly that grant. Without one, the refusal (`SANDBOX_DENIED`,
/// with the missing grant) is the agent's to act on. Never a silent retry.
pub(super) fn escalate(run: &Decided, grant: &Grant, ran: &Ran) -> Outcome {
    let Decided {
        ctx,
        req,
        decision,
        request,
        line,
        ..
    } = *run;
    let what: Vec<String> = ran.denials.iter().map(|d| d.describe()).collect();
    let missing = missing_grant(&ran.denials, &decision.on_demand);
    let widened = missing.as_ref().map(|m| grant.with_needs(m));
    let denied = SandboxDenied {
        refused: what.clone(),
        missing: missing.clone(),
        exit_code: ran.status.code(),
    };
    if let Err(e) = record(ctx, request, EventBody::SandboxDenied(denied)) {
        return Outcome::Refused(e);
    }
    let status_text = match ran.status.code() {
        Some(code) => format!("exited {code}"),
        None => "was killed".to_owned(),
    };
    let Some(widened) = widened.filter(|w| w != grant) else {
        let refusal = Error::new(
            Code::SandboxDenied,
            format!(
                "the line {status_text} after the sandbox refused {}, which no sandboxed line can \
                 be granted (the network and directories beneath your home can be); a person can \
                 run it in their own shell outside the sandbox",
                what.join(", ")
            ),
        );
        return outside_once(run, &status_text, &what, refusal);
    };
    let extra = widened
        .extra_over(grant)
        .unwrap_or_else(|| widened.to_string());
    let missing_json = serde_json::to_string(&missing).unwrap_or_default();
    let refusal = Error::new(
        Code::SandboxDenied,
        format!(
            "the line {status_text} after the sandbox refused {}; it would need {extra} \
             (missing grant: {missing_json})",
            what.join(", ")
        ),
    );
    let why = format!(
        "the line {status_text} after the sandbox refused {}; run it again, once, with {extra}?",
        what.join(", ")
    );
    let approved = match ctx.resolved.approval {
        ApprovalPolicy::None => return Outcome::Refused(refusal),
        ApprovalPolicy::Auto => {
            let mut again = decision.clone();
            again.grant = widened.clone();
            again.reason = format!("{} (escalation: {why})", decision.reason);
            review_line(ctx, req, &again, line, request)
        }
        ApprovalPolicy::Ask | ApprovalPolicy::Untrusted => {
            ask_person(ctx, decision, &widened, line, &why)
                .map(|()| (Decider::Person, widened.clone()))
        }
    };
    let (decider, granted) = match approved {
        Ok((decider, granted)) => (decider, granted.allowed_by(decider == Decider::Person)),
        Err(e) => {
            // The refusal goes on record like every other decision; a log that cannot take it
            // is the failure the agent is told about (the line had failed already).
            if let Err(logged) = record(
                ctx,
                request,
                decided(LoggedDecision::Deny, decider_of(&e), &e.code, &e.reason),
            ) {
                return Outcome::Refused(Error::new(
                    logged.code,
                    format!("{}; the line had failed: {}", logged.reason, refusal.reason),
                ));
            }
            // Nobody to ask, or nobody said yes: the sandbox's refusal is what the agent gets.
            return match e.code {
                Code::ApprovalUnavailable | Code::ReviewerUnconfigured => Outcome::Refused(refusal),
                _ => Outcome::Refused(Error::new(
                    e.code,
                    format!("{}; the line had failed: {}", e.reason, refusal.reason),
                )),
            };
        }
    };
    if let Err(e) = record(
        ctx,
        request,
        decided(
            LoggedDecision::Allow,
            decider,
            &Code::Allowed,
            &format!("run again, once, with {granted}"),
        ),
    ) {
        return Outcome::Refused(e);
    }
    match spawn_and_wait(run, &granted) {
        Ok(again) => Outcome::Ran {
            status: again.status,
            pipeline: again.pipeline,
        },
        Err(e) => Outcome::Refused(e),
    }
}

/// What no sandboxed line can be granted (a file in the home itself, a shell startup file,
/// `.git/config`, a hidden store): in a person's own hooked shell, where a person approves lines,
/// the question is whether this one line, typed there, runs again once **outside** the sandbox —
/// in that shell, as typed, the answer no by default; a yes then works. Any other door (an
/// agent's, `run`) gets the sandbox's refusal: a line there runs with its caller's environment,
/// which the question would not show.
#[allow(clippy::too_many_arguments)]
pub(super) fn outside_once(
    run: &Decided,
    status_text: &str,
    what: &[String],
    refusal: Error,
) -> Outcome {
    let Decided {
        ctx,
        req,
        decision,
        request,
        line,
        ..
    } = *run;
    let person_approves = matches!(
        ctx.resolved.approval,
        ApprovalPolicy::Ask | ApprovalPolicy::Untrusted
    );
    if req.origin != Origin::Hook || !person_approves {
        return Outcome::Refused(refusal);
    }
    // Never offered for a line whose program a sandboxed line could have written (see
    // `outside`): the refusal says why instead.
    if let Some(planted) = super::outside::planted_program(ctx, req, &decision.commands) {
        return Outcome::Refused(Error::new(
            refusal.code,
            format!("{}; {}", refusal.reason, planted.reason()),
        ));
    }
    let why = format!(
        "the line {status_text} after the sandbox refused {}, which no sandboxed line can be \
         granted; run it again, once, outside the sandbox, in this shell as typed?",
        what.join(", ")
    );
    let outside = Grant::base(SandboxPolicy::FullAccess, true);
    if let Err(e) = ask_person(ctx, decision, &outside, line, &why) {
        if let Err(logged) = record(
            ctx,
            request,
            decided(LoggedDecision::Deny, decider_of(&e), &e.code, &e.reason),
        ) {
            return Outcome::Refused(logged);
        }
        // Declined (or nobody answered): what the person is left with is the sandbox's refusal
        // of the line that ran, not a refusal to run it.
        return Outcome::Refused(refusal);
    }
    if let Err(e) = super::outside::still_unplanted(ctx, req, decision, request) {
        return Outcome::Refused(e);
    }
    match record(
        ctx,
        request,
        decided(
            LoggedDecision::Allow,
            Decider::Person,
            &Code::Allowed,
            "run again, once, outside the sandbox; it runs in the shell as typed",
        ),
    ) {
        Ok(()) => Outcome::RunInShell { once_outside: true },
        Err(e) => Outcome::Refused(e),
    }
}

/// The grant that would have given the line what the sandbox refused: the ports it connected to
/// (the whole network for what has no port: a UDP socket, an unreadable address), the ports it
/// listened on (loopback), the directories it wrote to where a grant can reach. A line whose
/// builds fetch on demand (`on_demand`, see [`policy::needs::on_demand`]) and that was refused
/// a connection, a name lookup or a write into a cache such a fetch fills gets that fetch's grant
/// instead of the whole network for its lookup. `None` when none of it can be granted.
pub(super) fn missing_grant(
    denials: &[crate::sandbox::Denial],
    on_demand: &Needs,
) -> Option<Needs> {
    use crate::sandbox::Denial;
    let mut needs = Needs::default();
    let in_a_cache = |path: &Path| {
        on_demand
            .writable
            .iter()
            .any(|dir| crate::paths::in_cache(dir, path))
    };
    let fetched = !on_demand.is_empty()
        && denials.iter().any(|d| match d {
            Denial::Connect { .. }
            | Denial::Direct { .. }
            | Denial::Host { .. }
            | Denial::ConnectElsewhere
            | Denial::Udp => true,
            Denial::Write { path, .. } => in_a_cache(path),
            Denial::Listen { .. }
            | Denial::UnixSocket { .. }
            | Denial::SecondName { .. }
            | Denial::OpenerFailed { .. } => false,
        });
    if fetched {
        needs.add(on_demand);
    }
    // A server looking up its own address (`getaddrinfo` for a listening socket) makes UDP
    // sockets only to sort the answers (glibc's RFC 3484 ordering connects one per address and
    // sends nothing): beside a refused listener, a UDP socket is not a need for the network.
    let serves = denials.iter().any(|d| matches!(d, Denial::Listen { .. }));
    for denial in denials {
        match denial {
            // A port on any host: what a line without named hosts was refused.
            Denial::Connect { address } => {
                needs.network = needs.network.union(&Network::tcp([address.port()]));
            }
            // Straight past the proxy: exactly that address (held by address, as ssh's hosts
            // are), not its port on every host.
            Denial::Direct { address } => {
                let endpoint = crate::policy::endpoint::Endpoint::named(
                    &address.ip().to_string(),
                    address.port(),
                );
                needs.network = needs.network.union(&match endpoint {
                    Some(endpoint) => Network::to([endpoint]),
                    None => Network::tcp([address.port()]),
                });
            }
            // A host the proxy refused: exactly that host and port.
            Denial::Host { host, port } => {
                // (A TLS hello without a readable name is no host a grant could name.)
                if let Some(endpoint) = crate::policy::endpoint::Endpoint::named(host, *port) {
                    needs.network = needs.network.union(&Network::to([endpoint]));
                }
            }
            Denial::Udp if serves => {}
            // The fetch's grant has its ports, and name lookups over TCP with them.
            Denial::ConnectElsewhere | Denial::Udp if fetched => {}
            Denial::ConnectElsewhere | Denial::Udp => needs.network = Network::On,
            Denial::Listen { address } if crate::sandbox::notify::grantable_listener(address) => {
                needs.listen.insert(address.port());
            }
            // Another address than loopback, or the kernel's pick of a port: no grant gives it.
            Denial::Listen { .. } => {}
            // Lines get no unix socket: none is grantable to one (only `wrap`'s contained agent
            // reaches one, the broker's).
            Denial::UnixSocket { .. } => {}
            // A second name of a file: no grant lets a line write through it (see
            // `sandbox::opener`); a failed opener is a failure, not a missing grant.
            Denial::SecondName { .. } | Denial::OpenerFailed { .. } => {}
            Denial::Write { path, .. } => {
                for dir in crate::spec::grantable_dirs(path) {
                    if !needs.writable.contains(&dir) {
                        needs.writable.push(dir);
                    }
                }
            }
        }
    }
    (!needs.is_empty()).then_some(needs)
}
