//! A bounded, lock-free single-producer single-consumer ring.
//!
//! Used to return frames to the owner of a port's fill ring, to hand completed
//! TX frames back to the socket that owns them, and by [`crate::Exchange`].
//! Each half is `Send` and meant to live on exactly one thread; pushes and pops
//! are wait-free (one acquire load, one release store).

#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Pads a value to its own cache line so producer and consumer indices do not
/// false-share.
#[repr(align(64))]
struct Padded<T>(T);

struct Shared<T> {
    /// Next slot the consumer reads (monotonic; wraps modulo `usize`).
    head: Padded<AtomicUsize>,
    /// Next slot the producer writes (monotonic; wraps modulo `usize`).
    tail: Padded<AtomicUsize>,
    mask: usize,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY: a slot is written only by the single producer while it is outside
// [head, tail) and read only by the single consumer while inside; the
// release/acquire pairs on `tail`/`head` order those accesses. Values of `T`
// move between threads, hence `T: Send`.
unsafe impl<T: Send> Sync for Shared<T> {}
// SAFETY: see the `Sync` impl; ownership of queued `T`s moves with the ring.
unsafe impl<T: Send> Send for Shared<T> {}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        let head = *self.head.0.get_mut();
        let tail = *self.tail.0.get_mut();
        let mut i = head;
        while i != tail {
            let slot = self.slots[i & self.mask].get_mut();
            // SAFETY: slots in [head, tail) hold initialised values that were
            // never popped; we have exclusive access in `drop`.
            unsafe { slot.assume_init_drop() };
            i = i.wrapping_add(1);
        }
    }
}

/// The writing half of an SPSC ring.
pub(crate) struct Producer<T> {
    shared: Arc<Shared<T>>,
    /// Cached copy of the consumer's `head`, refreshed only when the ring looks full.
    head_cache: usize,
    tail: usize,
}

/// The reading half of an SPSC ring.
pub(crate) struct Consumer<T> {
    shared: Arc<Shared<T>>,
    /// Cached copy of the producer's `tail`, refreshed only when the ring looks empty.
    tail_cache: usize,
    head: usize,
}

impl<T> std::fmt::Debug for Producer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl<T> std::fmt::Debug for Consumer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("capacity", &(self.shared.mask + 1))
            .finish()
    }
}

/// Creates a ring holding at least `capacity` items (rounded up to a power of two).
pub(crate) fn channel<T: Send>(capacity: usize) -> (Producer<T>, Consumer<T>) {
    let cap = capacity.max(1).next_power_of_two();
    let slots = (0..cap)
        .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
        .collect();
    let shared = Arc::new(Shared {
        head: Padded(AtomicUsize::new(0)),
        tail: Padded(AtomicUsize::new(0)),
        mask: cap - 1,
        slots,
    });
    (
        Producer {
            shared: shared.clone(),
            head_cache: 0,
            tail: 0,
        },
        Consumer {
            shared,
            tail_cache: 0,
            head: 0,
        },
    )
}

impl<T> Producer<T> {
    /// Number of items the ring can hold.
    pub(crate) fn capacity(&self) -> usize {
        self.shared.mask + 1
    }

    /// Appends `value`, or gives it back when the ring is full.
    pub(crate) fn push(&mut self, value: T) -> Result<(), T> {
        self.push_unpublished(value)?;
        self.shared.tail.0.store(self.tail, Ordering::Release);
        Ok(())
    }

    /// Appends `value` without publishing it: the consumer sees it after the next
    /// [`Producer::publish`] (or publishing push). Gives it back when the ring is full.
    pub(crate) fn push_unpublished(&mut self, value: T) -> Result<(), T> {
        let cap = self.capacity();
        if self.tail.wrapping_sub(self.head_cache) >= cap {
            self.head_cache = self.shared.head.0.load(Ordering::Acquire);
            if self.tail.wrapping_sub(self.head_cache) >= cap {
                return Err(value);
            }
        }
        let slot = &self.shared.slots[self.tail & self.shared.mask];
        // SAFETY: the slot is outside [head, tail) (checked above), so the
        // consumer does not touch it; we are the only producer.
        unsafe { (*slot.get()).write(value) };
        self.tail = self.tail.wrapping_add(1);
        Ok(())
    }

