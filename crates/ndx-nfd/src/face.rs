//! Face management elements: FaceStatus (faces/list, faces/query), FaceQueryFilter
//! (faces/query's argument), FaceEventNotification (faces/events).

use ndx_codec::Tlv;

use crate::MgmtError;
use crate::tlv;
use crate::wire::{Fields, put_nested, put_opt_nni, read_outer};
use ndx_codec::{push_nni_tlv, push_tlv};

/// FaceStatus (TLV-TYPE 0x80): one face in the faces/list and faces/query datasets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaceStatus {
    /// FaceId.
    pub face_id: u64,
    /// Uri: the remote URI (`udp4://192.0.2.1:6363`, `fd://17`, ...).
    pub uri: String,
    /// LocalUri.
    pub local_uri: String,
    /// ExpirationPeriod: milliseconds until an on-demand face closes if idle.
    pub expiration_period: Option<u64>,
    /// FaceScope ([`crate::face_scope`]).
    pub face_scope: u64,
    /// FacePersistency ([`crate::face_persistency`]).
    pub face_persistency: u64,
    /// LinkType ([`crate::link_type`]).
    pub link_type: u64,
    /// BaseCongestionMarkingInterval, in nanoseconds.
    pub base_congestion_marking_interval: Option<u64>,
    /// DefaultCongestionThreshold, in bytes.
    pub default_congestion_threshold: Option<u64>,
    /// Mtu, in bytes.
    pub mtu: Option<u64>,
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
    /// NInBytes.
    pub n_in_bytes: u64,
    /// NOutBytes.
    pub n_out_bytes: u64,
    /// Flags ([`crate::face_flags`]).
    pub flags: u64,
}

const FACE_STATUS: &str = "FaceStatus";

/// The link limits a face reports (FaceStatus) and a command sets (ControlParameters), in
/// NFD's order: both messages carry them optional and one after the other.
const LIMITS: [(u64, &str); 3] = [
    (
        tlv::BASE_CONGESTION_MARKING_INTERVAL,
        "BaseCongestionMarkingInterval",
    ),
    (
        tlv::DEFAULT_CONGESTION_THRESHOLD,
        "DefaultCongestionThreshold",
    ),
    (tlv::MTU, "Mtu"),
];

/// Appends the link limits present (BaseCongestionMarkingInterval,
/// DefaultCongestionThreshold, Mtu), in NFD's order.
pub(crate) fn put_limits(out: &mut Vec<u8>, limits: [Option<u64>; 3]) {
    for ((typ, _), v) in LIMITS.iter().zip(limits) {
        put_opt_nni(out, *typ, v);
    }
}

/// Reads `e` into its slot of `limits` (in [`put_limits`]'s order) when it is a link limit:
/// whether it was (a repeated one is an error).
pub(crate) fn set_limit(
    f: &Fields<'_>,
    limits: [&mut Option<u64>; 3],
    e: &Tlv<'_>,
) -> Result<bool, MgmtError> {
    for ((typ, what), slot) in LIMITS.iter().zip(limits) {
        if *typ == e.typ {
            f.set_nni(slot, e, what)?;
            return Ok(true);
        }
    }
    Ok(false)
}

