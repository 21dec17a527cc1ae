//! Grants: what the sandbox gives a line that is allowed to run.
//!
//! Every allow carries one: the sandbox policy (read-only, workspace-write, or none for confirmed
//! Full access), the network (off, TCP to some ports, or on), the TCP ports it may listen on (on
//! loopback), extra writable directories, and the credential variables passed to the line (withheld otherwise: [`super::environment`]). The
//! mode gives the base ([`Grant::base`]); what a line's commands need ([`Needs`], from the
//! built-in table in [`super::needs`] and the user's rules) widens it into the grant that is asked
//! for; whoever approves may narrow it ([`Grant::narrowed_to`]), never widen it. The sandbox
//! enforces exactly the grant the line runs with, and the log records it.

use super::endpoint::Endpoint;
use crate::mode::SandboxPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;

/// The network a grant gives.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Network {
    #[default]
    Off,
    /// TCP connections to these endpoints only: a port on any host (Landlock holds it) or on
    /// named hosts (the sandbox's proxy holds it). No UDP, no listening.
    Tcp(BTreeSet<Endpoint>),
    On,
}

impl Network {
    /// TCP to `ports` on any host (none: off).
    pub fn tcp(ports: impl IntoIterator<Item = u16>) -> Network {
        Network::to(ports.into_iter().map(Endpoint::any))
    }

    /// TCP to `endpoints` (none: off).
    pub fn to(endpoints: impl IntoIterator<Item = Endpoint>) -> Network {
        let endpoints: BTreeSet<Endpoint> = endpoints.into_iter().collect();
        if endpoints.is_empty() {
            Network::Off
        } else {
            Network::Tcp(endpoints)
        }
    }

    /// The union: what either gives.
    pub fn union(&self, other: &Network) -> Network {
        match (self, other) {
            (Network::On, _) | (_, Network::On) => Network::On,
            (Network::Off, n) | (n, Network::Off) => n.clone(),
            (Network::Tcp(a), Network::Tcp(b)) => Network::Tcp(a | b),
        }
    }

    /// The intersection: what both give (a host named on one side and a port on any host on
    /// the other meet at the named host).
    pub fn intersection(&self, other: &Network) -> Network {
        match (self, other) {
            (Network::Off, _) | (_, Network::Off) => Network::Off,
            (Network::On, n) | (n, Network::On) => n.clone(),
            (Network::Tcp(a), Network::Tcp(b)) => {
                Network::to(a.iter().flat_map(|x| b.iter().filter_map(|y| x.meet(y))))
            }
        }
    }

    pub fn is_off(&self) -> bool {
        *self == Network::Off
    }

    /// The ports this gives on any host (Landlock's part of a TCP grant).
    pub fn any_host_ports(&self) -> Vec<u16> {
        match self {
            Network::Tcp(endpoints) => endpoints
                .iter()
                .filter(|e| e.host.is_none())
                .map(|e| e.port)
                .collect(),
            Network::Off | Network::On => Vec::new(),
        }
    }

    /// The endpoints on named hosts (the proxy's part of a TCP grant).
    pub fn named_hosts(&self) -> Vec<Endpoint> {
        match self {
            Network::Tcp(endpoints) => endpoints
                .iter()
                .filter(|e| e.host.is_some())
                .cloned()
                .collect(),
            Network::Off | Network::On => Vec::new(),
        }
    }

    /// Whether a connection to `port` on some host may be given by this grant.
    pub fn reaches_port(&self, port: u16) -> bool {
        match self {
            Network::Tcp(endpoints) => endpoints.iter().any(|e| e.port == port),
            Network::On => true,
            Network::Off => false,
        }
    }
}

/// `off`, `on`, or `tcp:` and the endpoints: `tcp:22,443` (any host), `tcp:registry.npmjs.org:443`.
impl fmt::Display for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Network::Off => f.write_str("off"),
            Network::On => f.write_str("on"),
            Network::Tcp(endpoints) => {
                let list: Vec<String> = endpoints.iter().map(Endpoint::to_string).collect();
                write!(f, "tcp:{}", list.join(","))
            }
        }
    }
}

