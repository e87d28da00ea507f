//! `cargo xtask doclinks`: fail when a document names a repository file that does not exist.
//!
//! Scans every tracked (or new, not ignored) `*.md` file and the `//!`/`///` doc comments of
//! every `*.rs` file for
//! - relative Markdown links, `[text](path)` and `[label]: path` (web links and `#anchors` are
//!   skipped; no network is used), and
//! - backticked paths that look like repository files: a relative path whose first component
//!   is a directory that exists (at the workspace root, next to the document, or in the
//!   document's crate), such as `crates/ndx-core/src/shard/mod.rs`, `scripts/soak.sh` or
//!   `benches/results/fuzz.md`, and a bare Markdown file name.
//!
//! A target must exist in the working tree among the files `git ls-files --cached --others
//! --exclude-standard` lists (or be a directory holding some), so a path that only exists in
//! `target/` or outside the repository is reported. Brace lists (`shard/{mod,data}.rs`) are
//! expanded, `:LINE` and `#anchor` suffixes dropped, and globs (`*`) skipped.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use crate::{Result, root};

/// One place where a document names a file.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Reference {
    /// 1-based line number in the document.
    pub line: usize,
    /// The target as written (without `#anchor` or `:LINE`).
    pub target: String,
    /// Whether it was a Markdown link (resolved against the document's directory only) or a
    /// backticked path (resolved against the root, the document's directory or its crate).
    pub kind: Kind,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) enum Kind {
    Link,
    Code,
}

/// Runs the check over the repository; the error lists every broken reference as `file:line`.
pub(crate) fn check() -> Result {
    let root = root();
    let files = tracked_files(&root)?;
    let tree = Tree::new(files.iter().cloned().collect());
    let mut broken = Vec::new();
    let mut scanned = 0;
    for file in &files {
        let ext = file.extension().and_then(|e| e.to_str());
        let refs = match ext {
            Some("md") => {
                let text = std::fs::read_to_string(root.join(file))
                    .map_err(|e| format!("{}: {e}", file.display()))?;
                scan_markdown(&text)
            }
            Some("rs") => {
                let text = std::fs::read_to_string(root.join(file))
                    .map_err(|e| format!("{}: {e}", file.display()))?;
                scan_rust_docs(&text)
            }
            _ => continue,
        };
        scanned += 1;
        for r in refs {
            if let Some(why) = tree.resolve(file, &r) {
                broken.push(format!(
                    "{}:{}: `{}` {why}",
                    file.display(),
                    r.line,
                    r.target
                ));
            }
        }
    }
    if broken.is_empty() {
        println!("doclinks: {scanned} files, every linked repository file exists");
        Ok(())
    } else {
        Err(format!(
            "doclinks: {} broken reference(s):\n{}",
            broken.len(),
            broken.join("\n")
        ))
    }
}

fn tracked_files(root: &Path) -> Result<Vec<PathBuf>> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("doclinks: cannot run git ls-files: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "doclinks: git ls-files failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| PathBuf::from(String::from_utf8_lossy(s).into_owned()))
        // A deleted but still indexed file is not there to link to.
        .filter(|p| root.join(p).exists())
        .collect())
}

/// The repository's files and directories, relative to the root.
struct Tree {
    files: BTreeSet<PathBuf>,
    dirs: BTreeSet<PathBuf>,
}

impl Tree {
    /// The tree of `files` and every directory above them.
    fn new(files: BTreeSet<PathBuf>) -> Self {
        let mut dirs = BTreeSet::new();
        for f in &files {
            let mut p = f.as_path();
            while let Some(parent) = p.parent() {
                if parent.as_os_str().is_empty() {
                    break;
                }
                dirs.insert(parent.to_path_buf());
                p = parent;
            }
        }
        Self { files, dirs }
    }

    fn exists(&self, p: &Path) -> bool {
        p.as_os_str().is_empty() || self.files.contains(p) || self.dirs.contains(p)
    }

