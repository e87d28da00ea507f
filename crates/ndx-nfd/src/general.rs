//! Forwarder-wide datasets: the general status (status/general) and CsInfo (cs/info).

use ndx_codec::Tlv;

use crate::MgmtError;
use crate::tlv;
use crate::wire::{Fields, put_nested, read_outer};
use ndx_codec::{push_nni_tlv, push_tlv};

/// The general status (status/general): the dataset's Content is these elements directly,
/// with no enclosing TLV. Timestamps are milliseconds since the Unix epoch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ForwarderStatus {
    /// NfdVersion (UTF-8).
    pub nfd_version: String,
    /// StartTimestamp.
    pub start_timestamp: u64,
    /// CurrentTimestamp.
    pub current_timestamp: u64,
    /// NNameTreeEntries.
    pub n_name_tree_entries: u64,
    /// NFibEntries.
    pub n_fib_entries: u64,
    /// NPitEntries.
    pub n_pit_entries: u64,
    /// NMeasurementsEntries.
    pub n_measurements_entries: u64,
    /// NCsEntries.
    pub n_cs_entries: u64,
    /// NInInterests.
    pub n_in_interests: u64,
    /// NInData.
    pub n_in_data: u64,
    /// NInNacks.
    pub n_in_nacks: u64,
    /// NOutInterests.
    pub n_out_interests: u64,
    /// NOutData.
    pub n_out_data: u64,
    /// NOutNacks.
    pub n_out_nacks: u64,
    /// NSatisfiedInterests.
    pub n_satisfied_interests: u64,
    /// NUnsatisfiedInterests.
    pub n_unsatisfied_interests: u64,
}

/// The general status's integer fields after NfdVersion, in NFD's order.
const GENERAL: [(u64, &str); 15] = [
    (tlv::START_TIMESTAMP, "StartTimestamp"),
    (tlv::CURRENT_TIMESTAMP, "CurrentTimestamp"),
    (tlv::N_NAME_TREE_ENTRIES, "NNameTreeEntries"),
    (tlv::N_FIB_ENTRIES, "NFibEntries"),
    (tlv::N_PIT_ENTRIES, "NPitEntries"),
    (tlv::N_MEASUREMENTS_ENTRIES, "NMeasurementsEntries"),
    (tlv::N_CS_ENTRIES, "NCsEntries"),
    (tlv::N_IN_INTERESTS, "NInInterests"),
    (tlv::N_IN_DATA, "NInData"),
    (tlv::N_IN_NACKS, "NInNacks"),
    (tlv::N_OUT_INTERESTS, "NOutInterests"),
    (tlv::N_OUT_DATA, "NOutData"),
    (tlv::N_OUT_NACKS, "NOutNacks"),
    (tlv::N_SATISFIED_INTERESTS, "NSatisfiedInterests"),
    (tlv::N_UNSATISFIED_INTERESTS, "NUnsatisfiedInterests"),
];

const GENERAL_STATUS: &str = "GeneralStatus";

impl ForwarderStatus {
    fn numbers(&self) -> [u64; 15] {
        [
            self.start_timestamp,
            self.current_timestamp,
            self.n_name_tree_entries,
            self.n_fib_entries,
            self.n_pit_entries,
            self.n_measurements_entries,
            self.n_cs_entries,
            self.n_in_interests,
            self.n_in_data,
            self.n_in_nacks,
            self.n_out_interests,
            self.n_out_data,
            self.n_out_nacks,
            self.n_satisfied_interests,
            self.n_unsatisfied_interests,
        ]
    }