impl FaceStatus {
    /// Appends the FaceStatus TLV, in NFD's order.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_nested(out, tlv::FACE_STATUS, |v| {
            push_nni_tlv(v, tlv::FACE_ID, self.face_id);
            push_tlv(v, tlv::URI, self.uri.as_bytes());
            push_tlv(v, tlv::LOCAL_URI, self.local_uri.as_bytes());
            put_opt_nni(v, tlv::EXPIRATION_PERIOD, self.expiration_period);
            push_nni_tlv(v, tlv::FACE_SCOPE, self.face_scope);
            push_nni_tlv(v, tlv::FACE_PERSISTENCY, self.face_persistency);
            push_nni_tlv(v, tlv::LINK_TYPE, self.link_type);
            put_limits(
                v,
                [
                    self.base_congestion_marking_interval,
                    self.default_congestion_threshold,
                    self.mtu,
                ],
            );
            push_nni_tlv(v, tlv::N_IN_INTERESTS, self.n_in_interests);
            push_nni_tlv(v, tlv::N_IN_DATA, self.n_in_data);
            push_nni_tlv(v, tlv::N_IN_NACKS, self.n_in_nacks);
            push_nni_tlv(v, tlv::N_OUT_INTERESTS, self.n_out_interests);
            push_nni_tlv(v, tlv::N_OUT_DATA, self.n_out_data);
            push_nni_tlv(v, tlv::N_OUT_NACKS, self.n_out_nacks);
            push_nni_tlv(v, tlv::N_IN_BYTES, self.n_in_bytes);
            push_nni_tlv(v, tlv::N_OUT_BYTES, self.n_out_bytes);
            push_nni_tlv(v, tlv::FLAGS, self.flags);
        });
    }

    /// Decodes one FaceStatus TLV (every field but the four optional ones is required).
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        Self::decode_tlv(&read_outer(wire, tlv::FACE_STATUS, FACE_STATUS)?)
    }

    /// Decodes a faces/list (or faces/query) dataset: the FaceStatus elements of its
    /// reassembled Content.
    pub fn decode_all(content: &[u8]) -> Result<Vec<Self>, MgmtError> {
        crate::dataset::decode_all(content, tlv::FACE_STATUS, FACE_STATUS, Self::decode_tlv)
    }

    fn limits_mut(&mut self) -> [&mut Option<u64>; 3] {
        [
            &mut self.base_congestion_marking_interval,
            &mut self.default_congestion_threshold,
            &mut self.mtu,
        ]
    }

    pub(crate) fn decode_tlv(t: &Tlv<'_>) -> Result<Self, MgmtError> {
        let mut f = Fields::of(t, FACE_STATUS);
        let mut face_id = None;
        let (mut uri, mut local_uri) = (None, None);
        let mut s = Self::default();
        let (mut scope, mut persistency, mut link) = (None, None, None);
        let mut c: [Option<u64>; 8] = [None; 8];
        let mut flags = None;
        while let Some(e) = f.next()? {
            match e.typ {
                tlv::FACE_ID => f.set_nni(&mut face_id, &e, "FaceId")?,
                tlv::URI => f.set_string(&mut uri, &e, "Uri")?,
                tlv::LOCAL_URI => f.set_string(&mut local_uri, &e, "LocalUri")?,
                tlv::EXPIRATION_PERIOD => {
                    f.set_nni(&mut s.expiration_period, &e, "ExpirationPeriod")?;
                }
                tlv::FACE_SCOPE => f.set_nni(&mut scope, &e, "FaceScope")?,
                tlv::FACE_PERSISTENCY => f.set_nni(&mut persistency, &e, "FacePersistency")?,
                tlv::LINK_TYPE => f.set_nni(&mut link, &e, "LinkType")?,
                tlv::FLAGS => f.set_nni(&mut flags, &e, "Flags")?,
                _ if set_limit(&f, s.limits_mut(), &e)? => {}
                typ => match COUNTERS.iter().position(|&(t, _)| t == typ) {
                    Some(i) => f.set_nni(&mut c[i], &e, COUNTERS[i].1)?,
                    None => f.unknown(&e)?,
                },
            }
        }
        s.face_id = f.required(face_id, "FaceId")?;
        s.uri = f.required(uri, "Uri")?;
        s.local_uri = f.required(local_uri, "LocalUri")?;
        s.face_scope = f.required(scope, "FaceScope")?;
        s.face_persistency = f.required(persistency, "FacePersistency")?;
        s.link_type = f.required(link, "LinkType")?;
        let mut counters = [0; 8];
        for (i, v) in c.into_iter().enumerate() {
            counters[i] = f.required(v, COUNTERS[i].1)?;
        }
        [
            s.n_in_interests,
            s.n_in_data,
            s.n_in_nacks,
            s.n_out_interests,
            s.n_out_data,
            s.n_out_nacks,
            s.n_in_bytes,
            s.n_out_bytes,
        ] = counters;
        s.flags = f.required(flags, "Flags")?;
        Ok(s)
    }
}

