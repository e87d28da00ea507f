//! `HugePages` as the global allocator of this test binary: large tables are 2 MiB aligned,
//! zeroed, survive growth and shrinking, and get huge pages when the kernel's THP mode allows
//! (`madvise` or `always`).

use ndx_mem::{HUGE_PAGE, HugePages, huge_bytes, mapped_bytes, thp_mode};

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
