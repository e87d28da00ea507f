//! A hierarchical timing wheel: O(1) schedule and cancel, no periodic scans (seed 004), all
//! memory preallocated.
//!
//! Four levels of 64 slots; level `L` holds timers whose deadline first differs from the
//! current tick in 6-bit group `L`. When the clock crosses a group boundary, the slot of the
//! level above is redistributed ("cascaded") to lower levels. Deadlines beyond the wheel's
//! reach (2^24 ticks) are parked at the farthest slot and rescheduled when they get there.
//! Time is passed in as a tick count: the wheel never reads a clock.

const BITS: u32 = 6;
const SLOTS: usize = 1 << BITS;
const LEVELS: usize = 4;
const MASK: u64 = (SLOTS as u64) - 1;
const NIL: u32 = u32::MAX;
const DUE: u16 = u16::MAX - 1;
const FREE: u16 = u16::MAX;

/// Identifies a scheduled timer; stale ids (fired or cancelled) are recognised and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimerId {
    index: u32,
    generation: u32,
}

/// The wheel has no free timer slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("timer wheel full ({0} timers)")]
pub struct WheelFull(pub usize);

#[derive(Debug, Clone)]
struct Node<T> {
    deadline: u64,
    value: Option<T>,
    prev: u32,
    next: u32,
    /// `level * 64 + slot`, [`DUE`] on the expired list, or [`FREE`].
    place: u16,
    generation: u32,
}

/// A timing wheel holding up to `capacity` timers that carry a `T` each.
#[derive(Debug)]
pub struct TimerWheel<T> {
    nodes: Vec<Node<T>>,
    free: u32,
    heads: [u32; SLOTS * LEVELS],
    occupied: [u64; LEVELS],
    due_head: u32,
    due_tail: u32,
    now: u64,
    len: usize,
}

impl<T> TimerWheel<T> {
    /// A wheel for up to `capacity` timers, starting at tick `now`.
    pub fn new(capacity: usize, now: u64) -> Self {
        let capacity = capacity.min(NIL as usize - 1);
        let nodes = (0..capacity)
            .map(|i| Node {
                deadline: 0,
                value: None,
                prev: NIL,
                next: if i + 1 < capacity {
                    (i + 1) as u32
                } else {
                    NIL
                },
                place: FREE,
                generation: 0,
            })
            .collect();
        Self {
            nodes,
            free: if capacity > 0 { 0 } else { NIL },
            heads: [NIL; SLOTS * LEVELS],
            occupied: [0; LEVELS],
            due_head: NIL,
            due_tail: NIL,
            now,
            len: 0,
        }
    }

    /// Timers scheduled and not yet popped or cancelled.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no timer is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The current tick (the last one passed to [`advance`](Self::advance)).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Schedules `value` to fire at tick `deadline` (a past deadline fires at the next
    /// advance).
    pub fn schedule(&mut self, deadline: u64, value: T) -> Result<TimerId, WheelFull> {
        let index = self.free;
        let Some(node) = self.nodes.get_mut(index as usize) else {
            return Err(WheelFull(self.nodes.len()));
        };
        self.free = node.next;
        node.deadline = deadline;
        node.value = Some(value);
        node.generation = node.generation.wrapping_add(1);
        let id = TimerId {
            index,
            generation: node.generation,
        };
        self.len += 1;
        self.place(index);
        Ok(id)
    }

    /// Cancels a timer, returning its value; `None` if it already fired or was cancelled.
    pub fn cancel(&mut self, id: TimerId) -> Option<T> {
        let node = self.nodes.get(id.index as usize)?;
        if node.generation != id.generation || node.place == FREE {
            return None;
        }
        self.unlink(id.index);
        Some(self.release(id.index))
    }

    /// Advances the clock to tick `now`, moving every timer with `deadline <= now` to the
    /// expired list (read it with [`pop_expired`](Self::pop_expired)).
    ///
    /// Cost: O(slots visited + timers moved); ticks at which no slot is occupied are skipped,
    /// so an idle hour costs the same as an idle millisecond.
    pub fn advance(&mut self, now: u64) {
        while self.now < now {
            let Some(t) = self.next_event().filter(|&t| t <= now) else {
                self.now = now;
                break;
            };
            // Cascade from the highest level whose group boundary `t` crosses, downwards.
            for level in (1..LEVELS).rev() {
                let shift = BITS * level as u32;
                if t & ((1u64 << shift) - 1) == 0 {
                    self.now = t;
                    let slot = ((t >> shift) & MASK) as usize;
                    self.cascade(level * SLOTS + slot);
                }
            }
            self.now = t;
            self.expire_slot((t & MASK) as usize);
        }
    }

