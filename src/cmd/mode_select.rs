//! The pure part of `shellgate mode [ID]`: which modes can be chosen, and which one an input means.
//!
//! Profile ids come from configuration files, which may be written by anyone who could write to the
//! workspace: they are untrusted. Their number and length are bounded, ids must use a small safe
//! charset, display names are stripped of control characters and cut, and a profile may not take a
//! built-in id. Selection accepts an exact id or an unambiguous display name (or a unique prefix of
//! one); anything ambiguous or unknown is rejected with the candidates.

use crate::error::{Error, Result};
use crate::mode::{MAX_PROFILE_ID_LEN, MAX_PROFILES, check_profile_id};

/// The longest display name shown (in characters); longer ones are cut.
pub const MAX_DISPLAY_NAME_CHARS: usize = 48;

/// One mode a person can choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeChoice {
    pub id: String,
    pub display_name: String,
    pub builtin: bool,
}

/// A profile from configuration that was not accepted, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedProfile {
    /// The id, safe to display (control characters removed, cut).
    pub shown_id: String,
    pub reason: String,
}

/// The choices, plus the profiles that were refused.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModeChoices {
    pub choices: Vec<ModeChoice>,
    pub rejected: Vec<RejectedProfile>,
}

/// The built-in modes with their display names.
pub fn builtin_choices() -> Vec<ModeChoice> {
    [
        ("ask", "Ask"),
        ("auto", "Auto review"),
        ("untrusted", "Untrusted"),
        ("full", "Full access"),
        ("read-only", "Read only"),
        ("custom", "Custom"),
    ]
    .into_iter()
    .map(|(id, name)| ModeChoice {
        id: id.to_string(),
        display_name: name.to_string(),
        builtin: true,
    })
    .collect()
}

/// Text from configuration made safe to show: control and invisible characters removed, whitespace
/// runs collapsed, cut to `max_chars`.
pub fn display_safe(text: &str, max_chars: usize) -> String {
    let cleaned: String = text
        .chars()
        .filter(|ch| !ch.is_control() && crate::intake::forbidden_name(*ch).is_none())
        .collect();
    let collapsed = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    match collapsed.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &collapsed[..cut]),
        None => collapsed,
    }
}

/// Builds the choices from the built-ins and the configured profiles `(id, display name)`, in
/// configuration order.
pub fn mode_choices(profiles: &[(String, Option<String>)]) -> ModeChoices {
    let mut result = ModeChoices {
        choices: builtin_choices(),
        rejected: Vec::new(),
    };
    for (index, (id, name)) in profiles.iter().enumerate() {
        let shown_id = display_safe(id, MAX_PROFILE_ID_LEN);
        let reject = |reason: String| RejectedProfile {
            shown_id: shown_id.clone(),
            reason,
        };
        if index >= MAX_PROFILES {
            result.rejected.push(reject(format!(
                "more than {MAX_PROFILES} profiles are configured"
            )));
        } else if let Err(reason) = check_profile_id(id) {
            result.rejected.push(reject(reason));
        } else if result
            .choices
            .iter()
            .any(|choice| choice.id == format!("profile:{id}"))
        {
            result
                .rejected
                .push(reject("the id is configured twice".into()));
        } else {
            let display_name = name
                .as_deref()
                .map(|name| display_safe(name, MAX_DISPLAY_NAME_CHARS))
                .filter(|name| !name.is_empty())
                .unwrap_or_else(|| id.clone());
            result.choices.push(ModeChoice {
                id: format!("profile:{id}"),
                display_name,
                builtin: false,
            });
        }
    }
    result
}

/// Lowercase, with `-`, `_` and whitespace runs as one space, for comparing names.
fn normalized(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Finds the mode `input` names: an exact id, else a display name (case and separators ignored),
/// else a unique prefix of a display name or id.
pub fn select_mode<'a>(choices: &'a [ModeChoice], input: &str) -> Result<&'a ModeChoice> {
    let exact = |choice: &&ModeChoice| {
        choice.id == input || choice.id.strip_prefix("profile:") == Some(input)
    };
    if let Some(choice) = choices.iter().find(exact) {
        return Ok(choice);
    }
    let wanted = normalized(input);
    if wanted.is_empty() {
        return Err(unknown(choices, input));
    }
    let by_name: Vec<&ModeChoice> = choices
        .iter()
        .filter(|choice| normalized(&choice.display_name) == wanted)
        .collect();
    match by_name.as_slice() {
        [one] => return Ok(one),
        [] => {}
        many => return Err(ambiguous(input, many)),
    }
    let by_prefix: Vec<&ModeChoice> = choices
        .iter()
        .filter(|choice| {
            normalized(&choice.display_name).starts_with(&wanted)
                || normalized(&choice.id).starts_with(&wanted)
        })
        .collect();
    match by_prefix.as_slice() {
        [one] => Ok(one),
        [] => Err(unknown(choices, input)),
        many => Err(ambiguous(input, many)),
    }
}

fn describe(choice: &ModeChoice) -> String {
    format!("{} ({})", choice.id, choice.display_name)
}

fn ambiguous(input: &str, matches: &[&ModeChoice]) -> Error {
    let candidates: Vec<String> = matches.iter().map(|choice| describe(choice)).collect();
    Error::usage(format!(
        "{:?} matches more than one mode: {}; use the id",
        display_safe(input, MAX_DISPLAY_NAME_CHARS),
        candidates.join(", ")
    ))
}

fn unknown(choices: &[ModeChoice], input: &str) -> Error {
    let candidates: Vec<String> = choices.iter().map(describe).collect();
    Error::usage(format!(
        "no mode {:?}; choose one of: {}",
        display_safe(input, MAX_DISPLAY_NAME_CHARS),
        candidates.join(", ")
    ))
}