    /// Publishes what [`Producer::push_unpublished`] appended (one release store; nothing
    /// when there is nothing new).
    pub(crate) fn publish(&mut self) {
        if self.shared.tail.0.load(Ordering::Relaxed) != self.tail {
            self.shared.tail.0.store(self.tail, Ordering::Release);
        }
    }

    /// Appends items taken from `values` while the ring has room (at most `max`), and
    /// publishes them all with one release store; returns how many. The iterator keeps what
    /// did not fit (nothing is taken from it beyond the room).
    pub(crate) fn push_many(&mut self, values: &mut impl Iterator<Item = T>, max: usize) -> usize {
        let cap = self.capacity();
        let mut room = cap - self.tail.wrapping_sub(self.head_cache);
        if room < max {
            self.head_cache = self.shared.head.0.load(Ordering::Acquire);
            room = cap - self.tail.wrapping_sub(self.head_cache);
        }
        let start = self.tail;
        for _ in 0..room.min(max) {
            let Some(value) = values.next() else { break };
            let slot = &self.shared.slots[self.tail & self.shared.mask];
            // SAFETY: the slot is outside [head, tail) (there was room), so the consumer does
            // not touch it; we are the only producer.
            unsafe { (*slot.get()).write(value) };
            self.tail = self.tail.wrapping_add(1);
        }
        let n = self.tail.wrapping_sub(start);
        if n > 0 {
            self.shared.tail.0.store(self.tail, Ordering::Release);
        }
        n
    }
}

/// Publishes the consumer's head when dropped: once per [`Consumer::pop_many`], even if its
/// callback panics (the values already moved out are then not dropped again with the ring).
struct HeadGuard<'a> {
    at: &'a AtomicUsize,
    head: &'a mut usize,
}

impl Drop for HeadGuard<'_> {
    fn drop(&mut self) {
        self.at.store(*self.head, Ordering::Release);
    }
}

impl<T> Consumer<T> {
    /// Removes the oldest item, if any.
    pub(crate) fn pop(&mut self) -> Option<T> {
        if self.head == self.tail_cache {
            self.tail_cache = self.shared.tail.0.load(Ordering::Acquire);
            if self.head == self.tail_cache {
                return None;
            }
        }
        let slot = &self.shared.slots[self.head & self.shared.mask];
        // SAFETY: the slot is inside [head, tail): the producer initialised it
        // and published it with a release store we acquired; it will not write
        // it again until we advance `head` below.
        let value = unsafe { (*slot.get()).assume_init_read() };
        self.head = self.head.wrapping_add(1);
        self.shared.head.0.store(self.head, Ordering::Release);
        Some(value)
    }