/// `"off"`, `"on"` or a list of TCP ports and `"host:port"` endpoints (`[22,
/// "registry.npmjs.org:443"]`), in the config, the log and JSON.
impl Serialize for Network {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        match self {
            Network::Off => s.serialize_str("off"),
            Network::On => s.serialize_str("on"),
            Network::Tcp(endpoints) => {
                let mut seq = s.serialize_seq(Some(endpoints.len()))?;
                for e in endpoints {
                    match e.host {
                        None => seq.serialize_element(&e.port)?,
                        Some(_) => seq.serialize_element(&e.to_string())?,
                    }
                }
                seq.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Network, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Item {
            Port(u16),
            Endpoint(String),
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Word(String),
            Switch(bool),
            Endpoints(Vec<Item>),
        }
        let endpoint = |item: Item| match item {
            Item::Port(0) => Err(serde::de::Error::custom("port 0 is not a port")),
            Item::Port(port) => Ok(Endpoint::any(port)),
            Item::Endpoint(text) => Endpoint::parse(&text).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "a network endpoint is a port or \"host:port\" (a name, *.domain, or an \
                     address), not {text:?}"
                ))
            }),
        };
        match Form::deserialize(d)? {
            Form::Word(w) if w == "off" => Ok(Network::Off),
            Form::Word(w) if w == "on" => Ok(Network::On),
            Form::Word(w) => Err(serde::de::Error::custom(format!(
                "network is \"off\", \"on\" or a list of TCP ports and \"host:port\", not {w:?}"
            ))),
            Form::Switch(on) => Ok(if on { Network::On } else { Network::Off }),
            Form::Endpoints(items) => Ok(Network::to(
                items
                    .into_iter()
                    .map(endpoint)
                    .collect::<Result<Vec<_>, _>>()?,
            )),
        }
    }
}

/// What a command needs beyond the mode's sandbox (a rule's `needs`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Needs {
    #[serde(default, skip_serializing_if = "Network::is_off")]
    pub network: Network,
    /// TCP ports it listens on (a dev server): on loopback only, see [`Grant::listen`].
    #[serde(
        default,
        skip_serializing_if = "BTreeSet::is_empty",
        deserialize_with = "listening_ports"
    )]
    pub listen: BTreeSet<u16>,
    /// Directories it writes besides the workspace (`~/` is the home).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
    /// Credential variables it needs passed (`GH_TOKEN`): only ever on a person's yes.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "variable_names"
    )]
    pub env: Vec<String>,
    /// Unix sockets it connects to by name (see [`Grant::sockets`]): only ever on a person's yes.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "socket_names"
    )]
    pub sockets: Vec<String>,
}

/// The ssh agent's socket, as a grant names it: the one `SSH_AUTH_SOCK` names in the caller's
/// environment when the line starts.
pub const SSH_AGENT: &str = "ssh-agent";

/// A list of sockets, each [`SSH_AGENT`] or an absolute path.
fn socket_names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    match names
        .iter()
        .find(|n| *n != SSH_AGENT && !n.starts_with('/'))
    {
        Some(bad) => Err(serde::de::Error::custom(format!(
            "sockets are \"{SSH_AGENT}\" or absolute paths, not {bad:?}"
        ))),
        None => Ok(names),
    }
}

/// A list of variable names, each refused unless it is one (`[A-Za-z_][A-Za-z0-9_]*`).
fn variable_names<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let names = Vec::<String>::deserialize(d)?;
    match names
        .iter()
        .find(|n| !super::environment::is_variable_name(n))
    {
        Some(bad) => Err(serde::de::Error::custom(format!(
            "env names variables, and {bad:?} is not a variable name"
        ))),
        None => Ok(names),
    }
}

/// A set of TCP ports to listen on, each refused if it is 0 (the kernel's pick: not a port a
/// person can name in a grant).
fn listening_ports<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeSet<u16>, D::Error> {
    let ports = BTreeSet::<u16>::deserialize(d)?;
    if ports.contains(&0) {
        return Err(serde::de::Error::custom(
            "listen names TCP ports, and port 0 is not one",
        ));
    }
    Ok(ports)
}

/// `names` with those of `more` that it lacks, in order.
fn union_names(names: &mut Vec<String>, more: &[String]) {
    for name in more {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
}

impl Needs {
    pub fn is_empty(&self) -> bool {
        self.network.is_off()
            && self.listen.is_empty()
            && self.writable.is_empty()
            && self.env.is_empty()
            && self.sockets.is_empty()
    }

    pub fn add(&mut self, other: &Needs) {
        self.network = self.network.union(&other.network);
        self.listen.extend(other.listen.iter().copied());
        union_names(&mut self.sockets, &other.sockets);
        union_names(&mut self.writable, &other.writable);
        union_names(&mut self.env, &other.env);
    }
}

/// What the sandbox gives one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grant {
    pub sandbox: SandboxPolicy,
    #[serde(default)]
    pub network: Network,
    /// TCP ports the line may listen on, on loopback: the supervisor makes each `bind` and
    /// `listen` itself, on `127.0.0.1`/`::1` for a wildcard address (see
    /// `sandbox::listening`). Without the network only; the whole network includes listening.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub listen: BTreeSet<u16>,
    /// Extra writable directories (`~/` is the home), besides the workspace and temp dirs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writable: Vec<String>,
    /// Credential variables passed to the line, which it would not get otherwise (see
    /// [`Grant::allowed_by`]: only a person's yes passes them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Unix sockets the line may connect to by name ([`SSH_AGENT`], or a path): the supervisor
    /// makes each such `connect` itself, to exactly these (see `sandbox::unix_connect`). A
    /// socket is a credential's reach (the ssh agent signs with the person's keys): like `env`,
    /// passed only on a person's yes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sockets: Vec<String>,
}

