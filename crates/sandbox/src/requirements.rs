//! Whether a policy can be enforced with what this system offers: the fail-closed decision.
//!
//! A gap is never papered over. Either the configuration dropped that exact protection
//! explicitly ([`Protection`]), or the launcher refuses with `SANDBOX_UNAVAILABLE`, naming what
//! is missing and the choices a person has.

use crate::abi::DetectedAbi;
use crate::error::{Code, Error, Result};
use crate::policy::Protection;
use std::collections::BTreeSet;

/// The one sentence appended to every refusal.
pub const FULL_ACCESS_CHOICE: &str = "or have a person confirm Full access (no sandbox)";

/// Something this system cannot enforce for a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gap {
    /// Landlock cannot be used at all (the reason names kernel, LSM list or the seam).
    Landlock(String),
    /// The kernel accepts no seccomp filters.
    Seccomp,
    /// A Landlock feature behind a droppable protection is missing at the effective ABI.
    Feature(Protection),
    /// No private mount namespace (the reason says why).
    Namespace(String),
}

/// The gaps of the Landlock and seccomp layers, ignoring protections in `dropped`.
pub fn kernel_gaps(
    abi: &DetectedAbi,
    seccomp: bool,
    network: bool,
    dropped: &BTreeSet<Protection>,
) -> Vec<Gap> {
    let mut gaps = Vec::new();
    if let Some(reason) = abi.unavailable_reason() {
        gaps.push(Gap::Landlock(reason));
    }
    if !seccomp {
        gaps.push(Gap::Seccomp);
    }
    if abi.effective == 0 {
        return gaps;
    }
    for protection in Protection::ALL {
        let Some(feature) = protection.landlock_feature() else {
            continue;
        };
        // With the network on, TCP needs no rules; TCP ports (network off) do, like "off".
        let needed = !(protection == Protection::Tcp && network);
        if needed && !abi.has(feature) && !dropped.contains(&protection) {
            gaps.push(Gap::Feature(protection));
        }
    }
    gaps
}

/// Turns gaps into the one-line `SANDBOX_UNAVAILABLE` error, or `Ok` when there are none.
pub fn refuse(abi: &DetectedAbi, gaps: &[Gap]) -> Result<()> {
    if gaps.is_empty() {
        return Ok(());
    }
    Err(Error::new(Code::SandboxUnavailable, describe(abi, gaps)))
}

/// One line: what is missing, then the choices.
pub fn describe(abi: &DetectedAbi, gaps: &[Gap]) -> String {
    let mut missing = Vec::new();
    let mut droppable = Vec::new();
    for gap in gaps {
        match gap {
            Gap::Landlock(reason) => missing.push(reason.clone()),
            Gap::Seccomp => missing
                .push("this kernel accepts no seccomp filters (CONFIG_SECCOMP_FILTER)".to_string()),
            Gap::Feature(protection) => {
                // Only Landlock protections become feature gaps ([`kernel_gaps`]), so the
                // feature is always there to name.
                let needs = protection
                    .landlock_feature()
                    .map(|feature| {
                        format!(
                            "needs ABI {}, Linux {}+; ",
                            feature.min_abi(),
                            feature.linux()
                        )
                    })
                    .unwrap_or_default();
                missing.push(format!(
                    "Landlock ABI {} lacks {} ({needs}it {})",
                    abi.effective,
                    protection,
                    protection.guards()
                ));
                droppable.push(*protection);
            }
            Gap::Namespace(reason) => {
                missing.push(reason.clone());
                droppable.push(Protection::ProtectedPaths);
            }
        }
    }
    let limited = abi
        .limit
        .filter(|_| abi.effective > 0)
        .map(|l| format!(" (limited to ABI {l} by {})", crate::abi::ABI_MAX_ENV))
        .unwrap_or_default();
    let choices = if droppable.is_empty() {
        format!("choices: a kernel with Landlock and seccomp enabled, {FULL_ACCESS_CHOICE}")
    } else {
        let fix = if droppable == [Protection::ProtectedPaths] {
            "allowing user namespaces"
        } else {
            "a newer kernel"
        };
        let flags: Vec<String> = droppable
            .iter()
            .map(|p| format!("--drop-protection {p}"))
            .collect();
        format!(
            "choices: {fix}, a configuration that drops the protection explicitly ({}), \
             {FULL_ACCESS_CHOICE}",
            flags.join(" ")
        )
    };
    format!("{}{limited}; {choices}", missing.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::KernelLandlock;

    fn abi(limit: u32) -> DetectedAbi {
        DetectedAbi::from_parts(KernelLandlock::Available { abi: 7 }, Some(limit))
    }

    #[test]
    fn full_abi_has_no_gaps() {
        assert!(kernel_gaps(&abi(7), true, false, &BTreeSet::new()).is_empty());
    }

    #[test]
    fn old_abi_names_each_missing_protection() {
        let gaps = kernel_gaps(&abi(3), true, false, &BTreeSet::new());
        assert_eq!(
            gaps,
            vec![
                Gap::Feature(Protection::Tcp),
                Gap::Feature(Protection::IoctlDev),
                Gap::Feature(Protection::Scope)
            ]
        );
        let line = describe(&abi(3), &gaps);
        assert!(line.contains("--drop-protection scope"), "{line}");
        assert!(line.contains("Full access"), "{line}");
        assert!(!line.contains('\n'));
    }

    #[test]
    fn network_on_does_not_need_tcp_rules() {
        let gaps = kernel_gaps(&abi(3), true, true, &BTreeSet::new());
        assert!(!gaps.contains(&Gap::Feature(Protection::Tcp)));
    }

    #[test]
    fn dropped_protections_are_not_gaps() {
        let dropped: BTreeSet<_> = [Protection::Scope].into();
        assert!(kernel_gaps(&abi(5), true, false, &dropped).is_empty());
    }

    #[test]
    fn no_landlock_cannot_be_dropped() {
        let all: BTreeSet<_> = Protection::ALL.into();
        let gaps = kernel_gaps(&abi(0), true, false, &all);
        assert!(matches!(gaps.as_slice(), [Gap::Landlock(_)]));
        assert!(!describe(&abi(0), &gaps).contains("--drop-protection"));
    }
}
