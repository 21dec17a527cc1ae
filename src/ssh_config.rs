//! The person's `~/.ssh/config`, for the decision on `ssh ALIAS`
//! ([`crate::policy::ssh_config`]). Read as git's config is ([`crate::git_config::read_config`]:
//! a regular file, not through a final symlink, without blocking, at most 1 MiB), only for a line
//! with an ssh that connects; nothing here runs ssh (`ssh -G` would: `Match exec` runs commands).

use crate::parse::Command;
use crate::policy::ssh_config::SshConfig;

/// The person's ssh config when one of `commands` is an ssh, scp, sftp or rsync that connects and
/// the file can be
/// read; `None` otherwise. ssh reads it beneath the password database's home, not `$HOME`; so
/// does this.
pub fn for_commands(commands: &[Command]) -> Option<SshConfig> {
    let connects = |c: &Command| {
        matches!(c.program.as_str(), "ssh" | "scp" | "sftp" | "rsync")
            && crate::policy::network::needs_network(c).is_some()
    };
    if !commands.iter().any(connects) {
        return None;
    }
    let file = crate::paths::password_home()?.join(".ssh/config");
    crate::git_config::read_config(&file).map(|text| SshConfig::from_text(&text))
}
