//! Configuration: TOML files, validated strictly, merged with the rule that a project may only
//! tighten.
//!
//! * The user file, `$XDG_CONFIG_HOME/shellgate/config.toml` (default `~/.config/shellgate/`), may
//!   set everything: the default mode, rules, profiles, `[custom]`, `[sandbox]`, `[reviewer]`,
//!   `[approval]`.
//! * Project files, every `.shellgate.toml` from the cwd upward, may only tighten: add rules that
//!   route to `ai`, `human` or `never`, narrow the sandbox, turn the network off. Loading all of them
//!   (not only the nearest) means a file dropped in a subdirectory cannot shadow a stricter one above.
//!
//! Unknown keys, bad values, invalid regexes, duplicate rule ids and attempts to loosen from a
//! project file are errors that name the file, line and column. A broken config never locks anyone
//! out, and never makes anything looser: [`load_or_strictest`] gives the built-in config marked
//! [`Config::invalid`], and the mode resolver turns that into the strictest built-in policy (see
//! [`crate::mode::resolve`]) until the file is fixed. `config check` and `config show` still
//! report the error itself.

use crate::error::{Code, Error};
use crate::mode::{MAX_PROFILES, Modes, Profile, SandboxPolicy, check_profile_id};
use crate::paths::PROJECT_FILE;
use crate::policy::PolicyConfig;
use crate::policy::rules::{Field, Matcher, Rule, RulePolicy, RuleSource, builtin_rules};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The sandbox's settings are its own type (`shellgate_sandbox::settings`); the loader merges
/// the files into it.
pub use crate::sandbox::settings::SandboxSettings;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// Any OpenAI-compatible Chat Completions server.
    Openai,
    /// The Anthropic Messages API.
    Anthropic,
}

impl Provider {
    /// The name as in the config (`openai`, `anthropic`).
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Openai => "openai",
            Provider::Anthropic => "anthropic",
        }
    }
}

/// What happens when the reviewer fails (timeout, HTTP error, invalid verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FallbackPolicy {
    /// Deny the line (the default).
    #[default]
    Rejected,
    /// Ask the person, when there is one.
    Delegate,
    /// Run the line anyway, once. Dangerous: a reviewer outage then allows everything.
    AllowOnce,
}

/// The reviewer's risk assessment of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RiskLevel {
    Low,
    Medium,
    High,
    Critical,
}

impl RiskLevel {
    pub const ALL: [RiskLevel; 4] = [
        RiskLevel::Low,
        RiskLevel::Medium,
        RiskLevel::High,
        RiskLevel::Critical,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RiskLevel::Low => "low",
            RiskLevel::Medium => "medium",
            RiskLevel::High => "high",
            RiskLevel::Critical => "critical",
        }
    }
}

/// What a reviewer denial becomes when a person is at the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DenialAction {
    /// Ask the person: allow once or reject (the default). Without a terminal the denial is final.
    #[default]
    Ask,
    /// The denial is final, terminal or not.
    Deny,
}

/// How an OpenAI-compatible server is asked for a structured answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StructuredOutput {
    /// `response_format` with a strict JSON schema (the default; enforced by grammar on llama.cpp
    /// and vLLM).
    #[default]
    JsonSchema,
    /// Native tools with a forced tool call, for servers without `response_format`.
    ToolCall,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HighRiskAction {
    /// Ask the person about an allow above the ceiling.
    #[default]
    Delegate,
    /// Deny an allow above the ceiling.
    Deny,
}

/// What the circuit breaker does once tripped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BreakerAction {
    /// Ask the person about each line while the breaker is open.
    Delegate,
    /// Deny each line routed to review while the breaker is open (the default).
    #[default]
    Reject,
    /// Refuse every line until a person resets the breaker.
    Abort,
}

impl BreakerAction {
    pub const ALL: [BreakerAction; 3] = [
        BreakerAction::Delegate,
        BreakerAction::Reject,
        BreakerAction::Abort,
    ];

    /// The name as in the config (`delegate`, `reject`, `abort`).
    pub fn as_str(self) -> &'static str {
        match self {
            BreakerAction::Delegate => "delegate",
            BreakerAction::Reject => "reject",
            BreakerAction::Abort => "abort",
        }
    }
}

/// `[reviewer.breaker]`: the per-session circuit breaker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    pub consecutive_denies: u32,
    pub window_denies: u32,
    pub window_size: u32,
    pub action: BreakerAction,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig {
            consecutive_denies: 3,
            window_denies: 6,
            window_size: 10,
            action: BreakerAction::Reject,
        }
    }
}

/// `[reviewer.budgets]`: per-session limits; past them the fallback applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetConfig {
    pub max_reviews: Option<u32>,
    pub max_failures: Option<u32>,
}

