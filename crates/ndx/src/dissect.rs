//! `ndx dissect`: decode NDN packets and print their TLV trees, like ndn-dissect.
//!
//! Input is a pcap/pcapng capture (recognised by its magic number) or text with one packet
//! in hex per line (`#` starts a comment). A malformed packet is reported with the offset of
//! the problem and the rest of the input is still printed.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::path::PathBuf;

use ndx_codec::tree::{self, Node, ValueKind};
use ndx_codec::{
    Component, Data, Interest, LpPacket, NackReason, Name, Packet, Reassembler, ReassemblerConfig,
    types,
};
use serde_json::{Value, json};

use crate::capture;
use crate::hex;

/// Arguments of `ndx dissect`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A pcap/pcapng capture, or a text file with one hex-encoded packet per line.
    /// Absent or `-`: standard input.
    input: Option<PathBuf>,
    /// Print one JSON object per packet (field names: see crates/ndx/README.md).
    #[arg(long)]
    json: bool,
    /// Print one summary line per packet instead of the whole tree.
    #[arg(long, conflicts_with = "json")]
    summary: bool,
    /// UDP ports that carry NDN in a capture (repeatable).
    #[arg(long = "udp-port", value_name = "PORT", default_values_t = [6363u16, 56363])]
    udp_ports: Vec<u16>,
}

/// Failures that stop the command (bad packets do not: they are reported and skipped).
#[derive(Debug, thiserror::Error)]
pub(crate) enum DissectError {
    /// The input could not be read.
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: io::Error },
    /// The output could not be written.
    #[error("cannot write output: {0}")]
    Write(#[from] io::Error),
}

/// Where a packet came from.
#[derive(Debug, Clone)]
enum Origin {
    /// Line `n` (1-based) of a hex text input.
    Line(usize),
    /// A packet reassembled from the fragments printed as entries `from`.
    Reassembled { from: Vec<usize> },
    /// A capture frame.
    Frame {
        frame: u64,
        timestamp_ns: Option<u64>,
        encap: String,
        payload_offset: usize,
        truncated: bool,
    },
}

/// One input record: a packet's bytes, or why there are none.
#[derive(Debug)]
struct Record {
    origin: Origin,
    bytes: Result<Vec<u8>, String>,
}

pub(crate) fn run(args: &Args) -> Result<u8, DissectError> {
    let (path, input) = read_input(args.input.as_ref())?;
    let records = if capture::is_capture(&input) {
        capture_records(&path, &input, &args.udp_ports)
    } else {
        hex_records(&input)
    };
    let stdout = io::stdout();
    let mut printer = Printer {
        out: io::BufWriter::new(stdout.lock()),
        json: args.json,
        summary: args.summary,
        index: 0,
        bad: 0,
    };
    let mut reassembly = Reassembly::default();
    for rec in &records {
        printer.print(rec)?;
        if let Some(whole) = reassembly.push(rec, printer.index) {
            printer.print(&whole)?;
        }
    }
    let (index, bad) = (printer.index, printer.bad);
    let mut out = printer.out;
    if !args.json {
        let pending = reassembly.partial_sets();
        let note = if pending > 0 {
            format!(", {pending} incomplete fragment set(s)")
        } else {
            String::new()
        };
        writeln!(out, "{index} packet(s), {bad} malformed{note}")?;
    }
    out.flush()?;
    Ok(u8::from(bad > 0))
}

/// Writes entries in the chosen format and counts them.
struct Printer<W: Write> {
    out: W,
    json: bool,
    summary: bool,
    index: usize,
    bad: usize,
}

impl<W: Write> Printer<W> {
    fn print(&mut self, rec: &Record) -> io::Result<()> {
        self.index += 1;
        let analysis = match &rec.bytes {
            Ok(bytes) => analyse(bytes),
            Err(msg) => Analysis::input_error(msg.clone()),
        };
        if analysis.error.is_some() {
            self.bad += 1;
        }
        if self.json {
            let v = to_json(self.index, rec, &analysis);
            writeln!(self.out, "{v}")
        } else {
            write_text(&mut self.out, self.index, rec, &analysis, self.summary)
        }
    }
}

