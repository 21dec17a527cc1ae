//! The person's `~/.ssh/config`, for the decision on `ssh ALIAS`
//! ([`crate::policy::ssh_config`]). Read as git's config is ([`crate::git_config::read_config`]:
//! a regular file, not through a final symlink, without blocking, at most 1 MiB), only for a line
//! that names `ssh`; nothing here runs ssh (`ssh -G` would: `Match exec` runs commands).

use crate::policy::ssh_config::SshConfig;

/// The person's ssh config when `line` may run ssh and the file can be read; `None` otherwise.
/// ssh reads it beneath the password database's home, not `$HOME`; so does this.
pub fn for_line(line: &[u8]) -> Option<SshConfig> {
    if !line.windows(3).any(|w| w == b"ssh") {
        return None;
    }
    let file = crate::paths::password_home()?.join(".ssh/config");
    crate::git_config::read_config(&file).map(|text| SshConfig::from_text(&text))
}
