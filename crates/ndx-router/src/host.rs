//! The queues between the shard workers and the host thread (app faces, management, kernel
//! UDP for IP fragments).
//!
//! Shards never block on the host: a shard sends a packet for a host face with a
//! `try_send` on a bounded channel (full: the packet is dropped and counted
//! `host_queue_full`), in a buffer taken from a pool the host returns buffers to, so steady
//! state allocates nothing. When the host thread is parked in `poll(2)` the shard rings its
//! doorbell (an eventfd write through [`mio::Waker`]); a host that is busy is never woken.
//! The host hands packets to a shard the same way ([`Handoff`], as reassembled packets move
//! between shards), and the shard returns the buffers.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};

use ndx_core::FaceId;

use crate::worker::Handoff;

/// Packets waiting from all shards to the host thread.
pub(crate) const TO_HOST_DEPTH: usize = 8192;
/// Packets waiting from the host thread to one shard.
pub(crate) const TO_SHARD_DEPTH: usize = 4096;
/// Spare buffers a pool keeps.
const POOL: usize = 1024;

/// A packet from a shard for a host face (an app connection or the management face).
#[derive(Debug)]
pub(crate) struct HostPacket {
    /// The shard that sent it (its buffer goes back there).
    pub from: u8,
    /// The face it is for.
    pub face: FaceId,
    /// The whole NDN packet (an LpPacket or a bare Interest/Data).
    pub bytes: Vec<u8>,
}

/// The host's doorbell: shards ring it only while the host sleeps.
#[derive(Debug)]
pub(crate) struct Doorbell {
    waker: mio::Waker,
    parked: AtomicBool,
}

impl Doorbell {
    /// A doorbell that wakes `poll` with `token`.
    pub(crate) fn new(registry: &mio::Registry, token: mio::Token) -> std::io::Result<Arc<Self>> {
        Ok(Arc::new(Self {
            waker: mio::Waker::new(registry, token)?,
            parked: AtomicBool::new(false),
        }))
    }

    /// The host is about to sleep (it checks its queues once more after this).
    pub(crate) fn park(&self) {
        self.parked.store(true, Ordering::SeqCst);
    }

    /// The host is awake.
    pub(crate) fn unpark(&self) {
        self.parked.store(false, Ordering::SeqCst);
    }

    /// Wakes the host if it sleeps.
    pub(crate) fn ring(&self) {
        if self.parked.load(Ordering::SeqCst) && self.parked.swap(false, Ordering::SeqCst) {
            let _ = self.waker.wake();
        }
    }
}

/// A shard's side of its link to the host thread.
#[derive(Debug)]
pub(crate) struct ShardHostLink {
    /// Packets for host faces.
    pub to_host: SyncSender<HostPacket>,
    /// Buffers the host returned.
    pub pool: Receiver<Vec<u8>>,
    /// Packets the host hands to this shard.
    pub inbox: Receiver<Handoff>,
    /// Buffers of handed packets, back to the host.
    pub back: SyncSender<Vec<u8>>,
    /// Wakes the host.
    pub bell: Arc<Doorbell>,
    /// Set while the shard sleeps (`idle = "park"`): the host unparks it.
    pub shard_bell: Arc<AtomicBool>,
}

impl ShardHostLink {
    /// Sends `parts` (joined) to host face `face`; false when the host's queue is full.
    pub(crate) fn send(&self, me: u8, face: FaceId, parts: [&[u8]; 2]) -> bool {
        let mut bytes = self.pool.try_recv().unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(parts[0]);
        bytes.extend_from_slice(parts[1]);
        match self.to_host.try_send(HostPacket {
            from: me,
            face,
            bytes,
        }) {
            Ok(()) => {
                self.bell.ring();
                true
            }
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        }
    }
}

/// The host thread's side of its links to the shards.
#[derive(Debug)]
pub(crate) struct HostLinks {
    /// Packets from every shard.
    pub from_shards: Receiver<HostPacket>,
    /// Buffers back to each shard.
    pub pools: Vec<SyncSender<Vec<u8>>>,
    /// Packets to each shard.
    pub to_shards: Vec<SyncSender<Handoff>>,
    /// Buffers the shards returned.
    pub returned: Receiver<Vec<u8>>,
    /// Spare buffers.
    spare: Vec<Vec<u8>>,
    /// Each shard's sleeping flag and thread (set once the workers run).
    sleepers: Vec<(Arc<AtomicBool>, Option<std::thread::Thread>)>,
    /// Shards handed a packet since the last [`HostLinks::wake`].
    handed: u64,
}

/// Why a packet could not be handed to a shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HandError {
    /// The shard's queue is full.
    Full,
    /// No such shard.
    NoShard,
}

impl HostLinks {
    /// A buffer for a packet to a shard.
    pub(crate) fn buffer(&mut self) -> Vec<u8> {
        if self.spare.is_empty() {
            while let Ok(b) = self.returned.try_recv() {
                if self.spare.len() >= POOL {
                    break;
                }
                self.spare.push(b);
            }
        }
        let mut b = self.spare.pop().unwrap_or_default();
        b.clear();
        b
    }

