//! What the router needs to know about an interface, read from sysfs (which reflects the
//! network namespace the router runs in).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::config::parse_mac;
use crate::worker::IfaceInfo;

/// Why an interface cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum IfaceError {
    /// No such interface.
    #[error("interface {0:?} does not exist (see `ip link`)")]
    Missing(String),
    /// A sysfs attribute could not be read or parsed.
    #[error("interface {name:?}: cannot read {attr}: {why}")]
    Attr {
        /// Interface.
        name: String,
        /// Attribute.
        attr: &'static str,
        /// Why.
        why: String,
    },
}

fn attr(name: &str, attr: &'static str) -> Result<String, IfaceError> {
    let p = PathBuf::from("/sys/class/net").join(name).join(attr);
    std::fs::read_to_string(&p)
        .map(|s| s.trim().to_string())
        .map_err(|e| IfaceError::Attr {
            name: name.into(),
            attr,
            why: e.to_string(),
        })
}

/// Reads an interface's index, MAC address and MTU.
pub(crate) fn info(name: &str) -> Result<IfaceInfo, IfaceError> {
    if !PathBuf::from("/sys/class/net").join(name).exists() {
        return Err(IfaceError::Missing(name.into()));
    }
    let bad = |attr: &'static str, why: String| IfaceError::Attr {
        name: name.into(),
        attr,
        why,
    };
    let ifindex = attr(name, "ifindex")?
        .parse()
        .map_err(|e| bad("ifindex", format!("{e}")))?;
    let mac = parse_mac(&attr(name, "address")?).map_err(|e| bad("address", e))?;
    let mtu = attr(name, "mtu")?
        .parse()
        .map_err(|e| bad("mtu", format!("{e}")))?;
    Ok(IfaceInfo {
        name: name.into(),
        ifindex,
        mac,
        mtu,
    })
}

/// An attached interface's link as the control thread last saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum LinkState {
    /// Administratively up with a carrier: frames are sent.
    Up = 0,
    /// Set down (`ip link set IF down`) or without a carrier: frames for it are dropped
    /// and counted (`tx_link_down`) until it comes back; its sockets and XDP program stay.
    Down = 1,
    /// Deleted (or replaced by another interface of the same name): its sockets are dead;
    /// frames for it are dropped and counted until `ndx run` is restarted.
    Gone = 2,
}

impl LinkState {
    /// The state's name in `ndx status --json` and the log.
    pub(crate) fn name(self) -> &'static str {
        match self {
            LinkState::Up => "up",
            LinkState::Down => "down",
            LinkState::Gone => "gone",
        }
    }

    #[cfg(test)]
    fn from_u8(v: u8) -> Self {
        match v {
            0 => LinkState::Up,
            1 => LinkState::Down,
            _ => LinkState::Gone,
        }
    }
}

/// The state of the interface `name` that had index `ifindex` when the router attached,
/// with a reason when it is not up: gone when sysfs no longer has it under that index,
/// down when its administrative flag is off or its operational state says there is no
/// carrier.
pub(crate) fn link_state(name: &str, ifindex: u32) -> (LinkState, &'static str) {
    match attr(name, "ifindex")
        .ok()
        .and_then(|i| i.parse::<u32>().ok())
    {
        Some(i) if i == ifindex => {}
        Some(_) => return (LinkState::Gone, "replaced by another interface"),
        None => return (LinkState::Gone, "deleted"),
    }
    let flags = attr(name, "flags")
        .ok()
        .and_then(|f| u32::from_str_radix(f.trim_start_matches("0x"), 16).ok());
    let operstate = attr(name, "operstate").ok();
    // Read last, and only when needed: see [`classify`].
    let carrier = || attr(name, "carrier").ok();
    classify(flags, operstate.as_deref(), carrier)
}

/// Up or down, and why, from sysfs `flags`, `operstate` and (read last) `carrier`.
///
/// `ip link set down` stops the device (sysfs `operstate` reads `down` and `carrier` fails
/// with EINVAL) before it clears `IFF_UP` in `flags`, after an RCU grace period that can
/// last milliseconds. A carrier read that fails therefore means "being set down", not "no
/// carrier"; a real carrier loss leaves the device running, so `carrier` reads `0`.
fn classify(
    flags: Option<u32>,
    operstate: Option<&str>,
    carrier: impl FnOnce() -> Option<String>,
) -> (LinkState, &'static str) {
    const IFF_UP: u32 = 1;
    if flags.unwrap_or(IFF_UP) & IFF_UP == 0 {
        return (LinkState::Down, "set down");
    }
    match operstate {
        Some("down" | "lowerlayerdown" | "notpresent") => match carrier() {
            Some(_) => (LinkState::Down, "no carrier"),
            None => (LinkState::Down, "set down"),
        },
        _ => (LinkState::Up, ""),
    }
}

/// Every attached interface's [`LinkState`], written by the control thread and read by the
/// workers (relaxed loads, a few times per 10 ms).
#[derive(Debug, Default)]
pub(crate) struct LinkStates(Vec<(u32, AtomicU8)>);

