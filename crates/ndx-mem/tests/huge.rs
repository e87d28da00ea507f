//! `HugePages` as the global allocator of this test binary: large tables are 2 MiB aligned,
//! zeroed, survive growth and shrinking, and get huge pages when the kernel's THP mode allows
//! (`madvise` or `always`).

use ndx_mem::{HUGE_PAGE, HugePages, MEDIUM_THRESHOLD, huge_bytes, mapped_bytes, thp_mode};

#[global_allocator]
static ALLOC: HugePages = HugePages;

/// The tests read the process-wide mapping counter: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn large_tables_get_aligned_zeroed_huge_mappings() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = mapped_bytes();
    let n = 64 << 20;
    let mut v = vec![0u8; n];
    assert_eq!(v.as_ptr() as usize % HUGE_PAGE, 0, "2 MiB aligned");
    assert!(mapped_bytes() >= before + n);
    assert!(v.iter().step_by(4096).all(|&b| b == 0), "zeroed");
    let huge_before = huge_bytes();
    // Touch every page: with THP each 2 MiB region faults in as one huge page.
    for i in (0..n).step_by(4096) {
        v[i] = (i >> 12) as u8;
    }
    match (thp_mode().as_deref(), huge_before, huge_bytes()) {
        (Some("madvise" | "always"), Some(a), Some(b)) => {
            // The kernel may fall back to base pages for a region it cannot find a free huge
            // page for; most of 64 MiB on an idle machine is huge.
            assert!(
                b >= a + (n as u64) / 2,
                "AnonHugePages {a} -> {b} after touching 64 MiB"
            );
        }
        (mode, a, b) => eprintln!("skipping: THP mode {mode:?}, AnonHugePages {a:?} -> {b:?}"),
    }
    std::hint::black_box(&v);
    drop(v);
    assert_eq!(mapped_bytes(), before, "unmapped on drop");
}

#[test]
fn growth_and_shrinking_keep_the_contents() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut v: Vec<u64> = (0..1000).collect();
    // Small to large (System to a mapping), large to larger, large to small.
    v.reserve(1 << 20);
    assert_eq!(v.as_ptr() as usize % HUGE_PAGE, 0);
    v.extend(1000..(3 << 20));
    assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
    v.truncate(100);
    v.shrink_to_fit();
    assert_eq!(v, (0..100).collect::<Vec<u64>>());
}

#[test]
fn small_allocations_are_the_system_allocator_s() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = mapped_bytes();
    let v: Vec<Box<[u8; 1024]>> = (0..1000).map(|_| Box::new([7u8; 1024])).collect();
    assert_eq!(mapped_bytes(), before);
    assert!(v.iter().all(|b| b[1023] == 7));
}

#[test]
fn the_advice_can_be_turned_off() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    ndx_mem::set_huge_pages(false);
    let n = 32 << 20;
    let mut v = vec![0u8; n];
    let a = huge_bytes();
    for i in (0..n).step_by(4096) {
        v[i] = 1;
    }
    let b = huge_bytes();
    ndx_mem::set_huge_pages(true);
    assert_eq!(v.as_ptr() as usize % HUGE_PAGE, 0, "still its own mapping");
    if let (Some(a), Some(b)) = (a, b) {
        // MADV_NOHUGEPAGE holds also in THP mode `always`.
        assert!(
            b < a + (n as u64) / 2,
            "AnonHugePages {a} -> {b} with the advice off"
        );
    }
    std::hint::black_box(&v);
}

