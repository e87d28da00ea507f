//! The capabilities `ndx run` needs (configs/systemd/ndx.service grants exactly these), so
//! that a start refused for lack of one says which.

/// Every capability `ndx run` needs, with its bit number and why.
pub(crate) const NEEDED: [(&str, u32, &str); 5] = [
    (
        "CAP_BPF",
        39,
        "create the BPF maps and load the XDP program",
    ),
    (
        "CAP_PERFMON",
        38,
        "the verifier accepts the XDP program's pointer arithmetic",
    ),
    ("CAP_NET_ADMIN", 12, "attach XDP to the interfaces"),
    ("CAP_NET_RAW", 13, "open AF_XDP sockets"),
    (
        "CAP_IPC_LOCK",
        14,
        "lock UMEM and io_uring buffers beyond RLIMIT_MEMLOCK",
    ),
];

/// The needed capabilities missing from an effective set (`CapEff:` of /proc/PID/status,
/// hexadecimal).
pub(crate) fn missing_from(cap_eff: &str) -> Vec<&'static str> {
    let Ok(set) = u64::from_str_radix(cap_eff.trim(), 16) else {
        return Vec::new();
    };
    NEEDED
        .iter()
        .filter(|(_, bit, _)| set & (1 << bit) == 0)
        .map(|(name, _, _)| *name)
        .collect()
}

/// The needed capabilities this process lacks (none when it cannot tell).
pub(crate) fn missing() -> Vec<&'static str> {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .map(missing_from)
        })
        .unwrap_or_default()
}

/// One line naming what is missing and what to grant; `None` when nothing is.
pub(crate) fn hint(missing: &[&str]) -> Option<String> {
    if missing.is_empty() {
        return None;
    }
    let all: Vec<&str> = NEEDED.iter().map(|(n, _, _)| *n).collect();
    Some(format!(
        "ndx run lacks {}: run it as root, or with the capabilities {} (as \
         configs/systemd/ndx.service grants them)",
        missing.join(", "),
        all.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_what_is_missing() {
        // Root's full set.
        assert!(missing_from("000001ffffffffff").is_empty());
        // The unit's five.
        assert!(missing_from("000000c000007000").is_empty());
        assert_eq!(missing_from("000000c000003000"), vec!["CAP_IPC_LOCK"]);
        assert_eq!(missing_from("0000004000007000"), vec!["CAP_BPF"]);
        assert_eq!(missing_from("0000008000007000"), vec!["CAP_PERFMON"]);
        assert_eq!(missing_from("0").len(), 5);
        assert!(missing_from("garbage").is_empty());
        let h = hint(&["CAP_NET_RAW"]).unwrap();
        assert!(h.starts_with("ndx run lacks CAP_NET_RAW: "), "{h}");
        assert!(hint(&[]).is_none());
    }
}