/// `[reviewer]`: the second model of `auto` mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewerConfig {
    pub provider: Provider,
    /// Up to and including `/v1`.
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key (the key itself is never stored).
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The user's reviewer policy (Markdown), added to the fixed policy prompt.
    #[serde(default)]
    pub policy_text: Option<String>,
    /// Characters of recent session history given to the reviewer.
    #[serde(default = "default_context_budget")]
    pub context_budget: usize,
    #[serde(default)]
    pub fallback_policy: FallbackPolicy,
    /// The highest risk level the reviewer may allow without a person.
    #[serde(default = "default_max_auto_allow")]
    pub max_auto_allow: RiskLevel,
    #[serde(default)]
    pub on_high_risk: HighRiskAction,
    /// A reviewer denial with a person at the terminal: ask them (`ask`) or keep it (`deny`).
    #[serde(default)]
    pub on_deny: DenialAction,
    /// OpenAI-compatible servers only: `json-schema` (default) or `tool-call`.
    #[serde(default)]
    pub structured_output: StructuredOutput,
    /// Seconds a verdict is reused for the same normalised line, cwd, mode and policy.
    #[serde(default = "default_cache_ttl_s")]
    pub cache_ttl_s: u64,
    /// Rounds of read-only tool calls the reviewer may make before it must answer.
    #[serde(default = "default_max_tool_rounds")]
    pub max_tool_rounds: u32,
    #[serde(default)]
    pub breaker: BreakerConfig,
    #[serde(default)]
    pub budgets: BudgetConfig,
}

fn default_timeout_ms() -> u64 {
    30_000
}
fn default_max_tokens() -> u32 {
    1024
}
fn default_context_budget() -> usize {
    2000
}
fn default_max_auto_allow() -> RiskLevel {
    RiskLevel::Medium
}
fn default_cache_ttl_s() -> u64 {
    300
}
fn default_max_tool_rounds() -> u32 {
    4
}

/// `[approval]`: asking a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApprovalSettings {
    /// Seconds to wait for a person's answer before the line is denied.
    pub timeout_s: u64,
}

impl Default for ApprovalSettings {
    fn default() -> Self {
        ApprovalSettings { timeout_s: 60 }
    }
}

/// Where a setting came from, for `config show`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    pub key: String,
    pub value: String,
    pub source: String,
}

/// The merged, validated configuration.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub user_file: Option<PathBuf>,
    pub project_files: Vec<PathBuf>,
    /// `mode = …` from the user file.
    pub default_mode: Option<String>,
    /// Built-in rules first, then user rules, then project rules.
    pub rules: Vec<Rule>,
    pub profiles: BTreeMap<String, Profile>,
    pub custom: Option<Profile>,
    pub sandbox: SandboxSettings,
    pub reviewer: Option<ReviewerConfig>,
    pub approval: ApprovalSettings,
    pub provenance: Vec<Provenance>,
    /// A config file in effect could not be loaded: this is its error, and the rest of this
    /// config is the built-in one in its place (nothing of any file is in effect, not even the
    /// files that did load: a project file that did not load may only have tightened).
    pub invalid: Option<Error>,
}

impl Config {
    /// The built-in rules and defaults only: what applies with no config files at all.
    pub fn builtin() -> Config {
        Config {
            rules: builtin_rules(),
            ..Config::default()
        }
    }

    /// The built-in config in place of files that could not be loaded, marked with their error
    /// (see [`load_or_strictest`]).
    pub fn strictest(error: Error) -> Config {
        Config {
            invalid: Some(error),
            ..Config::builtin()
        }
    }

