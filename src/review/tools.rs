//! The reviewer's read-only tools — `read_file`, `glob`, `grep` — executed by shellgate itself,
//! confined to the workspace.
//!
//! They run in this process with plain file reads: nothing is executed, written or fetched, and no
//! shell line is involved, so a tool call is never itself reviewed (reviews are not recursive).
//!
//! Confinement: a path with a `..` component, an absolute path outside the workspace, or a path
//! whose real location (symlinks resolved) is outside the workspace is an **escape**. An escape is
//! not answered: the review fails (`tool-escape`), because a reviewer that reaches outside the
//! workspace may be steered by the very line it judges. Walks never follow symlinks, and a file is
//! opened with `O_NOFOLLOW | O_NONBLOCK` and its real path checked again through `/proc/self/fd`, so a
//! symlink swapped in after the check (or a FIFO) cannot be used to read elsewhere or to hang.
//!
//! Every result is capped (bytes, entries, matches) and redacted before it leaves the machine.

use super::verdict::{ToolName, ToolRequest};
use crate::redact::redact;
use regex::Regex;
use std::fs::{self, File};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// Bytes of a file `read_file` returns.
pub const MAX_READ_BYTES: usize = 16 * 1024;
/// Paths `glob` returns.
pub const MAX_GLOB_RESULTS: usize = 200;
/// Lines `grep` returns.
pub const MAX_GREP_MATCHES: usize = 100;
/// Directory entries one walk looks at.
const MAX_WALK_ENTRIES: usize = 20_000;
/// How deep a walk descends.
const MAX_WALK_DEPTH: usize = 16;
/// Files larger than this are skipped by `grep`.
const MAX_GREP_FILE_BYTES: u64 = 1 << 20;
/// Bytes `grep` reads in total.
const MAX_GREP_TOTAL_BYTES: u64 = 8 << 20;
/// Characters of one matching line.
const MAX_LINE_CHARS: usize = 300;

/// A tool call that tried to leave the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escape {
    pub tool: ToolName,
    pub path: String,
    pub why: &'static str,
}

