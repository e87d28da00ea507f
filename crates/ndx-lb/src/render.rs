//! `ndx lb status`'s output: a human-readable table, or the [`Status`] as JSON (`--json`).

use std::fmt::Write;

use crate::cluster::RouterState;
use crate::proto::Status;

/// The status as JSON on one line (what `ndx lb status --json` prints).
pub fn status_json(status: &Status) -> String {
    serde_json::to_string(status).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// The status for people: the front end's configuration, one line per router (slot, name,
/// address, weight, state, cells and share), the routers' counters when known, and the XDP
/// program's global counters in their order.
pub fn render_status(s: &Status) -> String {
    let mut out = String::new();
    let c = &s.config;
    let addresses = if c.addresses.is_empty() {
        format!("every IPv4 address of the interfaces, port {}", c.port)
    } else {
        c.addresses
            .iter()
            .map(|a| format!("{a}:{}", c.port))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(out, "front end     {addresses}");
    let interfaces: Vec<String> = c
        .interfaces
        .iter()
        .map(|i| format!("{} ({})", i.name, i.mode))
        .collect();
    let _ = writeln!(out, "interfaces    {}", interfaces.join(", "));
    let _ = writeln!(
        out,
        "hash          {}, {} cells, drain {} ms",
        c.hash, c.table, c.drain_ms
    );

    out.push_str("\nrouters\n");
    if s.routers.is_empty() {
        out.push_str("  (none: Interests are dropped)\n");
    } else {
        let _ = writeln!(
            out,
            "  {:>4}  {:<16} {:<21} {:>6}  {:<20} {:>6} {:>7}",
            "slot", "name", "address", "weight", "state", "cells", "share"
        );
        for r in &s.routers {
            let v = &r.router;
            let state = match v.state {
                RouterState::Active => "active".to_string(),
                RouterState::Draining { remaining } => {
                    format!("draining ({} ms)", remaining.as_millis())
                }
            };
            let _ = writeln!(
                out,
                "  {:>4}  {:<16} {:<21} {:>6}  {:<20} {:>6} {:>6.1}%",
                v.slot,
                v.name,
                format!("{}:{}", v.address, v.port),
                v.weight,
                state,
                v.cells,
                v.share * 100.0
            );
        }
        if s.routers.iter().all(|r| r.router.cells == 0) {
            out.push_str("  no active router with a weight above 0: Interests are dropped\n");
        }
    }

    if s.routers.iter().any(|r| r.counters.is_some()) {
        let names = crate::proto::RouterCounters::default().named();
        let _ = write!(out, "\nrouter counters\n  {:<16}", "name");
        for (n, _) in names {
            let _ = write!(out, " {:>20}", n);
        }
        out.push('\n');
        for r in &s.routers {
            let _ = write!(out, "  {:<16}", r.router.name);
            match &r.counters {
                Some(k) => {
                    for (_, v) in k.named() {
                        let _ = write!(out, " {v:>20}");
                    }
                }
                None => {
                    for _ in names {
                        let _ = write!(out, " {:>20}", "-");
                    }
                }
            }
            out.push('\n');
        }
    }

    if !s.counters.is_empty() {
        out.push_str("\ncounters\n");
        for (name, v) in &s.counters {
            let _ = writeln!(out, "  {name:<28}{v:>16}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::tests::sample_status;

    #[test]
    fn the_table_shows_the_config_routers_and_counters() {
        let s = render_status(&sample_status());
        assert!(s.contains("front end     192.0.2.1:6363\n"), "{s}");
        assert!(s.contains("interfaces    eth0 (auto)\n"), "{s}");
        assert!(
            s.contains("hash          name, 4096 cells, drain 5000 ms\n"),
            "{s}"
        );
        let ir1 = s.lines().find(|l| l.contains("ir1 ")).unwrap();
        assert!(ir1.contains("10.3.1.2:6371"), "{ir1}");
        assert!(ir1.contains("draining (3500 ms)"), "{ir1}");
        assert!(ir1.trim_end().ends_with("0.0%"), "{ir1}");
        let ir2 = s.lines().find(|l| l.contains("ir2 ")).unwrap();
        assert!(ir2.contains("active"), "{ir2}");
        assert!(ir2.trim_end().ends_with("4096  100.0%"), "{ir2}");
        assert!(s.contains("interests_dispatched"), "{s}");
        let (_, below) = s.split_once("router counters\n").unwrap();
        let counters: Vec<&str> = below.lines().skip(1).take(2).collect();
        assert!(
            counters[0].trim_start().starts_with("ir1") && counters[0].contains('-'),
            "unknown counters: {s}"
        );
        assert!(counters[1].trim_start().starts_with("ir2"), "{s}");
        assert!(
            counters[1].contains(" 7 ") && counters[1].contains(" 700 "),
            "{s}"
        );
        let rx = s.find("  rx ").unwrap();
        let drop = s.find("  drop_no_router").unwrap();
        assert!(rx < drop, "global counters keep their order: {s}");
        assert!(!s.contains("Interests are dropped"), "{s}");
    }

    #[test]
    fn an_empty_cluster_says_interests_are_dropped() {
        let mut st = sample_status();
        st.routers.clear();
        st.counters.clear();
        st.config.addresses.clear();
        let s = render_status(&st);
        assert!(s.contains("(none: Interests are dropped)"), "{s}");
        assert!(
            s.contains("every IPv4 address of the interfaces, port 6363"),
            "{s}"
        );
        assert!(!s.contains("counters"), "{s}");
        let mut st = sample_status();
        st.routers.retain(|r| r.router.name == "ir1");
        assert!(render_status(&st).contains("no active router with a weight above 0"));
    }

    #[test]
    fn json_is_the_status() {
        let st = sample_status();
        let j = status_json(&st);
        assert!(!j.contains('\n'));
        assert_eq!(serde_json::from_str::<Status>(&j).unwrap(), st);
    }
}