    /// What the mode resolver reads: the default mode, the profiles, `[custom]`, what the
    /// project files tightened, and whether the config is invalid (see [`crate::mode::resolve`]).
    pub fn modes(&self) -> Modes<'_> {
        Modes {
            default_mode: self.default_mode.as_deref(),
            profiles: &self.profiles,
            custom: self.custom.as_ref(),
            project_policy: self.sandbox.project_policy,
            project_network_off: self.sandbox.project_network_off,
            config_invalid: self.invalid.is_some(),
        }
    }

    /// What a decision reads: the rules in effect and whether a `[reviewer]` is configured (see
    /// [`crate::policy::decide_bytes`]).
    pub fn policy(&self) -> PolicyConfig<'_> {
        PolicyConfig {
            rules: &self.rules,
            reviewer_configured: self.reviewer.is_some(),
            typed_by_a_person: false,
            remotes: None,
            registries: None,
            ssh: None,
        }
    }

    /// Every config file in effect.
    pub fn files(&self) -> Vec<PathBuf> {
        self.user_file
            .iter()
            .chain(self.project_files.iter())
            .cloned()
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// File schemas.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserFile {
    #[serde(default)]
    mode: Option<Spanned<String>>,
    #[serde(default)]
    rules: Vec<RuleSpec>,
    #[serde(default)]
    profiles: BTreeMap<Spanned<String>, Profile>,
    #[serde(default)]
    custom: Option<Profile>,
    #[serde(default)]
    sandbox: Option<UserSandbox>,
    #[serde(default)]
    reviewer: Option<ReviewerConfig>,
    #[serde(default)]
    approval: Option<ApprovalSettings>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserSandbox {
    #[serde(default)]
    writable: Vec<String>,
    #[serde(default)]
    projects: Vec<String>,
    #[serde(default)]
    hide: Vec<String>,
    #[serde(default)]
    unhide: Vec<String>,
    #[serde(default)]
    pass_env: Vec<Spanned<String>>,
    #[serde(default)]
    limits: Option<UserLimits>,
}

/// `[sandbox.limits]`: counts and sizes (`"8G"`, `"512M"`, `"100k"` or a number of bytes).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserLimits {
    #[serde(default)]
    processes: Option<Spanned<u64>>,
    #[serde(default)]
    memory: Option<Spanned<String>>,
    #[serde(default)]
    file_size: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectFile {
    #[serde(default)]
    rules: Vec<RuleSpec>,
    #[serde(default)]
    sandbox: Option<ProjectSandbox>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectSandbox {
    #[serde(default)]
    policy: Option<Spanned<SandboxPolicy>>,
    #[serde(default)]
    network: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: Spanned<String>,
    pattern: Spanned<String>,
    field: Field,
    policy: Spanned<RulePolicy>,
    reason: String,
    /// What a matching line needs from the sandbox (`{ network = [443], writable = ["~/x"] }`):
    /// user rules only.
    #[serde(default)]
    needs: Option<crate::policy::grant::Needs>,
}

// ---------------------------------------------------------------------------------------------
// Loading.

/// Where the files are looked for. Built by the CLI from the environment; tests build their own.
#[derive(Debug, Clone)]
pub struct Locations {
    /// The user config file (it need not exist).
    pub user_file: Option<PathBuf>,
    /// Where project files are searched from, upward.
    pub cwd: PathBuf,
}

impl Locations {
    /// `$XDG_CONFIG_HOME/shellgate/config.toml`, else `~/.config/shellgate/config.toml` in the
    /// user's home from the password database.
    pub fn from_env(cwd: PathBuf) -> Locations {
        Locations {
            user_file: config_dir().map(|d| d.join("config.toml")),
            cwd,
        }
    }
}

/// shellgate's config directory (see [`crate::paths`]: the one place that resolves it).
pub fn config_dir() -> Option<PathBuf> {
    crate::paths::own().config_dir
}

/// Load and merge every config file in effect.
pub fn load(locations: &Locations) -> Result<Config, Error> {
    let mut config = Config::builtin();
    config.provenance.push(Provenance {
        key: "rules".to_owned(),
        value: format!("{} built-in rules", config.rules.len()),
        source: "built-in".to_owned(),
    });
    if let Some(path) = &locations.user_file
        && let Some(text) = read_optional(path)?
    {
        apply_user(&mut config, &text, path)?;
        config.user_file = Some(path.clone());
    }
    for path in project_files(&locations.cwd) {
        if let Some(text) = read_optional(&path)? {
            apply_project(&mut config, &text, &path)?;
            config.project_files.push(path);
        }
    }
    Ok(config)
}

/// The config in effect for `cwd`: the user file of this environment, plus the project files from
/// `cwd` upward.
pub fn load_for(cwd: &Path) -> Result<Config, Error> {
    load(&Locations::from_env(cwd.to_owned()))
}

/// The config in effect for `cwd`, or — when a file in effect cannot be loaded — the built-in
/// config marked invalid with that file's error ([`Config::strictest`]): what lines are decided
/// with. A broken file must not refuse every line (the person could not even run `shellgate
/// config check` or an editor on it), and must not loosen anything either: the resolver gives an
/// invalid config the strictest built-in policy.
pub fn load_or_strictest(cwd: &Path) -> Config {
    load_for(cwd).unwrap_or_else(Config::strictest)
}

/// What a person or an agent is told while the config is invalid: which file is broken and where,
/// what applies instead, and how to get out.
pub fn invalid_notice(error: &Error) -> String {
    format!(
        "shellgate's config is invalid: {}. Until it is fixed, shellgate applies its strictest \
         built-in policy (mode untrusted, built-in rules only: lines that only read run, every \
         other line is asked). `shellgate config check` shows the error; edit or remove the file",
        error.reason
    )
}

/// The built-in config plus one user config file that must exist (`eval --config`,
/// `eval --reviewer-from`). No project files are read.
pub fn load_user_file(path: &Path) -> Result<Config, Error> {
    let Some(text) = read_optional(path)? else {
        return Err(invalid(path, None, "the file does not exist"));
    };
    let mut config = Config::builtin();
    apply_user(&mut config, &text, path)?;
    config.user_file = Some(path.to_owned());
    Ok(config)
}

/// Appends an `allow` rule for `program` (matched on the program name, exactly) to the user
/// config file `path`, creating it when missing, and returns the rule's id. A person chose "allow
/// always" at the terminal. The new text is validated as a whole before it is written, so the
/// file can never be left broken (a broken config leaves only the strictest built-in policy in
/// effect); when it would not be valid, nothing is written and the error says why.
pub fn append_allow_rule(
    path: &Path,
    always: &crate::policy::always::Always,
    reason: &str,
) -> Result<String, Error> {
    use crate::policy::always::Scope;
    let (field, text) = match &always.scope {
        Scope::Program(program) => ("program", program.as_str()),
        Scope::Line(line) => ("line", line.as_str()),
    };
    let current = read_optional(path)?.unwrap_or_default();
    let slug: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    let base = format!("user-allow-{slug}");
    let taken = |id: &str| current.contains(&format!("\"{id}\""));
    let id = std::iter::once(base.clone())
        .chain((2..100).map(|n| format!("{base}-{n}")))
        .find(|id| !taken(id))
        .ok_or_else(|| invalid(path, None, "too many rules of that name already"))?;
    let quote = |text: &str| toml::Value::String(text.to_owned()).to_string();
    let pattern = match &always.scope {
        Scope::Program(program) => format!("^{}$", regex::escape(program)),
        // The line as asked, in the foreground, or started in the background with `&` (which
        // cannot be asked about: the person answers in the foreground once).
        Scope::Line(line) => format!("^{}(?:[ \\t]*&)?[ \\t]*$", regex::escape(line.trim_end())),
    };
    let mut block = format!(
        "\n[[rules]]\nid = {}\npattern = {}\nfield = \"{field}\"\npolicy = \"allow\"\nreason = {}\n",
        quote(&id),
        quote(&pattern),
        quote(reason),
    );
    if !always.needs.is_empty() {
        // An inline table: the same form a person writes (`needs = { network = [...] }`).
        let needs = toml::Value::try_from(&always.needs)
            .map_err(|e| invalid(path, None, &format!("the rule's needs: {e}")))?;
        block.push_str(&format!("needs = {needs}\n"));
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&block);
    apply_user(&mut Config::builtin(), &text, path)?;
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let staged = path.with_extension("toml.new");
        std::fs::write(&staged, &text)?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&staged, meta.permissions())?;
        }
        std::fs::rename(&staged, path)
    };
    write().map_err(|e| invalid(path, None, &format!("cannot be written: {e}")))?;
    Ok(id)
}