/// Collects NDNLPv2 fragments per sender and yields whole packets.
struct Reassembly {
    reassembler: Reassembler,
    sets: HashMap<(u64, u64), Vec<usize>>,
}

impl Default for Reassembly {
    fn default() -> Self {
        Self {
            reassembler: Reassembler::new(ReassemblerConfig {
                // A capture may hold fragments far apart in time: keep sets for a minute.
                timeout_ns: 60_000_000_000,
                ..ReassemblerConfig::default()
            }),
            sets: HashMap::new(),
        }
    }
}

impl Reassembly {
    /// Feeds entry `index`; returns the reassembled packet (re-wrapped in an LpPacket with
    /// fragment 0's header fields) when it completes a set.
    fn push(&mut self, rec: &Record, index: usize) -> Option<Record> {
        let bytes = rec.bytes.as_ref().ok()?;
        let Ok(Packet::Lp(lp)) = Packet::decode(bytes) else {
            return None;
        };
        if !lp.is_fragment() {
            return None;
        }
        let peer = rec.origin.peer_key();
        let base = lp.sequence()?.wrapping_sub(lp.frag_index());
        self.sets.entry((peer, base)).or_default().push(index);
        let now = rec.origin.timestamp_ns().unwrap_or(0);
        let done = self.reassembler.push(now, peer, &lp).ok()??;
        let headers = done.headers.as_lp_headers();
        let mut whole = vec![0; headers.encoded_len(Some(done.packet.len()))];
        let n = headers.encode(Some(done.packet), &mut whole).ok()?;
        whole.truncate(n);
        let from = self.sets.remove(&(peer, base)).unwrap_or_default();
        Some(Record {
            origin: Origin::Reassembled { from },
            bytes: Ok(whole),
        })
    }

    fn partial_sets(&self) -> usize {
        self.reassembler.partials()
    }
}

impl Origin {
    /// Identifies the sender, so fragments of different senders never mix.
    fn peer_key(&self) -> u64 {
        match self {
            Origin::Frame { encap, .. } => {
                // FNV-1a of the source part of the encapsulation ("udp SRC > DST").
                let src = encap.split(" > ").next().unwrap_or(encap);
                src.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                })
            }
            _ => 0,
        }
    }

    fn timestamp_ns(&self) -> Option<u64> {
        match self {
            Origin::Frame { timestamp_ns, .. } => *timestamp_ns,
            _ => None,
        }
    }
}

fn read_input(path: Option<&PathBuf>) -> Result<(String, Vec<u8>), DissectError> {
    let mut buf = Vec::new();
    match path {
        Some(p) if p.as_os_str() != "-" => {
            let name = p.display().to_string();
            buf = std::fs::read(p).map_err(|source| DissectError::Read {
                path: name.clone(),
                source,
            })?;
            Ok((name, buf))
        }
        _ => {
            io::stdin()
                .read_to_end(&mut buf)
                .map_err(|source| DissectError::Read {
                    path: "standard input".into(),
                    source,
                })?;
            Ok(("standard input".into(), buf))
        }
    }
}

/// One record per NDN payload of the capture; a capture error ends the list with an entry
/// saying where the file broke.
fn capture_records(path: &str, input: &[u8], ports: &[u16]) -> Vec<Record> {
    let (frames, err) = capture::frames(input);
    let mut records = Vec::new();
    for f in &frames {
        match capture::decapsulate(f, ports) {
            Ok(Some(p)) => records.push(Record {
                origin: Origin::Frame {
                    frame: f.number,
                    timestamp_ns: f.timestamp_ns,
                    encap: p.encap.to_string(),
                    payload_offset: p.offset,
                    truncated: p.truncated,
                },
                bytes: Ok(p.bytes.to_vec()),
            }),
            Ok(None) => {}
            Err(e) => records.push(Record {
                origin: Origin::Frame {
                    frame: f.number,
                    timestamp_ns: f.timestamp_ns,
                    encap: "unreadable".into(),
                    payload_offset: 0,
                    truncated: false,
                },
                bytes: Err(e.to_string()),
            }),
        }
    }
    if let Some(e) = err {
        records.push(Record {
            origin: Origin::Frame {
                frame: frames.len() as u64 + 1,
                timestamp_ns: None,
                encap: "unreadable".into(),
                payload_offset: 0,
                truncated: false,
            },
            bytes: Err(format!("{path}: {e}")),
        });
    }
    records
}

