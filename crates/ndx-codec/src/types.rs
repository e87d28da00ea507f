//! TLV-TYPE numbers of NDN packet format v0.3 (with naming conventions rev. 3) and NDNLPv2.

#![expect(
    missing_docs,
    reason = "each constant is the TLV-TYPE of the element of the same name"
)]

// Packet format v0.3, "TLV-TYPE number assignments".
pub const IMPLICIT_SHA256_DIGEST_COMPONENT: u64 = 1;
pub const PARAMETERS_SHA256_DIGEST_COMPONENT: u64 = 2;
pub const INTEREST: u64 = 5;
pub const DATA: u64 = 6;
pub const NAME: u64 = 7;
pub const GENERIC_NAME_COMPONENT: u64 = 8;
pub const NONCE: u64 = 10;
pub const INTEREST_LIFETIME: u64 = 12;
pub const MUST_BE_FRESH: u64 = 18;
pub const META_INFO: u64 = 20;
pub const CONTENT: u64 = 21;
pub const SIGNATURE_INFO: u64 = 22;
pub const SIGNATURE_VALUE: u64 = 23;
pub const CONTENT_TYPE: u64 = 24;
pub const FRESHNESS_PERIOD: u64 = 25;
pub const FINAL_BLOCK_ID: u64 = 26;
pub const SIGNATURE_TYPE: u64 = 27;
pub const KEY_LOCATOR: u64 = 28;
pub const KEY_DIGEST: u64 = 29;
pub const FORWARDING_HINT: u64 = 30;
/// Pre-2021 ForwardingHint encoding: Delegation { Preference, Name }. Accepted on decode.
pub const LEGACY_DELEGATION: u64 = 31;
pub const KEYWORD_NAME_COMPONENT: u64 = 32;
pub const CAN_BE_PREFIX: u64 = 33;
pub const HOP_LIMIT: u64 = 34;
pub const APPLICATION_PARAMETERS: u64 = 36;
pub const SIGNATURE_NONCE: u64 = 38;
pub const SIGNATURE_TIME: u64 = 40;
pub const SIGNATURE_SEQ_NUM: u64 = 42;
pub const INTEREST_SIGNATURE_INFO: u64 = 44;
pub const INTEREST_SIGNATURE_VALUE: u64 = 46;
pub const VALIDITY_PERIOD: u64 = 253;
pub const NOT_BEFORE: u64 = 254;
pub const NOT_AFTER: u64 = 255;

// Naming conventions rev. 3 typed components.
pub const SEGMENT_NAME_COMPONENT: u64 = 50;
pub const BYTE_OFFSET_NAME_COMPONENT: u64 = 52;
pub const VERSION_NAME_COMPONENT: u64 = 54;
pub const TIMESTAMP_NAME_COMPONENT: u64 = 56;
pub const SEQUENCE_NUM_NAME_COMPONENT: u64 = 58;

// NDNLPv2.
pub const LP_PACKET: u64 = 100;
pub const LP_FRAGMENT: u64 = 80;
pub const LP_SEQUENCE: u64 = 81;
pub const LP_FRAG_INDEX: u64 = 82;
pub const LP_FRAG_COUNT: u64 = 83;
pub const LP_HOP_COUNT_TAG: u64 = 84;
pub const LP_GEO_TAG: u64 = 85;
pub const LP_PIT_TOKEN: u64 = 98;
pub const LP_NACK: u64 = 800;
pub const LP_NACK_REASON: u64 = 801;
pub const LP_NEXT_HOP_FACE_ID: u64 = 816;
pub const LP_INCOMING_FACE_ID: u64 = 812;
pub const LP_CACHE_POLICY: u64 = 820;
pub const LP_CACHE_POLICY_TYPE: u64 = 821;
pub const LP_CONGESTION_MARK: u64 = 832;
pub const LP_ACK: u64 = 836;
pub const LP_TX_SEQUENCE: u64 = 840;
pub const LP_NON_DISCOVERY: u64 = 844;
pub const LP_PREFIX_ANNOUNCEMENT: u64 = 848;

/// Whether an unrecognised TLV-TYPE must cause the enclosing packet to be rejected
/// (packet format v0.3, "Considerations for evolvability": types 0-31 and odd types).
pub const fn is_critical(typ: u64) -> bool {
    typ < 32 || typ & 1 == 1
}

/// Whether an unrecognised NDNLPv2 header field may be ignored: TLV-TYPE in `800..=959`
/// with the two least significant bits `00`. Every other unknown LP field is fatal.
pub const fn lp_is_ignorable(typ: u64) -> bool {
    typ >= 800 && typ <= 959 && typ & 0b11 == 0
}

