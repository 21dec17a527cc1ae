//! Just enough of git's on-disk layout to find a workspace and the git dirs it writes to.
//!
//! No `git` process is spawned: the launcher runs for every sandboxed command, and reading a
//! `.git` file is cheaper than a fork. The rules here follow `gitrepository-layout(5)`.

use crate::sys::missing_as_none;
use std::io;
use std::path::{Path, PathBuf};

/// Where a working tree keeps its repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitLayout {
    /// `<worktree>/.git`: a directory, or a `gitdir:` pointer file.
    pub dot_git: PathBuf,
    /// The directory git reads this worktree's config, hooks and index from.
    pub git_dir: PathBuf,
    /// For a linked worktree (`git worktree add`), the main repository's git dir, which holds
    /// the shared config, hooks, objects and refs.
    pub common_dir: Option<PathBuf>,
}

impl GitLayout {
    /// The git dirs whose contents git reads for this worktree: the git dir and the common dir.
    pub fn dirs(&self) -> Vec<&Path> {
        let mut dirs = vec![self.git_dir.as_path()];
        dirs.extend(self.common_dir.as_deref());
        dirs
    }
}

/// The nearest ancestor of `dir` (itself included) that contains `.git`, like
/// `git rev-parse --show-toplevel` without `GIT_DIR` and ceiling directories.
pub fn toplevel(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").symlink_metadata().is_ok())
        .map(Path::to_path_buf)
}

/// Whether `dir` is itself a git dir (a bare repository, or a `.git` directory): it holds a `HEAD`
/// file and `objects` and `refs` directories, as git's own check does. An error that leaves this
/// unknown (`EACCES`, `EIO`) is returned, not taken for "no": a caller protects from this.
pub fn is_git_dir(dir: &Path) -> io::Result<bool> {
    let kind = |name: &str| {
        missing_as_none(std::fs::metadata(dir.join(name))).map(|m| m.map(|m| m.file_type()))
    };
    Ok(kind("HEAD")?.is_some_and(|t| t.is_file())
        && kind("objects")?.is_some_and(|t| t.is_dir())
        && kind("refs")?.is_some_and(|t| t.is_dir()))
}

/// Reads `<worktree>/.git`: `None` when there is none, when it is neither a directory nor a file,
/// or when a pointer names no existing git dir. An error that leaves this unknown (`EACCES`, `EIO`)
/// is returned, not taken for "no repository": the caller decides what is protected from this.
pub fn inspect(worktree: &Path) -> io::Result<Option<GitLayout>> {
    let dot_git = worktree.join(".git");
    let Some(meta) = missing_as_none(dot_git.symlink_metadata())? else {
        return Ok(None);
    };
    if meta.is_dir() {
        return Ok(Some(GitLayout {
            git_dir: dot_git.clone(),
            dot_git,
            common_dir: None,
        }));
    }
    if !meta.is_file() {
        return Ok(None);
    }
    let Some(git_dir) = read_pointer(&dot_git, worktree)? else {
        return Ok(None);
    };
    let common_dir = read_commondir(&git_dir)?;
    Ok(Some(GitLayout {
        dot_git,
        git_dir,
        common_dir,
    }))
}

/// The git dirs a sandboxed `git commit` in a *linked worktree* must write to, or nothing.
///
/// Only a layout that git itself would create is trusted: the git dir must be
/// `<common>/worktrees/<name>` and its `gitdir` back-link must name this worktree's `.git` file.
/// Otherwise a planted `.git` file (`gitdir: /home/me/.ssh`) would make any directory writable.
pub fn linked_worktree_dirs(layout: &GitLayout) -> Vec<PathBuf> {
    let Some(common) = &layout.common_dir else {
        return Vec::new();
    };
    let parent_is_worktrees = layout
        .git_dir
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "worktrees"))
        .and_then(Path::parent)
        .is_some_and(|p| same_file(p, common));
    let back_link = std::fs::read_to_string(layout.git_dir.join("gitdir"))
        .ok()
        .map(|s| PathBuf::from(s.trim()))
        .is_some_and(|p| same_file(&p, &layout.dot_git));
    if parent_is_worktrees && back_link {
        vec![layout.git_dir.clone(), common.clone()]
    } else {
        Vec::new()
    }
}

fn read_pointer(dot_git: &Path, worktree: &Path) -> io::Result<Option<PathBuf>> {
    let Some(text) = missing_as_none(std::fs::read_to_string(dot_git))? else {
        return Ok(None);
    };
    let Some(target) = text
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("gitdir:"))
    else {
        return Ok(None);
    };
    missing_as_none(std::fs::canonicalize(worktree.join(target.trim())))
}

