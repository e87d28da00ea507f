//! Output of an experiment: an aligned table on stdout, a CSV and a gnuplot script (which
//! renders the CSV to an SVG with `gnuplot <name>.gp`) in the results directory.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A table of strings with a header row.
#[derive(Debug, Clone, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column names.
    pub fn new(headers: &[&str]) -> Self {
        Self {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells are empty).
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// Stable-sorts the rows by the given columns (as strings), so that each plotted series is
    /// contiguous in the CSV (gnuplot breaks a line at every row of another series).
    pub fn group_by(&mut self, columns: &[usize]) {
        self.rows.sort_by(|a, b| {
            columns
                .iter()
                .map(|&c| a.get(c).cmp(&b.get(c)))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Aligned text, one line per row.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.headers.iter().map(String::len).collect();
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                if i < widths.len() {
                    widths[i] = widths[i].max(c.len());
                }
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, w) in widths.iter().enumerate() {
                let c = cells.get(i).map_or("", String::as_str);
                s.push_str(&format!("{c:>w$}  "));
            }
            s.trim_end().to_owned() + "\n"
        };
        let mut out = line(&self.headers);
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    /// CSV (no quoting needed: the lab's cells hold no commas).
    pub fn to_csv(&self) -> String {
        let mut out = self.headers.join(",") + "\n";
        for r in &self.rows {
            out.push_str(&r.join(","));
            out.push('\n');
        }
        out
    }
}

/// Writes `<dir>/<name>.csv` and `<dir>/<name>.gp` (the gnuplot script, which reads the CSV
/// and writes `<name>.svg` next to it). Returns the two paths.
pub fn write(
    dir: &Path,
    name: &str,
    table: &Table,
    gnuplot: &str,
) -> io::Result<(PathBuf, PathBuf)> {
    fs::create_dir_all(dir)?;
    let csv = dir.join(format!("{name}.csv"));
    let gp = dir.join(format!("{name}.gp"));
    fs::write(&csv, table.to_csv())?;
    let script = format!(
        "# gnuplot {name}.gp  (run in this directory) -> {name}.svg\n\
         set terminal svg size 800,500 dynamic\nset output '{name}.svg'\n\
         set datafile separator ','\nset key autotitle columnhead\nset grid\n{gnuplot}\n"
    );
    fs::write(&gp, script)?;
    Ok((csv, gp))
}
