// Generate NDN test vectors with NDNts 0.0.20250307 (@ndn/packet, @ndn/lp, @ndn/tlv).
//   node gen_ndnts.mjs gen OUT.jsonl     -> NDNts-encoded vectors with NDNts-decoded `expect`
//   node gen_ndnts.mjs decode < hexlines -> one JSON per line: NDNts's decoding of each packet
// Run with NODE_PATH pointing at the npm project's node_modules (see README.md).
import { createInterface } from "node:readline";
import { writeFileSync } from "node:fs";
import { Data, Interest, Name, Component, FwHint, Nack, NackHeader, digestSigning, nullSigner, SigInfo } from "@ndn/packet";
import { LpPacket, Fragmenter } from "@ndn/lp";
import { Decoder, Encoder } from "@ndn/tlv";
import { Segment, Version, Timestamp, SequenceNum, ByteOffset, Keyword } from "@ndn/naming-convention2";

const VER = "NDNts 0.0.20250307";
const hex = (u8) => Buffer.from(u8).toString("hex");
const unhex = (s) => new Uint8Array(Buffer.from(s, "hex"));

// ---- expect builders: everything comes from NDNts's own decoder ----
function comps(name) {
  return name.comps.map((c) => [c.type, hex(c.value)]);
}
function interestExpect(wire) {
  const i = new Decoder(wire).decode(Interest);
  return {
    name_components: comps(i.name),
    can_be_prefix: i.canBePrefix,
    must_be_fresh: i.mustBeFresh,
    nonce: i.nonce ?? null,
    // NDNts returns the default 4000 when the field is absent; tell apart by re-encoding check below
    lifetime_ms: i.lifetime,
    hop_limit: i.hopLimit,
    app_params_hex: i.appParameters === undefined ? null : hex(i.appParameters),
    forwarding_hint_components: i.fwHint ? i.fwHint.delegations.map(comps) : [],
    signed: i.sigInfo !== undefined,
  };
}
async function dataExpect(wire) {
  const d = new Decoder(wire).decode(Data);
  return {
    name_components: comps(d.name),
    content_hex: hex(d.content),
    content_type: d.contentType,
    freshness_ms: d.freshnessPeriod,
    final_block_id_component: d.finalBlockId ? [d.finalBlockId.type, hex(d.finalBlockId.value)] : null,
    signature_type: d.sigInfo?.type ?? null,
    implicit_digest: hex(await d.computeImplicitDigest()),
  };
}
async function l3Expect(wire) {
  if (wire[0] === 0x05) return { kind: "interest", ...interestExpect(wire) };
  if (wire[0] === 0x06) return { kind: "data", ...(await dataExpect(wire)) };
  return { kind: "unknown" };
}
async function lpExpect(wire) {
  const lp = new Decoder(wire).decode(LpPacket);
  const e = {
    pit_token_hex: lp.pitToken ? hex(lp.pitToken) : null,
    sequence: lp.fragSeqNum === undefined ? null : lp.fragSeqNum.toString(),
    frag_index: lp.fragIndex,
    frag_count: lp.fragCount,
    nack: lp.nack !== undefined,
    nack_reason: lp.nack ? lp.nack.reason : null,
    congestion_mark: lp.congestionMark ?? null,
    payload_hex: lp.payload ? hex(lp.payload) : null,
  };
  if (!lp.payload || lp.payload.length === 0) e.fragment_kind = "none";
  else if (lp.fragIndex > 0) e.fragment_kind = "partial";
  else e.fragment_kind = lp.payload[0] === 0x05 ? "interest" : lp.payload[0] === 0x06 ? "data" : "unknown";
  if (lp.payload && lp.fragCount === 1 && lp.payload.length) e.inner = await l3Expect(lp.payload);
  return e;
}
async function anyExpect(wire) {
  if (wire[0] === 0x64) return { kind: "lp", ...(await lpExpect(wire)) };
  return l3Expect(wire);
}

// ---- generation ----
const out = [];
async function add(id, src, kind, wire) {
  out.push({ id, source: `${VER} ${src}`, kind, hex: hex(wire), ndnts: await anyExpect(wire) });
}
const enc = (obj) => Encoder.encode(obj);