    /// The next tick after `now` at which an occupied slot expires or cascades.
    fn next_event(&self) -> Option<u64> {
        let mut best: Option<u64> = None;
        for (level, &bits) in self.occupied.iter().enumerate() {
            if bits == 0 {
                continue;
            }
            let shift = BITS * level as u32;
            let cur = (self.now >> shift) & MASK;
            let group = shift + BITS;
            let base = (self.now >> group) << group;
            let later = if cur == MASK {
                0
            } else {
                bits & (!0u64 << (cur + 1))
            };
            let t = if later != 0 {
                base + (u64::from(later.trailing_zeros()) << shift)
            } else {
                // Only parked far timers sit behind the cursor: next rotation.
                base + (1u64 << group) + (u64::from(bits.trailing_zeros()) << shift)
            };
            best = Some(best.map_or(t, |b| b.min(t)));
        }
        best
    }

    /// Takes one expired timer's value.
    pub fn pop_expired(&mut self) -> Option<T> {
        let index = self.due_head;
        if index == NIL {
            return None;
        }
        self.unlink(index);
        Some(self.release(index))
    }

    fn release(&mut self, index: u32) -> T {
        let free = self.free;
        let node = &mut self.nodes[index as usize];
        node.place = FREE;
        node.next = free;
        node.prev = NIL;
        self.free = index;
        self.len -= 1;
        node.value.take().expect("a placed timer holds its value")
    }

    /// Puts node `index` where its deadline says, relative to `self.now`.
    fn place(&mut self, index: u32) {
        let deadline = self.nodes[index as usize].deadline;
        if deadline <= self.now {
            self.push_due(index);
            return;
        }
        let diff = deadline ^ self.now;
        let top = BITS * (LEVELS as u32 - 1);
        let (level, slot) = if diff >> (BITS * LEVELS as u32) == 0 {
            // Deadline and now agree above group `level`: the slot lies ahead of the cursor.
            let mut level = 0;
            while diff >> (BITS * (level as u32 + 1)) != 0 {
                level += 1;
            }
            (level, (deadline >> (BITS * level as u32)) & MASK)
        } else if (deadline >> top) - (self.now >> top) <= SLOTS as u64 {
            // Within one rotation of the top level (across a wrap): its slot comes round in time.
            (LEVELS - 1, (deadline >> top) & MASK)
        } else {
            // Beyond the wheel: park one slot behind the cursor (the farthest point, still
            // before the deadline); re-placed when that slot cascades.
            (LEVELS - 1, ((self.now >> top) + MASK) & MASK)
        };
        let place = level * SLOTS + slot as usize;
        self.push_front(place, index);
    }

    fn push_front(&mut self, place: usize, index: u32) {
        let head = self.heads[place];
        {
            let n = &mut self.nodes[index as usize];
            n.place = place as u16;
            n.prev = NIL;
            n.next = head;
        }
        if head != NIL {
            self.nodes[head as usize].prev = index;
        }
        self.heads[place] = index;
        self.occupied[place / SLOTS] |= 1 << (place % SLOTS);
    }

    fn push_due(&mut self, index: u32) {
        let tail = self.due_tail;
        {
            let n = &mut self.nodes[index as usize];
            n.place = DUE;
            n.prev = tail;
            n.next = NIL;
        }
        if tail == NIL {
            self.due_head = index;
        } else {
            self.nodes[tail as usize].next = index;
        }
        self.due_tail = index;
    }