impl Grant {
    /// The mode's own: its sandbox, and the network if the mode has it.
    pub fn base(sandbox: SandboxPolicy, network: bool) -> Grant {
        Grant {
            sandbox,
            network: if network && sandbox != SandboxPolicy::ReadOnly {
                Network::On
            } else {
                Network::Off
            },
            listen: BTreeSet::new(),
            writable: Vec::new(),
            env: Vec::new(),
            sockets: Vec::new(),
        }
    }

    /// This grant with `needs` added. Only a workspace-write sandbox is widened: a read-only
    /// line needs nothing more, and Full access has no sandbox to widen. Variables are asked for
    /// in every sandbox (the environment is withheld in all of them).
    pub fn with_needs(&self, needs: &Needs) -> Grant {
        let mut grant = self.clone();
        union_names(&mut grant.env, &needs.env);
        if self.sandbox != SandboxPolicy::WorkspaceWrite {
            return grant;
        }
        grant.network = grant.network.union(&needs.network);
        grant.listen.extend(needs.listen.iter().copied());
        union_names(&mut grant.writable, &needs.writable);
        union_names(&mut grant.sockets, &needs.sockets);
        grant
    }

    /// The grant a line runs with once allowed: the variables it names are passed only when a
    /// person said yes to exactly this grant; a rule, the reviewer or a mode without approval
    /// allows the line without them.
    pub fn allowed_by(self, a_person: bool) -> Grant {
        if a_person {
            self
        } else {
            Grant {
                env: Vec::new(),
                sockets: Vec::new(),
                ..self
            }
        }
    }

    /// What both give: an approver's grant (`self`) held to what was asked for (`ceiling`).
    pub fn narrowed_to(&self, ceiling: &Grant) -> Grant {
        Grant {
            sandbox: self.sandbox.min(ceiling.sandbox),
            network: self.network.intersection(&ceiling.network),
            listen: &self.listen & &ceiling.listen,
            writable: kept(&self.writable, &ceiling.writable),
            env: kept(&self.env, &ceiling.env),
            sockets: kept(&self.sockets, &ceiling.sockets),
        }
    }

    /// Does this grant give more than `ceiling` in any way?
    pub fn exceeds(&self, ceiling: &Grant) -> bool {
        self.narrowed_to(ceiling) != *self
    }

    /// What this grant adds to `base`, in words (`network tcp:443, writes ~/.cargo/registry`),
    /// or `None` when it adds nothing.
    pub fn extra_over(&self, base: &Grant) -> Option<String> {
        let mut parts = Vec::new();
        if self.network != base.network {
            parts.push(format!("network {}", self.network));
        }
        let listening = &self.listen - &base.listen;
        if !listening.is_empty() {
            parts.push(format!("listens on {}", listen_ports(&listening)));
        }
        let extra = added(&self.writable, &base.writable);
        if !extra.is_empty() {
            parts.push(format!("writes {}", extra.join(", ")));
        }
        let passed = added(&self.env, &base.env);
        if !passed.is_empty() {
            parts.push(format!("passes {}", passed.join(", ")));
        }
        let reached = added(&self.sockets, &base.sockets);
        if !reached.is_empty() {
            parts.push(format!("reaches the socket {}", reached.join(", ")));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// The names of `names` that `ceiling` has too, in order.
fn kept(names: &[String], ceiling: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|n| ceiling.contains(n))
        .cloned()
        .collect()
}

/// The names of `names` that `base` lacks, in order.
fn added<'a>(names: &'a [String], base: &[String]) -> Vec<&'a str> {
    names
        .iter()
        .filter(|n| !base.contains(n))
        .map(String::as_str)
        .collect()
}