fn read_commondir(git_dir: &Path) -> io::Result<Option<PathBuf>> {
    let Some(text) = missing_as_none(std::fs::read_to_string(git_dir.join("commondir")))? else {
        return Ok(None);
    };
    missing_as_none(std::fs::canonicalize(git_dir.join(text.trim())))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// A gitlink's mode: submodules and nested repositories added to the index.
const GITLINK: u32 = 0o160000;

/// One index file read: its entries (`mode`, path: empty for an entry that replaces one of the
/// shared index, in split-index mode) and, in split-index mode, its link to the shared index.
#[derive(Debug, Default)]
struct Index {
    entries: Vec<(u32, Vec<u8>)>,
    /// The shared index's object id (hex), and the positions of its entries that the stripped
    /// entries above replace, in order.
    link: Option<(String, Vec<usize>)>,
}

/// The paths of the gitlinks (mode `160000`: submodules, nested repositories added to the index)
/// in a git index file, or `None` when the file is not an index this parser knows (versions 2–4).
///
/// `git status` in the superproject runs git in every gitlinked directory that has a `.git`, which
/// reads that repository's config: a line that stages a gitlink and plants a nested repository
/// would otherwise run its `core.fsmonitor` at the next plain `git status` outside.
#[cfg(test)]
pub fn gitlinks(index: &[u8], sha256: bool) -> Option<Vec<PathBuf>> {
    let index = parse_index(index, sha256)?;
    Some(
        index
            .entries
            .iter()
            .filter(|(mode, path)| mode & 0o170000 == GITLINK && !path.is_empty())
            .map(|(_, path)| path_of(path))
            .collect(),
    )
}

/// The gitlinks of the index in `git_dir`, following a split index to its shared index
/// (`sharedindex.<id>`, `git update-index --split-index`): every gitlink of the shared index (a
/// deleted one too: more, never fewer) and of the split one, an entry that replaces a shared one
/// named by the shared entry's path. `Ok(None)`: no index; `Err`: one this parser cannot read,
/// or a shared index that is missing.
pub fn gitlinks_of(git_dir: &Path) -> io::Result<Option<Vec<PathBuf>>> {
    let unreadable = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let Some(bytes) = missing_as_none(std::fs::read(git_dir.join("index")))? else {
        return Ok(None);
    };
    let sha256 = uses_sha256(git_dir);
    let index = parse_index(&bytes, sha256).ok_or_else(|| unreadable("an unreadable index"))?;
    let mut links: Vec<PathBuf> = Vec::new();
    let mut shared_entries = Vec::new();
    if let Some((id, _)) = &index.link {
        let shared = std::fs::read(git_dir.join(format!("sharedindex.{id}")))?;
        shared_entries = parse_index(&shared, sha256)
            .ok_or_else(|| unreadable("an unreadable shared index"))?
            .entries;
        links.extend(
            shared_entries
                .iter()
                .filter(|(mode, path)| mode & 0o170000 == GITLINK && !path.is_empty())
                .map(|(_, path)| path_of(path)),
        );
    }
    let replaced = index
        .link
        .as_ref()
        .map(|(_, r)| r.as_slice())
        .unwrap_or(&[]);
    let mut replacements = replaced.iter();
    for (mode, path) in &index.entries {
        let path = if path.is_empty() {
            // A stripped entry replaces the next shared entry the bitmap names.
            let at = replacements.next().ok_or_else(|| {
                unreadable("a split index with more replacements than its bitmap")
            })?;
            let shared = shared_entries
                .get(*at)
                .ok_or_else(|| unreadable("a split index naming no shared entry"))?;
            &shared.1
        } else {
            path
        };
        if mode & 0o170000 == GITLINK {
            links.push(path_of(path));
        }
    }
    links.sort();
    links.dedup();
    Ok(Some(links))
}

fn path_of(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

/// Reads an index file (`DIRC`, versions 2–4): its entries and its `link` extension.
fn parse_index(index: &[u8], sha256: bool) -> Option<Index> {
    let be32 = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(index.get(at..at + 4)?.try_into().ok()?))
    };
    if index.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = be32(8)? as usize;
    let oid = if sha256 { 32 } else { 20 };
    let mut at = 12;
    let mut previous: Vec<u8> = Vec::new();
    let mut entries = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let entry = at;
        let mode = be32(entry + 24)?;
        let flags_at = entry + 40 + oid;
        let flags = u16::from_be_bytes(index.get(flags_at..flags_at + 2)?.try_into().ok()?);
        let mut name_at = flags_at + 2;
        if version >= 3 && flags & 0x4000 != 0 {
            name_at += 2;
        }
        let path = if version == 4 {
            let (strip, len) = varint(index.get(name_at..)?)?;
            let end = name_at + len + index.get(name_at + len..)?.iter().position(|b| *b == 0)?;
            let keep = previous.len().checked_sub(strip)?;
            let mut path = previous[..keep].to_vec();
            path.extend_from_slice(&index[name_at + len..end]);
            at = end + 1;
            path
        } else {
            let end = name_at + index.get(name_at..)?.iter().position(|b| *b == 0)?;
            let path = index[name_at..end].to_vec();
            // Entries are padded with 1-8 NULs to a multiple of 8 bytes.
            let len = end - entry;
            at = entry + (len + 8) / 8 * 8;
            path
        };
        previous.clone_from(&path);
        entries.push((mode, path));
    }
    // Extensions, up to the trailing checksum: a signature, a size, the data.
    let mut link = None;
    while at + 8 + oid <= index.len() {
        let signature = index.get(at..at + 4)?;
        let size = be32(at + 4)? as usize;
        let data = index.get(at + 8..at + 8 + size)?;
        if signature == b"link" {
            let id: String = data
                .get(..oid)?
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let mut rest = data.get(oid..)?;
            let mut replaced = Vec::new();
            if !rest.is_empty() {
                // The delete bitmap, then the replace bitmap.
                let (_, used) = ewah_positions(rest)?;
                rest = rest.get(used..)?;
                replaced = ewah_positions(rest)?.0;
            }
            link = Some((id, replaced));
        }
        at += 8 + size;
    }
    Some(Index { entries, link })
}