fn hex_records(input: &[u8]) -> Vec<Record> {
    let text = String::from_utf8_lossy(input);
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let content = line.split('#').next().unwrap_or("");
        if content.trim().is_empty() {
            continue;
        }
        records.push(Record {
            origin: Origin::Line(i + 1),
            bytes: hex::decode(content).map_err(|e| format!("bad hex: {e}")),
        });
    }
    records
}

/// What a dissection found in one packet.
#[derive(Debug, Default)]
struct Analysis {
    nodes: Vec<NodeOut>,
    summary: Option<Summary>,
    /// (offset, message); offset is None for input-level errors.
    error: Option<(Option<usize>, String)>,
}

impl Analysis {
    fn input_error(msg: String) -> Self {
        Self {
            error: Some((None, msg)),
            ..Self::default()
        }
    }
}

#[derive(Debug)]
struct NodeOut {
    depth: u8,
    offset: usize,
    typ: u64,
    name: Option<&'static str>,
    length: usize,
    value: Option<Value>,
}

#[derive(Debug)]
struct Summary {
    kind: &'static str,
    name: Option<String>,
    interest: Option<Value>,
    data: Option<Value>,
    lp: Option<Value>,
    line: String,
}

fn analyse(bytes: &[u8]) -> Analysis {
    let mut a = Analysis::default();
    let walked = tree::walk(bytes, &mut |n| a.nodes.push(node_out(n)));
    match Packet::decode(bytes) {
        Ok(p) => match summarize(p) {
            Ok(s) => a.summary = Some(s),
            Err(e) => a.error = Some((Some(e.offset), e.kind.to_string())),
        },
        Err(e) => a.error = Some((Some(e.offset), e.kind.to_string())),
    }
    if a.error.is_none()
        && let Err(e) = walked
    {
        a.error = Some((Some(e.offset), e.kind.to_string()));
    }
    a
}

fn node_out(n: Node<'_>) -> NodeOut {
    let t = n.tlv;
    let value = match n.kind {
        ValueKind::Nested => None,
        ValueKind::Name => Name::decode(t.wire).ok().map(|n| json!(n.to_string())),
        ValueKind::Component => component_of(t.wire).map(|c| json!(c.to_string())),
        ValueKind::Number => Some(match ndx_codec::read_nni(t.value) {
            Some(v) => json!(v),
            None => json!(format!(
                "invalid NonNegativeInteger 0x{}",
                hex::encode(t.value)
            )),
        }),
        ValueKind::Flag => Some(json!(true)),
        ValueKind::Bytes => Some(json!(hex::encode(t.value))),
    };
    NodeOut {
        depth: n.depth,
        offset: t.offset,
        typ: t.typ,
        name: types::type_name(n.parent, t.typ),
        length: t.value.len(),
        value,
    }
}

fn component_of(wire: &[u8]) -> Option<Component<'_>> {
    Component::decode(wire).ok()
}

fn summarize(p: Packet<'_>) -> Result<Summary, ndx_codec::Error> {
    match p {
        Packet::Interest(i) => Ok(interest_summary(&i, None)),
        Packet::Data(d) => Ok(data_summary(&d, None)),
        Packet::Lp(lp) => lp_summary(&lp),
    }
}