/// `loopback tcp:8000,5173`: how a listening grant reads.
pub fn listen_ports(ports: &BTreeSet<u16>) -> String {
    let list: Vec<String> = ports.iter().map(u16::to_string).collect();
    format!("loopback tcp:{}", list.join(","))
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.sandbox)?;
        if self.sandbox != SandboxPolicy::FullAccess {
            write!(f, ", network {}", self.network)?;
            if !self.listen.is_empty() {
                write!(f, ", listens on {}", listen_ports(&self.listen))?;
            }
            if !self.writable.is_empty() {
                write!(f, ", writes {}", self.writable.join(", "))?;
            }
        }
        if !self.env.is_empty() {
            write!(f, ", passes {}", self.env.join(", "))?;
        }
        if !self.sockets.is_empty() {
            write!(f, ", reaches the socket {}", self.sockets.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ww(network: Network, writable: &[&str]) -> Grant {
        Grant {
            sandbox: SandboxPolicy::WorkspaceWrite,
            network,
            listen: BTreeSet::new(),
            writable: writable.iter().map(|s| (*s).to_owned()).collect(),
            env: Vec::new(),
            sockets: Vec::new(),
        }
    }

    #[test]
    fn networks_combine_as_sets() {
        let a = Network::tcp([443, 22]);
        let b = Network::tcp([443, 80]);
        assert_eq!(a.union(&b), Network::tcp([22, 80, 443]));
        assert_eq!(a.intersection(&b), Network::tcp([443]));
        assert_eq!(a.intersection(&Network::tcp([80])), Network::Off);
        assert_eq!(a.union(&Network::On), Network::On);
        assert_eq!(a.intersection(&Network::On), a);
        assert_eq!(Network::On.intersection(&Network::Off), Network::Off);
        assert_eq!(Network::tcp([]), Network::Off);
    }

    #[test]
    fn an_approver_can_narrow_but_never_widen() {
        let asked = ww(Network::tcp([443]), &["~/.cargo/registry"]);
        let wider = Grant {
            sandbox: SandboxPolicy::FullAccess,
            network: Network::On,
            listen: BTreeSet::from([8000]),
            writable: vec!["~/.cargo/registry".into(), "~".into()],
            env: vec!["GH_TOKEN".into()],
            sockets: vec![SSH_AGENT.into()],
        };
        assert_eq!(wider.narrowed_to(&asked), asked);
        assert!(wider.exceeds(&asked));
        let narrower = ww(Network::Off, &[]);
        assert_eq!(narrower.narrowed_to(&asked), narrower);
        assert!(!narrower.exceeds(&asked));
        let read_only = Grant::base(SandboxPolicy::ReadOnly, false);
        assert_eq!(
            read_only.narrowed_to(&asked).sandbox,
            SandboxPolicy::ReadOnly
        );
    }

    #[test]
    fn needs_widen_only_a_workspace_write_sandbox() {
        let needs = Needs {
            network: Network::tcp([443]),
            writable: vec!["~/.npm".into()],
            ..Needs::default()
        };
        let base = Grant::base(SandboxPolicy::WorkspaceWrite, false);
        let asked = base.with_needs(&needs);
        assert_eq!(asked, ww(Network::tcp([443]), &["~/.npm"]));
        assert_eq!(
            asked.extra_over(&base).as_deref(),
            Some("network tcp:443, writes ~/.npm")
        );
        assert_eq!(
            asked.to_string(),
            "workspace-write, network tcp:443, writes ~/.npm"
        );
        let ro = Grant::base(SandboxPolicy::ReadOnly, true);
        assert_eq!(ro.network, Network::Off);
        assert_eq!(ro.with_needs(&needs), ro);
        let full = Grant::base(SandboxPolicy::FullAccess, true);
        assert_eq!(full.with_needs(&needs), full);
        assert_eq!(full.to_string(), "full-access");
    }

    #[test]
    fn a_listening_grant_is_a_set_of_ports_narrowed_like_the_rest() {
        let needs: Needs = toml::from_str("listen = [8000, 5173]").unwrap();
        let base = Grant::base(SandboxPolicy::WorkspaceWrite, false);
        let asked = base.with_needs(&needs);
        assert_eq!(asked.listen, BTreeSet::from([5173, 8000]));
        assert_eq!(
            asked.extra_over(&base).as_deref(),
            Some("listens on loopback tcp:5173,8000")
        );
        assert_eq!(
            asked.to_string(),
            "workspace-write, network off, listens on loopback tcp:5173,8000"
        );
        // An approver keeps fewer ports, never more.
        let mut approver = asked.clone();
        approver.listen = BTreeSet::from([8000, 9000]);
        assert_eq!(approver.narrowed_to(&asked).listen, BTreeSet::from([8000]));
        assert!(approver.exceeds(&asked));
        // A read-only line is not widened; the log's form reads back.
        let ro = Grant::base(SandboxPolicy::ReadOnly, false);
        assert_eq!(ro.with_needs(&needs), ro);
        let json = serde_json::to_string(&asked).unwrap();
        assert!(json.contains("\"listen\":[5173,8000]"), "{json}");
        assert_eq!(serde_json::from_str::<Grant>(&json).unwrap(), asked);
        assert!(!serde_json::to_string(&base).unwrap().contains("listen"));
        // Port 0 is the kernel's pick, not a port a rule can name.
        let err = toml::from_str::<Needs>("listen = [0]").unwrap_err();
        assert!(err.to_string().contains("port 0"), "{err}");
    }

    #[test]
    fn variables_are_asked_for_in_every_sandbox_and_passed_only_on_a_persons_yes() {
        let needs: Needs = toml::from_str("env = [\"GH_TOKEN\"]").unwrap();
        for sandbox in [
            SandboxPolicy::ReadOnly,
            SandboxPolicy::WorkspaceWrite,
            SandboxPolicy::FullAccess,
        ] {
            let base = Grant::base(sandbox, false);
            let asked = base.with_needs(&needs);
            assert_eq!(asked.env, ["GH_TOKEN"]);
            assert_eq!(asked.extra_over(&base).as_deref(), Some("passes GH_TOKEN"));
            assert!(asked.to_string().ends_with(", passes GH_TOKEN"), "{asked}");
            assert_eq!(asked.clone().allowed_by(true), asked);
            assert_eq!(asked.clone().allowed_by(false), base);
            // An approver cannot add a variable that was not asked for.
            let mut wider = asked.clone();
            wider.env.push("AWS_SECRET_ACCESS_KEY".into());
            assert_eq!(wider.narrowed_to(&asked), asked);
        }
        let bad = toml::from_str::<Needs>("env = [\"GH TOKEN\"]").unwrap_err();
        assert!(bad.to_string().contains("not a variable name"), "{bad}");
    }

    #[test]
    fn a_named_host_narrows_a_port_and_never_widens_to_one() {
        let npm = Endpoint::parse("registry.npmjs.org:443").unwrap();
        let asked = Network::to([npm.clone(), Endpoint::any(22)]);
        // An approver who names the host keeps it; one who gives port 443 on any host gets the
        // host that was asked for, not every host.
        assert_eq!(
            asked.intersection(&Network::tcp([443])),
            Network::to([npm.clone()])
        );
        assert_eq!(
            Network::tcp([443]).intersection(&asked),
            Network::to([npm.clone()])
        );
        let other = Network::to([Endpoint::parse("evil.example:443").unwrap()]);
        assert_eq!(asked.intersection(&other), Network::Off);
        assert_eq!(asked.to_string(), "tcp:22,registry.npmjs.org:443");
        assert_eq!(asked.any_host_ports(), [22]);
        assert_eq!(asked.named_hosts(), [npm]);
        let text = serde_json::to_string(&asked).unwrap();
        assert_eq!(text, r#"[22,"registry.npmjs.org:443"]"#);
        assert_eq!(serde_json::from_str::<Network>(&text).unwrap(), asked);
        assert!(serde_json::from_str::<Network>(r#"["registry.npmjs.org"]"#).is_err());
        assert!(serde_json::from_str::<Network>(r#"["a b:443"]"#).is_err());
    }

    #[test]
    fn networks_read_and_write_as_words_or_ports() {
        for (text, network) in [
            ("\"off\"", Network::Off),
            ("\"on\"", Network::On),
            ("true", Network::On),
            ("false", Network::Off),
            ("[443, 22]", Network::tcp([22, 443])),
        ] {
            let parsed: Network = serde_json::from_str(text).unwrap();
            assert_eq!(parsed, network, "{text}");
        }
        assert!(serde_json::from_str::<Network>("\"maybe\"").is_err());
        assert!(serde_json::from_str::<Network>("[0]").is_err());
        assert!(serde_json::from_str::<Network>("[70000]").is_err());
        assert_eq!(
            serde_json::to_string(&Network::tcp([443])).unwrap(),
            "[443]"
        );
        assert_eq!(
            serde_json::to_string(&ww(Network::On, &["~/x"])).unwrap(),
            r#"{"sandbox":"workspace-write","network":"on","writable":["~/x"]}"#
        );
    }
}