/// FaceStatus's counters, in its field order.
const COUNTERS: [(u64, &str); 8] = [
    (tlv::N_IN_INTERESTS, "NInInterests"),
    (tlv::N_IN_DATA, "NInData"),
    (tlv::N_IN_NACKS, "NInNacks"),
    (tlv::N_OUT_INTERESTS, "NOutInterests"),
    (tlv::N_OUT_DATA, "NOutData"),
    (tlv::N_OUT_NACKS, "NOutNacks"),
    (tlv::N_IN_BYTES, "NInBytes"),
    (tlv::N_OUT_BYTES, "NOutBytes"),
];

/// FaceQueryFilter (TLV-TYPE 0x96): the argument of faces/query, in the name component after
/// the verb. A face matches when it matches every field present.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaceQueryFilter {
    /// FaceId.
    pub face_id: Option<u64>,
    /// UriScheme: the remote URI's scheme (`udp4`, `fd`, ...).
    pub uri_scheme: Option<String>,
    /// Uri.
    pub uri: Option<String>,
    /// LocalUri.
    pub local_uri: Option<String>,
    /// FaceScope.
    pub face_scope: Option<u64>,
    /// FacePersistency.
    pub face_persistency: Option<u64>,
    /// LinkType.
    pub link_type: Option<u64>,
}

const FACE_QUERY_FILTER: &str = "FaceQueryFilter";

impl FaceQueryFilter {
    /// Appends the FaceQueryFilter TLV, in NFD's order.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_nested(out, tlv::FACE_QUERY_FILTER, |v| {
            put_opt_nni(v, tlv::FACE_ID, self.face_id);
            for (typ, s) in [
                (tlv::URI_SCHEME, &self.uri_scheme),
                (tlv::URI, &self.uri),
                (tlv::LOCAL_URI, &self.local_uri),
            ] {
                if let Some(s) = s {
                    push_tlv(v, typ, s.as_bytes());
                }
            }
            put_opt_nni(v, tlv::FACE_SCOPE, self.face_scope);
            put_opt_nni(v, tlv::FACE_PERSISTENCY, self.face_persistency);
            put_opt_nni(v, tlv::LINK_TYPE, self.link_type);
        });
    }

    /// The FaceQueryFilter TLV, as a new vector.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    /// Decodes a whole FaceQueryFilter TLV.
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        let t = read_outer(wire, tlv::FACE_QUERY_FILTER, FACE_QUERY_FILTER)?;
        let mut f = Fields::of(&t, FACE_QUERY_FILTER);
        let mut q = Self::default();
        while let Some(e) = f.next()? {
            match e.typ {
                tlv::FACE_ID => f.set_nni(&mut q.face_id, &e, "FaceId")?,
                tlv::URI_SCHEME => f.set_string(&mut q.uri_scheme, &e, "UriScheme")?,
                tlv::URI => f.set_string(&mut q.uri, &e, "Uri")?,
                tlv::LOCAL_URI => f.set_string(&mut q.local_uri, &e, "LocalUri")?,
                tlv::FACE_SCOPE => f.set_nni(&mut q.face_scope, &e, "FaceScope")?,
                tlv::FACE_PERSISTENCY => {
                    f.set_nni(&mut q.face_persistency, &e, "FacePersistency")?;
                }
                tlv::LINK_TYPE => f.set_nni(&mut q.link_type, &e, "LinkType")?,
                _ => f.unknown(&e)?,
            }
        }
        Ok(q)
    }

    /// Whether `face` matches every field present (UriScheme against the part of the remote
    /// URI before `:`).
    pub fn matches(&self, face: &FaceStatus) -> bool {
        let scheme = face.uri.split_once(':').map_or("", |(s, _)| s);
        self.face_id.is_none_or(|v| v == face.face_id)
            && self.uri_scheme.as_deref().is_none_or(|v| v == scheme)
            && self.uri.as_deref().is_none_or(|v| v == face.uri)
            && self
                .local_uri
                .as_deref()
                .is_none_or(|v| v == face.local_uri)
            && self.face_scope.is_none_or(|v| v == face.face_scope)
            && self
                .face_persistency
                .is_none_or(|v| v == face.face_persistency)
            && self.link_type.is_none_or(|v| v == face.link_type)
    }
}