/// The workspace the tools are confined to.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// The workspace rooted at `root` (resolved to its real path).
    pub fn new(root: &Path) -> std::io::Result<Workspace> {
        Ok(Workspace {
            root: fs::canonicalize(root)?,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Runs one tool request. `Ok` is the text given back to the model (already redacted; errors
    /// such as a missing file are information for the model); `Err` is an escape attempt.
    pub fn run(&self, request: &ToolRequest) -> Result<String, Escape> {
        let text = match request.tool {
            ToolName::ReadFile => self.read_file(&request.path)?,
            ToolName::Glob => self.glob(&request.pattern)?,
            ToolName::Grep => self.grep(&request.pattern, &request.path)?,
        };
        Ok(redact(&text).into_owned())
    }

    fn escape(tool: ToolName, path: &str, why: &'static str) -> Escape {
        Escape {
            tool,
            path: path.to_owned(),
            why,
        }
    }

    /// The workspace-relative form of `raw`, refusing `..` and absolute paths outside the root.
    fn relative(&self, tool: ToolName, raw: &str) -> Result<PathBuf, Escape> {
        if raw.contains('\0') {
            return Err(Self::escape(tool, raw, "the path contains a NUL byte"));
        }
        let path = Path::new(raw);
        let relative = if path.is_absolute() {
            path.strip_prefix(&self.root)
                .map_err(|_| Self::escape(tool, raw, "the path is outside the workspace"))?
        } else {
            path
        };
        let mut clean = PathBuf::new();
        for component in relative.components() {
            match component {
                Component::Normal(part) => clean.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(Self::escape(tool, raw, "the path contains `..`"));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(Self::escape(tool, raw, "the path is outside the workspace"));
                }
            }
        }
        Ok(clean)
    }

    /// The real path of a workspace path, or `Ok(None)` when it does not exist.
    fn real_path(&self, tool: ToolName, raw: &str) -> Result<Option<PathBuf>, Escape> {
        let relative = self.relative(tool, raw)?;
        let Ok(real) = fs::canonicalize(self.root.join(&relative)) else {
            return Ok(None);
        };
        if !real.starts_with(&self.root) {
            return Err(Self::escape(
                tool,
                raw,
                "the path resolves (through a symlink) outside the workspace",
            ));
        }
        Ok(Some(real))
    }

    fn read_file(&self, raw: &str) -> Result<String, Escape> {
        let tool = ToolName::ReadFile;
        let Some(real) = self.real_path(tool, raw)? else {
            return Ok(format!("read_file {raw}: no such file in the workspace"));
        };
        let file = match fs::OpenOptions::new()
            .read(true)
            // O_NOFOLLOW: a symlink swapped in after the check is refused; O_NONBLOCK: a FIFO
            // cannot hang the review.
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&real)
        {
            Ok(file) => file,
            Err(err) => return Ok(format!("read_file {raw}: cannot open: {err}")),
        };
        if !self.opened_inside(&file) {
            return Err(Self::escape(
                tool,
                raw,
                "the opened file is outside the workspace",
            ));
        }
        match file.metadata() {
            Ok(meta) if meta.is_file() => Ok(read_text(file, raw, meta.len())),
            Ok(_) => Ok(format!("read_file {raw}: not a regular file")),
            Err(err) => Ok(format!("read_file {raw}: cannot inspect: {err}")),
        }
    }

    /// Whether an open file really lives beneath the root (closes the check-then-open race).
    fn opened_inside(&self, file: &File) -> bool {
        let link = format!("/proc/self/fd/{}", file.as_raw_fd());
        match fs::read_link(link) {
            Ok(target) => target.starts_with(&self.root),
            // Without /proc the path was still checked just before the O_NOFOLLOW open.
            Err(_) => true,
        }
    }

    fn glob(&self, pattern: &str) -> Result<String, Escape> {
        let tool = ToolName::Glob;
        let relative = self.relative(tool, pattern)?;
        let relative = relative.to_string_lossy();
        let Some(regex) = glob_regex(&relative) else {
            return Ok(format!("glob {pattern}: invalid pattern"));
        };
        let mut found = Vec::new();
        let mut truncated = false;
        walk(&self.root, &mut |rel, _path, _is_file| {
            if regex.is_match(rel) {
                if found.len() == MAX_GLOB_RESULTS {
                    truncated = true;
                    return false;
                }
                found.push(rel.to_owned());
            }
            true
        });
        found.sort();
        let mut out = format!("glob {pattern}: {} path(s)\n", found.len());
        for path in &found {
            out.push_str(path);
            out.push('\n');
        }
        if truncated {
            out.push_str(&format!(
                "[more than {MAX_GLOB_RESULTS} paths; narrow the pattern]\n"
            ));
        }
        Ok(out)
    }

    fn grep(&self, pattern: &str, raw_path: &str) -> Result<String, Escape> {
        let tool = ToolName::Grep;
        let start = if raw_path.trim().is_empty() {
            "."
        } else {
            raw_path
        };
        let Some(real) = self.real_path(tool, start)? else {
            return Ok(format!("grep {start}: no such path in the workspace"));
        };
        let regex = match regex::RegexBuilder::new(pattern)
            .size_limit(1 << 20)
            .build()
        {
            Ok(regex) => regex,
            Err(err) => return Ok(format!("grep: invalid regular expression: {err}")),
        };
        let mut search = Search::new(self, regex);
        if real.is_file() {
            let rel = real
                .strip_prefix(&self.root)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default();
            search.file(&rel, &real);
        } else {
            walk(&real, &mut |rel, path, is_file| {
                if is_file {
                    let prefix = real.strip_prefix(&self.root).unwrap_or(Path::new(""));
                    let shown = prefix.join(rel);
                    search.file(&shown.to_string_lossy(), path);
                }
                !search.full()
            });
        }
        Ok(search.report(pattern))
    }
}

/// Reads at most [`MAX_READ_BYTES`] of a regular file as text.
fn read_text(file: File, raw: &str, size: u64) -> String {
    let mut bytes = Vec::with_capacity(MAX_READ_BYTES.min(size as usize));
    if let Err(err) = file.take(MAX_READ_BYTES as u64).read_to_end(&mut bytes) {
        return format!("read_file {raw}: cannot read: {err}");
    }
    if bytes.contains(&0) {
        return format!("read_file {raw}: binary file ({size} bytes), not shown");
    }
    let mut out = format!("read_file {raw} ({size} bytes):\n");
    out.push_str(&String::from_utf8_lossy(&bytes));
    if size > MAX_READ_BYTES as u64 {
        out.push_str(&format!("\n[truncated after {MAX_READ_BYTES} bytes]"));
    }
    out
}

/// `grep`'s state: matches found and bytes read so far.
struct Search<'a> {
    workspace: &'a Workspace,
    regex: Regex,
    matches: Vec<String>,
    bytes_read: u64,
    truncated: bool,
}