fn read_optional(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| invalid(path, None, "the file is not valid UTF-8")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(invalid(path, None, &format!("cannot be read: {e}"))),
    }
}

/// Every `.shellgate.toml` from `cwd` up to the root, outermost first.
pub fn project_files(cwd: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = cwd
        .ancestors()
        .map(|dir| dir.join(PROJECT_FILE))
        .filter(|p| p.is_file())
        .collect();
    found.reverse();
    found
}

/// The CONFIG_INVALID error for `path`, at `span` of `text` when known.
fn invalid(path: &Path, at: Option<(&str, Range<usize>)>, message: &str) -> Error {
    let location = match at {
        Some((text, span)) => {
            let (line, column) = line_column(text, span.start);
            format!("{}:{line}:{column}", path.display())
        }
        None => path.display().to_string(),
    };
    Error::new(Code::ConfigInvalid, format!("{location}: {message}"))
}

/// 1-based line and column (in characters) of a byte offset.
/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

fn parse_toml<T: for<'de> Deserialize<'de>>(text: &str, path: &Path) -> Result<T, Error> {
    toml::from_str(text).map_err(|e| {
        let message = e.message().trim_end_matches('\n').to_owned();
        invalid(path, e.span().map(|s| (text, s)), &message)
    })
}

fn apply_user(config: &mut Config, text: &str, path: &Path) -> Result<(), Error> {
    let file: UserFile = parse_toml(text, path)?;
    let source = format!("user file {}", path.display());
    if let Some(mode) = file.mode {
        let value = mode.get_ref();
        if crate::mode::ModeId::parse(value).is_none() {
            return Err(invalid(
                path,
                Some((text, mode.span())),
                &format!(
                    "`mode = \"{}\"` is not a mode: use one of ask, auto, untrusted, full, read-only, custom or profile:<id>",
                    crate::intake::visible(value)
                ),
            ));
        }
        config.provenance.push(row("mode", value, &source));
        config.default_mode = Some(mode.into_inner());
    }
    add_rules(
        config,
        file.rules,
        text,
        path,
        RuleSource::User(path.to_owned()),
    )?;
    if file.profiles.len() > MAX_PROFILES {
        return Err(invalid(
            path,
            None,
            &format!(
                "{} profiles; at most {MAX_PROFILES} are allowed",
                file.profiles.len()
            ),
        ));
    }
    for (id, profile) in file.profiles {
        check_profile_id(id.get_ref()).map_err(|m| invalid(path, Some((text, id.span())), &m))?;
        config.provenance.push(row(
            &format!("profiles.{}", id.get_ref()),
            &describe(&profile),
            &source,
        ));
        config.profiles.insert(id.into_inner(), profile);
    }
    if let Some(custom) = file.custom {
        config
            .provenance
            .push(row("custom", &describe(&custom), &source));
        config.custom = Some(custom);
    }
    if let Some(sandbox) = file.sandbox {
        let lists = [
            (
                "sandbox.writable",
                sandbox.writable,
                &mut config.sandbox.writable,
            ),
            (
                "sandbox.projects",
                sandbox.projects,
                &mut config.sandbox.projects,
            ),
            ("sandbox.hide", sandbox.hide, &mut config.sandbox.hide),
            ("sandbox.unhide", sandbox.unhide, &mut config.sandbox.unhide),
        ];
        for (key, dirs, into) in lists {
            for dir in dirs {
                config.provenance.push(row(key, &dir, &source));
                // Without a `HOME`, a `~/` directory names nothing and is left out.
                into.extend(crate::paths::home_relative(&dir));
            }
        }
        for name in sandbox.pass_env {
            if !crate::policy::environment::is_variable_name(name.get_ref()) {
                return Err(invalid(
                    path,
                    Some((text, name.span())),
                    "`sandbox.pass_env` names variables, and this is not a variable name",
                ));
            }
            config
                .provenance
                .push(row("sandbox.pass_env", name.get_ref(), &source));
            config.sandbox.pass_env.push(name.into_inner());
        }
        if let Some(limits) = sandbox.limits {
            apply_limits(config, limits, text, path, &source)?;
        }
    }
    if let Some(reviewer) = file.reviewer {
        config.provenance.push(row(
            "reviewer",
            &format!(
                "{:?} {} at {}",
                reviewer.provider, reviewer.model, reviewer.base_url
            ),
            &source,
        ));
        config.reviewer = Some(reviewer);
    }
    if let Some(approval) = file.approval {
        config.provenance.push(row(
            "approval.timeout_s",
            &approval.timeout_s.to_string(),
            &source,
        ));
        config.approval = approval;
    }
    Ok(())
}

