//! A local forwarder's Unix stream socket: NDN TLV packets back to back (bare Interest or
//! Data, or LpPacket), framed by their TLV-TYPE and TLV-LENGTH.
//!
//! Framing: a frame starts with the TLV-TYPE of an Interest (5), a Data (6) or an LpPacket
//! (100), then a TLV-LENGTH; both are minimal VAR-NUMBERs. The whole TLV may be at most
//! [`MAX_FRAME`] bytes. Anything else means the two ends no longer agree on where packets
//! start, which cannot be recovered on a stream: an error ([`AppError::Framing`]).

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ndx_codec::{read_varnum, types};

use crate::error::AppError;

/// Largest frame accepted or sent on a stream: 64 KiB (NDN packets are at most 8800 bytes by
/// convention; ndnd and NFD send nothing larger on a Unix face).
pub(crate) const MAX_FRAME: usize = 1 << 16;

/// How long a write may block (a forwarder that stops reading).
const WRITE_TIMEOUT: Duration = Duration::from_secs(5);

/// A connected Unix stream with its receive buffer.
#[derive(Debug)]
pub(crate) struct StreamLink {
    stream: UnixStream,
    path: PathBuf,
    buf: Vec<u8>,
    /// Bytes `start..end` of `buf` are received and not yet handed out.
    start: usize,
    end: usize,
    timeout: Option<Duration>,
}

impl StreamLink {
    /// Connects to the forwarder's socket at `path`.
    pub(crate) fn connect(path: &Path) -> Result<Self, AppError> {
        let stream = UnixStream::connect(path).map_err(|source| AppError::Connect {
            path: path.to_path_buf(),
            source,
        })?;
        stream
            .set_write_timeout(Some(WRITE_TIMEOUT))
            .map_err(|source| AppError::Stream {
                what: "setting the send timeout",
                source,
            })?;
        Ok(Self {
            stream,
            path: path.to_path_buf(),
            buf: vec![0; 2 * MAX_FRAME],
            start: 0,
            end: 0,
            timeout: None,
        })
    }

    /// The socket's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one frame.
    pub(crate) fn send(&mut self, frame: &[u8]) -> Result<(), AppError> {
        if frame.len() > MAX_FRAME {
            return Err(AppError::Framing(format!(
                "a {}-byte packet is larger than the {MAX_FRAME}-byte limit of a stream",
                frame.len()
            )));
        }
        self.stream
            .write_all(frame)
            .map_err(|source| match source.kind() {
                ErrorKind::BrokenPipe | ErrorKind::ConnectionReset => AppError::Closed {
                    path: self.path.clone(),
                },
                _ => AppError::Stream {
                    what: "sending",
                    source,
                },
            })
    }

    /// The next complete frame, waiting up to `timeout` for it; `None` on timeout.
    pub(crate) fn recv(&mut self, timeout: Duration) -> Result<Option<&[u8]>, AppError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(len) = self.complete_frame()? {
                let at = self.start;
                self.start += len;
                return Ok(Some(&self.buf[at..at + len]));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            if !self.read_some(left)? {
                return Ok(None);
            }
        }
    }

    /// The length of the frame at `start` when all of it is buffered.
    fn complete_frame(&self) -> Result<Option<usize>, AppError> {
        let avail = &self.buf[self.start..self.end];
        let Some((typ, tn)) = varnum(avail)? else {
            return Ok(None);
        };
        if !matches!(typ, types::INTEREST | types::DATA | types::LP_PACKET) {
            return Err(AppError::Framing(format!(
                "TLV-TYPE {typ} where a packet should start (Interest, Data or LpPacket)"
            )));
        }
        let Some((len, ln)) = varnum(&avail[tn..])? else {
            return Ok(None);
        };
        let total = (tn + ln) as u64 + len;
        if total > MAX_FRAME as u64 {
            return Err(AppError::Framing(format!(
                "a {total}-byte packet is larger than the {MAX_FRAME}-byte limit of a stream"
            )));
        }
        let total = total as usize;
        Ok((avail.len() >= total).then_some(total))
    }

    /// Reads what arrives within `wait`; false on timeout. The buffer always has room for a
    /// whole frame after compaction (it is twice [`MAX_FRAME`]).
    fn read_some(&mut self, wait: Duration) -> Result<bool, AppError> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        } else if self.buf.len() - self.end < MAX_FRAME {
            self.buf.copy_within(self.start..self.end, 0);
            (self.start, self.end) = (0, self.end - self.start);
        }
        let wait = wait.max(Duration::from_micros(100));
        if self.timeout != Some(wait) {
            self.stream
                .set_read_timeout(Some(wait))
                .map_err(|source| AppError::Stream {
                    what: "setting the receive timeout",
                    source,
                })?;
            self.timeout = Some(wait);
        }
        match self.stream.read(&mut self.buf[self.end..]) {
            Ok(0) => Err(AppError::Closed {
                path: self.path.clone(),
            }),
            Ok(n) => {
                self.end += n;
                Ok(true)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                Ok(false)
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => Err(AppError::Closed {
                path: self.path.clone(),
            }),
            Err(source) => Err(AppError::Stream {
                what: "receiving",
                source,
            }),
        }
    }
}