    /// Hands `bytes` (from face `face`) to shard `shard`.
    pub(crate) fn hand(
        &mut self,
        shard: u8,
        face: FaceId,
        bytes: Vec<u8>,
    ) -> Result<(), HandError> {
        let Some(tx) = self.to_shards.get(usize::from(shard)) else {
            return Err(HandError::NoShard);
        };
        match tx.try_send(Handoff {
            from: u8::MAX,
            face,
            bytes,
        }) {
            Ok(()) => {
                self.handed |= 1 << (shard % 64);
                Ok(())
            }
            Err(TrySendError::Full(h) | TrySendError::Disconnected(h)) => {
                if self.spare.len() < POOL {
                    self.spare.push(h.bytes);
                }
                Err(HandError::Full)
            }
        }
    }

    /// Records the shard threads, to wake those that sleep (`idle = "park"`).
    pub(crate) fn set_threads(&mut self, threads: Vec<std::thread::Thread>) {
        for (s, t) in self.sleepers.iter_mut().zip(threads) {
            s.1 = Some(t);
        }
    }

    /// Wakes the sleeping shards that were handed packets since the last call.
    pub(crate) fn wake(&mut self) {
        if self.handed == 0 {
            return;
        }
        for (i, (flag, thread)) in self.sleepers.iter().enumerate() {
            if self.handed & (1 << (i % 64)) != 0
                && flag.load(Ordering::SeqCst)
                && let Some(t) = thread
            {
                t.unpark();
            }
        }
        self.handed = 0;
    }

    /// Gives a shard's packet buffer back to it.
    pub(crate) fn give_back(&self, p: HostPacket) {
        if let Some(tx) = self.pools.get(usize::from(p.from)) {
            let _ = tx.try_send(p.bytes);
        }
    }
}

/// The links for `shards` shards: the host's side and each shard's.
pub(crate) fn links(shards: usize, bell: &Arc<Doorbell>) -> (HostLinks, Vec<ShardHostLink>) {
    let (to_host, from_shards) = sync_channel(TO_HOST_DEPTH);
    let (back, returned) = sync_channel(TO_SHARD_DEPTH * 2);
    let mut pools = Vec::new();
    let mut to_shards = Vec::new();
    let mut shard_side = Vec::new();
    let mut sleepers = Vec::new();
    for _ in 0..shards {
        let flag = Arc::new(AtomicBool::new(false));
        sleepers.push((flag.clone(), None));
        let (ptx, prx) = sync_channel(POOL);
        let (htx, hrx) = sync_channel(TO_SHARD_DEPTH);
        pools.push(ptx);
        to_shards.push(htx);
        shard_side.push(ShardHostLink {
            to_host: to_host.clone(),
            pool: prx,
            inbox: hrx,
            back: back.clone(),
            bell: bell.clone(),
            shard_bell: flag,
        });
    }
    (
        HostLinks {
            from_shards,
            pools,
            to_shards,
            returned,
            spare: Vec::new(),
            sleepers,
            handed: 0,
        },
        shard_side,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_and_buffers_travel_both_ways_and_a_full_queue_refuses() {
        let mut poll = mio::Poll::new().unwrap();
        let bell = Doorbell::new(poll.registry(), mio::Token(0)).unwrap();
        let (mut host, shards) = links(2, &bell);
        assert!(shards[1].send(1, FaceId(7), [b"ab", b"cd"]));
        let p = host.from_shards.try_recv().unwrap();
        assert_eq!(
            (p.from, p.face, p.bytes.as_slice()),
            (1, FaceId(7), &b"abcd"[..])
        );
        host.give_back(p);
        assert!(shards[1].pool.try_recv().unwrap().capacity() >= 4);
        // The host hands a packet to shard 0, which returns its buffer.
        let mut b = host.buffer();
        b.extend_from_slice(b"xyz");
        host.hand(0, FaceId(3), b).unwrap();
        let h = shards[0].inbox.try_recv().unwrap();
        assert_eq!((h.face, h.bytes.as_slice()), (FaceId(3), &b"xyz"[..]));
        shards[0].back.send(h.bytes).unwrap();
        assert!(host.buffer().capacity() >= 3, "the buffer came back");
        assert_eq!(host.hand(9, FaceId(3), Vec::new()), Err(HandError::NoShard));
        for _ in 0..TO_SHARD_DEPTH {
            host.hand(1, FaceId(3), Vec::new()).unwrap();
        }
        assert_eq!(host.hand(1, FaceId(3), Vec::new()), Err(HandError::Full));
        // The doorbell rings only while the host is parked.
        bell.park();
        assert!(shards[0].send(0, FaceId(1), [b"", b"x"]));
        let mut events = mio::Events::with_capacity(4);
        poll.poll(&mut events, Some(std::time::Duration::from_secs(5)))
            .unwrap();
        assert_eq!(events.iter().count(), 1, "woken");
        assert!(!bell.parked.load(Ordering::SeqCst));
    }
}