/// `[sandbox.limits]` into the settings: each at least 1, sizes with a unit.
fn apply_limits(
    config: &mut Config,
    limits: UserLimits,
    text: &str,
    path: &Path,
    source: &str,
) -> Result<(), Error> {
    if let Some(processes) = limits.processes {
        if *processes.get_ref() == 0 {
            return Err(invalid(
                path,
                Some((text, processes.span())),
                "`sandbox.limits.processes` must be at least 1",
            ));
        }
        config.provenance.push(row(
            "sandbox.limits.processes",
            &processes.get_ref().to_string(),
            source,
        ));
        config.sandbox.limits.processes = processes.into_inner();
    }
    let sizes = [
        ("sandbox.limits.memory", limits.memory),
        ("sandbox.limits.file_size", limits.file_size),
    ];
    for (key, value) in sizes {
        let Some(value) = value else { continue };
        let bytes = parse_size(value.get_ref()).ok_or_else(|| {
            invalid(
                path,
                Some((text, value.span())),
                &format!(
                    "`{key} = \"{}\"` is not a size: use a number of bytes or one with K, M, G or T \
                     (\"8G\"), at least 1",
                    crate::intake::visible(value.get_ref())
                ),
            )
        })?;
        config.provenance.push(row(key, value.get_ref(), source));
        match key {
            "sandbox.limits.memory" => config.sandbox.limits.memory = bytes,
            _ => config.sandbox.limits.file_size = bytes,
        }
    }
    Ok(())
}

/// `"8G"`, `"512m"`, `"100K"`, `"2T"` or `"4096"` as bytes (binary units); at least 1.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, ""),
    };
    let shift = match unit
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return None,
    };
    digits
        .parse::<u64>()
        .ok()?
        .checked_mul(1 << shift)
        .filter(|bytes| *bytes > 0)
}

fn apply_project(config: &mut Config, text: &str, path: &Path) -> Result<(), Error> {
    let file: ProjectFile = parse_toml(text, path)?;
    let source = format!("project file {}", path.display());
    for rule in &file.rules {
        if *rule.policy.get_ref() == RulePolicy::Allow {
            return Err(invalid(
                path,
                Some((text, rule.policy.span())),
                "a project file may only tighten: `allow` rules belong in the user config",
            ));
        }
        if rule.needs.is_some() {
            return Err(invalid(
                path,
                Some((text, rule.id.span())),
                "a project file may only tighten: `needs` widen the sandbox and belong in the user config",
            ));
        }
    }
    add_rules(
        config,
        file.rules,
        text,
        path,
        RuleSource::Project(path.to_owned()),
    )?;
    if let Some(sandbox) = file.sandbox {
        if let Some(policy) = sandbox.policy {
            if *policy.get_ref() == SandboxPolicy::FullAccess {
                return Err(invalid(
                    path,
                    Some((text, policy.span())),
                    "a project file may only narrow the sandbox; it can never grant Full access",
                ));
            }
            let narrowed = match config.sandbox.project_policy {
                Some(current) => current.min(*policy.get_ref()),
                None => *policy.get_ref(),
            };
            config.provenance.push(row(
                "sandbox.policy (narrowing)",
                policy.get_ref().as_str(),
                &source,
            ));
            config.sandbox.project_policy = Some(narrowed);
        }
        if let Some(network) = sandbox.network {
            if *network.get_ref() {
                return Err(invalid(
                    path,
                    Some((text, network.span())),
                    "a project file may only turn the network off, never on",
                ));
            }
            config
                .provenance
                .push(row("sandbox.network", "false", &source));
            config.sandbox.project_network_off = true;
        }
    }
    Ok(())
}