/// The set bits of an EWAH-compressed bitmap (git's `ewah/`), and the bytes it took: a bit count,
/// a word count, the words (each run-length word: bit 0 the running bit, 32 bits of running length
/// in words, 31 bits of literal words following it), the position of the last run-length word.
fn ewah_positions(data: &[u8]) -> Option<(Vec<usize>, usize)> {
    let be32 = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
    };
    let words = be32(4)? as usize;
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_be_bytes(
            data.get(8 + 8 * i..16 + 8 * i)?.try_into().ok()?,
        ))
    };
    let mut positions = Vec::new();
    let mut bit = 0usize;
    let mut i = 0;
    while i < words {
        let rlw = word(i)?;
        i += 1;
        let running = (rlw >> 1) & 0xffff_ffff;
        let literals = (rlw >> 33) as usize;
        let run_bits = usize::try_from(running).ok()?.checked_mul(64)?;
        if rlw & 1 == 1 {
            if run_bits > 1 << 24 {
                return None;
            }
            positions.extend(bit..bit + run_bits);
        }
        bit = bit.checked_add(run_bits)?;
        for _ in 0..literals {
            let literal = word(i)?;
            i += 1;
            positions.extend((0..64).filter(|b| literal >> b & 1 == 1).map(|b| bit + b));
            bit += 64;
        }
    }
    Some((positions, 8 + 8 * words + 4))
}

