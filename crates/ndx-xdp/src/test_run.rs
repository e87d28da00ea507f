//! BPF_PROG_TEST_RUN: runs the loaded program on one frame, in the kernel, without a device.

use std::os::fd::AsRawFd;

use crate::error::XdpError;
use crate::loader::NdxXdp;
use crate::meta::{META_LEN, XdpMeta};

/// XDP verdicts.
pub mod verdict {
    /// XDP_ABORTED.
    pub const ABORTED: u32 = 0;
    /// XDP_DROP.
    pub const DROP: u32 = 1;
    /// XDP_PASS.
    pub const PASS: u32 = 2;
    /// XDP_TX.
    pub const TX: u32 = 3;
    /// XDP_REDIRECT.
    pub const REDIRECT: u32 = 4;
}

/// The outcome of one [`NdxXdp::test_run`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    /// The program's return value (see [`verdict`]).
    pub verdict: u32,
    /// Metadata length (0 when the program wrote none).
    pub meta_len: usize,
    /// The metadata followed by the frame, as the program left them.
    pub out: Vec<u8>,
}

impl TestRun {
    /// The metadata, when the program wrote valid metadata.
    pub fn meta(&self) -> Option<XdpMeta> {
        (self.meta_len == META_LEN)
            .then(|| XdpMeta::parse(&self.out))
            .flatten()
    }

    /// The frame after the metadata.
    pub fn frame(&self) -> &[u8] {
        self.out.get(self.meta_len..).unwrap_or(&[])
    }
}

/// `struct xdp_md`.
#[repr(C)]
#[derive(Default)]
struct XdpMd {
    data: u32,
    data_end: u32,
    data_meta: u32,
    ingress_ifindex: u32,
    rx_queue_index: u32,
    egress_ifindex: u32,
}

/// The `test` member of `union bpf_attr`, padded to a size the kernel accepts.
#[repr(C)]
#[derive(Default)]
struct TestAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    pad: [u32; 3],
}

const BPF_PROG_TEST_RUN: libc::c_long = 10;

/// `BPF_F_TEST_XDP_LIVE_FRAMES` (kernel 5.18+): the verdicts take effect. XDP_PASS frames
/// enter the stack of the ingress interface, XDP_TX and XDP_REDIRECT frames are really
/// transmitted; the kernel feeds the program from a page pool whose pages it recycles
/// **without copying the frame again**, so a program that rewrites the frame sees its own
/// rewrite on a later repeat unless something restores it.
pub const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 2;

impl NdxXdp {
    /// Runs the loaded program once on `frame` as if received on `ifindex` (0: none) queue
    /// `queue` (must be 0 without an ifindex). Frames larger than a page become
    /// multi-buffer frames, which only the `frags` variant accepts.
    ///
    /// Without a socket in the XSKMAP the redirect fails and the program returns XDP_PASS,
    /// with its metadata in front of the frame: that is what tests observe.
    pub fn test_run(&self, frame: &[u8], ifindex: u32, queue: u32) -> Result<TestRun, XdpError> {
        self.run(frame, ifindex, queue, 1).map(|(r, _)| r)
    }

    /// Runs the program `repeat` times on `frame` in the kernel and returns the average
    /// time per run in nanoseconds, as the kernel measures it (for benchmarks; the frame
    /// is not reset between runs, so the metadata is written on the first runs only).
    pub fn time_run(&self, frame: &[u8], repeat: u32) -> Result<u32, XdpError> {
        self.run(frame, 0, 0, repeat.max(1)).map(|(_, ns)| ns)
    }

    fn run(
        &self,
        frame: &[u8],
        ifindex: u32,
        queue: u32,
        repeat: u32,
    ) -> Result<(TestRun, u32), XdpError> {
        prog_test_run(self.program_fd()?, frame, ifindex, queue, repeat)
    }
}

/// BPF_PROG_TEST_RUN of the XDP program `fd` on `frame`, `repeat` times: the last run's
/// outcome and the average time per run in nanoseconds.
pub(crate) fn prog_test_run(
    fd: std::os::fd::BorrowedFd<'_>,
    frame: &[u8],
    ifindex: u32,
    queue: u32,
    repeat: u32,
) -> Result<(TestRun, u32), XdpError> {
    test_run_raw(fd, frame, ifindex, queue, repeat, 0, 0)
}

/// BPF_PROG_TEST_RUN of any loaded XDP program `fd` on `frame` as if received on `ifindex`
/// (0: none), `repeat` times, with the test-run `flags` (0 or [`BPF_F_TEST_XDP_LIVE_FRAMES`])
/// and, in live-frames mode, `batch_size` frames per batch (0: the kernel's default, 64).
/// Returns the last run's verdict and the kernel's average time per repeat in nanoseconds;
/// in live-frames mode the kernel returns neither the frame nor a meaningful verdict, so
/// [`TestRun::out`] is empty. For benchmarks (see `examples/lb_bench.rs`).
pub fn xdp_test_run_flags(
    fd: std::os::fd::BorrowedFd<'_>,
    frame: &[u8],
    ifindex: u32,
    repeat: u32,
    flags: u32,
    batch_size: u32,
) -> Result<(TestRun, u32), XdpError> {
    test_run_raw(fd, frame, ifindex, 0, repeat, flags, batch_size)
}

fn test_run_raw(
    fd: std::os::fd::BorrowedFd<'_>,
    frame: &[u8],
    ifindex: u32,
    queue: u32,
    repeat: u32,
    flags: u32,
    batch_size: u32,
) -> Result<(TestRun, u32), XdpError> {
    let live = flags & BPF_F_TEST_XDP_LIVE_FRAMES != 0;
    let mut out = if live {
        Vec::new()
    } else {
        vec![0u8; frame.len() + 256]
    };
    let ctx_in = XdpMd {
        data_end: frame.len() as u32,
        ingress_ifindex: ifindex,
        rx_queue_index: queue,
        ..XdpMd::default()
    };
    let mut ctx_out = XdpMd::default();
    let mut attr = TestAttr {
        prog_fd: fd.as_raw_fd() as u32,
        data_size_in: frame.len() as u32,
        data_in: frame.as_ptr() as u64,
        repeat,
        ctx_size_in: size_of::<XdpMd>() as u32,
        ctx_in: (&raw const ctx_in) as u64,
        flags,
        batch_size,
        ..TestAttr::default()
    };
    // Live frames: the kernel refuses an output buffer or an output context.
    if !live {
        attr.data_size_out = out.len() as u32;
        attr.data_out = out.as_mut_ptr() as u64;
        attr.ctx_size_out = size_of::<XdpMd>() as u32;
        attr.ctx_out = (&raw mut ctx_out) as u64;
    }
    #[expect(unsafe_code, reason = "the bpf syscall")]
    // SAFETY: `attr` is a properly laid out bpf_attr.test whose pointers reference live
    // buffers of the sizes given (`frame`, `ctx_in`, and when not live `out` and `ctx_out`),
    // all of which outlive the synchronous syscall; the kernel writes at most
    // `data_size_out` bytes to `out` and `ctx_size_out` bytes to `ctx_out`.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_PROG_TEST_RUN,
            &raw mut attr,
            size_of::<TestAttr>() as libc::c_uint,
        )
    };
    if rc < 0 {
        return Err(XdpError::TestRun(std::io::Error::last_os_error()));
    }
    out.truncate(attr.data_size_out as usize);
    let run = TestRun {
        verdict: attr.retval,
        meta_len: if live { 0 } else { ctx_out.data as usize },
        out,
    };
    Ok((run, attr.duration))
}