/// A human-readable name for a TLV-TYPE, given the TLV-TYPE of the enclosing element
/// (`parent = 0` for the outermost level). `None` when the type is not known there.
pub const fn type_name(parent: u64, typ: u64) -> Option<&'static str> {
    let name = match (parent, typ) {
        (0, INTEREST) | (LP_FRAGMENT, INTEREST) => "Interest",
        (0, DATA) | (LP_FRAGMENT, DATA) => "Data",
        (0, LP_PACKET) => "LpPacket",
        (NAME | FINAL_BLOCK_ID, IMPLICIT_SHA256_DIGEST_COMPONENT) => {
            "ImplicitSha256DigestComponent"
        }
        (NAME | FINAL_BLOCK_ID, PARAMETERS_SHA256_DIGEST_COMPONENT) => {
            "ParametersSha256DigestComponent"
        }
        (NAME | FINAL_BLOCK_ID, GENERIC_NAME_COMPONENT) => "GenericNameComponent",
        (NAME | FINAL_BLOCK_ID, KEYWORD_NAME_COMPONENT) => "KeywordNameComponent",
        (NAME | FINAL_BLOCK_ID, SEGMENT_NAME_COMPONENT) => "SegmentNameComponent",
        (NAME | FINAL_BLOCK_ID, BYTE_OFFSET_NAME_COMPONENT) => "ByteOffsetNameComponent",
        (NAME | FINAL_BLOCK_ID, VERSION_NAME_COMPONENT) => "VersionNameComponent",
        (NAME | FINAL_BLOCK_ID, TIMESTAMP_NAME_COMPONENT) => "TimestampNameComponent",
        (NAME | FINAL_BLOCK_ID, SEQUENCE_NUM_NAME_COMPONENT) => "SequenceNumNameComponent",
        (NAME | FINAL_BLOCK_ID, _) => "NameComponent",
        (_, NAME) => "Name",
        (INTEREST, CAN_BE_PREFIX) => "CanBePrefix",
        (INTEREST, MUST_BE_FRESH) => "MustBeFresh",
        (INTEREST, FORWARDING_HINT) => "ForwardingHint",
        (FORWARDING_HINT, LEGACY_DELEGATION) => "Delegation",
        (LEGACY_DELEGATION, 30) => "Preference",
        (INTEREST, NONCE) => "Nonce",
        (INTEREST, INTEREST_LIFETIME) => "InterestLifetime",
        (INTEREST, HOP_LIMIT) => "HopLimit",
        (INTEREST, APPLICATION_PARAMETERS) => "ApplicationParameters",
        (INTEREST, INTEREST_SIGNATURE_INFO) => "InterestSignatureInfo",
        (INTEREST, INTEREST_SIGNATURE_VALUE) => "InterestSignatureValue",
        (DATA, META_INFO) => "MetaInfo",
        (DATA, CONTENT) => "Content",
        (DATA, SIGNATURE_INFO) => "SignatureInfo",
        (DATA, SIGNATURE_VALUE) => "SignatureValue",
        (META_INFO, CONTENT_TYPE) => "ContentType",
        (META_INFO, FRESHNESS_PERIOD) => "FreshnessPeriod",
        (META_INFO, FINAL_BLOCK_ID) => "FinalBlockId",
        (SIGNATURE_INFO | INTEREST_SIGNATURE_INFO, SIGNATURE_TYPE) => "SignatureType",
        (SIGNATURE_INFO | INTEREST_SIGNATURE_INFO, KEY_LOCATOR) => "KeyLocator",
        (SIGNATURE_INFO | INTEREST_SIGNATURE_INFO, SIGNATURE_NONCE) => "SignatureNonce",
        (SIGNATURE_INFO | INTEREST_SIGNATURE_INFO, SIGNATURE_TIME) => "SignatureTime",
        (SIGNATURE_INFO | INTEREST_SIGNATURE_INFO, SIGNATURE_SEQ_NUM) => "SignatureSeqNum",
        (SIGNATURE_INFO | INTEREST_SIGNATURE_INFO, VALIDITY_PERIOD) => "ValidityPeriod",
        (VALIDITY_PERIOD, NOT_BEFORE) => "NotBefore",
        (VALIDITY_PERIOD, NOT_AFTER) => "NotAfter",
        (KEY_LOCATOR, KEY_DIGEST) => "KeyDigest",
        (LP_PACKET, LP_FRAGMENT) => "Fragment",
        (LP_PACKET, LP_SEQUENCE) => "Sequence",
        (LP_PACKET, LP_FRAG_INDEX) => "FragIndex",
        (LP_PACKET, LP_FRAG_COUNT) => "FragCount",
        (LP_PACKET, LP_HOP_COUNT_TAG) => "HopCountTag",
        (LP_PACKET, LP_GEO_TAG) => "GeoTag",
        (LP_PACKET, LP_PIT_TOKEN) => "PitToken",
        (LP_PACKET, LP_NACK) => "Nack",
        (LP_NACK, LP_NACK_REASON) => "NackReason",
        (LP_PACKET, LP_NEXT_HOP_FACE_ID) => "NextHopFaceId",
        (LP_PACKET, LP_INCOMING_FACE_ID) => "IncomingFaceId",
        (LP_PACKET, LP_CACHE_POLICY) => "CachePolicy",
        (LP_CACHE_POLICY, LP_CACHE_POLICY_TYPE) => "CachePolicyType",
        (LP_PACKET, LP_CONGESTION_MARK) => "CongestionMark",
        (LP_PACKET, LP_ACK) => "Ack",
        (LP_PACKET, LP_TX_SEQUENCE) => "TxSequence",
        (LP_PACKET, LP_NON_DISCOVERY) => "NonDiscovery",
        (LP_PACKET, LP_PREFIX_ANNOUNCEMENT) => "PrefixAnnouncement",
        _ => return None,
    };
    Some(name)
}