    /// Removes up to `max` of the oldest items, oldest first, giving each to `each`; reads
    /// the producer's index at most once and publishes ours once, for all of them (one
    /// shared-cache write per burst rather than per item). Returns how many.
    pub(crate) fn pop_many(&mut self, max: usize, mut each: impl FnMut(T)) -> usize {
        let mut avail = self.tail_cache.wrapping_sub(self.head);
        if avail < max {
            self.tail_cache = self.shared.tail.0.load(Ordering::Acquire);
            avail = self.tail_cache.wrapping_sub(self.head);
        }
        let n = avail.min(max);
        if n == 0 {
            return 0;
        }
        let (shared, mask) = (&*self.shared, self.shared.mask);
        let guard = HeadGuard {
            at: &shared.head.0,
            head: &mut self.head,
        };
        for _ in 0..n {
            let slot = &shared.slots[*guard.head & mask];
            // SAFETY: the slot is inside [head, tail) (`n` is at most what was published, and
            // acquired above or before); the producer will not write it again until the
            // guard publishes our head; the head moves past it before `each` may panic.
            let value = unsafe { (*slot.get()).assume_init_read() };
            *guard.head = guard.head.wrapping_add(1);
            each(value);
        }
        drop(guard);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_and_full() {
        let (mut p, mut c) = channel::<u32>(3);
        assert_eq!(p.capacity(), 4);
        for i in 0..4 {
            p.push(i).unwrap();
        }
        assert_eq!(p.push(9), Err(9));
        assert_eq!(c.pop(), Some(0));
        p.push(4).unwrap();
        let rest: Vec<_> = std::iter::from_fn(|| c.pop()).collect();
        assert_eq!(rest, vec![1, 2, 3, 4]);
    }

    #[test]
    fn threads_transfer_in_order() {
        let (mut p, mut c) = channel::<u64>(64);
        let n = 200_000u64;
        let t = std::thread::spawn(move || {
            for i in 0..n {
                let mut v = i;
                while let Err(back) = p.push(v) {
                    v = back;
                    std::hint::spin_loop();
                }
            }
        });
        let mut expect = 0;
        while expect < n {
            if let Some(v) = c.pop() {
                assert_eq!(v, expect);
                expect += 1;
            }
        }
        t.join().unwrap();
        assert_eq!(c.pop(), None);
    }

    #[test]
    fn many_at_once_keep_order_bounds_and_what_did_not_fit() {
        let (mut p, mut c) = channel::<u32>(4);
        let mut src = 0..10;
        assert_eq!(p.push_many(&mut src, 3), 3);
        assert_eq!(p.push_many(&mut src, 8), 1, "only the room");
        assert_eq!(src.next(), Some(4), "nothing taken beyond the room");
        let mut got = Vec::new();
        assert_eq!(c.pop_many(3, |v| got.push(v)), 3);
        assert_eq!(got, [0, 1, 2]);
        let mut src = 5..7;
        assert_eq!(p.push_many(&mut src, 8), 2);
        assert_eq!(c.pop_many(8, |v| got.push(v)), 3);
        assert_eq!(got, [0, 1, 2, 3, 5, 6]);
        assert_eq!(c.pop_many(8, |v| got.push(v)), 0);
        // One at a time and many at once share the indices.
        p.push(7).unwrap();
        assert_eq!(c.pop(), Some(7));
        // Unpublished items stay invisible until published.
        p.push_unpublished(8).unwrap();
        p.push_unpublished(9).unwrap();
        assert_eq!(c.pop(), None);
        p.publish();
        assert_eq!(c.pop_many(8, |v| got.push(v)), 2);
        assert_eq!(got[got.len() - 2..], [8, 9]);
    }

    #[test]
    fn many_at_once_across_threads_in_order() {
        let (mut p, mut c) = channel::<u64>(64);
        let n = 100_000u64;
        let t = std::thread::spawn(move || {
            let mut src = (0..n).peekable();
            while src.peek().is_some() {
                if p.push_many(&mut src, 32) == 0 {
                    std::hint::spin_loop();
                }
            }
        });
        let mut expect = 0;
        while expect < n {
            c.pop_many(32, |v| {
                assert_eq!(v, expect);
                expect += 1;
            });
        }
        t.join().unwrap();
        assert_eq!(c.pop(), None);
    }

    #[test]
    fn a_panicking_callback_drops_nothing_twice() {
        let marker = Arc::new(());
        let (mut p, mut c) = channel::<Arc<()>>(4);
        for _ in 0..3 {
            p.push(marker.clone()).unwrap();
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut k = 0;
            c.pop_many(3, |_v| {
                k += 1;
                assert!(k < 2, "the second item panics");
            });
        }));
        assert!(r.is_err());
        drop((p, c));
        assert_eq!(Arc::strong_count(&marker), 1, "each value dropped once");
    }

    #[test]
    fn drops_queued_values() {
        let marker = Arc::new(());
        let (mut p, c) = channel::<Arc<()>>(4);
        p.push(marker.clone()).unwrap();
        p.push(marker.clone()).unwrap();
        assert_eq!(Arc::strong_count(&marker), 3);
        drop((p, c));
        assert_eq!(Arc::strong_count(&marker), 1);
    }
}
