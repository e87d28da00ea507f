//! `ndx completions SHELL` and `ndx man DIR` (hidden): shell completions and man pages
//! generated from the clap definition, which `cargo xtask dist` runs to fill `target/dist/`.
//! Hidden subcommands rather than a library target: the definition borrows its argument types
//! from `dissect`, `ctl`, `lb` and `ndx_app`, which would all have to move into a library.

use std::io::Write as _;
use std::path::Path;

use clap_complete::Shell;

use crate::{EXIT_CODES, out};

/// Prints `shell`'s completion script for `cmd`.
pub(crate) fn completions(
    mut cmd: clap::Command,
    shell: Shell,
) -> Result<u8, Box<dyn std::error::Error>> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ndx", &mut buf);
    out::print(String::from_utf8_lossy(&buf))?;
    Ok(0)
}

/// The sections every page ends with: exit status and environment.
fn common_sections() -> String {
    let mut s = String::from(".SH \"EXIT STATUS\"\n");
    let codes = EXIT_CODES
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .lines()
        .skip(1);
    // "  0  success" and its continuation lines become .TP paragraphs.
    for line in codes {
        let line = line.trim();
        match line.split_once("  ") {
            Some((code, what)) if code.chars().all(|c| c.is_ascii_digit()) => {
                s.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", escape(what.trim())));
            }
            _ => {
                s.push_str(&escape(line));
                s.push('\n');
            }
        }
    }
    s.push_str(
        ".SH ENVIRONMENT\n\
         .TP\n\\fBRUST_LOG\\fR\n\
         Log filter when \\fB\\-\\-log\\-level\\fR is not given: a level (error, warn, info, \
         debug, trace, off) or directives such as info,ndx_hcs=debug. Default: info.\n\
         .TP\n\\fBJOURNAL_STREAM\\fR\n\
         Set by systemd; when it names standard error, log lines carry sd\\-daemon priority \
         prefixes (<3> error ... <7> debug) and no program name, for journald.\n",
    );
    s
}

/// Escapes text for a roff body line (backslashes, hyphens, a leading dot or quote).
fn escape(text: &str) -> String {
    let s = text.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// Writes `cmd`'s page and, recursively, one per visible subcommand (`ndx-face-add.1`).
fn write_pages(cmd: clap::Command, dir: &Path) -> std::io::Result<usize> {
    let mut n = 0;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
        n += write_pages(sub, dir)?;
    }
    // The top page's after_help is the exit status, rendered as its own section instead.
    let cmd = cmd.after_help(None::<&str>);
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut page)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut page)?;
    }
    page.extend_from_slice(common_sections().as_bytes());
    if cmd.get_version().is_some() {
        man.render_version_section(&mut page)?;
    }
    let mut f = std::fs::File::create(dir.join(man.get_filename()))?;
    f.write_all(&page)?;
    Ok(n + 1)
}

/// Writes `ndx.1` and one page per subcommand into `dir`, and says how many on stderr.
pub(crate) fn man(cmd: clap::Command, dir: &Path) -> Result<u8, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let n = write_pages(cmd, dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    out::println(format_args!("{n} man pages in {}", dir.display()))?;
    Ok(0)
}