/// Git's offset varint (index v4): 7 bits a byte, high bit = more, each continuation adds one.
fn varint(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut value: usize = 0;
    for (i, byte) in bytes.iter().enumerate().take(9) {
        if i > 0 {
            value = value.checked_add(1)?.checked_mul(128)?;
        }
        value |= usize::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// Whether a git dir's config names the sha256 object format (its index entries are longer).
pub fn uses_sha256(git_dir: &Path) -> bool {
    std::fs::read_to_string(git_dir.join("config")).is_ok_and(|text| {
        text.lines().any(|line| {
            let line = line.trim().to_ascii_lowercase();
            line.starts_with("objectformat") && line.contains("sha256")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn toplevel_walks_up_to_dot_git() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("repo");
        fs::create_dir_all(top.join(".git")).unwrap();
        fs::create_dir_all(top.join("a/b")).unwrap();
        assert_eq!(toplevel(&top.join("a/b")), Some(top.clone()));
        assert_eq!(inspect(&top).unwrap().unwrap().git_dir, top.join(".git"));
    }

    #[test]
    fn planted_pointer_is_not_a_linked_worktree() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        let ws = dir.path().join("ws");
        fs::create_dir_all(secret.join("x")).unwrap();
        fs::create_dir_all(&ws).unwrap();
        fs::write(ws.join(".git"), format!("gitdir: {}\n", secret.display())).unwrap();
        fs::write(secret.join("commondir"), "x\n").unwrap();
        let layout = inspect(&ws).unwrap().unwrap();
        assert_ne!(layout.git_dir, layout.dot_git, "read as a pointer");
        assert!(linked_worktree_dirs(&layout).is_empty());
    }

    #[test]
    fn real_linked_worktree_layout_is_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let common = root.join("main/.git");
        let admin = common.join("worktrees/wt");
        let wt = root.join("wt");
        fs::create_dir_all(&admin).unwrap();
        fs::create_dir_all(&wt).unwrap();
        fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        fs::write(admin.join("commondir"), "../..\n").unwrap();
        fs::write(
            admin.join("gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
        let layout = inspect(&wt).unwrap().unwrap();
        assert_eq!(layout.common_dir.as_deref(), Some(common.as_path()));
        assert_eq!(linked_worktree_dirs(&layout), vec![admin, common]);
    }

    fn init_repo(dir: &Path, args: &[&str]) {
        let git = |a: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(a)
                .current_dir(dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", dir)
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {a:?}");
        };
        git(&[&["init", "-q"][..], args].concat());
        fs::write(dir.join("a.txt"), "a").unwrap();
        fs::create_dir_all(dir.join("deep/er")).unwrap();
        fs::write(dir.join("deep/er/b.txt"), "b").unwrap();
        git(&["add", "a.txt", "deep/er/b.txt"]);
        // A gitlink with a made-up commit id, as `git submodule` or `git add <repo>` stages one.
        let oid = if args.contains(&"--object-format=sha256") {
            "a".repeat(64)
        } else {
            "a".repeat(40)
        };
        git(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{oid},deep/sub"),
        ]);
    }

    #[test]
    fn gitlinks_are_found_in_every_index_version() {
        for (version, format) in [("2", "sha1"), ("3", "sha1"), ("4", "sha1"), ("4", "sha256")] {
            let dir = tempfile::tempdir().unwrap();
            init_repo(dir.path(), &[&format!("--object-format={format}")]);
            let status = std::process::Command::new("git")
                .args(["update-index", "--index-version", version])
                .current_dir(dir.path())
                .status()
                .unwrap();
            assert!(status.success());
            let git_dir = dir.path().join(".git");
            let index = fs::read(git_dir.join("index")).unwrap();
            let sha256 = uses_sha256(&git_dir);
            assert_eq!(sha256, format == "sha256");
            assert_eq!(
                gitlinks(&index, sha256),
                Some(vec![PathBuf::from("deep/sub")]),
                "index v{version} {format}"
            );
        }
        assert_eq!(gitlinks(b"not an index", false), None);
        assert_eq!(gitlinks(b"DIRC\0\0\0\x02\0\0\0\x05", false), None);
    }

    /// A split index (`git update-index --split-index`) keeps most entries in a shared index and
    /// writes only changes to the main one: a gitlink added there, and one that replaces a shared
    /// entry (written with its name stripped), are both found — in index versions 2 and 4.
    #[test]
    fn gitlinks_are_found_through_a_split_index() {
        for version in ["2", "4"] {
            let dir = tempfile::tempdir().unwrap();
            init_repo(dir.path(), &[]);
            let git = |args: &[&str]| {
                let ok = std::process::Command::new("git")
                    .args(args)
                    .current_dir(dir.path())
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .env("HOME", dir.path())
                    .status()
                    .unwrap()
                    .success();
                assert!(ok, "git {args:?}");
            };
            git(&["update-index", "--index-version", version]);
            git(&["update-index", "--split-index"]);
            let oid = "b".repeat(40);
            // A new entry, in the split index with its name.
            git(&[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{oid},new-sub"),
            ]);
            // A shared entry replaced by a gitlink: written stripped, named by the bitmap.
            git(&[
                "update-index",
                "--cacheinfo",
                &format!("160000,{oid},a.txt"),
            ]);
            let git_dir = dir.path().join(".git");
            let shared = fs::read_dir(&git_dir)
                .unwrap()
                .filter_map(|e| e.ok())
                .any(|e| e.file_name().to_string_lossy().starts_with("sharedindex."));
            assert!(shared, "v{version}: no shared index was written");
            let links = gitlinks_of(&git_dir).unwrap().unwrap();
            for want in ["a.txt", "deep/sub", "new-sub"] {
                assert!(
                    links.contains(&PathBuf::from(want)),
                    "v{version}: {links:?}"
                );
            }
            // The main index alone does not name the replaced entry.
            let main = fs::read(git_dir.join("index")).unwrap();
            assert!(
                !gitlinks(&main, false)
                    .unwrap()
                    .contains(&PathBuf::from("a.txt"))
            );
        }
    }
}
