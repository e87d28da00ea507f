//! A hierarchical timing wheel: O(1) schedule, move and cancel, no periodic scans (seed 004),
//! all memory preallocated. Timers are numbered by their owner's slots (one per PIT entry), so
//! the wheel keeps no free list, values or generations of its own.
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

/// A timing wheel of `capacity` timers, one per index `0..capacity` (the owner's slot
/// numbers, as the PIT's): each is either idle or scheduled for one deadline. Scheduling a
/// scheduled timer moves it, so the owner never needs to cancel one before reusing its index.
#[derive(Debug)]
pub struct TimerWheel {
    nodes: Vec<Node>,
    heads: [u32; SLOTS * LEVELS],
    occupied: [u64; LEVELS],
    due_head: u32,
    due_tail: u32,
    now: u64,
    len: usize,
    /// The place [`schedule`](Self::schedule) last computed and its deadline: timers
    /// scheduled for the same tick before the clock moves (Interests of one lifetime arriving
    /// within a tick) reuse it instead of recomputing it. Reset to `(0, DUE)`, true at any
    /// `now`, whenever the clock moves.
    memo_deadline: u64,
    memo_place: u16,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    deadline: u64,
    prev: u32,
    next: u32,
    /// `level * 64 + slot`, [`DUE`] on the expired list, or [`FREE`] (idle).
    place: u16,
}

impl TimerWheel {
    /// A wheel of `capacity` idle timers, starting at tick `now`.
    pub fn new(capacity: usize, now: u64) -> Self {
        let capacity = capacity.min(NIL as usize);
        let idle = Node {
            deadline: 0,
            prev: NIL,
            next: NIL,
            place: FREE,
        };
        Self {
            nodes: vec![idle; capacity],
            heads: [NIL; SLOTS * LEVELS],
            occupied: [0; LEVELS],
            due_head: NIL,
            due_tail: NIL,
            now,
            len: 0,
            memo_deadline: 0,
            memo_place: DUE,
        }
    }

    /// Number of timers (indexes `0..capacity`).
    pub fn capacity(&self) -> usize {
        self.nodes.len()
    }

    /// Bytes of memory per timer.
    pub fn bytes_per_timer(&self) -> usize {
        size_of::<Node>()
    }

    /// Timers scheduled (including expired ones not yet popped).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no timer is scheduled.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The current tick (the last one passed to [`advance`](Self::advance)).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Whether timer `index` is scheduled (or expired and not yet popped).
    pub fn is_scheduled(&self, index: u32) -> bool {
        self.nodes
            .get(index as usize)
            .is_some_and(|n| n.place != FREE)
    }

    /// Schedules timer `index` to fire at tick `deadline` (a past deadline fires at the next
    /// advance), moving it if it was scheduled; an index at or beyond the capacity is ignored.
    ///
    /// A timer whose new deadline falls in the list it already sits on stays where it is:
    /// only its deadline is written (a reused index usually lands in the same slot). The place
    /// of the last deadline scheduled is remembered until the clock moves, so timers
    /// scheduled within a tick for the same deadline tick compute it once.
    #[inline]
    pub fn schedule(&mut self, index: u32, deadline: u64) {
        let place = if deadline == self.memo_deadline {
            self.memo_place
        } else {
            let place = self.place_of(deadline);
            self.memo_deadline = deadline;
            self.memo_place = place;
            place
        };
        let Some(node) = self.nodes.get_mut(index as usize) else {
            return;
        };
        node.deadline = deadline;
        if node.place != place {
            self.move_to(index, place);
        }
    }

    /// Moves timer `index` from its list (if any) to the one of `place`.
    #[inline(never)]
    fn move_to(&mut self, index: u32, place: u16) {
        let old = self.nodes[index as usize].place;
        if old == FREE {
            self.len += 1;
        } else {
            self.unlink(index, old);
        }
        if place == DUE {
            self.push_due(index);
        } else {
            self.push_front(usize::from(place), index);
        }
    }

    /// Cancels timer `index`; false if it was not scheduled.
    pub fn cancel(&mut self, index: u32) -> bool {
        let Some(node) = self.nodes.get_mut(index as usize) else {
            return false;
        };
        let place = node.place;
        if place == FREE {
            return false;
        }
        node.place = FREE;
        self.unlink(index, place);
        self.len -= 1;
        true
    }