fn interest_json(i: &Interest<'_>) -> Value {
    json!({
        "can_be_prefix": i.can_be_prefix(),
        "must_be_fresh": i.must_be_fresh(),
        "forwarding_hint": i.forwarding_hint().map(|f| f.names().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap_or_default(),
        "nonce": i.nonce(),
        "lifetime_ms": i.lifetime_ms(),
        "hop_limit": i.hop_limit(),
        "app_params_len": i.app_params().map(<[u8]>::len),
        "params_digest_ok": i.app_params().map(|_| i.params_digest_ok()),
        "signed": i.signature_info().is_some(),
    })
}

fn interest_line(i: &Interest<'_>) -> String {
    let mut s = format!("Interest {}", i.name());
    if i.can_be_prefix() {
        s.push_str(" CanBePrefix");
    }
    if i.must_be_fresh() {
        s.push_str(" MustBeFresh");
    }
    if let Some(f) = i.forwarding_hint() {
        let names: Vec<String> = f.names().map(|n| n.to_string()).collect();
        s.push_str(&format!(" ForwardingHint={}", names.join(",")));
    }
    if let Some(n) = i.nonce() {
        s.push_str(&format!(" Nonce={n:08x}"));
    }
    if let Some(l) = i.lifetime_ms() {
        s.push_str(&format!(" Lifetime={l}ms"));
    }
    if let Some(h) = i.hop_limit() {
        s.push_str(&format!(" HopLimit={h}"));
    }
    if let Some(p) = i.app_params() {
        let ok = if i.params_digest_ok() {
            "ok"
        } else {
            "MISMATCH"
        };
        s.push_str(&format!(" AppParams={}B(digest {ok})", p.len()));
    }
    if i.signature_info().is_some() {
        s.push_str(" Signed");
    }
    s
}

fn interest_summary(i: &Interest<'_>, lp: Option<Value>) -> Summary {
    Summary {
        kind: "interest",
        name: Some(i.name().to_string()),
        interest: Some(interest_json(i)),
        data: None,
        lp,
        line: interest_line(i),
    }
}

fn data_summary(d: &Data<'_>, lp: Option<Value>) -> Summary {
    let digest = d.implicit_digest();
    let mut line = format!("Data {}", d.name());
    if let Some(c) = d.content_type() {
        line.push_str(&format!(" ContentType={c}"));
    }
    if let Some(f) = d.freshness_ms() {
        line.push_str(&format!(" Freshness={f}ms"));
    }
    if let Some(c) = d.final_block_id() {
        line.push_str(&format!(" FinalBlockId={c}"));
    }
    line.push_str(&format!(
        " Content={}B SignatureType={}",
        d.content().len(),
        d.signature_type()
    ));
    Summary {
        kind: "data",
        name: Some(d.name().to_string()),
        interest: None,
        data: Some(json!({
            "content_type": d.content_type(),
            "freshness_ms": d.freshness_ms(),
            "final_block_id": d.final_block_id().map(|c| c.to_string()),
            "content_len": d.content().len(),
            "signature_type": d.signature_type(),
            "implicit_digest": hex::encode(&digest),
        })),
        lp,
        line,
    }
}

fn nack_name(r: NackReason) -> &'static str {
    match r {
        NackReason::Unspecified => "Unspecified",
        NackReason::Congestion => "Congestion",
        NackReason::Duplicate => "Duplicate",
        NackReason::NoRoute => "NoRoute",
    }
}

fn lp_summary(lp: &LpPacket<'_>) -> Result<Summary, ndx_codec::Error> {
    let h = lp.headers();
    let lpj = json!({
        "sequence": h.sequence,
        "frag_index": h.frag_index,
        "frag_count": h.frag_count,
        "pit_token": h.pit_token.map(hex::encode),
        "nack_reason": h.nack.map(nack_name),
        "congestion_mark": h.congestion_mark,
        "incoming_face_id": h.incoming_face_id,
        "next_hop_face_id": h.next_hop_face_id,
        "cache_policy": h.cache_policy.map(|p| format!("{p:?}")),
        "tx_sequence": h.tx_sequence,
        "acks": lp.acks().collect::<Vec<_>>(),
        "fragment_len": lp.fragment().map(<[u8]>::len),
    });
    let mut prefix = String::from("LpPacket");
    if let Some(t) = h.pit_token {
        prefix.push_str(&format!(" PitToken={}", hex::encode(t)));
    }
    if let Some(s) = h.sequence {
        prefix.push_str(&format!(" Seq={s}"));
    }
    if let Some(m) = h.congestion_mark {
        prefix.push_str(&format!(" CongestionMark={m}"));
    }
    let mut s = match lp.network_packet()? {
        Some(Packet::Interest(i)) => {
            let mut s = interest_summary(&i, Some(lpj));
            if let Some(r) = lp.nack() {
                s.kind = "nack";
                s.line = format!("Nack({}) {}", nack_name(r), s.line);
            }
            s
        }
        Some(Packet::Data(d)) => data_summary(&d, Some(lpj)),
        Some(Packet::Lp(_)) => unreachable!("network_packet never returns an LpPacket"),
        None if lp.is_fragment() => Summary {
            kind: "fragment",
            name: None,
            interest: None,
            data: None,
            lp: Some(lpj),
            line: format!(
                "fragment {}/{} ({} bytes)",
                lp.frag_index() + 1,
                lp.frag_count(),
                lp.fragment().map_or(0, <[u8]>::len)
            ),
        },
        None => Summary {
            kind: "idle",
            name: None,
            interest: None,
            data: None,
            lp: Some(lpj),
            line: "IDLE (no fragment)".into(),
        },
    };
    s.line = format!("{prefix} | {}", s.line);
    Ok(s)
}