    /// `None` when the reference resolves, else why it does not.
    fn resolve(&self, doc: &Path, r: &Reference) -> Option<&'static str> {
        let doc_dir = doc.parent().unwrap_or(Path::new(""));
        if r.target.starts_with('/') {
            // In code spans `/a/b` is usually an NDN name or a runtime path (`/run/ndx/…`); a
            // document or source file named by absolute path is outside the repository.
            let doc_like = [".md", ".rs", ".sh"].iter().any(|e| r.target.ends_with(e));
            return (r.kind == Kind::Link || doc_like)
                .then_some("is an absolute path (outside the repository)");
        }
        let crate_dir = self.crate_dir(doc_dir);
        let bases: Vec<&Path> = match r.kind {
            Kind::Link => vec![doc_dir],
            Kind::Code => {
                let mut b = vec![Path::new(""), doc_dir];
                b.extend(crate_dir.as_deref());
                b
            }
        };
        let mut outside = false;
        let mut candidate = false;
        for target in expand_braces(&r.target) {
            let mut found = false;
            for base in &bases {
                let Some(p) = normalize(&base.join(&target)) else {
                    outside = true;
                    continue;
                };
                // A backticked path is only taken for a file path when its first directory
                // exists from this base (`src/…` in a crate, `crates/…` at the root).
                if r.kind == Kind::Code && !self.plausible(base, &target) {
                    continue;
                }
                candidate = true;
                if self.exists(&p) {
                    found = true;
                    break;
                }
            }
            if !found && (candidate || outside) {
                return Some(if outside && !candidate {
                    "points outside the repository"
                } else {
                    "does not exist"
                });
            }
        }
        None
    }

    /// Whether a backticked `target` is meant as a path from `base`: its first directory
    /// exists there, or it is a bare Markdown file name.
    fn plausible(&self, base: &Path, target: &str) -> bool {
        match target.split_once('/') {
            Some((first, _)) if first == "." || first == ".." => true,
            Some((first, _)) => self.dirs.contains(&base.join(first)),
            None => target.ends_with(".md"),
        }
    }

    fn crate_dir(&self, mut dir: &Path) -> Option<PathBuf> {
        loop {
            if self.files.contains(&dir.join("Cargo.toml")) {
                return Some(dir.to_path_buf());
            }
            dir = dir.parent()?;
        }
    }
}

/// Folds `.` and `..`; `None` when the path climbs above the root.
fn normalize(p: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(s) => out.push(s),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// `a/{b,c}.rs` → `a/b.rs`, `a/c.rs` (one level of braces, possibly several groups).
fn expand_braces(s: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (s.find('{'), s.find('}')) else {
        return vec![s.to_string()];
    };
    if close < open {
        return vec![s.to_string()];
    }
    let (head, rest) = (&s[..open], &s[close + 1..]);
    s[open + 1..close]
        .split(',')
        .flat_map(|alt| expand_braces(&format!("{head}{}{rest}", alt.trim())))
        .collect()
}

/// The references in a Markdown document (fenced code blocks skipped).
pub(crate) fn scan_markdown(text: &str) -> Vec<Reference> {
    let mut refs = Vec::new();
    let mut fence: Option<&str> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(f) = fence {
            if trimmed.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if trimmed.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        scan_line(line, i + 1, true, &mut refs);
    }
    refs
}

/// The backticked paths in a Rust file's `//!` and `///` comments.
pub(crate) fn scan_rust_docs(text: &str) -> Vec<Reference> {
    let mut refs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(doc) = t.strip_prefix("//!").or_else(|| t.strip_prefix("///")) {
            scan_line(doc, i + 1, false, &mut refs);
        }
    }
    refs
}

fn scan_line(line: &str, n: usize, links: bool, refs: &mut Vec<Reference>) {
    // Even pieces are prose, odd pieces code spans.
    let mut prose = String::new();
    for (k, piece) in line.split('`').enumerate() {
        if k % 2 == 1 {
            // The text of a link (`` [`x.md`](dir/x.md) ``) is checked through its target.
            let link_text = prose.ends_with('[');
            if let Some(t) = code_path(piece).filter(|_| !link_text) {
                refs.push(Reference {
                    line: n,
                    target: t,
                    kind: Kind::Code,
                });
            }
            prose.push(' ');
        } else {
            prose.push_str(piece);
        }
    }
    if !links {
        return;
    }
    // Reference definitions: `[label]: target`.
    let t = prose.trim_start();
    if t.starts_with('[')
        && let Some(end) = t.find("]:")
    {
        let target = t[end + 2..].split_whitespace().next().unwrap_or("");
        push_link(target, n, refs);
    }
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let inner = after[..end].trim();
        let target = inner
            .trim_start_matches('<')
            .split(['>', ' '])
            .next()
            .unwrap_or("");
        push_link(target, n, refs);
        rest = &after[end..];
    }
}

fn push_link(target: &str, n: usize, refs: &mut Vec<Reference>) {
    if target.is_empty() || target.starts_with('#') || target.contains("://") {
        return;
    }
    if target.starts_with("mailto:") {
        return;
    }
    let target = strip_suffixes(target);
    if !target.is_empty() {
        refs.push(Reference {
            line: n,
            target,
            kind: Kind::Link,
        });
    }
}