fn add_rules(
    config: &mut Config,
    specs: Vec<RuleSpec>,
    text: &str,
    path: &Path,
    source: RuleSource,
) -> Result<(), Error> {
    for spec in specs {
        let id = spec.id.get_ref();
        let valid_id = !id.is_empty()
            && id.len() <= 64
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !valid_id {
            return Err(invalid(
                path,
                Some((text, spec.id.span())),
                "a rule id must be 1-64 characters of letters, digits, `.`, `_` and `-`",
            ));
        }
        if id.starts_with("builtin.") || config.rules.iter().any(|r| &r.id == id) {
            return Err(invalid(
                path,
                Some((text, spec.id.span())),
                &format!(
                    "rule id `{id}` is already used (ids must be unique; `builtin.` is reserved)"
                ),
            ));
        }
        let regex = regex::RegexBuilder::new(spec.pattern.get_ref())
            .size_limit(1 << 20)
            .build()
            .map_err(|e| {
                invalid(
                    path,
                    Some((text, spec.pattern.span())),
                    &format!("invalid regex: {}", e.to_string().replace('\n', " ")),
                )
            })?;
        config.provenance.push(row(
            &format!("rules.{id}"),
            &format!(
                "{} {:?} /{}/",
                spec.policy.get_ref().as_str(),
                spec.field,
                spec.pattern.get_ref()
            ),
            &source.to_string(),
        ));
        config.rules.push(Rule {
            needs: spec.needs,
            id: spec.id.into_inner(),
            policy: spec.policy.into_inner(),
            reason: spec.reason,
            source: source.clone(),
            matcher: Matcher::Regex {
                field: spec.field,
                regex,
            },
        });
    }
    Ok(())
}

fn describe(p: &Profile) -> String {
    format!(
        "approval={} sandbox={} network={}",
        p.approval.as_str(),
        p.sandbox.as_str(),
        p.network
    )
}