impl<'a> Search<'a> {
    fn new(workspace: &'a Workspace, regex: Regex) -> Search<'a> {
        Search {
            workspace,
            regex,
            matches: Vec::new(),
            bytes_read: 0,
            truncated: false,
        }
    }

    fn full(&self) -> bool {
        self.truncated
    }

    fn file(&mut self, shown: &str, path: &Path) {
        let Ok(file) = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
        else {
            return;
        };
        // Swapped for a symlink to elsewhere between the walk and the open: skipped.
        if !self.workspace.opened_inside(&file) {
            return;
        }
        let size = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
        if size > MAX_GREP_FILE_BYTES || self.bytes_read + size > MAX_GREP_TOTAL_BYTES {
            self.truncated = self.bytes_read + size > MAX_GREP_TOTAL_BYTES;
            return;
        }
        let mut bytes = Vec::new();
        if file
            .take(MAX_GREP_FILE_BYTES)
            .read_to_end(&mut bytes)
            .is_err()
            || bytes.contains(&0)
        {
            return;
        }
        self.bytes_read += bytes.len() as u64;
        // Redacted as a whole before lines are picked: a secret spanning lines (a private key's
        // body) or a long line cut below would otherwise leave pieces that no longer look secret.
        // Line numbers are those of the redacted text.
        let text = redact(&String::from_utf8_lossy(&bytes)).into_owned();
        for (number, line) in text.lines().enumerate() {
            if !self.regex.is_match(line) {
                continue;
            }
            if self.matches.len() == MAX_GREP_MATCHES {
                self.truncated = true;
                return;
            }
            let line: String = line.chars().take(MAX_LINE_CHARS).collect();
            self.matches.push(format!("{shown}:{}: {line}", number + 1));
        }
    }

    fn report(&self, pattern: &str) -> String {
        let mut out = format!("grep {pattern}: {} matching line(s)\n", self.matches.len());
        for line in &self.matches {
            out.push_str(line);
            out.push('\n');
        }
        if self.truncated {
            out.push_str("[search stopped at a limit; narrow the pattern or the path]\n");
        }
        out
    }
}

/// Walks `dir` without following symlinks, calling `visit(relative, path, is_file)` for every
/// entry until it returns false. `.git` directories are skipped.
fn walk(dir: &Path, visit: &mut dyn FnMut(&str, &Path, bool) -> bool) {
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((current, depth)) = stack.pop() {
        let Ok(entries) = fs::read_dir(&current) else {
            continue;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            seen += 1;
            if seen > MAX_WALK_ENTRIES {
                return;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            if kind.is_symlink() {
                // Listed by glob, never entered or read.
                if !visit(&rel, &path, false) {
                    return;
                }
                continue;
            }
            if !visit(&rel, &path, kind.is_file()) {
                return;
            }
            if kind.is_dir() && entry.file_name() != ".git" && depth < MAX_WALK_DEPTH {
                stack.push((path, depth + 1));
            }
        }
    }
}

/// A glob as an anchored regular expression over `/`-separated relative paths.
fn glob_regex(pattern: &str) -> Option<Regex> {
    let mut out = String::from("^");
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                if chars.peek() == Some(&'/') {
                    chars.next();
                    out.push_str("(?:.*/)?");
                } else {
                    out.push_str(".*");
                }
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            other => out.push_str(&regex::escape(&other.to_string())),
        }
    }
    out.push('$');
    regex::RegexBuilder::new(&out)
        .size_limit(1 << 20)
        .build()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn request(tool: ToolName, path: &str, pattern: &str) -> ToolRequest {
        ToolRequest {
            tool,
            path: path.into(),
            pattern: pattern.into(),
        }
    }

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::write(root.join("src/main.rs"), "fn main() {}\n// rm -rf target\n").unwrap();
        fs::write(root.join("src/deep/a.txt"), "token=hunter2\nplain\n").unwrap();
        fs::write(root.join("big.bin"), [0u8, 1, 2]).unwrap();
        fs::write(dir.path().join("outside.txt"), "SECRET-OUTSIDE").unwrap();
        symlink(dir.path().join("outside.txt"), root.join("link-out")).unwrap();
        symlink(dir.path(), root.join("dir-out")).unwrap();
        symlink(root.join("src/main.rs"), root.join("link-in")).unwrap();
        let workspace = Workspace::new(&root).unwrap();
        (dir, workspace)
    }

    #[test]
    fn reads_inside_and_redacts() {
        let (_dir, ws) = setup();
        let text = ws
            .run(&request(ToolName::ReadFile, "src/main.rs", ""))
            .unwrap();
        assert!(text.contains("fn main()"), "{text}");
        let secret = ws
            .run(&request(ToolName::ReadFile, "./src/deep/a.txt", ""))
            .unwrap();
        assert!(!secret.contains("hunter2"), "{secret}");
        let absolute = ws.root().join("src/main.rs");
        assert!(
            ws.run(&request(
                ToolName::ReadFile,
                &absolute.to_string_lossy(),
                ""
            ))
            .is_ok()
        );
        let inside_link = ws.run(&request(ToolName::ReadFile, "link-in", "")).unwrap();
        assert!(inside_link.contains("fn main()"));
        let missing = ws
            .run(&request(ToolName::ReadFile, "nope.txt", ""))
            .unwrap();
        assert!(missing.contains("no such file"));
        let binary = ws.run(&request(ToolName::ReadFile, "big.bin", "")).unwrap();
        assert!(binary.contains("binary"));
    }

    #[test]
    fn grep_never_shows_a_private_key_body() {
        let (_dir, ws) = setup();
        let body = "MIIEpAIBAAKCAQEA75qsecretkeybodyline";
        fs::write(
            ws.root().join("id_rsa"),
            format!(
                "-----BEGIN RSA PRIVATE KEY-----\n{body}\nabc+/=\n-----END RSA PRIVATE KEY-----\n"
            ),
        )
        .unwrap();
        // A pattern that matches the body lines but not the BEGIN line.
        let text = ws.run(&request(ToolName::Grep, ".", "^MII")).unwrap();
        assert!(!text.contains("secretkeybody"), "{text}");
        let text = ws.run(&request(ToolName::Grep, "id_rsa", "[a-z]")).unwrap();
        assert!(!text.contains("secretkeybody"), "{text}");
    }

    #[test]
    fn escapes_are_refused() {
        let (_dir, ws) = setup();
        for (tool, path, pattern) in [
            (ToolName::ReadFile, "../outside.txt", ""),
            (ToolName::ReadFile, "src/../../outside.txt", ""),
            (ToolName::ReadFile, "/etc/passwd", ""),
            (ToolName::ReadFile, "link-out", ""),
            (ToolName::ReadFile, "dir-out/outside.txt", ""),
            (ToolName::Grep, "dir-out", "SECRET"),
            (ToolName::Grep, "..", "SECRET"),
            (ToolName::Glob, "", "../*"),
        ] {
            let result = ws.run(&request(tool, path, pattern));
            assert!(result.is_err(), "{path} {pattern}: {result:?}");
        }
    }

    #[test]
    fn glob_and_grep_stay_inside_and_do_not_follow_symlinks() {
        let (_dir, ws) = setup();
        let listed = ws.run(&request(ToolName::Glob, "", "**/*.rs")).unwrap();
        assert!(listed.contains("src/main.rs"), "{listed}");
        let all = ws.run(&request(ToolName::Glob, "", "**")).unwrap();
        assert!(!all.contains("outside.txt"), "{all}");
        let found = ws
            .run(&request(ToolName::Grep, "", "SECRET|rm -rf"))
            .unwrap();
        assert!(found.contains("src/main.rs:2:"), "{found}");
        assert!(!found.contains("SECRET-OUTSIDE"), "{found}");
        let redacted = ws.run(&request(ToolName::Grep, "src", "token")).unwrap();
        assert!(redacted.contains("src/deep/a.txt:1:") && !redacted.contains("hunter2"));
        let bad = ws.run(&request(ToolName::Grep, "", "(")).unwrap();
        assert!(bad.contains("invalid"));
    }

    #[test]
    fn glob_translation() {
        let re = glob_regex("src/**/*.rs").unwrap();
        assert!(re.is_match("src/main.rs") && re.is_match("src/a/b/c.rs"));
        assert!(!re.is_match("src/main.rsx") && !re.is_match("lib/main.rs"));
        let one = glob_regex("*.t?t").unwrap();
        assert!(one.is_match("a.txt") && !one.is_match("d/a.txt"));
        assert!(glob_regex("a.(b)").unwrap().is_match("a.(b)"));
    }
}