impl LinkStates {
    /// All `ifindexes` up.
    pub(crate) fn new(ifindexes: impl IntoIterator<Item = u32>) -> Self {
        Self(
            ifindexes
                .into_iter()
                .map(|i| (i, AtomicU8::new(LinkState::Up as u8)))
                .collect(),
        )
    }

    /// Records interface `ifindex`'s state.
    pub(crate) fn set(&self, ifindex: u32, s: LinkState) {
        if let Some((_, a)) = self.0.iter().find(|(i, _)| *i == ifindex) {
            a.store(s as u8, Ordering::Relaxed);
        }
    }

    /// Interface `ifindex`'s state (up when unknown).
    #[cfg(test)]
    pub(crate) fn get(&self, ifindex: u32) -> LinkState {
        self.0
            .iter()
            .find(|(i, _)| *i == ifindex)
            .map_or(LinkState::Up, |(_, a)| {
                LinkState::from_u8(a.load(Ordering::Relaxed))
            })
    }

    /// Replaces `out` with the indexes of the interfaces that are not up.
    pub(crate) fn not_up(&self, out: &mut Vec<u32>) {
        out.clear();
        out.extend(
            self.0
                .iter()
                .filter(|(_, a)| a.load(Ordering::Relaxed) != LinkState::Up as u8)
                .map(|(i, _)| *i),
        );
    }
}

/// Number of receive queues (`/sys/class/net/IF/queues/rx-N`).
pub(crate) fn rx_queues(name: &str) -> Result<u32, IfaceError> {
    let dir = PathBuf::from("/sys/class/net").join(name).join("queues");
    let n = std::fs::read_dir(&dir)
        .map_err(|e| IfaceError::Attr {
            name: name.into(),
            attr: "queues",
            why: e.to_string(),
        })?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
        .count();
    Ok((n as u32).max(1))
}

/// Which shards have a socket on each queue, for `shards` shards over `queues` queues.
///
/// With at least as many shards as queues, shard `s` sits on queue `s % queues` (several
/// shards share a queue through a shared UMEM); with fewer shards, shard `s` serves every
/// queue `q` with `q % shards == s`. Every queue gets at least one socket, every shard at
/// least one socket per interface, and the first shard listed for a queue is its owner, to
/// which the XDP program sends frames for shards without a socket there.
pub(crate) fn queue_plan(shards: u32, queues: u32) -> Vec<Vec<u32>> {
    (0..queues)
        .map(|q| {
            if shards >= queues {
                (0..shards).filter(|s| s % queues == q).collect()
            } else {
                vec![q % shards]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_readable() {
        let lo = info("lo").unwrap();
        assert_eq!(lo.ifindex, 1);
        assert_eq!(lo.mac, [0; 6]);
        assert!(lo.mtu >= 1500);
        assert!(rx_queues("lo").unwrap() >= 1);
        assert!(matches!(info("nonexistent0"), Err(IfaceError::Missing(_))));
        assert_eq!(link_state("lo", 1).0, LinkState::Up);
        assert_eq!(link_state("lo", 12345).0, LinkState::Gone);
        assert_eq!(link_state("nonexistent0", 7), (LinkState::Gone, "deleted"));
        let states = LinkStates::new([1, 7]);
        states.set(7, LinkState::Down);
        let mut down = Vec::new();
        states.not_up(&mut down);
        assert_eq!(down, vec![7]);
        assert_eq!(states.get(1), LinkState::Up);
        assert_eq!(states.get(7), LinkState::Down);
    }

    #[test]
    fn a_device_being_stopped_is_set_down_not_without_carrier() {
        let no_read = || -> Option<String> { panic!("carrier read when up") };
        assert_eq!(
            classify(Some(0x1003), Some("up"), no_read),
            (LinkState::Up, "")
        );
        assert_eq!(classify(Some(0x1002), Some("down"), no_read).1, "set down");
        // IFF_UP still set, the device already stopped: carrier fails with EINVAL.
        assert_eq!(
            classify(Some(0x1003), Some("down"), || None),
            (LinkState::Down, "set down")
        );
        // Running without carrier: carrier reads 0.
        assert_eq!(
            classify(Some(0x1003), Some("lowerlayerdown"), || Some("0".into())),
            (LinkState::Down, "no carrier")
        );
        assert_eq!(classify(None, None, no_read), (LinkState::Up, ""));
    }

    #[test]
    fn every_queue_and_shard_is_covered() {
        for shards in 1..=9 {
            for queues in 1..=9 {
                let plan = queue_plan(shards, queues);
                assert_eq!(plan.len() as u32, queues);
                assert!(plan.iter().all(|q| !q.is_empty()), "{shards}/{queues}");
                for s in 0..shards {
                    assert!(
                        plan.iter().any(|q| q.contains(&s)),
                        "shard {s} of {shards} has no socket on {queues} queues"
                    );
                }
            }
        }
        assert_eq!(queue_plan(4, 2), vec![vec![0, 2], vec![1, 3]]);
        assert_eq!(queue_plan(2, 4), vec![vec![0], vec![1], vec![0], vec![1]]);
    }
}