fn origin_text(o: &Origin) -> String {
    match o {
        Origin::Line(n) => format!("line {n}"),
        Origin::Reassembled { from } => {
            let list: Vec<String> = from.iter().map(|i| format!("#{i}")).collect();
            format!("reassembled from {}", list.join(" "))
        }
        Origin::Frame {
            frame,
            encap,
            truncated,
            ..
        } => {
            let t = if *truncated {
                " (truncated by snaplen)"
            } else {
                ""
            };
            format!("frame {frame} {encap}{t}")
        }
    }
}

fn write_text(
    out: &mut impl Write,
    index: usize,
    rec: &Record,
    a: &Analysis,
    summary_only: bool,
) -> io::Result<()> {
    let len = rec.bytes.as_ref().map_or(0, Vec::len);
    let line = a.summary.as_ref().map_or("malformed", |s| s.line.as_str());
    writeln!(
        out,
        "#{index} {} {len} bytes: {line}",
        origin_text(&rec.origin)
    )?;
    if !summary_only {
        for n in &a.nodes {
            let indent = "  ".repeat(usize::from(n.depth) + 1);
            let name = n.name.unwrap_or("?");
            write!(
                out,
                "{indent}{name} ({}) @{} len={}",
                n.typ, n.offset, n.length
            )?;
            match &n.value {
                Some(Value::String(s)) => {
                    const MAX: usize = 96;
                    if s.len() > MAX {
                        write!(out, ": {}… ({} more hex digits)", &s[..MAX], s.len() - MAX)?;
                    } else {
                        write!(out, ": {s}")?;
                    }
                }
                Some(Value::Bool(true)) => {}
                Some(v) => write!(out, ": {v}")?,
                None => {}
            }
            writeln!(out)?;
        }
    }
    if let Some((offset, msg)) = &a.error {
        match offset {
            Some(o) => writeln!(out, "  error at offset {o}: {msg}")?,
            None => writeln!(out, "  error: {msg}")?,
        }
    }
    Ok(())
}

fn to_json(index: usize, rec: &Record, a: &Analysis) -> Value {
    let source = match &rec.origin {
        Origin::Line(n) => json!({ "line": n }),
        Origin::Reassembled { from } => json!({ "reassembled_from": from }),
        Origin::Frame {
            frame,
            timestamp_ns,
            encap,
            payload_offset,
            truncated,
        } => json!({
            "frame": frame,
            "timestamp_ns": timestamp_ns,
            "encap": encap,
            "payload_offset": payload_offset,
            "truncated": truncated,
        }),
    };
    let s = a.summary.as_ref();
    json!({
        "index": index,
        "source": source,
        "length": rec.bytes.as_ref().map_or(0, Vec::len),
        "kind": s.map_or("invalid", |s| s.kind),
        "name": s.and_then(|s| s.name.clone()),
        "interest": s.and_then(|s| s.interest.clone()),
        "data": s.and_then(|s| s.data.clone()),
        "lp": s.and_then(|s| s.lp.clone()),
        "tree": a.nodes.iter().map(|n| json!({
            "depth": n.depth,
            "offset": n.offset,
            "type": n.typ,
            "name": n.name,
            "length": n.length,
            "value": n.value,
        })).collect::<Vec<_>>(),
        "error": a.error.as_ref().map(|(o, m)| json!({ "offset": o, "message": m })),
    })
}
