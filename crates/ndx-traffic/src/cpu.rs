//! The process's own CPU time, to tell a generator's CPU share in a benchmark phase.

/// User + system CPU seconds this process has used (from `/proc/self/stat`, in USER_HZ ticks,
/// which Linux fixes at 100 per second for this file); `None` if it cannot be read.
pub fn cpu_seconds() -> Option<f64> {
    parse_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

fn parse_stat(stat: &str) -> Option<f64> {
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut f = rest.split_whitespace().skip(11); // fields 3..=13 skipped: utime is field 14
    let utime: u64 = f.next()?.parse().ok()?;
    let stime: u64 = f.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_utime_and_stime() {
        let s = "42 (a b) R 1 2 3 4 5 6 7 8 9 10 250 75 0 0 20 0 1 0";
        assert_eq!(parse_stat(s), Some(3.25));
        assert!(cpu_seconds().is_some());
        assert_eq!(parse_stat("garbage"), None);
    }
}
