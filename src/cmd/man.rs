//! `shellgate man`: print the manual page `shellgate.1` (roff), generated from the same clap
//! definitions that parse the command line, with the exit statuses from [`Code`].
//!
//! Hidden from `--help` and the completions: it is for `install.sh` and packagers; a person reads
//! the result with `man shellgate` (or `shellgate man | man -l -`).
//!
//! `clap_mangen` renders the page's head (NAME, SYNOPSIS, DESCRIPTION, OPTIONS) and VERSION. Its
//! SUBCOMMANDS section only names a page per subcommand (`shellgate-check(1)`), which nothing
//! installs, so COMMANDS is rendered here instead: every visible subcommand, nested ones too, with
//! its usage, its description and its visible arguments, all on the one page.

use super::completions::write_stdout;
use crate::error::Code;
use clap::Arg;
use clap_mangen::Man;
use clap_mangen::roff::{Inline, Roff, bold, italic, line_break, roman};
use std::process::ExitCode;

/// The page of `cli`, the whole command line (`cli::Cli`: the interface is the caller's, so the
/// commands do not import it back).
pub fn run(cli: clap::Command) -> ExitCode {
    match page(cli) {
        Ok(page) => write_stdout(&page, "man"),
        Err(e) => {
            eprintln!("shellgate man: cannot render the manual page: {e}");
            ExitCode::from(Code::Internal.exit_status())
        }
    }
}

/// The whole page, in the usual order of a section 1 page.
pub fn page(mut cli: clap::Command) -> std::io::Result<Vec<u8>> {
    // Built, the subcommands know their full names (`shellgate log verify`) and usages.
    cli.build();
    let man = Man::new(cli.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    let mut sections = Roff::default();
    sections.control("SH", ["COMMANDS"]);
    for command in visible_subcommands(&cli) {
        command_entry(&mut sections, command);
    }
    exit_status_section(&mut sections);
    environment_section(&mut sections);
    sections.to_writer(&mut page)?;
    man.render_version_section(&mut page)?;
    Ok(page)
}

/// The subcommands a person sees, without clap's own `help`.
fn visible_subcommands(command: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
}

/// One subcommand: its usage, what it does, its arguments; then its own subcommands.
fn command_entry(roff: &mut Roff, command: &clap::Command) {
    let name = command.get_bin_name().unwrap_or(command.get_name());
    roff.control("SS", [name]);
    roff.text(usage_lines(command));
    let about = command.get_long_about().or(command.get_about());
    if let Some(about) = about {
        roff.control("PP", []);
        roff.text([roman(about.to_string())]);
    }
    for arg in command.get_arguments().filter(|arg| shown(arg)) {
        roff.control("TP", []);
        roff.text(arg_heading(arg));
        roff.text([roman(arg_help(arg))]);
    }
    for sub in visible_subcommands(command) {
        command_entry(roff, sub);
    }
}

/// clap's usage (one line per form: `shellgate log [OPTIONS]`, `shellgate log <COMMAND>`), bold.
fn usage_lines(command: &clap::Command) -> Vec<Inline> {
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:");
    let mut lines = Vec::new();
    for form in usage.lines().map(str::trim).filter(|form| !form.is_empty()) {
        if !lines.is_empty() {
            lines.push(line_break());
        }
        lines.push(bold(form));
    }
    lines
}

/// Visible, and not clap's own `--help`/`--version` (the page's OPTIONS lists those once).
fn shown(arg: &Arg) -> bool {
    !arg.is_hide_set() && !matches!(arg.get_id().as_str(), "help" | "version")
}

/// `-s, --long VALUE` for an option, `LINE` for a positional argument.
fn arg_heading(arg: &Arg) -> Vec<Inline> {
    let value = arg
        .get_value_names()
        .and_then(|names| names.first())
        .map_or_else(|| arg.get_id().as_str().to_uppercase(), |n| n.to_string());
    if arg.is_positional() {
        return vec![italic(value)];
    }
    let mut heading = Vec::new();
    if let Some(short) = arg.get_short() {
        heading.push(bold(format!("-{short}")));
    }
    if let Some(long) = arg.get_long() {
        if !heading.is_empty() {
            heading.push(roman(", "));
        }
        heading.push(bold(format!("--{long}")));
    }
    if arg.get_action().takes_values() {
        heading.push(roman(" "));
        heading.push(italic(value));
    }
    heading
}

/// The argument's help, with its possible values and its default.
fn arg_help(arg: &Arg) -> String {
    let mut help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(ToString::to_string)
        .unwrap_or_default();
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|value| !value.is_hide_set())
        .map(|value| value.get_name().to_owned())
        .collect();
    if !values.is_empty() && !arg.is_hide_possible_values_set() {
        sentence(
            &mut help,
            &format!("Possible values: {}.", values.join(", ")),
        );
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|value| value.to_string_lossy().into_owned())
        .collect();
    // A flag's default (`false`) says nothing.
    if !defaults.is_empty() && arg.get_action().takes_values() && !arg.is_hide_default_value_set() {
        sentence(&mut help, &format!("Default: {}.", defaults.join(", ")));
    }
    help
}

/// Appends a sentence; clap drops the full stop of a one-line doc comment, so it is put back.
fn sentence(text: &mut String, more: &str) {
    if !text.is_empty() && !text.ends_with('.') {
        text.push('.');
    }
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(more);
}

/// EXIT STATUS: one tagged paragraph per stable code, as `shellgate exit-codes` lists them.
fn exit_status_section(roff: &mut Roff) {
    roff.control("SH", ["EXIT STATUS"]);
    roff.text([roman(
        "Every outcome has a stable code (the code field of --json output) and an exit status; \
         a line that shellgate run allows exits with its own status. shellgate exit-codes \
         prints this table.",
    )]);
    for code in Code::ALL {
        roff.control("TP", []);
        roff.text([
            bold(code.exit_status().to_string()),
            roman(format!("  {code}")),
        ]);
        roff.text([roman(code.meaning().replace('`', ""))]);
    }
}

/// ENVIRONMENT: the variables a person may set ([`crate::own_env`], the rows a person sets),
/// and `NO_COLOR`.
fn environment_section(roff: &mut Roff) {
    roff.control("SH", ["ENVIRONMENT"]);
    let own = crate::own_env::for_a_person().map(|v| (v.name, v.meaning));
    let no_color = (
        "NO_COLOR",
        "When set and not empty, shellgate and its help print no colour or other styling.",
    );
    for (name, meaning) in own.chain([no_color]) {
        roff.control("TP", []);
        roff.text([bold(name)]);
        roff.text([roman(meaning)]);
    }
}