    /// Advances the clock to tick `now`, moving every timer with `deadline <= now` to the
    /// expired list (read it with [`pop_expired`](Self::pop_expired)).
    ///
    /// Cost: O(slots visited + timers moved); ticks at which no slot is occupied are skipped,
    /// so an idle hour costs the same as an idle millisecond.
    pub fn advance(&mut self, now: u64) {
        if self.now < now {
            // `place_of` depends on the clock: forget the last place computed.
            self.memo_deadline = 0;
            self.memo_place = DUE;
        }
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

    /// Takes one expired timer (it becomes idle), returning its index.
    pub fn pop_expired(&mut self) -> Option<u32> {
        let index = self.due_head;
        let node = self.nodes.get_mut(index as usize)?;
        node.place = FREE;
        self.unlink(index, DUE);
        self.len -= 1;
        Some(index)
    }

    /// Where a timer due at tick `deadline` goes, relative to `self.now`: `level * 64 + slot`
    /// or [`DUE`].
    #[inline]
    fn place_of(&self, deadline: u64) -> u16 {
        if deadline <= self.now {
            return DUE;
        }
        let diff = deadline ^ self.now;
        let top = BITS * (LEVELS as u32 - 1);
        // The highest 6-bit group in which deadline and now differ.
        let level = (63 - diff.leading_zeros()) / BITS;
        let (level, slot) = if level < LEVELS as u32 {
            // Deadline and now agree above group `level`: the slot lies ahead of the cursor.
            (level, (deadline >> (BITS * level)) & MASK)
        } else if (deadline >> top) - (self.now >> top) <= SLOTS as u64 {
            // Within one rotation of the top level (across a wrap): its slot comes round in time.
            (LEVELS as u32 - 1, (deadline >> top) & MASK)
        } else {
            // Beyond the wheel: park one slot behind the cursor (the farthest point, still
            // before the deadline); re-placed when that slot cascades.
            (LEVELS as u32 - 1, ((self.now >> top) + MASK) & MASK)
        };
        (level as usize * SLOTS + slot as usize) as u16
    }

    /// Puts node `index` (unlinked) where its deadline says.
    fn place(&mut self, index: u32) {
        let place = self.place_of(self.nodes[index as usize].deadline);
        if place == DUE {
            self.push_due(index);
        } else {
            self.push_front(usize::from(place), index);
        }
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

    /// Takes node `index` off the list of `place` (its place before the caller changed it).
    #[inline]
    fn unlink(&mut self, index: u32, place: u16) {
        let (prev, next) = {
            let n = &self.nodes[index as usize];
            (n.prev, n.next)
        };
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        }
        if place == DUE {
            if prev == NIL {
                self.due_head = next;
            }
            if next == NIL {
                self.due_tail = prev;
            }
        } else if prev == NIL {
            // The head of its slot.
            let p = usize::from(place);
            self.heads[p] = next;
            if next == NIL {
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

    fn drain(w: &mut TimerWheel) -> Vec<u32> {
        let mut v: Vec<u32> = std::iter::from_fn(|| w.pop_expired()).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn fires_at_deadline_not_before() {
        let mut w = TimerWheel::new(8, 0);
        w.schedule(0, 5);
        w.schedule(1, 64);
        w.schedule(2, 5000);
        w.advance(4);
        assert_eq!(w.pop_expired(), None);
        w.advance(5);
        assert_eq!(w.pop_expired(), Some(0));
        w.advance(63);
        assert_eq!(w.pop_expired(), None);
        w.advance(64);
        assert_eq!(w.pop_expired(), Some(1));
        w.advance(4999);
        assert_eq!(w.pop_expired(), None);
        w.advance(5000);
        assert_eq!(w.pop_expired(), Some(2));
        assert!(w.is_empty());
    }

    #[test]
    fn cancel_and_reschedule() {
        let mut w = TimerWheel::new(2, 100);
        w.schedule(0, 200);
        w.schedule(1, 300);
        w.schedule(7, 300); // beyond the capacity: ignored
        assert_eq!(w.len(), 2);
        assert!(w.cancel(0));
        assert!(!w.cancel(0));
        assert!(!w.is_scheduled(0));
        // Moving a scheduled timer: within its slot, to another level, and back to due.
        w.schedule(1, 301);
        assert_eq!(w.len(), 1);
        w.schedule(1, 100_000);
        w.advance(301);
        assert_eq!(w.pop_expired(), None);
        w.schedule(1, 50);
        w.schedule(0, 90);
        assert_eq!(drain(&mut w), vec![0, 1], "past deadlines are due at once");
        assert!(w.is_empty());
        // An expired timer not yet popped can be moved back into the future.
        w.schedule(0, 400);
        w.advance(400);
        w.schedule(0, 500);
        assert_eq!(w.pop_expired(), None);
        w.advance(500);
        assert_eq!(w.pop_expired(), Some(0));
    }

    #[test]
    fn moving_the_head_or_tail_of_a_list_keeps_the_rest() {
        // Three timers share level-0 slot 10; move each position out in turn.
        for moved in 0..3u32 {
            let mut w = TimerWheel::new(3, 0);
            for i in 0..3 {
                w.schedule(i, 10);
            }
            w.schedule(moved, 20);
            w.advance(10);
            let rest: Vec<u32> = (0..3).filter(|&i| i != moved).collect();
            assert_eq!(drain(&mut w), rest);
            w.advance(20);
            assert_eq!(drain(&mut w), vec![moved]);
        }
        // The same on the expired list.
        for moved in 0..3u32 {
            let mut w = TimerWheel::new(3, 0);
            for i in 0..3 {
                w.schedule(i, 10);
            }
            w.advance(10);
            assert!(w.cancel(moved));
            let rest: Vec<u32> = (0..3).filter(|&i| i != moved).collect();
            assert_eq!(drain(&mut w), rest);
            assert!(w.is_empty());
        }
    }

    #[test]
    fn a_deadline_scheduled_again_after_the_clock_moved_is_placed_again() {
        // Deadline 100 from tick 0 sits at level 1; from tick 64 (after level 1's slot 1
        // cascaded) at level 0. The place remembered at tick 0 must not be reused at 64: the
        // wheel would next visit it a whole level-1 rotation later.
        let mut w = TimerWheel::new(4, 0);
        w.schedule(0, 100);
        w.schedule(1, 100);
        assert_eq!(
            w.heads[SLOTS + 1],
            1,
            "level 1, slot 1 holds the second then the first"
        );
        w.advance(64);
        w.schedule(2, 100);
        w.schedule(3, 100);
        assert_eq!(w.heads[36], 3, "level 0, slot 36: placed from tick 64");
        w.advance(99);
        assert_eq!(w.pop_expired(), None);
        w.advance(100);
        assert_eq!(drain(&mut w), vec![0, 1, 2, 3]);
        // A deadline of 0 (the remembered place's reset value) is due at once, at any tick.
        w.schedule(0, 0);
        assert_eq!(w.pop_expired(), Some(0));
        // Moving time backwards leaves the clock (and what was remembered) alone.
        w.schedule(1, 120);
        w.advance(50);
        w.schedule(2, 120);
        w.advance(119);
        assert_eq!(w.pop_expired(), None);
        w.advance(120);
        assert_eq!(drain(&mut w), vec![1, 2]);
        assert!(w.is_empty());
    }

    #[test]
    fn far_deadlines_are_rescheduled() {
        let mut w = TimerWheel::new(4, 7);
        let far = 7 + (1u64 << 30);
        w.schedule(3, far);
        w.advance(far - 1);
        assert_eq!(w.pop_expired(), None);
        w.advance(far);
        assert_eq!(w.pop_expired(), Some(3));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Schedule(u32, u64),
        /// Timer `i` for the deadline scheduled last (the place the wheel remembers, if the
        /// clock has not moved since).
        ScheduleAgain(u32),
        Cancel(u32),
        Advance(u64),
        Pop,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0u32..24, prop_oneof![0u64..100, 0u64..10_000, 0u64..1_000_000, 0u64..(1 << 32)]).prop_map(|(i, d)| Op::Schedule(i, d)),
            2 => (0u32..24).prop_map(Op::ScheduleAgain),
            1 => (0u32..24).prop_map(Op::Cancel),
            3 => prop_oneof![0u64..50, 0u64..5_000, 0u64..500_000, 0u64..(1 << 31)].prop_map(Op::Advance),
            1 => Just(Op::Pop),
        ]
    }

    proptest! {
        /// Model-based: the wheel fires exactly the timers whose deadline has passed, each
        /// once, compared with a BTreeMap reference; rescheduling a timer (scheduled, expired
        /// or idle) moves it; a deadline scheduled again, before or after the clock moved,
        /// is placed right.
        #[test]
        fn behaves_like_a_map(start in prop_oneof![0u64..1_000_000, (1u64 << 24) - 100..(1u64 << 24) + 100, 0u64..(1 << 40)], ops in proptest::collection::vec(op(), 1..300)) {
            let mut w = TimerWheel::new(20, start);
            let mut model: BTreeMap<u32, u64> = BTreeMap::new(); // index -> deadline
            let mut now = start;
            let mut last = start;
            for op in ops {
                match op {
                    Op::Schedule(i, delta) => {
                        // A deadline may lie before now (due at once); 20..24 are out of range.
                        let deadline = (now + delta).saturating_sub(50);
                        w.schedule(i, deadline);
                        if i < 20 {
                            model.insert(i, deadline);
                        }
                        last = deadline;
                    }
                    Op::ScheduleAgain(i) => {
                        w.schedule(i, last);
                        if i < 20 {
                            model.insert(i, last);
                        }
                    }
                    Op::Cancel(i) => {
                        prop_assert_eq!(w.cancel(i), model.remove(&i).is_some());
                    }
                    Op::Advance(delta) => {
                        now += delta;
                        w.advance(now);
                    }
                    Op::Pop => {
                        match w.pop_expired() {
                            Some(i) => {
                                let d = model.remove(&i);
                                prop_assert!(d.is_some_and(|d| d <= now), "popped {} due {:?} at {}", i, d, now);
                            }
                            None => prop_assert!(model.values().all(|&d| d > now)),
                        }
                    }
                }
                for i in 0..24 {
                    prop_assert_eq!(w.is_scheduled(i), model.contains_key(&i));
                }
                // A slot's occupied bit is set exactly while its list is non-empty.
                for (p, &head) in w.heads.iter().enumerate() {
                    prop_assert_eq!(w.occupied[p / SLOTS] >> (p % SLOTS) & 1 == 1, head != NIL, "place {}", p);
                }
                prop_assert_eq!(w.len(), model.len());
            }
            // Everything fires once its deadline passes.
            now += 1 << 41;
            w.advance(now);
            let mut fired = drain(&mut w);
            fired.dedup();
            prop_assert_eq!(fired, model.keys().copied().collect::<Vec<_>>());
            prop_assert!(w.is_empty());
        }
    }
}
