//! The one place that answers "which Landlock features does this kernel give us?".
//!
//! Everything else asks a [`DetectedAbi`]; nothing else calls `landlock_create_ruleset` to probe.
//! Tests (which run the real binary) simulate an old or Landlock-less kernel through
//! [`ABI_MAX_ENV`]: it can only *lower* what the kernel reports, never raise it, so setting it can
//! make shellgate refuse to run a program but can never weaken a sandbox.

use serde::Serialize;
use std::fmt;

/// See [`shellgate_core::own_env`], where every one of shellgate's variables is listed with its trust.
pub use crate::own_env::ABI_MAX_ENV;

/// The newest ABI the `landlock` crate we build against knows the access rights of.
const CRATE_MAX_ABI: u32 = 10;

/// What the running kernel says about Landlock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "state")]
pub enum KernelLandlock {
    /// Landlock works; `abi` is the kernel's own version number.
    Available { abi: u32 },
    /// Built in but not in the active LSM list (`EOPNOTSUPP`).
    NotEnabled,
    /// The kernel was built without Landlock or predates it (`ENOSYS`).
    NotBuilt,
}

/// A Landlock feature shellgate relies on, with the ABI that introduced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Feature {
    /// Path-beneath read/write/execute rules (ABI 1, Linux 5.13).
    Filesystem,
    /// Cross-directory rename and link (`REFER`, ABI 2, Linux 5.19). Without it the kernel denies
    /// every reparenting inside the sandbox: stricter, never weaker.
    Refer,
    /// `truncate(2)` and `O_TRUNC` (ABI 3, Linux 6.2).
    Truncate,
    /// TCP bind/connect rules (ABI 4, Linux 6.7).
    Tcp,
    /// `ioctl` on device files (ABI 5, Linux 6.10).
    IoctlDev,
    /// Signal and abstract-unix-socket scoping (ABI 6, Linux 6.12).
    Scope,
}

impl Feature {
    pub const ALL: [Feature; 6] = [
        Feature::Filesystem,
        Feature::Refer,
        Feature::Truncate,
        Feature::Tcp,
        Feature::IoctlDev,
        Feature::Scope,
    ];

    /// The first Landlock ABI that has this feature.
    pub fn min_abi(self) -> u32 {
        match self {
            Feature::Filesystem => 1,
            Feature::Refer => 2,
            Feature::Truncate => 3,
            Feature::Tcp => 4,
            Feature::IoctlDev => 5,
            Feature::Scope => 6,
        }
    }

    /// The first mainline Linux release with this feature, for error messages.
    pub fn linux(self) -> &'static str {
        match self {
            Feature::Filesystem => "5.13",
            Feature::Refer => "5.19",
            Feature::Truncate => "6.2",
            Feature::Tcp => "6.7",
            Feature::IoctlDev => "6.10",
            Feature::Scope => "6.12",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Feature::Filesystem => "filesystem",
            Feature::Refer => "refer",
            Feature::Truncate => "truncate",
            Feature::Tcp => "tcp",
            Feature::IoctlDev => "ioctl-dev",
            Feature::Scope => "scope",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The Landlock ABI shellgate will use: the kernel's, lowered by the crate's knowledge and by
/// [`ABI_MAX_ENV`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DetectedAbi {
    pub kernel: KernelLandlock,
    /// The cap read from [`ABI_MAX_ENV`], if set.
    pub limit: Option<u32>,
    /// The ABI every rule is built for; `0` means Landlock cannot be used.
    pub effective: u32,
}

impl DetectedAbi {
    /// Asks the kernel, capped by the environment seam the binary handed in.
    pub fn detect() -> DetectedAbi {
        let limit = crate::process_env::process_env()
            .abi_max
            .as_deref()
            .map(parse_limit);
        DetectedAbi::from_parts(query_kernel(), limit)
    }

    /// Combines a kernel answer with an optional cap. Pure, so it is unit-tested.
    pub fn from_parts(kernel: KernelLandlock, limit: Option<u32>) -> DetectedAbi {
        let kernel_abi = match kernel {
            KernelLandlock::Available { abi } => abi,
            KernelLandlock::NotEnabled | KernelLandlock::NotBuilt => 0,
        };
        let effective = kernel_abi.min(CRATE_MAX_ABI).min(limit.unwrap_or(u32::MAX));
        DetectedAbi {
            kernel,
            limit,
            effective,
        }
    }

    pub fn has(&self, feature: Feature) -> bool {
        self.effective >= feature.min_abi()
    }