    /// Appends the general status's elements (the whole dataset Content), in NFD's order.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        push_tlv(out, tlv::NFD_VERSION, self.nfd_version.as_bytes());
        for ((typ, _), v) in GENERAL.iter().zip(self.numbers()) {
            push_nni_tlv(out, *typ, v);
        }
    }

    /// Decodes the general status from the dataset's reassembled Content. Every field is
    /// required; the counters ndnd adds (`tlv::NDND_STATUS_EXTENSIONS`) are skipped.
    pub fn decode(content: &[u8]) -> Result<Self, MgmtError> {
        let mut f = Fields::over(content, 0, GENERAL_STATUS);
        let mut version = None;
        let mut n: [Option<u64>; 15] = [None; 15];
        while let Some(e) = f.next()? {
            if e.typ == tlv::NFD_VERSION {
                f.set_string(&mut version, &e, "NfdVersion")?;
            } else if let Some(i) = GENERAL.iter().position(|&(t, _)| t == e.typ) {
                f.set_nni(&mut n[i], &e, GENERAL[i].1)?;
            } else if !tlv::NDND_STATUS_EXTENSIONS.contains(&e.typ) {
                f.unknown(&e)?;
            }
        }
        let v = required_all(&f, n, &GENERAL)?;
        Ok(Self {
            nfd_version: f.required(version, "NfdVersion")?,
            start_timestamp: v[0],
            current_timestamp: v[1],
            n_name_tree_entries: v[2],
            n_fib_entries: v[3],
            n_pit_entries: v[4],
            n_measurements_entries: v[5],
            n_cs_entries: v[6],
            n_in_interests: v[7],
            n_in_data: v[8],
            n_in_nacks: v[9],
            n_out_interests: v[10],
            n_out_data: v[11],
            n_out_nacks: v[12],
            n_satisfied_interests: v[13],
            n_unsatisfied_interests: v[14],
        })
    }
}

/// The values of `slots` (one per field of `table`, in its order), each required: the first
/// missing one is the error.
fn required_all<const N: usize>(
    f: &Fields<'_>,
    slots: [Option<u64>; N],
    table: &[(u64, &'static str); N],
) -> Result<[u64; N], MgmtError> {
    let mut v = [0; N];
    for (i, x) in slots.into_iter().enumerate() {
        v[i] = f.required(x, table[i].1)?;
    }
    Ok(v)
}

/// CsInfo (TLV-TYPE 0x80): the cs/info dataset's one element.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsInfo {
    /// Capacity, in packets.
    pub capacity: u64,
    /// Flags ([`crate::cs_flags`]).
    pub flags: u64,
    /// NCsEntries.
    pub n_cs_entries: u64,
    /// NHits.
    pub n_hits: u64,
    /// NMisses.
    pub n_misses: u64,
}

const CS_INFO: &str = "CsInfo";

/// CsInfo's fields, in NFD's order.
const CS_FIELDS: [(u64, &str); 5] = [
    (tlv::CAPACITY, "Capacity"),
    (tlv::FLAGS, "Flags"),
    (tlv::N_CS_ENTRIES, "NCsEntries"),
    (tlv::N_HITS, "NHits"),
    (tlv::N_MISSES, "NMisses"),
];

impl CsInfo {
    /// Appends the CsInfo TLV, in NFD's order.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let numbers = [
            self.capacity,
            self.flags,
            self.n_cs_entries,
            self.n_hits,
            self.n_misses,
        ];
        put_nested(out, tlv::CS_INFO, |v| {
            for ((typ, _), n) in CS_FIELDS.iter().zip(numbers) {
                push_nni_tlv(v, *typ, n);
            }
        });
    }

    /// Decodes a whole CsInfo TLV (every field required).
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        Self::decode_tlv(&read_outer(wire, tlv::CS_INFO, CS_INFO)?)
    }

    fn decode_tlv(t: &Tlv<'_>) -> Result<Self, MgmtError> {
        let mut f = Fields::of(t, CS_INFO);
        let mut n: [Option<u64>; 5] = [None; 5];
        while let Some(e) = f.next()? {
            match CS_FIELDS.iter().position(|&(t, _)| t == e.typ) {
                Some(i) => f.set_nni(&mut n[i], &e, CS_FIELDS[i].1)?,
                None => f.unknown(&e)?,
            }
        }
        let [capacity, flags, n_cs_entries, n_hits, n_misses] = required_all(&f, n, &CS_FIELDS)?;
        Ok(Self {
            capacity,
            flags,
            n_cs_entries,
            n_hits,
            n_misses,
        })
    }
}
