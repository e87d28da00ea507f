//! The consumer's window: which exchanges are outstanding, matched by the id in the name.

use std::collections::VecDeque;

/// How names are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// Every Interest has a new name (forwarding, never a CS hit).
    Unique,
    /// Names cycle over this many ids (at most one Interest outstanding per name).
    Distinct(u32),
}

const SLOT_BITS: u32 = 20;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    id: u64,
    sent_ns: u64,
    busy: bool,
}

/// Outstanding exchanges, at most `window` at a time.
///
/// Unique names carry `(sequence << 20) | slot`; distinct names carry the name index, which is
/// also the slot. A reply frees its slot; a slot older than the timeout is freed and counted
/// as lost.
#[derive(Debug)]
pub struct Window {
    naming: Naming,
    window: usize,
    slots: Vec<Slot>,
    free: VecDeque<u32>,
    outstanding: usize,
    seq: u64,
}

impl Window {
    /// A window of `window` exchanges (1..=2^20; with `Distinct(k)`, `window <= k`).
    pub fn new(naming: Naming, window: usize) -> Result<Self, String> {
        let nslots = match naming {
            Naming::Unique => window,
            Naming::Distinct(k) => k as usize,
        };
        if window == 0 || nslots > 1 << SLOT_BITS || window > nslots {
            return Err(format!(
                "window {window} must be 1..=2^20 and at most the number of distinct names"
            ));
        }
        Ok(Self {
            naming,
            window,
            slots: vec![Slot::default(); nslots],
            free: (0..nslots as u32).collect(),
            outstanding: 0,
            seq: 0,
        })
    }

    /// Exchanges outstanding.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Takes a slot for a new Interest sent at `now_ns`; returns the id to put in its name, or
    /// None when the window is full.
    pub fn open(&mut self, now_ns: u64) -> Option<u64> {
        if self.outstanding >= self.window {
            return None;
        }
        let slot = self.free.pop_front()?;
        let id = match self.naming {
            Naming::Unique => {
                self.seq += 1;
                (self.seq << SLOT_BITS) | u64::from(slot)
            }
            Naming::Distinct(_) => u64::from(slot),
        };
        self.slots[slot as usize] = Slot {
            id,
            sent_ns: now_ns,
            busy: true,
        };
        self.outstanding += 1;
        Some(id)
    }

    fn slot_of(&self, id: u64) -> usize {
        match self.naming {
            Naming::Unique => (id & ((1 << SLOT_BITS) - 1)) as usize,
            Naming::Distinct(_) => id as usize,
        }
    }

    /// A reply for `id` arrived: frees its slot and returns the round-trip time in ns, or None
    /// when `id` is not outstanding (late, duplicate or foreign).
    pub fn close(&mut self, id: u64, now_ns: u64) -> Option<u64> {
        let i = self.slot_of(id);
        let s = self.slots.get_mut(i)?;
        if !s.busy || s.id != id {
            return None;
        }
        s.busy = false;
        self.outstanding -= 1;
        self.free.push_back(i as u32);
        Some(now_ns.saturating_sub(s.sent_ns))
    }

    /// Frees every slot sent before `cutoff_ns`; returns how many (lost exchanges).
    pub fn expire(&mut self, cutoff_ns: u64) -> u64 {
        let mut n = 0;
        for (i, s) in self.slots.iter_mut().enumerate() {
            if s.busy && s.sent_ns < cutoff_ns {
                s.busy = false;
                self.free.push_back(i as u32);
                n += 1;
            }
        }
        self.outstanding -= n as usize;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_ids_never_repeat_and_match_once() {
        let mut w = Window::new(Naming::Unique, 4).unwrap();
        let ids: Vec<u64> = (0..4).map(|t| w.open(t).unwrap()).collect();
        assert_eq!(w.open(5), None, "window full");
        assert_eq!(w.close(ids[1], 10), Some(9));
        assert_eq!(w.close(ids[1], 11), None, "duplicate");
        let again = w.open(12).unwrap();
        assert!(!ids.contains(&again), "a reused slot gets a new id");
        assert_eq!(w.close(ids[1], 13), None, "late reply to the old id");
        assert_eq!(w.expire(3), 2, "the ones sent at 0 and 2");
        assert_eq!(w.outstanding(), 2);
    }

    #[test]
    fn distinct_names_cycle_over_k() {
        let mut w = Window::new(Naming::Distinct(3), 2).unwrap();
        let a = w.open(0).unwrap();
        let b = w.open(0).unwrap();
        assert_eq!((a, b), (0, 1));
        assert!(w.open(0).is_none());
        w.close(0, 1).unwrap();
        assert_eq!(w.open(2), Some(2));
        w.close(1, 3).unwrap();
        assert_eq!(w.open(3), Some(0));
        assert!(Window::new(Naming::Distinct(3), 4).is_err());
    }
}