async function gen(file) {
  const N = (s) => new Name(s);
  // Interests
  await add("ndnts-interest-basic", "new Interest('/ndnts/hello', Nonce(0xA1B2C3D4))", "interest",
    enc(new Interest(N("/ndnts/hello"), Interest.Nonce(0xA1B2C3D4))));
  await add("ndnts-interest-cbp-mbf-lifetime", "new Interest(CanBePrefix, MustBeFresh, Lifetime(2500), Nonce)", "interest",
    enc(new Interest(N("/ndnts/prefix"), Interest.CanBePrefix, Interest.MustBeFresh, Interest.Lifetime(2500), Interest.Nonce(1))));
  await add("ndnts-interest-hoplimit-fwhint", "new Interest(FwHint(['/hint/a','/hint/b']), HopLimit(32), Nonce)", "interest",
    enc(new Interest(N("/ndnts/hinted"), new FwHint([N("/hint/a"), N("/hint/b")]), Interest.HopLimit(32), Interest.Nonce(0x7FFFFFFF))));
  {
    const i = new Interest(N("/ndnts/params"), Interest.Nonce(0x01020304), new Uint8Array([0xC0, 0xFF, 0xEE]));
    await i.updateParamsDigest();
    await add("ndnts-interest-app-params", "new Interest(appParameters=c0ffee) + updateParamsDigest()", "interest", enc(i));
  }
  {
    const i = new Interest(N("/ndnts/signed"), Interest.Nonce(0x05060708), new Uint8Array([1, 2, 3]));
    await digestSigning.sign(i);
    await add("ndnts-interest-signed-digest", "digestSigning.sign(Interest)", "interest", enc(i));
  }
  {
    const name = new Name(["ndnts", Keyword.create("metadata")]).append(Version, 1700000000000).append(Segment, 12)
      .append(Timestamp, 1700000000000).append(SequenceNum, 99).append(ByteOffset, 4096);
    await add("ndnts-interest-conventions", "Name with Keyword/Version/Segment/Timestamp/SequenceNum/ByteOffset (naming-convention2)", "interest",
      enc(new Interest(name, Interest.Nonce(0x0BADF00D))));
  }
  await add("ndnts-interest-escaped", "new Name(['a b', '...', Component(8,''), Component(300,'x')]) (NDNts parses the string '...' as URI, giving an empty component)", "interest",
    enc(new Interest(new Name(["a b", "...", new Component(8, new Uint8Array()), new Component(300, "x")]), Interest.Nonce(2))));

  // Data
  const mkData = async (signer, ...args) => { const d = new Data(...args); await signer.sign(d); return d; };
  await add("ndnts-data-digest", "new Data(FreshnessPeriod(1000), content) + digestSigning", "data",
    enc(await mkData(digestSigning, N("/ndnts/hello"), Data.FreshnessPeriod(1000), new TextEncoder().encode("hello NDNts"))));
  await add("ndnts-data-finalblock", "new Data('/ndnts/file/v=3/seg=2', FinalBlock, ContentType(0)) + digestSigning", "data",
    enc(await mkData(digestSigning, N("/ndnts/file").append(Version, 3).append(Segment, 2), Data.FinalBlock,
      Data.FreshnessPeriod(60000), new Uint8Array([9, 8, 7]))));
  await add("ndnts-data-contenttype-link", "new Data(ContentType(1)) + digestSigning", "data",
    enc(await mkData(digestSigning, N("/ndnts/link"), Data.ContentType(1), new Uint8Array([0x07, 0x03, 0x08, 0x01, 0x78]))));
  await add("ndnts-data-nullsigner", "new Data() + nullSigner (SignatureType 200)", "data",
    enc(await mkData(nullSigner, N("/ndnts/null"), new Uint8Array())));
  const big = new Uint8Array(8000).map((_, i) => (i * 13 + 5) & 0xFF);
  const bigData = await mkData(digestSigning, N("/ndnts/big").append(Version, 7).append(Segment, 0), Data.FreshnessPeriod(10000),
    Data.FinalBlock, big);
  const bigWire = enc(bigData);
  await add("ndnts-data-large-8000", "new Data(8000-byte content) + digestSigning", "data", bigWire);

  // LpPackets
  const interestWire = enc(new Interest(N("/ndnts/lp"), Interest.Nonce(0x11111111)));
  const lpOf = (props) => { const p = new LpPacket(); Object.assign(p, props); return enc(p); };
  await add("ndnts-lp-pittoken-interest", "LpPacket{pitToken 8B, payload Interest}", "lp",
    lpOf({ pitToken: unhex("0102030405060708"), payload: interestWire }));
  await add("ndnts-lp-pittoken-data", "LpPacket{pitToken 4B, payload Data}", "lp",
    lpOf({ pitToken: unhex("a0a1a2a3"), payload: enc(await mkData(digestSigning, N("/ndnts/lp"), new Uint8Array([1]))) }));
  await add("ndnts-lp-nack-noroute", "LpPacket{nack NackHeader(150), payload Interest}", "lp",
    lpOf({ nack: new NackHeader(150), payload: interestWire }));
  await add("ndnts-lp-nack-congestion-token", "LpPacket{pitToken, nack NackHeader(50), payload Interest}", "lp",
    lpOf({ pitToken: unhex("cafe"), nack: new NackHeader(50), payload: interestWire }));
  await add("ndnts-lp-nack-duplicate", "LpPacket{nack NackHeader(100)}", "lp",
    lpOf({ nack: new NackHeader(100), payload: interestWire }));
  await add("ndnts-lp-nack-noreason", "LpPacket{nack NackHeader(0) -> Nack without NackReason}", "lp",
    lpOf({ nack: new NackHeader(0), payload: interestWire }));
  await add("ndnts-lp-congestion-mark", "LpPacket{congestionMark 1, payload Interest}", "lp",
    lpOf({ congestionMark: 1, payload: interestWire }));
  await add("ndnts-lp-idle", "new LpPacket() (IDLE, no fragment)", "lp", lpOf({}));
  {
    const full = new LpPacket();
    full.pitToken = unhex("f0f1f2f3f4f5f6f7");
    full.payload = bigWire;
    const fr = new Fragmenter();
    fr.seqNumGen.current = 0x1000000000000000n; // fixed start so regeneration is stable
    const frags = fr.fragment(full, 1400);
    for (const [i, f] of frags.entries()) {
      await add(`ndnts-lp-frag-${i}-of-${frags.length}`, `Fragmenter.fragment(LpPacket{pitToken, ndnts-data-large-8000}, mtu=1400) fragment ${i}`, "lp", enc(f));
    }
  }
  writeFileSync(file, out.map((v) => JSON.stringify(v)).join("\n") + "\n");
  console.error(`NDNts: ${out.length} vectors`);
}

async function decodeStdin() {
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    try {
      process.stdout.write(JSON.stringify(await anyExpect(unhex(line.trim()))) + "\n");
    } catch (err) {
      process.stdout.write(JSON.stringify({ error: String(err) }) + "\n");
    }
  }
}

if (process.argv[2] === "decode") await decodeStdin();
else await gen(process.argv[3] ?? "/dev/stdout");
