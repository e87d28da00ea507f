//! The caller's ledger of the frames it lends to a shard (or a CS): one handle per lent
//! frame, in the order lent, so that the sends read lent bytes and the frames come back by
//! the caller's own handles, never by a frame number.

use crate::shard::{Actions, Outgoing};

/// The frames a caller lent for one action list: its handle `L` on each (what it needs to
/// find the frame's bytes and to give the frame back: an index into its receive batch, a
/// descriptor, the frame itself), in the order lent.
///
/// The protocol, for a caller that lends the frames a burst was received in:
/// 1. push a handle for each frame to lend, then lend the frames with
///    `Shard::process_burst_lent` or `Shard::process_burst_keeping` (which check that as
///    many handles as frames were pushed);
/// 2. send what the action list asks with [`Lent::sends`], whose `bytes` closure gives a
///    handle's frame bytes (those lent); then clear the action list;
/// 3. end the lending with `Shard::return_lent`, which hands each handle back exactly once,
///    saying whether the CS keeps its frame; the ledger is then empty.
///
/// The ledger holds handles, not frames: dropping it before step 3 loses no frame (the
/// caller still has them all), but the CS then drops the Data it meant to keep. Lending
/// again through a ledger that was not emptied by step 3 panics (see
/// `Shard::process_burst_lent`).
///
/// ```
/// use ndx_core::{Actions, FaceId, Lent};
/// let frames: Vec<(FaceId, Vec<u8>)> = Vec::new();
/// let mut lent: Lent<usize> = Lent::new();
/// lent.extend(0..frames.len());
/// let out = Actions::new();
/// // (Shard::process_burst_lent(now, &batch, &mut lent, &mut out) here.)
/// for send in lent.sends(&out, |&i| frames[i].1.as_slice()) {
///     let _ = (send.face, send.head, send.body);
/// }
/// ```
///
/// The handles are the caller's: the sends cannot be read with a frame number.
///
/// ```compile_fail
/// use ndx_core::{Actions, Lent};
/// let lent: Lent<(usize, usize)> = Lent::new();
/// let out = Actions::new();
/// let frames: Vec<Vec<u8>> = Vec::new();
/// let _ = lent.sends(&out, |k: u32| frames[k as usize].as_slice()).count();
/// ```
#[derive(Debug)]
pub struct Lent<L> {
    handles: Vec<L>,
}

impl<L> Default for Lent<L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<L> Lent<L> {
    /// An empty ledger (it keeps its memory across lendings).
    pub const fn new() -> Self {
        Self {
            handles: Vec::new(),
        }
    }

    /// An empty ledger with room for `n` handles.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            handles: Vec::with_capacity(n),
        }
    }

    /// Handles in the ledger: frames lent and not yet returned.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// True when no frame is lent.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// Records the caller's handle on the next frame it lends.
    #[inline]
    pub fn push(&mut self, handle: L) {
        self.handles.push(handle);
    }

    /// The handles, in the order lent.
    pub fn handles(&self) -> &[L] {
        &self.handles
    }

    /// Frames to send, in order, each as a head from the action list `out` and a body from
    /// a lent frame: `bytes(h)` gives the bytes the frame of handle `h` had when it was lent
    /// (the caller keeps its lent frames unchanged until it has sent). Frames that lent
    /// nothing come whole as their head, so an empty ledger serves an action list into
    /// which nothing was lent.
    ///
    /// # Panics
    /// If `out` is not the action list the ledger's frames were lent into (it counts a
    /// different number of lent frames).
    pub fn sends<'a, B>(&'a self, out: &'a Actions, bytes: B) -> impl Iterator<Item = Outgoing<'a>>
    where
        B: Fn(&L) -> &'a [u8],
    {
        assert_eq!(
            out.lent as usize,
            self.handles.len(),
            "the action list counts another number of lent frames than the ledger"
        );
        out.sends_lent(move |k| self.handles.get(k as usize).map_or(&[][..], &bytes))
    }

    /// Pushes `handle` and returns its frame number.
    pub(crate) fn push_own(&mut self, handle: L) -> u32 {
        self.handles.push(handle);
        (self.handles.len() - 1) as u32
    }

    /// Checks, before frames are lent into `out`, that the caller pushed a handle for each
    /// of the `n` frames.
    #[inline]
    pub(crate) fn check(&self, out: &Actions, n: usize) {
        assert_eq!(
            self.handles.len(),
            out.lent as usize + n,
            "push one handle onto the ledger for each frame lent (and return the frames of \
             the last action list before lending into a new one)"
        );
    }

    /// Takes every handle out, in order.
    pub(crate) fn drain(&mut self) -> std::vec::Drain<'_, L> {
        self.handles.drain(..)
    }
}

impl<L> Extend<L> for Lent<L> {
    fn extend<I: IntoIterator<Item = L>>(&mut self, iter: I) {
        self.handles.extend(iter);
    }
}