fn strip_suffixes(t: &str) -> String {
    let mut t = t.split('#').next().unwrap_or(t);
    // `file.rs:120` or `file.rs:120:5`
    while let Some((head, tail)) = t.rsplit_once(':') {
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        t = head;
    }
    t.to_string()
}

/// A code span that reads as a repository path: no spaces, no globs or placeholders, and
/// either a `/` with a file-like or directory-like ending, or a bare Markdown file name.
fn code_path(span: &str) -> Option<String> {
    let s = span.trim();
    if !s.contains(|c: char| c.is_ascii_alphanumeric())
        || s.contains(|c: char| c.is_whitespace() || "*<>$=|;&?\"'()[]@%".contains(c))
        || s.contains("://")
        || s.starts_with('-')
        || s.contains("::")
    {
        return None;
    }
    let ok_chars = s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/{},:#+~".contains(c));
    if !ok_chars {
        return None;
    }
    let s = strip_suffixes(s);
    if s.contains('/') {
        let last = s.rsplit('/').next().unwrap_or("");
        // `dir/` or a last component with an extension (`x.rs`, `{a,b}.rs`); `a/b` alone is
        // too often a name pair (`Interest/Data`).
        if last.is_empty() || last.contains('.') {
            return Some(s);
        }
        return None;
    }
    if s.ends_with(".md") && s.len() > 3 {
        return Some(s);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> Tree {
        Tree::new(files.iter().map(PathBuf::from).collect())
    }

    #[test]
    fn finds_links_and_paths_outside_code_blocks() {
        let md = "See [the map](ARCHITECTURE.md#code-map) and `crates/a/src/x.rs:12`.\n\
                  ```\n[not](a link.md) `crates/b.rs`\n```\n\
                  [web](https://example.invalid/x.md) [anchor](#here) `Interest/Data`\n\
                  [ref]: benches/results/x.md\n`src/{a,b}.rs` and `README.md`, `--flag=a/b.rs`\n\
                  [`y.md`](y.md)\n";
        let refs = scan_markdown(md);
        let got: Vec<(usize, &str, Kind)> = refs
            .iter()
            .map(|r| (r.line, r.target.as_str(), r.kind))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "crates/a/src/x.rs", Kind::Code),
                (1, "ARCHITECTURE.md", Kind::Link),
                (6, "benches/results/x.md", Kind::Link),
                (7, "src/{a,b}.rs", Kind::Code),
                (7, "README.md", Kind::Code),
                (8, "y.md", Kind::Link),
            ]
        );
    }

    #[test]
    fn resolves_against_root_document_and_crate() {
        let t = tree(&[
            "README.md",
            "crates/a/Cargo.toml",
            "crates/a/README.md",
            "crates/a/src/lib.rs",
            "crates/a/src/x/mod.rs",
        ]);
        let doc = Path::new("crates/a/README.md");
        let code = |s: &str| Reference {
            line: 1,
            target: s.into(),
            kind: Kind::Code,
        };
        let link = |s: &str| Reference {
            line: 1,
            target: s.into(),
            kind: Kind::Link,
        };
        assert_eq!(t.resolve(doc, &code("src/lib.rs")), None);
        assert_eq!(
            t.resolve(doc, &code("crates/a/src/x/{mod,lib}.rs")),
            Some("does not exist")
        );
        assert_eq!(t.resolve(doc, &code("src/{lib,x/mod}.rs")), None);
        assert_eq!(t.resolve(doc, &code("src/gone.rs")), Some("does not exist"));
        // `other/` is not a directory anywhere: not taken for a path.
        assert_eq!(t.resolve(doc, &code("other/thing.rs")), None);
        assert_eq!(t.resolve(doc, &link("../../README.md")), None);
        assert_eq!(
            t.resolve(doc, &link("../../../x.md")),
            Some("points outside the repository")
        );
        assert!(t.resolve(doc, &link("/work/x.md")).is_some());
        assert_eq!(t.resolve(doc, &code("DESIGN.md")), Some("does not exist"));
        assert_eq!(t.resolve(Path::new("README.md"), &link("crates/a/")), None);
    }

    #[test]
    fn doc_comments_only() {
        let rs = "//! Lives in `src/x.rs`.\n// not `src/y.rs`\n/// see `src/z.rs`\nfn f() {}\n";
        let got: Vec<String> = scan_rust_docs(rs).into_iter().map(|r| r.target).collect();
        assert_eq!(got, vec!["src/x.rs", "src/z.rs"]);
    }
}
