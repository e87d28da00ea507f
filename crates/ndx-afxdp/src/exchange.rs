//! Handing received frames between shard threads without copying.
//!
//! An [`Exchange`] is a pair of SPSC rings between two threads: handles go
//! forward to the receiving shard, which reads the bytes through the origin
//! port's [`crate::Umem`] and gives the handle back; the sending shard reaps
//! the returned handles and releases them on its endpoint, so each frame goes
//! back to its port's fill-ring owner through the socket that received it.

use crate::spsc::{self, Consumer, Producer};
use crate::umem::RxFrame;

/// Constructor of a frame exchange between two threads.
#[derive(Debug)]
pub struct Exchange;

impl Exchange {
    /// Creates an exchange carrying at most `capacity` frames in flight
    /// (rounded up to a power of two).
    #[expect(clippy::new_ret_no_self, reason = "the two halves are the point")]
    pub fn new(capacity: usize) -> (ExchangeSender, ExchangeReceiver) {
        Self::of(capacity)
    }

    /// Creates an exchange of handles of type `T` (rounded up to a power of two,
    /// as [`Exchange::new`]): the same rings and in-flight bound for handles
    /// other than [`RxFrame`].
    pub fn of<T: Send>(capacity: usize) -> (ExchangeSender<T>, ExchangeReceiver<T>) {
        let (fwd_p, fwd_c) = spsc::channel(capacity);
        let cap = fwd_p.capacity();
        let (back_p, back_c) = spsc::channel(cap);
        (
            ExchangeSender {
                fwd: fwd_p,
                back: back_c,
                in_flight: 0,
                cap,
            },
            ExchangeReceiver {
                fwd: fwd_c,
                back: back_p,
            },
        )
    }
}

/// The sending shard's half.
#[derive(Debug)]
pub struct ExchangeSender<T = RxFrame> {
    fwd: Producer<T>,
    back: Consumer<T>,
    in_flight: usize,
    cap: usize,
}

impl<T> ExchangeSender<T> {
    /// Hands `frame` to the other shard; gives it back if `capacity` frames are
    /// already in flight (release it and count a drop).
    pub fn send(&mut self, frame: T) -> Result<(), T> {
        if self.in_flight >= self.cap {
            return Err(frame);
        }
        self.fwd.push(frame)?;
        self.in_flight += 1;
        Ok(())
    }

    /// Takes back one frame the other shard is done with; release it on the
    /// endpoint of its port ([`crate::Endpoint::release`]).
    pub fn reap(&mut self) -> Option<T> {
        let f = self.back.pop()?;
        self.in_flight -= 1;
        Some(f)
    }

    /// Hands `frame` to the other shard as [`ExchangeSender::send`] does, but without
    /// publishing it: the other shard sees it after [`ExchangeSender::publish`], so a burst
    /// of hand-offs costs one shared-cache write. Gives it back when `capacity` frames are
    /// already in flight. A staged frame never published is never seen (it leaks with the
    /// ring, never unsound).
    pub fn stage(&mut self, frame: T) -> Result<(), T> {
        if self.in_flight >= self.cap {
            return Err(frame);
        }
        self.fwd.push_unpublished(frame)?;
        self.in_flight += 1;
        Ok(())
    }

    /// Publishes the frames [`ExchangeSender::stage`] queued (nothing to do when none).
    pub fn publish(&mut self) {
        self.fwd.publish();
    }

    /// Takes back every frame the other shard is done with, oldest first, into `each`
    /// (one read and one write of the shared indices); returns how many.
    pub fn reap_many(&mut self, each: impl FnMut(T)) -> usize {
        let n = self.back.pop_many(usize::MAX, each);
        self.in_flight -= n;
        n
    }

    /// Frames sent and not yet reaped.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }
}

/// The receiving shard's half.
#[derive(Debug)]
pub struct ExchangeReceiver<T = RxFrame> {
    fwd: Consumer<T>,
    back: Producer<T>,
}

impl<T> ExchangeReceiver<T> {
    /// Next frame handed over, if any. Read it with [`crate::Umem::frame`] on
    /// the UMEM of `frame.port()`, then [`ExchangeReceiver::give_back`].
    pub fn recv(&mut self) -> Option<T> {
        self.fwd.pop()
    }

    /// Takes up to `max` frames handed over, oldest first, into `each` (one read and one
    /// write of the shared indices for all of them); returns how many.
    pub fn recv_many(&mut self, max: usize, each: impl FnMut(T)) -> usize {
        self.fwd.pop_many(max, each)
    }

    /// Returns frames to the sending shard, in order, published at once. Never fails, as
    /// [`ExchangeReceiver::give_back`].
    pub fn give_back_many(&mut self, frames: impl IntoIterator<Item = T>) {
        // Cannot leave any behind by the in-flight bound; were it to, the rest is dropped
        // here (leaked from its pool, never unsound), not left in the caller's iterator.
        let mut frames = frames.into_iter();
        let _ = self.back.push_many(&mut frames, usize::MAX);
        frames.for_each(drop);
    }

    /// Returns frames to the shards that handed them over: `frames` in the order they were
    /// received, each with the index of its ring in `rings`; each run of one ring's frames is
    /// published at once ([`ExchangeReceiver::give_back_many`]). A frame whose index names no
    /// ring is dropped (leaked from its pool, never unsound).
    pub fn give_back_runs(rings: &mut [Self], frames: impl IntoIterator<Item = (usize, T)>) {
        let mut back = frames.into_iter().peekable();
        while let Some(&(k, _)) = back.peek() {
            let run = std::iter::from_fn(|| back.next_if(|&(j, _)| j == k).map(|(_, f)| f));
            match rings.get_mut(k) {
                Some(ring) => ring.give_back_many(run),
                None => run.for_each(drop),
            }
        }
    }

