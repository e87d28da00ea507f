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

/// Entries of the program's counter map (`ndx_stats`): the [`XdpCounters::COUNT`] counters in
/// their order, then the one-shard path's six (`C_U_*` in ndx.c), which
/// [`XdpCounters::from_raw`] folds into the others.
pub(crate) const RAW_COUNT: usize = XdpCounters::COUNT + 6;

impl XdpCounters {
    /// The counters from the program's raw map (`RAW_COUNT` entries, summed over CPUs).
    ///
    /// With `classify` off (one shard) the program increments one counter per NDN frame,
    /// by encapsulation and redirect outcome (UDP/IPv4, UDP/IPv6, Ethernet, each redirected
    /// or failed), instead of three (the encapsulation, `unclassified`, the outcome): they
    /// are folded here into `udp4`/`udp6`/`ether`, `unclassified`, `redirected` and
    /// `redirect-failed`, which keep their meaning.
    pub(crate) fn from_raw(raw: &[u64]) -> Self {
        let mut c = Self::from_slice(raw);
        let u = |i: usize| raw.get(Self::COUNT + i).copied().unwrap_or(0);
        let (u4, u4f, u6, u6f, ue, uef) = (u(0), u(1), u(2), u(3), u(4), u(5));
        c.udp4 += u4 + u4f;
        c.udp6 += u6 + u6f;
        c.ether += ue + uef;
        c.unclassified += u4 + u4f + u6 + u6f + ue + uef;
        c.redirected += u4 + u6 + ue;
        c.redirect_failed += u4f + u6f + uef;
        c
    }
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

    #[test]
    fn the_one_shard_counters_fold_into_the_named_ones() {
        let mut raw = vec![0u64; RAW_COUNT];
        raw[2] = 100; // udp4, classified
        raw[15] = 90; // redirected, classified
        raw[16] = 10; // redirect-failed, classified
        // udp4 ok/failed, udp6 ok/failed, ether ok/failed, unclassified
        raw[XdpCounters::COUNT..].copy_from_slice(&[7, 1, 5, 2, 3, 4]);
        let c = XdpCounters::from_raw(&raw);
        assert_eq!((c.udp4, c.udp6, c.ether), (108, 7, 7));
        assert_eq!(c.unclassified, 22);
        assert_eq!(c.redirected, 90 + 7 + 5 + 3);
        assert_eq!(c.redirect_failed, 10 + 1 + 2 + 4);
        assert_eq!(c.udp4 + c.udp6 + c.ether, c.redirected + c.redirect_failed);
        assert_eq!(XdpCounters::from_raw(&raw[..XdpCounters::COUNT]).udp4, 100);
    }
}