#[test]
fn medium_tables_are_blocks_of_shared_huge_regions() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = mapped_bytes();
    // 100 KB: a 128 KiB block, aligned to its size. A region holds 16 of them: sixteen
    // tables map at most two regions (one if a region of the class was already started).
    let tables: Vec<Vec<u8>> = (0..16u8).map(|i| vec![i; 100_000]).collect();
    for (i, t) in tables.iter().enumerate() {
        assert_eq!(t.as_ptr() as usize % (128 << 10), 0, "table {i} aligned");
        assert!(t.iter().all(|&b| b == i as u8), "table {i} intact");
    }
    let mapped = mapped_bytes() - before;
    assert!(
        mapped <= 2 * HUGE_PAGE,
        "16 blocks of 128 KiB mapped {mapped} bytes"
    );
    let mut starts: Vec<usize> = tables.iter().map(|t| t.as_ptr() as usize).collect();
    starts.sort_unstable();
    starts.dedup();
    assert_eq!(starts.len(), 16, "distinct blocks");
    // A freed block is reused (the last freed first) and comes back zeroed when asked.
    let last = tables.last().map(|t| t.as_ptr() as usize);
    drop(tables);
    let again = vec![0u8; 100_000];
    assert_eq!(
        Some(again.as_ptr() as usize),
        last,
        "the freed block is reused"
    );
    assert!(again.iter().all(|&b| b == 0), "zeroed after reuse");
    assert_eq!(mapped_bytes() - before, mapped, "reuse maps nothing");
}

#[test]
fn growth_through_every_class_keeps_the_contents() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // From the system allocator through 4 KiB … 1 MiB blocks, a 2 MiB region of its own,
    // then a larger mapping; and back down.
    let mut v: Vec<u32> = Vec::new();
    let mut seen = Vec::new();
    for i in 0..(1u32 << 20) {
        v.push(i.wrapping_mul(2_654_435_761));
        let cap = v.capacity() * 4;
        if seen.last() != Some(&cap) {
            seen.push(cap);
            let bytes = cap;
            if (MEDIUM_THRESHOLD..HUGE_PAGE).contains(&bytes) {
                assert_eq!(
                    v.as_ptr() as usize % bytes.next_power_of_two(),
                    0,
                    "{bytes}-byte buffer aligned to its block"
                );
            }
        }
    }
    assert!(seen.contains(&(1 << 20)), "went through 1 MiB: {seen:?}");
    assert!(
        v.iter()
            .enumerate()
            .all(|(i, &x)| x == (i as u32).wrapping_mul(2_654_435_761))
    );
    v.truncate(40_000);
    v.shrink_to_fit();
    assert!(
        v.iter()
            .enumerate()
            .all(|(i, &x)| x == (i as u32).wrapping_mul(2_654_435_761))
    );
    v.truncate(100);
    v.shrink_to_fit();
    assert_eq!(v.len(), 100);
    assert!(
        v.iter()
            .enumerate()
            .all(|(i, &x)| x == (i as u32).wrapping_mul(2_654_435_761))
    );
}

#[test]
fn medium_blocks_are_safe_across_threads() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            std::thread::spawn(move || {
                let mut live: Vec<Vec<u64>> = Vec::new();
                for round in 0..200u64 {
                    // 4 KiB to 1 MiB tables, each filled with its own pattern.
                    let words = 512 << (round % 9);
                    let tag = t << 32 | round;
                    live.push(vec![tag; words]);
                    if live.len() > 6 {
                        let v = live.remove((round % 7) as usize);
                        let want = v[0];
                        assert!(
                            v.iter().all(|&x| x == want),
                            "thread {t}: a block was shared"
                        );
                    }
                }
                live.iter().all(|v| v.iter().all(|&x| x == v[0]))
            })
        })
        .collect();
    for h in threads {
        assert!(h.join().expect("thread"), "contents intact");
    }
}

#[test]
fn medium_tables_get_huge_pages() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 32 tables of 1 MiB: 16 regions of 2 MiB, each all ours.
    let before = huge_bytes();
    let mut tables: Vec<Vec<u8>> = (0..32).map(|_| Vec::with_capacity(1 << 20)).collect();
    for t in &mut tables {
        t.resize(1 << 20, 1);
    }
    match (thp_mode().as_deref(), before, huge_bytes()) {
        (Some("madvise" | "always"), Some(a), Some(b)) => {
            assert!(
                b >= a + (16 << 20),
                "AnonHugePages {a} -> {b} after filling 32 MiB of medium tables"
            );
        }
        (mode, a, b) => eprintln!("skipping: THP mode {mode:?}, AnonHugePages {a:?} -> {b:?}"),
    }
    assert!(tables.iter().all(|t| t.iter().all(|&b| b == 1)));
}
