//! The program's per-CPU counters, summed.

use core::fmt;

/// A struct of named `u64` counters in the order of a program's counter map: the fields,
/// `COUNT`, `from_slice` (map order) and `iter` (`(label, value)` pairs). Used for both
/// programs' counter sets.
macro_rules! counters {
    ($name:ident, $doc:literal, $($(#[doc = $d:literal])* $field:ident = $label:literal,)*) => {
        #[doc = $doc]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name {
            $($(#[doc = $d])* pub $field: u64,)*
        }

        impl $name {
            /// Number of counters (entries of the program's counter map).
            pub const COUNT: usize = [$($label),*].len();

            pub(crate) fn from_slice(v: &[u64]) -> Self {
                let mut it = v.iter().copied();
                Self { $($field: it.next().unwrap_or(0),)* }
            }

            /// `(label, value)` pairs, in map order.
            pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> {
                [$(($label, self.$field)),*].into_iter()
            }
        }
    };
}

pub(crate) use counters;

counters! {
    XdpCounters, "The program's counters summed over CPUs (same order as the C enum in ndx.c).",
    /// Not NDN: passed to the kernel untouched.
    passed_not_ndn = "passed-not-ndn",
    /// IPv4 fragments: passed.
    passed_ip_fragment = "passed-ip-fragment",
    /// NDN over UDP/IPv4.
    udp4 = "udp4",
    /// NDN over UDP/IPv6.
    udp6 = "udp6",
    /// NDN over Ethernet.
    ether = "ether",
    /// Interests.
    interest = "interest",
    /// Data.
    data = "data",
    /// Nacks.
    nack = "nack",
    /// NDNLPv2 fragments (FragCount > 1).
    fragment = "fragment",
    /// LpPackets without a Fragment.
    lp_other = "lp-other",
    /// Unparseable NDN, sent by source (user space drops it).
    malformed = "malformed",
    /// Names too long to hash in XDP, sent by source (user space re-dispatches).
    name_too_long = "name-too-long",
    /// Shard chosen by PIT token.
    by_token = "by-token",
    /// Shard chosen by name hash.
    by_name = "by-name",
    /// Shard chosen by source.
    by_source = "by-source",
    /// Redirected to an AF_XDP socket.
    redirected = "redirected",
    /// Empty XSKMAP entry (or queue beyond the map): passed to the kernel.
    redirect_failed = "redirect-failed",
    /// bpf_xdp_adjust_meta failed: redirected without metadata.
    meta_failed = "meta-failed",
    /// `redirect_all` frames.
    raw = "raw",
    /// NDN frames sent to shard 0 without parsing (`classify` off: one shard).
    unclassified = "unclassified",
}

impl fmt::Display for XdpCounters {
    /// One `label value` line per non-zero counter.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (label, v) in self.iter().filter(|(_, v)| *v != 0) {
            writeln!(f, "{label:>20} {v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_order_matches_fields_and_display_skips_zeros() {
        let v: Vec<u64> = (1..=XdpCounters::COUNT as u64).collect();
        let c = XdpCounters::from_slice(&v);
        assert_eq!(c.passed_not_ndn, 1);
        assert_eq!(c.unclassified, XdpCounters::COUNT as u64);
        assert_eq!(XdpCounters::COUNT, 20);
        let d = XdpCounters {
            data: 5,
            ..Default::default()
        }
        .to_string();
        assert_eq!(d.trim(), "data 5");
    }
}