    /// Returns a frame to the sending shard for recycling. Never fails: the
    /// sender never has more frames in flight than the return ring holds.
    pub fn give_back(&mut self, frame: T) {
        // Cannot fail by the in-flight bound; were it to, the frame would only
        // leak from its pool (never unsound).
        let _ = self.back.push(frame);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(port: u32, addr: u64) -> RxFrame {
        RxFrame {
            addr,
            port,
            len: 60,
            nseg: 1,
            meta_len: 0,
        }
    }

    #[test]
    fn bounded_in_flight_and_round_trip() {
        let (mut s, mut r) = Exchange::new(2);
        s.send(fake(1, 0)).unwrap();
        s.send(fake(1, 4096)).unwrap();
        let back = s.send(fake(1, 8192)).unwrap_err();
        assert_eq!(back.addr, 8192);
        // The receiver holds one frame: still two in flight.
        let a = r.recv().unwrap();
        assert!(s.send(fake(1, 8192)).is_err());
        r.give_back(a);
        let got = s.reap().unwrap();
        assert_eq!(got.addr, 0);
        assert_eq!(s.in_flight(), 1);
        s.send(fake(1, 8192)).unwrap();
        assert_eq!(r.recv().unwrap().addr, 4096);
        assert_eq!(r.recv().unwrap().addr, 8192);
        assert!(r.recv().is_none());
    }

    #[test]
    fn runs_go_back_to_their_own_rings_in_order() {
        let (mut s0, r0) = Exchange::new(8);
        let (mut s1, r1) = Exchange::new(8);
        let mut rings = [r0, r1];
        let mut got = Vec::new();
        for (k, s) in [&mut s0, &mut s1].into_iter().enumerate() {
            for i in 0..3 {
                s.send(fake(1, (k as u64 * 16 + i) * 4096)).unwrap();
            }
        }
        for (k, r) in rings.iter_mut().enumerate() {
            r.recv_many(8, |f| got.push((k, f)));
        }
        // Interleaved, and one frame tagged with a ring that does not exist (dropped).
        let (a, b): (Vec<_>, Vec<_>) = got.into_iter().partition(|(k, _)| *k == 0);
        let mut mixed: Vec<(usize, RxFrame)> =
            a.into_iter().zip(b).flat_map(|(x, y)| [x, y]).collect();
        let (_, stray) = mixed.pop().unwrap();
        mixed.push((7, stray));
        ExchangeReceiver::give_back_runs(&mut rings, mixed);
        let reaped = |s: &mut ExchangeSender| {
            let mut v = Vec::new();
            s.reap_many(|f| v.push(f.addr / 4096));
            v
        };
        assert_eq!(reaped(&mut s0), [0, 1, 2]);
        assert_eq!(
            reaped(&mut s1),
            [16, 17],
            "the stray frame is not given to any ring"
        );
    }

    #[test]
    fn bursts_keep_the_bound_and_the_order() {
        let (mut s, mut r) = Exchange::new(4);
        for i in 0..4 {
            s.stage(fake(1, i * 4096)).unwrap();
        }
        let back = s.stage(fake(1, 16384)).unwrap_err();
        assert_eq!(back.addr, 16384, "at most the capacity in flight");
        let mut got = Vec::new();
        assert_eq!(r.recv_many(3, |f| got.push(f)), 0, "staged, not published");
        s.publish();
        assert_eq!(r.recv_many(3, |f| got.push(f)), 3);
        assert_eq!(
            got.iter().map(|f| f.addr).collect::<Vec<_>>(),
            [0, 4096, 8192]
        );
        r.give_back_many(got.drain(..));
        assert!(s.stage(fake(1, 0)).is_err(), "not reaped yet");
        let mut back = Vec::new();
        assert_eq!(s.reap_many(|f| back.push(f.addr)), 3);
        assert_eq!(back, [0, 4096, 8192]);
        assert_eq!(s.in_flight(), 1);
        s.stage(fake(1, 7 * 4096)).unwrap();
        s.send(fake(1, 8 * 4096)).unwrap();
        assert_eq!(r.recv_many(8, |f| got.push(f)), 3);
        assert_eq!(
            got.iter().map(|f| f.addr).collect::<Vec<_>>(),
            [12288, 28672, 32768]
        );
    }

    #[test]
    fn other_handles_cross_threads_and_come_back() {
        let (mut s, mut r) = Exchange::of::<Box<[u8]>>(4);
        let t = std::thread::spawn(move || {
            let mut seen = 0u32;
            while seen < 100 {
                if let Some(b) = r.recv() {
                    assert_eq!(b[0], seen as u8);
                    seen += 1;
                    r.give_back(b);
                }
            }
        });
        let mut free: Vec<Box<[u8]>> = (0..4).map(|_| vec![0u8; 64].into()).collect();
        let mut sent = 0u32;
        while sent < 100 || s.in_flight() > 0 {
            while let Some(b) = s.reap() {
                free.push(b);
            }
            if sent < 100
                && let Some(mut b) = free.pop()
            {
                b[0] = sent as u8;
                s.send(b).expect("never more in flight than the capacity");
                sent += 1;
            }
        }
        t.join().unwrap();
        assert_eq!(free.len(), 4, "every handle came back");
    }
}
