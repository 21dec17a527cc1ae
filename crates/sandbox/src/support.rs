//! What this system can enforce, without running anything: for `doctor` and `status`.
//!
//! Cheap and side-effect free (one Landlock version query, a few `/proc` reads), so a
//! multi-threaded caller may use it. `doctor` adds live probes on top.

use crate::abi::{self, DetectedAbi, Feature};
use crate::mounts::{self, Namespace};
use crate::policy::{Policy, Protection};
use crate::requirements::{self, Gap};
use crate::{seccomp, sys};
use serde::Serialize;
use std::collections::BTreeSet;

/// The system's sandboxing capabilities and, for each policy, whether it can be enforced.
#[derive(Debug, Clone, Serialize)]
pub struct Support {
    /// `uname -r`.
    pub kernel: String,
    pub arch: &'static str,
    pub landlock: DetectedAbi,
    pub landlock_features: Vec<Feature>,
    /// The active LSM list, when securityfs is mounted.
    pub lsm: Option<String>,
    pub seccomp: bool,
    pub namespaces: NamespaceSupport,
    /// Each droppable protection: can this system give it?
    pub protections: Vec<ProtectionSupport>,
    pub policies: Vec<PolicySupport>,
}

/// Whether one protection can be enforced here, and if not, why.
#[derive(Debug, Clone, Serialize)]
pub struct ProtectionSupport {
    pub protection: Protection,
    pub enforceable: bool,
    pub reason: Option<String>,
}

/// Whether a private mount namespace can be created (as far as can be told without trying).
#[derive(Debug, Clone, Serialize)]
pub struct NamespaceSupport {
    pub available: bool,
    pub via: Option<Namespace>,
    pub reason: Option<String>,
}

/// One policy's verdict with no protection dropped.
#[derive(Debug, Clone, Serialize)]
pub struct PolicySupport {
    pub policy: Policy,
    pub enforceable: bool,
    /// One line naming what is missing and the choices, when not enforceable.
    pub reason: Option<String>,
    /// Protections this system cannot give (each could be dropped explicitly).
    pub missing_protections: Vec<Protection>,
}

/// What `status` and the panel say about sandbox support: whether the default policy,
/// workspace-write, can be enforced here, and why not.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub default_policy_enforceable: bool,
    pub landlock_abi: u32,
    pub reason: Option<String>,
}

impl Support {
    /// The default policy's line of this support, for `status` and the panel.
    pub fn summary(&self) -> Summary {
        let workspace_write = self
            .policies
            .iter()
            .find(|p| p.policy == Policy::WorkspaceWrite);
        Summary {
            default_policy_enforceable: workspace_write.is_some_and(|p| p.enforceable),
            landlock_abi: self.landlock.effective,
            reason: workspace_write.and_then(|p| p.reason.clone()),
        }
    }
}

/// Detects what this kernel and process can enforce.
pub fn detect() -> Support {
    let landlock = DetectedAbi::detect();
    let seccomp = seccomp::available();
    let namespaces = namespace_support();
    let policies = Policy::ALL
        .into_iter()
        .map(|policy| policy_support(policy, &landlock, seccomp, &namespaces))
        .collect();
    let protections = Protection::ALL
        .into_iter()
        .map(|p| protection_support(p, &landlock, &namespaces))
        .collect();
    Support {
        protections,
        kernel: abi::kernel_release(),
        arch: std::env::consts::ARCH,
        landlock_features: landlock.features(),
        landlock,
        lsm: abi::lsm_list(),
        seccomp,
        namespaces,
        policies,
    }
}

fn policy_support(
    policy: Policy,
    abi: &DetectedAbi,
    seccomp: bool,
    namespaces: &NamespaceSupport,
) -> PolicySupport {
    let mut gaps = requirements::kernel_gaps(abi, seccomp, false, &BTreeSet::new());
    // Read-only falls back to a fresh temp dir without a namespace; workspace-write needs the
    // namespace for its protected paths.
    if policy == Policy::WorkspaceWrite && !namespaces.available {
        let reason = namespaces.reason.clone().unwrap_or_default();
        gaps.push(Gap::Namespace(reason));
    }
    let missing_protections = gaps
        .iter()
        .filter_map(|gap| match gap {
            Gap::Feature(p) => Some(*p),
            Gap::Namespace(_) => Some(Protection::ProtectedPaths),
            Gap::Landlock(_) | Gap::Seccomp => None,
        })
        .collect();
    PolicySupport {
        policy,
        enforceable: gaps.is_empty(),
        reason: (!gaps.is_empty()).then(|| requirements::describe(abi, &gaps)),
        missing_protections,
    }
}

fn protection_support(
    protection: Protection,
    abi: &DetectedAbi,
    namespaces: &NamespaceSupport,
) -> ProtectionSupport {
    let reason = match protection.landlock_feature() {
        Some(feature) if !abi.has(feature) => Some(format!(
            "needs Landlock ABI {} (Linux {}+), this system gives ABI {}",
            feature.min_abi(),
            feature.linux(),
            abi.effective
        )),
        Some(_) => None,
        None => namespaces.reason.clone().filter(|_| !namespaces.available),
    };
    ProtectionSupport {
        protection,
        enforceable: reason.is_none(),
        reason,
    }
}

/// Capability and sysctl based guess; `doctor` confirms it with a real launch.
fn namespace_support() -> NamespaceSupport {
    if crate::process_env::process_env().no_namespaces {
        return unavailable(format!(
            "mount namespaces are disabled by {}",
            mounts::NO_NAMESPACES_ENV
        ));
    }
    const CAP_SYS_ADMIN: u64 = 1 << 21;
    if sys::capget().is_ok_and(|(effective, _, _)| effective & CAP_SYS_ADMIN != 0) {
        return NamespaceSupport {
            available: true,
            via: Some(Namespace::Mount),
            reason: None,
        };
    }
    let read = |path: &str| -> Option<i64> {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    };
    if read("/proc/sys/user/max_user_namespaces") == Some(0) {
        return unavailable("user namespaces are disabled (user.max_user_namespaces = 0)".into());
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone") == Some(0) {
        return unavailable(
            "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)"
                .into(),
        );
    }
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == Some(1) {
        return unavailable(
            "AppArmor restricts unprivileged user namespaces \
             (kernel.apparmor_restrict_unprivileged_userns = 1)"
                .into(),
        );
    }
    NamespaceSupport {
        available: true,
        via: Some(Namespace::UserAndMount),
        reason: None,
    }
}

fn unavailable(reason: String) -> NamespaceSupport {
    NamespaceSupport {
        available: false,
        via: None,
        reason: Some(reason),
    }
}