/// The list `shellgate mode` prints, the current mode marked with `*`.
pub fn render_choices(choices: &ModeChoices, current: &str) -> String {
    let mut out = String::new();
    for choice in &choices.choices {
        let mark = if choice.id == current { "*" } else { " " };
        let origin = if choice.builtin { "" } else { "  [profile]" };
        out.push_str(&format!(
            "{mark} {:<12} {}{origin}\n",
            choice.id, choice.display_name
        ));
    }
    for rejected in &choices.rejected {
        out.push_str(&format!(
            "  (profile {:?} ignored: {})\n",
            rejected.shown_id, rejected.reason
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;
    use crate::mode::BUILTIN_MODE_IDS;

    fn profiles(list: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
        list.iter()
            .map(|(id, name)| (id.to_string(), name.map(str::to_string)))
            .collect()
    }

    #[test]
    fn exact_ids_and_display_names() {
        let choices = mode_choices(&profiles(&[("ci", Some("CI runner"))])).choices;
        assert_eq!(select_mode(&choices, "full").unwrap().id, "full");
        assert_eq!(select_mode(&choices, "Full Access").unwrap().id, "full");
        assert_eq!(select_mode(&choices, "full_access").unwrap().id, "full");
        assert_eq!(select_mode(&choices, "ci runner").unwrap().id, "profile:ci");
        assert_eq!(select_mode(&choices, "read").unwrap().id, "read-only");
        assert_eq!(select_mode(&choices, "ci").unwrap().id, "profile:ci");
        assert_eq!(
            select_mode(&choices, "profile:ci").unwrap().id,
            "profile:ci"
        );
    }

    #[test]
    fn ambiguous_and_unknown_list_candidates() {
        let choices = mode_choices(&profiles(&[("auto-strict", Some("Auto strict"))])).choices;
        let err = select_mode(&choices, "au").unwrap_err();
        assert_eq!(err.code, Code::Usage);
        assert!(err.reason.contains("more than one"), "{}", err.reason);
        assert!(err.reason.contains("auto (Auto review)"));
        assert!(err.reason.contains("profile:auto-strict (Auto strict)"));
        let err = select_mode(&choices, "nope").unwrap_err();
        assert!(err.reason.contains("no mode"), "{}", err.reason);
        assert!(err.reason.contains("read-only (Read only)"));
        assert!(select_mode(&choices, "").is_err());
        assert!(select_mode(&choices, " - ").is_err());
    }

    #[test]
    fn two_profiles_with_one_display_name_are_ambiguous_by_name() {
        let choices =
            mode_choices(&profiles(&[("a1", Some("Same")), ("a2", Some("same"))])).choices;
        assert!(
            select_mode(&choices, "Same")
                .unwrap_err()
                .reason
                .contains("profile:a1 (Same)")
        );
        assert_eq!(select_mode(&choices, "a2").unwrap().id, "profile:a2");
    }

    #[test]
    fn untrusted_profiles_are_bounded_and_cleaned() {
        let long_id = "x".repeat(MAX_PROFILE_ID_LEN + 1);
        let many: Vec<(String, Option<String>)> = (0..MAX_PROFILES + 5)
            .map(|i| (format!("p{i}"), None))
            .collect();
        let result = mode_choices(&many);
        assert_eq!(result.choices.len(), BUILTIN_MODE_IDS.len() + MAX_PROFILES);
        assert_eq!(result.rejected.len(), 5);

        let result = mode_choices(&profiles(&[
            (&long_id, None),
            ("full", Some("Totally safe")),
            ("evil\u{1b}[2J", None),
            ("Upper", None),
            ("ok", Some("Nice\u{1b}[31m red\u{202e}txt\n")),
            ("ok", None),
        ]));
        let reasons: Vec<&str> = result.rejected.iter().map(|r| r.reason.as_str()).collect();
        assert_eq!(result.rejected.len(), 5, "{reasons:?}");
        assert!(reasons[1].contains("built-in"));
        assert!(reasons[4].contains("twice"));
        assert!(result.rejected[2].shown_id.chars().all(|c| !c.is_control()));
        let ok = result
            .choices
            .iter()
            .find(|c| c.id == "profile:ok")
            .unwrap();
        assert_eq!(ok.display_name, "Nice[31m redtxt");
        let long_name = mode_choices(&profiles(&[("n", Some(&"y".repeat(500)))]));
        let shown = &long_name.choices.last().unwrap().display_name;
        assert_eq!(shown.chars().count(), MAX_DISPLAY_NAME_CHARS + 1);
    }

    #[test]
    fn hostile_input_is_not_echoed_raw() {
        let choices = builtin_choices();
        let err = select_mode(&choices, "\u{1b}]0;pwned\u{7}").unwrap_err();
        assert!(!err.reason.contains('\u{1b}'));
        assert!(!err.reason.contains('\u{7}'));
    }

    #[test]
    fn current_mode_is_marked() {
        let listing = render_choices(&mode_choices(&profiles(&[("ci", None)])), "auto");
        assert!(listing.contains("* auto"));
        assert!(listing.contains("  profile:ci"));
        assert!(listing.contains("[profile]"));
    }

    #[test]
    fn mode_ids() {
        use crate::mode::is_valid_mode_id;
        for good in ["ask", "read-only", "profile:p_1", "profile:0x"] {
            assert!(is_valid_mode_id(good), "{good}");
        }
        let long = format!("profile:{}", "a".repeat(33));
        for bad in [
            "",
            "p_1",
            "profile:",
            "profile:-x",
            "profile:A",
            "profile:a b",
            "profile:a.b",
            "profile:../x",
            &long,
            "profile:full",
        ] {
            assert!(!is_valid_mode_id(bad), "{bad}");
        }
    }
}