    fn unlink(&mut self, index: u32) {
        let (prev, next, place) = {
            let n = &self.nodes[index as usize];
            (n.prev, n.next, n.place)
        };
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        }
        if place == DUE {
            if self.due_head == index {
                self.due_head = next;
            }
            if self.due_tail == index {
                self.due_tail = prev;
            }
        } else {
            let p = place as usize;
            if self.heads[p] == index {
                self.heads[p] = next;
            }
            if self.heads[p] == NIL {
                self.occupied[p / SLOTS] &= !(1 << (p % SLOTS));
            }
        }
    }

    fn take_slot(&mut self, place: usize) -> u32 {
        let head = self.heads[place];
        self.heads[place] = NIL;
        self.occupied[place / SLOTS] &= !(1 << (place % SLOTS));
        head
    }

    fn cascade(&mut self, place: usize) {
        let mut index = self.take_slot(place);
        while index != NIL {
            let next = self.nodes[index as usize].next;
            self.place(index);
            index = next;
        }
    }

    fn expire_slot(&mut self, slot: usize) {
        let mut index = self.take_slot(slot);
        while index != NIL {
            let next = self.nodes[index as usize].next;
            // Every level-0 timer in this slot has deadline == now by construction.
            self.push_due(index);
            index = next;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn fires_at_deadline_not_before() {
        let mut w = TimerWheel::new(8, 0);
        w.schedule(5, 'a').unwrap();
        w.schedule(64, 'b').unwrap();
        w.schedule(5000, 'c').unwrap();
        w.advance(4);
        assert_eq!(w.pop_expired(), None);
        w.advance(5);
        assert_eq!(w.pop_expired(), Some('a'));
        w.advance(63);
        assert_eq!(w.pop_expired(), None);
        w.advance(64);
        assert_eq!(w.pop_expired(), Some('b'));
        w.advance(4999);
        assert_eq!(w.pop_expired(), None);
        w.advance(5000);
        assert_eq!(w.pop_expired(), Some('c'));
        assert!(w.is_empty());
    }

    #[test]
    fn cancel_and_stale_ids() {
        let mut w = TimerWheel::new(2, 100);
        let a = w.schedule(200, 1).unwrap();
        let b = w.schedule(300, 2).unwrap();
        assert_eq!(w.schedule(400, 3), Err(WheelFull(2)));
        assert_eq!(w.cancel(a), Some(1));
        assert_eq!(w.cancel(a), None);
        let c = w.schedule(250, 3).unwrap();
        assert_eq!(c.index, a.index);
        assert_eq!(
            w.cancel(a),
            None,
            "a stale id must not cancel the slot's new timer"
        );
        w.advance(1000);
        let mut got = vec![w.pop_expired().unwrap(), w.pop_expired().unwrap()];
        got.sort();
        assert_eq!(got, vec![2, 3]);
        assert_eq!(w.cancel(b), None);
    }

    #[test]
    fn far_deadlines_are_rescheduled() {
        let mut w = TimerWheel::new(4, 7);
        let far = 7 + (1u64 << 30);
        w.schedule(far, 'x').unwrap();
        w.advance(far - 1);
        assert_eq!(w.pop_expired(), None);
        w.advance(far);
        assert_eq!(w.pop_expired(), Some('x'));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Schedule(u64),
        Cancel(usize),
        Advance(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => prop_oneof![0u64..100, 0u64..10_000, 0u64..1_000_000, 0u64..(1 << 32)].prop_map(Op::Schedule),
            1 => any::<usize>().prop_map(Op::Cancel),
            3 => prop_oneof![0u64..50, 0u64..5_000, 0u64..500_000, 0u64..(1 << 31)].prop_map(Op::Advance),
        ]
    }

    proptest! {
        /// Model-based: the wheel fires exactly the timers whose deadline has passed, each
        /// once, compared with a BTreeMap reference.
        #[test]
        fn behaves_like_a_sorted_map(start in prop_oneof![0u64..1_000_000, (1u64 << 24) - 100..(1u64 << 24) + 100, 0u64..(1 << 40)], ops in proptest::collection::vec(op(), 1..200)) {
            let mut w = TimerWheel::new(64, start);
            let mut model: BTreeMap<u32, u64> = BTreeMap::new(); // value -> deadline
            let mut ids = Vec::new();
            let mut now = start;
            let mut next_value = 0u32;
            for op in ops {
                match op {
                    Op::Schedule(delta) => {
                        let v = next_value;
                        next_value += 1;
                        match w.schedule(now + delta, v) {
                            Ok(id) => { model.insert(v, now + delta); ids.push((id, v)); }
                            Err(_) => prop_assert_eq!(model.len(), 64),
                        }
                    }
                    Op::Cancel(i) => {
                        if !ids.is_empty() {
                            let (id, v) = ids[i % ids.len()];
                            prop_assert_eq!(w.cancel(id), model.remove(&v).map(|_| v));
                        }
                    }
                    Op::Advance(delta) => {
                        now += delta;
                        w.advance(now);
                        let mut fired = Vec::new();
                        while let Some(v) = w.pop_expired() { fired.push(v); }
                        fired.sort();
                        let due: Vec<u32> = model.iter().filter(|(_, d)| **d <= now).map(|(v, _)| *v).collect();
                        for v in &due { model.remove(v); }
                        prop_assert_eq!(fired, due);
                    }
                }
                prop_assert_eq!(w.len(), model.len());
            }
        }
    }
}
