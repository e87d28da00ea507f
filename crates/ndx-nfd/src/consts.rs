//! Values of the protocol's enumerations: status codes, route origins and flags, face scopes,
//! persistencies, link types, face flags, CS flags, face event kinds.
//!
//! Checked against ndn-cxx (`ndn-cxx/encoding/nfd-constants.hpp`), NFD's managers
//! (`daemon/mgmt/*-manager.cpp`, the status codes they send), ndnd
//! (`std/ndn/mgmt_2022`, `fw/mgmt`) and python-ndn (`ndn/app_support/nfd_mgmt.py`).

/// ControlResponse status codes (HTTP-like), with the situations NFD and ndnd send them in.
pub mod status {
    /// The command succeeded.
    pub const OK: u32 = 200;
    /// ControlParameters missing, malformed, or missing a field the command needs (NFD:
    /// "failed in validating parameters", "Malformed command"; ndnd: "ControlParameters is
    /// incorrect").
    pub const BAD_PARAMS: u32 = 400;
    /// The command Interest's signature or the signer's authorisation was refused (NFD:
    /// "authorization rejected").
    pub const UNAUTHORIZED: u32 = 403;
    /// The object the command names does not exist (NFD faces/update: "Specified face does
    /// not exist"; strategy-choice/set: unknown strategy).
    pub const NOT_FOUND: u32 = 404;
    /// The face URI's scheme is not supported (NFD faces/create: "Unsupported protocol").
    pub const NOT_ACCEPTABLE: u32 = 406;
    /// Conflict with existing state (NFD faces/create: "Face with remote URI already
    /// exists"; faces/update: "Invalid properties specified").
    pub const CONFLICT: u32 = 409;
    /// The FaceId names no face (NFD fib/add-nexthop, ndnd rib/register: "Face not found" /
    /// "Face does not exist").
    pub const FACE_NOT_FOUND: u32 = 410;
    /// The prefix has more components than the FIB allows (NFD: "Route prefix cannot
    /// exceed ... components").
    pub const NAME_TOO_LONG: u32 = 414;
    /// The forwarder failed internally (NFD faces/create).
    pub const INTERNAL_ERROR: u32 = 500;
    /// Unknown module or verb (ndnd: "Unknown module", "Unknown verb").
    pub const NOT_IMPLEMENTED: u32 = 501;
}

/// Route origins (`Origin` in ControlParameters and Route).
pub mod origin {
    /// Registered by an application on its own face.
    pub const APP: u64 = 0;
    /// Registered by the auto-registration of on-demand faces.
    pub const AUTOREG: u64 = 64;
    /// Registered by a client (nfdc).
    pub const CLIENT: u64 = 65;
    /// Registered by auto-configuration.
    pub const AUTOCONF: u64 = 66;
    /// Registered by NLSR.
    pub const NLSR: u64 = 128;
    /// Installed from a prefix announcement.
    pub const PREFIXANN: u64 = 129;
    /// Static configuration.
    pub const STATIC: u64 = 255;
}

/// Route flags (`Flags` in rib/register and Route).
pub mod route_flags {
    /// The route also applies to longer prefixes that have routes of their own.
    pub const CHILD_INHERIT: u64 = 1;
    /// Longer prefixes do not inherit routes from shorter ones past this one.
    pub const CAPTURE: u64 = 2;
}

/// Face persistency (`FacePersistency`).
pub mod face_persistency {
    /// Closed on a socket error; kept while idle.
    pub const PERSISTENT: u64 = 0;
    /// Created on demand (a new peer), closed when idle.
    pub const ON_DEMAND: u64 = 1;
    /// Kept on errors and while idle.
    pub const PERMANENT: u64 = 2;
}

/// Face scope (`FaceScope`).
pub mod face_scope {
    /// A remote peer.
    pub const NON_LOCAL: u64 = 0;
    /// An application on the same host (Unix socket, internal face).
    pub const LOCAL: u64 = 1;
}

/// Link type (`LinkType`).
pub mod link_type {
    /// One peer.
    pub const POINT_TO_POINT: u64 = 0;
    /// A multicast group.
    pub const MULTI_ACCESS: u64 = 1;
    /// An ad hoc wireless link.
    pub const AD_HOC: u64 = 2;
}

/// Face flags (`Flags` in FaceStatus, faces/create and faces/update; bit values).
pub mod face_flags {
    /// NDNLPv2 local fields (IncomingFaceId, NextHopFaceId, CachePolicy) are enabled.
    pub const LOCAL_FIELDS_ENABLED: u64 = 1;
    /// NDNLPv2 reliability is enabled.
    pub const LP_RELIABILITY_ENABLED: u64 = 2;
    /// Congestion detection and marking is enabled.
    pub const CONGESTION_MARKING_ENABLED: u64 = 4;
}

/// Content store flags (`Flags` in cs/config and CsInfo; bit values).
pub mod cs_flags {
    /// The CS admits new Data.
    pub const ENABLE_ADMIT: u64 = 1;
    /// The CS answers Interests with cached Data.
    pub const ENABLE_SERVE: u64 = 2;
}

/// Face event kinds (`FaceEventKind` in a FaceEventNotification).
pub mod face_event_kind {
    /// The face was created.
    pub const CREATED: u64 = 1;
    /// The face was destroyed.
    pub const DESTROYED: u64 = 2;
    /// The face went up (from down).
    pub const UP: u64 = 3;
    /// The face went down (from up).
    pub const DOWN: u64 = 4;
}