/// A VAR-NUMBER at the start of `b`: `None` when more bytes are needed, an error when it is
/// not minimal.
fn varnum(b: &[u8]) -> Result<Option<(u64, usize)>, AppError> {
    match read_varnum(b) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind == ndx_codec::ErrorKind::TruncatedVarNumber => Ok(None),
        Err(e) => Err(AppError::Framing(format!("bad TLV header: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixListener;

    use super::*;

    fn pair(tag: &str) -> (StreamLink, UnixStream, PathBuf) {
        let dir = std::env::temp_dir().join(format!("ndx-stream-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s");
        let l = UnixListener::bind(&path).unwrap();
        let link = StreamLink::connect(&path).unwrap();
        let (peer, _) = l.accept().unwrap();
        (link, peer, dir)
    }

    const WAIT: Duration = Duration::from_millis(200);

    #[test]
    fn frames_back_to_back_and_split() {
        let (mut link, mut peer, dir) = pair("frames");
        let interest = [5u8, 3, 7, 1, 8];
        let mut data = vec![6u8, 0xfd, 0x01, 0x00];
        data.extend(std::iter::repeat_n(0xab, 256));
        let lp = [100u8, 2, 80, 0];
        // Two frames in one write, then one frame in three writes.
        peer.write_all(&[&interest[..], &lp].concat()).unwrap();
        assert_eq!(link.recv(WAIT).unwrap().unwrap(), &interest);
        assert_eq!(link.recv(WAIT).unwrap().unwrap(), &lp);
        assert!(link.recv(Duration::from_millis(20)).unwrap().is_none());
        peer.write_all(&data[..1]).unwrap();
        assert!(link.recv(Duration::from_millis(20)).unwrap().is_none());
        peer.write_all(&data[1..3]).unwrap();
        peer.write_all(&data[3..]).unwrap();
        assert_eq!(link.recv(WAIT).unwrap().unwrap(), &data[..]);
        // Many frames: the buffer compacts.
        let big = [&[6u8, 0xfd, 0xc0, 0x00][..], &[0; 0xc000]].concat();
        for _ in 0..5 {
            peer.write_all(&big).unwrap();
            assert_eq!(link.recv(WAIT).unwrap().unwrap().len(), big.len());
        }
        link.send(&interest).unwrap();
        let mut got = [0; 5];
        peer.read_exact(&mut got).unwrap();
        assert_eq!(got, interest);
        drop(peer);
        assert!(matches!(link.recv(WAIT), Err(AppError::Closed { .. })));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn broken_frames_are_errors() {
        for (tag, bytes) in [
            ("type", &[8u8, 1, 0][..]),
            ("nonmin", &[6, 0xfd, 0x00, 0x05, 0, 0, 0, 0, 0][..]),
            ("huge", &[6, 0xfe, 0x00, 0x10, 0x00, 0x00][..]),
        ] {
            let (mut link, mut peer, dir) = pair(tag);
            peer.write_all(bytes).unwrap();
            assert!(
                matches!(link.recv(WAIT), Err(AppError::Framing(_))),
                "{tag}"
            );
            let _ = std::fs::remove_dir_all(dir);
        }
        let (mut link, _peer, dir) = pair("toolong");
        assert!(matches!(
            link.send(&vec![6; MAX_FRAME + 1]),
            Err(AppError::Framing(_))
        ));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn connecting_nowhere_names_the_path() {
        let e = StreamLink::connect(Path::new("/nonexistent/ndx.sock")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/ndx.sock"), "{e}");
    }
}
