//! The action list a shard fills: frames to send (in a reusable byte arena, or from a lent
//! input frame where it lies), drops, and the L2 batch reads and writes to submit.

use super::*;

/// The longest LpPacket head [`Actions::push_head`] writes: three TLV-TYPEs, two lengths of
/// up to 5 bytes, the token's length and the token.
pub(super) const LP_HEAD_MAX: usize = 2 * 5 + 4 + ndx_codec::MAX_PIT_TOKEN_LEN;

// `push_head` stores our token as one 8-byte word after at most 8 bytes of head.
const _: () = assert!(PIT_TOKEN_LEN <= 8 && 8 + 8 <= LP_HEAD_MAX);

/// One frame to send: `range` of the action list's byte arena, then, when the frame's
/// packet was received in a lent frame, that packet's bytes where they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Send {
    /// Outgoing face.
    pub face: FaceId,
    pub(super) range: Range<usize>,
    pub(super) lent: Option<LentPart>,
}

/// Bytes of a lent input frame: frame `input` (counted from 0 since the action list was
/// last cleared, in the order the `*_lent` calls were given them), `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LentPart {
    pub(super) input: u32,
    pub(super) start: u32,
    pub(super) end: u32,
}

/// The lent frame the pipeline is working on: its number and where its bytes are (the
/// address is only compared, never read through).
#[derive(Debug, Clone, Copy)]
pub(super) struct Input {
    pub(super) number: u32,
    pub(super) addr: usize,
    pub(super) len: usize,
}

/// One frame to send, from [`Lent::sends`](crate::Lent::sends): `head` then `body` (either may be
/// empty); the frame is their concatenation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outgoing<'a> {
    /// Outgoing face.
    pub face: FaceId,
    /// The frame's first bytes (for a Data sent from a lent frame, its NDNLPv2 header).
    pub head: &'a [u8],
    /// The rest, read from a lent input frame (empty when the frame is all `head`).
    pub body: &'a [u8],
}

impl Outgoing<'_> {
    /// The frame's length.
    pub fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// True when the frame is empty (never for a frame the shard asked to send).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frame's bytes as a gather list.
    pub fn parts(&self) -> [&[u8]; 2] {
        [self.head, self.body]
    }

    /// The frame's bytes, copied into `out` (cleared first).
    pub fn copy_to(&self, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(self.head);
        out.extend_from_slice(self.body);
    }
}

/// What [`Shard::process`] and [`Shard::on_timer`] ask the I/O layer to do.
#[derive(Debug, Default)]
pub struct Actions {
    pub(super) bytes: Vec<u8>,
    pub(super) sends: Vec<Send>,
    pub(super) drops: Vec<(FaceId, DropReason)>,
    pub(super) l2_reads: Vec<L2Read>,
    pub(super) l2_writes: Vec<L2WriteRec>,
    pub(super) l2_segments: Vec<(u64, Range<usize>)>,
    pub(super) l2_bytes: Vec<u8>,
    /// Frames lent since the last clear (the caller's `Lent` ledger holds as many handles).
    pub(crate) lent: u32,
    /// The lent frame being processed, if the current call lent its frames.
    pub(super) input: Option<Input>,
}

impl Actions {
    /// Empty action lists (they keep their capacity across [`clear`](Self::clear)).
    pub fn new() -> Self {
        Self {
            bytes: Vec::with_capacity(1 << 16),
            sends: Vec::with_capacity(64),
            drops: Vec::with_capacity(64),
            l2_reads: Vec::new(),
            l2_writes: Vec::new(),
            l2_segments: Vec::new(),
            l2_bytes: Vec::new(),
            lent: 0,
            input: None,
        }
    }