    /// The features available at the effective ABI.
    pub fn features(&self) -> Vec<Feature> {
        Feature::ALL.into_iter().filter(|f| self.has(*f)).collect()
    }

    /// The crate's ABI value for building rules. Only meaningful when `effective > 0`.
    pub(crate) fn landlock_abi(&self) -> landlock::ABI {
        // `effective` never exceeds the kernel's ABI, so this never asks for rights the running
        // kernel lacks; the crate's "don't build an ABI at runtime" advice is about *raising*.
        landlock::ABI::from(i32::try_from(self.effective).unwrap_or(0))
    }

    /// Why Landlock as a whole cannot be used, or `None` when it can.
    pub fn unavailable_reason(&self) -> Option<String> {
        if self.effective > 0 {
            return None;
        }
        let reason = match (self.kernel, self.limit) {
            (KernelLandlock::Available { abi }, Some(limit)) => format!(
                "Landlock is limited to ABI {limit} by {ABI_MAX_ENV} (the kernel has ABI {abi})"
            ),
            (KernelLandlock::NotEnabled, _) => format!(
                "Landlock is built into this kernel but not enabled: add `landlock` to the `lsm=` \
                 boot parameter (active LSM list: {})",
                lsm_list().unwrap_or_else(|| "unknown".into())
            ),
            (KernelLandlock::NotBuilt, _) => format!(
                "this kernel ({}) has no Landlock: it needs Linux 5.13+ built with \
                 CONFIG_SECURITY_LANDLOCK=y",
                kernel_release()
            ),
            (KernelLandlock::Available { .. }, None) => {
                "Landlock is not usable by this build of shellgate".into()
            }
        };
        Some(reason)
    }
}

/// A cap that does not parse becomes 0, so a mistyped seam fails closed.
fn parse_limit(value: &str) -> u32 {
    value.trim().parse().unwrap_or(0)
}

fn query_kernel() -> KernelLandlock {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns the
    // ABI number; with a null attribute pointer and size 0 the kernel reads no user memory.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if version > 0 {
        return KernelLandlock::Available {
            abi: u32::try_from(version).unwrap_or(0),
        };
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => KernelLandlock::NotEnabled,
        _ => KernelLandlock::NotBuilt,
    }
}

/// The active LSM list, when securityfs is mounted and readable.
pub fn lsm_list() -> Option<String> {
    std::fs::read_to_string("/sys/kernel/security/lsm")
        .ok()
        .map(|s| s.trim().to_string())
}

/// `uname -r`, for messages.
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown kernel".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_only_lowers() {
        let kernel = KernelLandlock::Available { abi: 5 };
        assert_eq!(DetectedAbi::from_parts(kernel, None).effective, 5);
        assert_eq!(DetectedAbi::from_parts(kernel, Some(3)).effective, 3);
        assert_eq!(DetectedAbi::from_parts(kernel, Some(9)).effective, 5);
        assert_eq!(DetectedAbi::from_parts(kernel, Some(0)).effective, 0);
        let none = DetectedAbi::from_parts(KernelLandlock::NotBuilt, Some(7));
        assert_eq!(none.effective, 0);
    }

    #[test]
    fn garbage_limit_fails_closed() {
        assert_eq!(parse_limit("seven"), 0);
        assert_eq!(parse_limit(" 4 "), 4);
        assert_eq!(parse_limit("-1"), 0);
    }

    #[test]
    fn features_follow_abi() {
        let abi = DetectedAbi::from_parts(KernelLandlock::Available { abi: 7 }, Some(4));
        assert_eq!(
            abi.features(),
            vec![
                Feature::Filesystem,
                Feature::Refer,
                Feature::Truncate,
                Feature::Tcp
            ]
        );
        assert!(!abi.has(Feature::Scope));
        assert!(abi.unavailable_reason().is_none());
    }

    #[test]
    fn unavailable_reasons_name_the_cause() {
        let limited = DetectedAbi::from_parts(KernelLandlock::Available { abi: 7 }, Some(0));
        assert!(limited.unavailable_reason().unwrap().contains(ABI_MAX_ENV));
        let off = DetectedAbi::from_parts(KernelLandlock::NotEnabled, None);
        assert!(off.unavailable_reason().unwrap().contains("lsm="));
        let missing = DetectedAbi::from_parts(KernelLandlock::NotBuilt, None);
        assert!(missing.unavailable_reason().unwrap().contains("5.13"));
    }
}