/// FaceEventNotification (TLV-TYPE 0xc0): one notification of the faces/events stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaceEventNotification {
    /// FaceEventKind ([`crate::face_event_kind`]).
    pub kind: u64,
    /// FaceId.
    pub face_id: u64,
    /// Uri.
    pub uri: String,
    /// LocalUri.
    pub local_uri: String,
    /// FaceScope.
    pub face_scope: u64,
    /// FacePersistency.
    pub face_persistency: u64,
    /// LinkType.
    pub link_type: u64,
    /// Flags ([`crate::face_flags`]).
    pub flags: u64,
}

const FACE_EVENT: &str = "FaceEventNotification";

impl FaceEventNotification {
    /// The notification of `kind` for `face`.
    pub fn new(kind: u64, face: &FaceStatus) -> Self {
        Self {
            kind,
            face_id: face.face_id,
            uri: face.uri.clone(),
            local_uri: face.local_uri.clone(),
            face_scope: face.face_scope,
            face_persistency: face.face_persistency,
            link_type: face.link_type,
            flags: face.flags,
        }
    }

    /// Appends the FaceEventNotification TLV, in NFD's order.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        put_nested(out, tlv::FACE_EVENT_NOTIFICATION, |v| {
            push_nni_tlv(v, tlv::FACE_EVENT_KIND, self.kind);
            push_nni_tlv(v, tlv::FACE_ID, self.face_id);
            push_tlv(v, tlv::URI, self.uri.as_bytes());
            push_tlv(v, tlv::LOCAL_URI, self.local_uri.as_bytes());
            push_nni_tlv(v, tlv::FACE_SCOPE, self.face_scope);
            push_nni_tlv(v, tlv::FACE_PERSISTENCY, self.face_persistency);
            push_nni_tlv(v, tlv::LINK_TYPE, self.link_type);
            push_nni_tlv(v, tlv::FLAGS, self.flags);
        });
    }

    /// Decodes a whole FaceEventNotification TLV (every field required).
    pub fn decode(wire: &[u8]) -> Result<Self, MgmtError> {
        let t = read_outer(wire, tlv::FACE_EVENT_NOTIFICATION, FACE_EVENT)?;
        let mut f = Fields::of(&t, FACE_EVENT);
        let (mut kind, mut face_id, mut uri, mut local_uri) = (None, None, None, None);
        let (mut scope, mut persistency, mut link, mut flags) = (None, None, None, None);
        while let Some(e) = f.next()? {
            match e.typ {
                tlv::FACE_EVENT_KIND => f.set_nni(&mut kind, &e, "FaceEventKind")?,
                tlv::FACE_ID => f.set_nni(&mut face_id, &e, "FaceId")?,
                tlv::URI => f.set_string(&mut uri, &e, "Uri")?,
                tlv::LOCAL_URI => f.set_string(&mut local_uri, &e, "LocalUri")?,
                tlv::FACE_SCOPE => f.set_nni(&mut scope, &e, "FaceScope")?,
                tlv::FACE_PERSISTENCY => f.set_nni(&mut persistency, &e, "FacePersistency")?,
                tlv::LINK_TYPE => f.set_nni(&mut link, &e, "LinkType")?,
                tlv::FLAGS => f.set_nni(&mut flags, &e, "Flags")?,
                _ => f.unknown(&e)?,
            }
        }
        Ok(Self {
            kind: f.required(kind, "FaceEventKind")?,
            face_id: f.required(face_id, "FaceId")?,
            uri: f.required(uri, "Uri")?,
            local_uri: f.required(local_uri, "LocalUri")?,
            face_scope: f.required(scope, "FaceScope")?,
            face_persistency: f.required(persistency, "FacePersistency")?,
            link_type: f.required(link, "LinkType")?,
            flags: f.required(flags, "Flags")?,
        })
    }
}