    /// Forgets every action, keeping the memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.sends.clear();
        self.drops.clear();
        self.l2_reads.clear();
        self.l2_writes.clear();
        self.l2_segments.clear();
        self.l2_bytes.clear();
        self.lent = 0;
        self.input = None;
    }

    /// L2 batch reads to submit (then report each with [`Shard::on_l2_complete`]).
    pub fn l2_reads(&self) -> &[L2Read] {
        &self.l2_reads
    }

    /// L2 batch writes to submit (then report each with [`Shard::on_l2_written`]).
    pub fn l2_writes(&self) -> impl Iterator<Item = L2Write<'_>> {
        self.l2_writes.iter().map(|w| L2Write {
            content_key: w.content_key,
            batch: w.batch,
            content_name: self.l2_bytes.get(w.name.clone()).unwrap_or(&[]),
            segments: self.l2_segments.get(w.segments.clone()).unwrap_or(&[]),
            bytes: &self.l2_bytes,
        })
    }

    /// Frames to send, in order, when no frame was lent since the last clear (after a
    /// `*_lent` call, read them with [`Lent::sends`](crate::Lent::sends): the frames that
    /// refer to a lent frame are left out here).
    pub fn sends(&self) -> impl Iterator<Item = (FaceId, &[u8])> {
        debug_assert!(
            self.lent == 0 || self.sends.iter().all(|s| s.lent.is_none()),
            "frames were lent: read the sends with Lent::sends"
        );
        self.sends
            .iter()
            .filter(|s| s.lent.is_none())
            .map(|s| (s.face, self.bytes.get(s.range.clone()).unwrap_or(&[])))
    }

    /// Frames to send, in order, each as a head from the action list and a body from a lent
    /// frame: `lent(k)` gives the bytes lent frame number `k` had when it was lent (for
    /// [`Lent::sends`](crate::Lent::sends), which numbers the caller's handles).
    #[inline]
    pub(crate) fn sends_lent<'a, F>(&'a self, lent: F) -> impl Iterator<Item = Outgoing<'a>>
    where
        F: Fn(u32) -> &'a [u8],
    {
        self.sends.iter().map(move |s| Outgoing {
            face: s.face,
            head: self.bytes.get(s.range.clone()).unwrap_or(&[]),
            body: s.lent.map_or(&[][..], |l| {
                lent(l.input)
                    .get(l.start as usize..l.end as usize)
                    .unwrap_or(&[])
            }),
        })
    }

    /// Makes `frame` the lent frame being processed, numbered [`lent`](Self::lent).
    #[inline(always)]
    pub(super) fn lend(&mut self, frame: &[u8]) {
        self.input = Some(Input {
            number: self.lent,
            addr: frame.as_ptr() as usize,
            len: frame.len(),
        });
        self.lent += 1;
    }

    /// The part of the lent frame being processed that `bytes` is, if it is one.
    #[inline]
    pub(super) fn lent_part(&self, bytes: &[u8]) -> Option<LentPart> {
        let input = self.input?;
        let at = (bytes.as_ptr() as usize).wrapping_sub(input.addr);
        if at > input.len || bytes.len() > input.len - at {
            return None;
        }
        Some(LentPart {
            input: input.number,
            start: u32::try_from(at).ok()?,
            end: u32::try_from(at + bytes.len()).ok()?,
        })
    }

    /// Packets dropped, with the face they came from and why.
    pub fn drops(&self) -> &[(FaceId, DropReason)] {
        &self.drops
    }

    /// True when there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty()
            && self.drops.is_empty()
            && self.l2_reads.is_empty()
            && self.l2_writes.is_empty()
    }

    /// A Data to send down, with `token` (see [`push_tokened`](Self::push_tokened)): when
    /// the Data lies in the lent frame being processed (`lent`, its
    /// [`lent_part`](Self::lent_part)), only its LpPacket header is written (nothing for a
    /// bare Data) and the Data is sent from where it is; else the whole packet is written.
    #[inline]
    pub(super) fn push_data(
        &mut self,
        token: Option<&[u8]>,
        data: &[u8],
        lent: Option<LentPart>,
    ) -> (Range<usize>, Option<LentPart>) {
        debug_assert_eq!(lent, self.lent_part(data), "the Data's lent part");
        if let Some(lent) = lent {
            let start = self.bytes.len();
            match token.filter(|t| !t.is_empty()) {
                None => return (start..start, Some(lent)),
                Some(t) => {
                    if let Some(head) = self.push_head(t, data.len()) {
                        return (head, Some(lent));
                    }
                }
            }
        }
        (self.push_tokened(token, data), None)
    }

    /// Appends `fragment` (an Interest or Data) in an LpPacket whose only header is the
    /// PitToken `token`, or bare without one: the hot case (every forwarded Interest, every
    /// Data sent down). The same bytes as [`LpHeaders::encode`], with the headers assembled
    /// on the stack and appended in one copy; returns the byte range written. Inlined into
    /// its two callers (forwarding an Interest, answering from the CS).
    #[inline]
    pub(super) fn push_tokened(&mut self, token: Option<&[u8]>, fragment: &[u8]) -> Range<usize> {
        let start = self.bytes.len();
        let Some(t) = token.filter(|t| !t.is_empty()) else {
            self.bytes.extend_from_slice(fragment);
            return start..self.bytes.len();
        };
        let flen = fragment.len();
        self.bytes.reserve(LP_HEAD_MAX + flen);
        if self.push_head(t, flen).is_none() {
            // A token longer than NDNLPv2 allows (never one we decoded or issued), or a
            // fragment no frame carries: the general encoder.
            let headers = LpHeaders {
                pit_token: Some(t),
                ..LpHeaders::default()
            };
            return self.push_packet(&headers, fragment);
        }
        self.bytes.extend_from_slice(fragment);
        start..self.bytes.len()
    }

    /// Appends the head of an LpPacket whose only header is the PitToken `t` and whose
    /// fragment is `flen` bytes long (the fragment itself is not written); returns its range,
    /// or `None` (nothing written) for a token longer than NDNLPv2 allows or a fragment no
    /// frame carries.
    #[inline(always)]
    pub(super) fn push_head(&mut self, t: &[u8], flen: usize) -> Option<Range<usize>> {
        if t.len() > ndx_codec::MAX_PIT_TOKEN_LEN || flen > u32::MAX as usize / 2 {
            return None;
        }
        let start = self.bytes.len();
        // LpPacket (type 100), PitToken (98) and Fragment (80) headers and the token, written
        // straight: every TLV-TYPE is one byte, the token's length too (at most 32), and the
        // two other lengths take 1, 3 or 5 bytes.
        let mut head = [0u8; LP_HEAD_MAX];
        let value = 2 + t.len() + 1 + ndx_codec::varnum_len(flen as u64) + flen;
        head[0] = types::LP_PACKET as u8;
        let mut at = 1 + ndx_codec::put_varnum(&mut head[1..], value as u64).unwrap_or(0);
        head[at] = types::LP_PIT_TOKEN as u8;
        head[at + 1] = t.len() as u8;
        at += 2;
        match <&[u8; PIT_TOKEN_LEN]>::try_from(t) {
            // Our own tokens (every forwarded Interest): one 8-byte store, no call (a copy of
            // exactly the token's length shares the other arm's `memcpy` call). The two bytes
            // past the token are the Fragment's TLV-TYPE and first length byte, written next.
            Ok(ours) => {
                let mut word = [0u8; 8];
                word[..PIT_TOKEN_LEN].copy_from_slice(ours);
                head[at..at + 8].copy_from_slice(&word);
            }
            Err(_) => head[at..at + t.len()].copy_from_slice(t),
        }
        at += t.len();
        head[at] = types::LP_FRAGMENT as u8;
        at += 1;
        at += ndx_codec::put_varnum(&mut head[at..], flen as u64).unwrap_or(0);
        // The whole fixed-size head is appended then cut back: a copy of known size.
        self.bytes.extend_from_slice(&head);
        self.bytes.truncate(start + at);
        Some(start..self.bytes.len())
    }

    /// Appends an LpPacket (`headers` + `fragment`), or the bare fragment when `headers` is
    /// empty; returns the byte range written.
    pub(super) fn push_packet(&mut self, headers: &LpHeaders<'_>, fragment: &[u8]) -> Range<usize> {
        let start = self.bytes.len();
        if headers.is_empty() {
            self.bytes.extend_from_slice(fragment);
        } else {
            let need = headers.encoded_len(Some(fragment.len()));
            self.bytes.resize(start + need, 0);
            let n = headers
                .encode(Some(fragment), &mut self.bytes[start..])
                .unwrap_or(0);
            self.bytes.truncate(start + n);
        }
        start..self.bytes.len()
    }

    #[inline]
    pub(super) fn send(&mut self, face: FaceId, range: Range<usize>) {
        self.sends.push(Send {
            face,
            range,
            lent: None,
        });
    }

    /// Sends `range` then, if any, the lent bytes `lent`.
    #[inline]
    pub(super) fn send_parts(
        &mut self,
        face: FaceId,
        (range, lent): (Range<usize>, Option<LentPart>),
    ) {
        self.sends.push(Send { face, range, lent });
    }

    #[inline]
    pub(super) fn drop_packet(&mut self, face: FaceId, reason: DropReason) {
        self.drops.push((face, reason));
    }
}