fn row(key: &str, value: &str, source: &str) -> Provenance {
    Provenance {
        key: key.to_owned(),
        value: value.to_owned(),
        source: source.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_allow_rule_is_appended_valid_and_unique() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shellgate/config.toml");
        let plain = |program: &str| crate::policy::always::Always {
            scope: crate::policy::always::Scope::Program(program.to_owned()),
            needs: crate::policy::grant::Needs::default(),
        };
        let first = super::append_allow_rule(&path, &plain("mk.dir"), "why").unwrap();
        assert_eq!(first, "user-allow-mk-dir");
        let second = super::append_allow_rule(&path, &plain("mk.dir"), "why").unwrap();
        assert_eq!(second, "user-allow-mk-dir-2");
        let config = super::load_user_file(&path).unwrap();
        let rule = config.rules.iter().find(|r| r.id == first).unwrap();
        assert_eq!(rule.policy, super::RulePolicy::Allow);
        // A file the new block cannot extend validly is left as it was.
        std::fs::write(&path, "rules = []\n").unwrap();
        assert!(super::append_allow_rule(&path, &plain("ls"), "why").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "rules = []\n");
    }

    /// An "always" answer to a network question writes the needs the question showed, in the
    /// form a person writes, and reading the file back gives exactly them.
    #[test]
    fn an_allow_rule_keeps_the_needs_it_was_given() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shellgate/config.toml");
        let needs: crate::policy::grant::Needs = toml::from_str(
            "network = [\"registry.npmjs.org:443\", \"*.npmjs.org:443\"]\nwritable = [\"~/.npm\"]\nlisten = [5173]",
        )
        .unwrap();
        let line = "npm install \"a b\" 'c' $(x) \\ [y]*";
        let always = crate::policy::always::Always {
            scope: crate::policy::always::Scope::Line(line.into()),
            needs: needs.clone(),
        };
        let id = super::append_allow_rule(&path, &always, "why").unwrap();
        assert_eq!(id, "user-allow-npm-install--a-b---c----x-----y--");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("needs = {"), "{text}");
        assert!(text.contains("field = \"line\""), "{text}");
        let config = super::load_user_file(&path).unwrap();
        let rule = config.rules.iter().find(|r| r.id == id).unwrap();
        assert_eq!(rule.needs.as_ref(), Some(&needs));
        // The pattern is the line itself, and nothing else.
        let crate::policy::rules::Matcher::Regex { regex, .. } = &rule.matcher else {
            panic!("not a pattern rule");
        };
        assert!(regex.is_match(line));
        assert!(regex.is_match(&format!("{line} &")));
        assert!(!regex.is_match(&format!("{line} x")));
        assert!(!regex.is_match(&format!("{line}; x")));
        assert!(!regex.is_match(&format!("x {line}")));
        assert!(!regex.is_match("npm install"));
    }

    use super::*;
    use crate::mode::MAX_PROFILE_ID_LEN;

    #[test]
    fn names_match_the_config_form() {
        for r in RiskLevel::ALL {
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
        }
        for a in BreakerAction::ALL {
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
        for p in [Provider::Openai, Provider::Anthropic] {
            assert_eq!(serde_json::to_value(p).unwrap(), p.as_str());
        }
    }

    fn user(text: &str) -> Result<Config, Error> {
        let mut config = Config::builtin();
        apply_user(&mut config, text, Path::new("/u/config.toml")).map(|_| config)
    }

    #[test]
    fn sandbox_limits_are_read_with_their_units() {
        assert_eq!(parse_size("8G"), Some(8 << 30));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("100KiB"), Some(100 << 10));
        assert_eq!(parse_size("4096"), Some(4096));
        for bad in ["", "0", "8X", "-1", "1.5G", "G"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
        let config =
            user("[sandbox.limits]\nprocesses = 64\nmemory = \"1G\"\nfile_size = \"10M\"\n")
                .unwrap();
        assert_eq!(config.sandbox.limits.processes, 64);
        assert_eq!(config.sandbox.limits.memory, 1 << 30);
        assert_eq!(config.sandbox.limits.file_size, 10 << 20);
        let untouched = user("").unwrap().sandbox.limits;
        assert_eq!(
            untouched.processes,
            crate::sandbox::policy::Limits::PROCESSES
        );
        for bad in [
            "[sandbox.limits]\nprocesses = 0\n",
            "[sandbox.limits]\nmemory = \"lots\"\n",
            "[sandbox.limits]\ncpu = 1\n",
        ] {
            assert_eq!(user(bad).unwrap_err().code, Code::ConfigInvalid, "{bad}");
        }
    }

    fn project(text: &str) -> Result<Config, Error> {
        let mut config = Config::builtin();
        apply_project(&mut config, text, Path::new("/p/.shellgate.toml")).map(|_| config)
    }

    #[track_caller]
    fn assert_error_at(result: Result<Config, Error>, location: &str, words: &str) {
        let err = result.expect_err("expected a config error");
        assert_eq!(err.code, Code::ConfigInvalid);
        assert!(
            err.reason.contains(location),
            "{location} not in: {}",
            err.reason
        );
        assert!(err.reason.contains(words), "{words} not in: {}", err.reason);
    }

    #[test]
    fn pass_env_names_variables_in_the_user_file_only() {
        let config = user("[sandbox]\npass_env = [\"GH_TOKEN\", \"NPM_TOKEN\"]\n").unwrap();
        assert_eq!(config.sandbox.pass_env, ["GH_TOKEN", "NPM_TOKEN"]);
        assert_error_at(
            user("[sandbox]\npass_env = [\"GH TOKEN\"]\n"),
            ":2:13",
            "not a variable name",
        );
        // A project file, which the agent can write, cannot pass anything.
        assert!(project("[sandbox]\npass_env = [\"GH_TOKEN\"]\n").is_err());
    }

    #[test]
    fn a_full_user_file_loads() {
        let config = user(
            r#"
mode = "auto"
[[rules]]
id = "no-push"
pattern = "^git push"
field = "argv"
policy = "human"
reason = "pushes leave the machine"
[profiles.ci]
name = "CI"
approval = "none"
sandbox = "workspace-write"
network = true
[custom]
approval = "ask"
sandbox = "read-only"
[sandbox]
writable = ["/var/cache/x"]
[reviewer]
provider = "openai"
base_url = "http://127.0.0.1:1/v1"
model = "m"
[reviewer.breaker]
consecutive_denies = 2
[approval]
timeout_s = 5
"#,
        )
        .unwrap();
        assert_eq!(config.default_mode.as_deref(), Some("auto"));
        assert!(config.rules.iter().any(|r| r.id == "no-push"));
        assert!(config.profiles["ci"].network);
        assert_eq!(
            config.reviewer.as_ref().unwrap().breaker.consecutive_denies,
            2
        );
        assert_eq!(config.reviewer.as_ref().unwrap().breaker.window_size, 10);
        assert_eq!(config.approval.timeout_s, 5);
        assert!(
            config
                .provenance
                .iter()
                .any(|p| p.key == "mode" && p.source.contains("/u/config.toml"))
        );
    }

    #[test]
    fn unknown_keys_are_errors_with_line_and_column() {
        assert_error_at(
            user("mode = \"ask\"\ncolour = 1\n"),
            "/u/config.toml:2:1",
            "unknown field `colour`",
        );
        assert_error_at(
            user(
                "[reviewer]\nprovider = \"openai\"\nbase_url = \"x\"\nmodel = \"m\"\ntimeout = 1\n",
            ),
            "/u/config.toml:5:1",
            "unknown field `timeout`",
        );
    }

    #[test]
    fn bad_values_are_errors_with_line_and_column() {
        assert_error_at(
            user(
                "[[rules]]\nid = \"a\"\npattern = \"x\"\nfield = \"argv\"\npolicy = \"maybe\"\nreason = \"r\"\n",
            ),
            "/u/config.toml:5:10",
            "maybe",
        );
        assert_error_at(
            user("mode = \"turbo\"\n"),
            "/u/config.toml:1:8",
            "not a mode",
        );
        assert_error_at(
            user(
                "[[rules]]\nid = \"a\"\npattern = \"(unclosed\"\nfield = \"argv\"\npolicy = \"never\"\nreason = \"r\"\n",
            ),
            "/u/config.toml:3:11",
            "invalid regex",
        );
        assert_error_at(user("mode = [1\n"), "/u/config.toml:1", "");
    }

    #[test]
    fn rule_ids_are_unique_and_builtin_is_reserved() {
        let rule = |id: &str| {
            format!(
                "[[rules]]\nid = \"{id}\"\npattern = \"x\"\nfield = \"line\"\npolicy = \"ai\"\nreason = \"r\"\n"
            )
        };
        assert_error_at(
            user(&format!("{}{}", rule("a"), rule("a"))),
            ":8:6",
            "already used",
        );
        assert_error_at(user(&rule("builtin.rm-system")), ":2:6", "reserved");
        assert_error_at(user(&rule("bad id")), ":2:6", "rule id");
    }

    #[test]
    fn profile_ids_are_bounded_and_cannot_shadow_builtins() {
        assert_error_at(
            user("[profiles.full]\napproval = \"none\"\nsandbox = \"workspace-write\"\n"),
            ":1:11",
            "collides",
        );
        let long = "x".repeat(MAX_PROFILE_ID_LEN + 1);
        assert_error_at(
            user(&format!(
                "[profiles.{long}]\napproval = \"ask\"\nsandbox = \"read-only\"\n"
            )),
            ":1:11",
            "bytes long",
        );
        assert_error_at(
            user("[profiles.\"a\\u001b\"]\napproval = \"ask\"\nsandbox = \"read-only\"\n"),
            ":1:11",
            "may only contain",
        );
        let many: String = (0..=MAX_PROFILES)
            .map(|i| format!("[profiles.p{i}]\napproval = \"ask\"\nsandbox = \"read-only\"\n"))
            .collect();
        assert_error_at(user(&many), "/u/config.toml", "at most");
    }

    #[test]
    fn project_files_may_only_tighten() {
        assert_error_at(
            project(
                "[[rules]]\nid = \"p\"\npattern = \"x\"\nfield = \"argv\"\npolicy = \"allow\"\nreason = \"r\"\n",
            ),
            "/p/.shellgate.toml:5:10",
            "only tighten",
        );
        assert_error_at(
            project("[sandbox]\npolicy = \"full-access\"\n"),
            ":2:10",
            "never grant Full access",
        );
        assert_error_at(project("[sandbox]\nnetwork = true\n"), ":2:11", "never on");
        assert_error_at(project("mode = \"full\"\n"), ":1:1", "unknown field `mode`");
        assert_error_at(
            project("[reviewer]\nprovider = \"openai\"\n"),
            ":1:2",
            "unknown field `reviewer`",
        );
        let config = project(
            "[sandbox]\npolicy = \"read-only\"\nnetwork = false\n[[rules]]\nid = \"p\"\npattern = \"x\"\nfield = \"argv\"\npolicy = \"never\"\nreason = \"r\"\n",
        )
        .unwrap();
        assert_eq!(config.sandbox.project_policy, Some(SandboxPolicy::ReadOnly));
        assert!(config.sandbox.project_network_off);
    }

    #[test]
    fn load_merges_user_and_every_project_file_upward() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let rule = |id: &str| {
            format!(
                "[[rules]]\nid = \"{id}\"\npattern = \"x\"\nfield = \"argv\"\npolicy = \"never\"\nreason = \"r\"\n"
            )
        };
        std::fs::write(root.join(PROJECT_FILE), rule("outer")).unwrap();
        std::fs::write(root.join("a/b").join(PROJECT_FILE), rule("inner")).unwrap();
        std::fs::write(root.join("user.toml"), "mode = \"auto\"\n").unwrap();
        let config = load(&Locations {
            user_file: Some(root.join("user.toml")),
            cwd: sub.clone(),
        })
        .unwrap();
        assert_eq!(config.default_mode.as_deref(), Some("auto"));
        let ids: Vec<&str> = config.rules.iter().map(|r| r.id.as_str()).collect();
        assert!(ids.contains(&"outer") && ids.contains(&"inner"), "{ids:?}");
        assert_eq!(config.project_files.len(), 2);
        // A broken project file anywhere up the tree fails the whole load.
        std::fs::write(root.join(PROJECT_FILE), "nonsense = 1\n").unwrap();
        let err = load(&Locations {
            user_file: None,
            cwd: sub,
        })
        .unwrap_err();
        assert_eq!(err.code, Code::ConfigInvalid);
    }

    #[test]
    fn missing_files_are_fine_and_give_the_builtin_config() {
        let dir = tempfile::tempdir().unwrap();
        let config = load(&Locations {
            user_file: Some(dir.path().join("none.toml")),
            cwd: dir.path().to_owned(),
        })
        .unwrap();
        assert!(config.user_file.is_none());
        assert_eq!(config.rules.len(), builtin_rules().len());
    }
}
