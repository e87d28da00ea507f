//! The client end of the control protocol (what `ndx lb status|add|remove|weight` use).

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::proto::{Request, Response};

/// Why a control request failed on the client side.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing listens at the socket path.
    #[error("no front end at {} (is `ndx lb run` running?)", path.display())]
    NoFrontEnd {
        /// The socket path.
        path: PathBuf,
    },
    /// The socket exists but could not be reached (e.g. permissions).
    #[error("cannot reach the front end at {}: {source}", path.display())]
    Connect {
        /// The socket path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No answer came in time.
    #[error("no answer from the front end at {} within {} ms", path.display(), timeout.as_millis())]
    Timeout {
        /// The socket path.
        path: PathBuf,
        /// How long we waited.
        timeout: Duration,
    },
    /// The exchange failed midway.
    #[error("control socket: {0}")]
    Io(#[from] std::io::Error),
    /// The answer was not a response.
    #[error("control socket: bad answer: {0}")]
    BadAnswer(String),
    /// The front end refused the request (`{"ok":false,"error":...}`).
    #[error("{0}")]
    Refused(String),
}

/// Sends one request and waits up to `timeout` for its answer. A refusal is returned as
/// [`ClientError::Refused`], so the `Response` returned is always [`Response::Ok`].
pub fn request(socket: &Path, req: &Request, timeout: Duration) -> Result<Response, ClientError> {
    let mut s = UnixStream::connect(socket).map_err(|source| match source.kind() {
        ErrorKind::NotFound | ErrorKind::ConnectionRefused => ClientError::NoFrontEnd {
            path: socket.to_path_buf(),
        },
        _ => ClientError::Connect {
            path: socket.to_path_buf(),
            source,
        },
    })?;
    let timeout = timeout.max(Duration::from_millis(1));
    s.set_read_timeout(Some(timeout))?;
    s.set_write_timeout(Some(timeout))?;
    let mut line = serde_json::to_string(req).map_err(std::io::Error::other)?;
    line.push('\n');
    let timed_out = |e: std::io::Error| match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => ClientError::Timeout {
            path: socket.to_path_buf(),
            timeout,
        },
        _ => ClientError::Io(e),
    };
    s.write_all(line.as_bytes()).map_err(timed_out)?;
    let mut answer = String::new();
    let n = BufReader::new(&s)
        .read_line(&mut answer)
        .map_err(timed_out)?;
    if n == 0 {
        return Err(ClientError::BadAnswer(
            "the front end closed the connection without answering".into(),
        ));
    }
    match serde_json::from_str::<Response>(&answer) {
        Ok(Response::Error(e)) => Err(ClientError::Refused(e)),
        Ok(ok) => Ok(ok),
        Err(e) => Err(ClientError::BadAnswer(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_socket_says_so() {
        let path = std::env::temp_dir().join(format!("ndx-lb-none-{}.sock", std::process::id()));
        let e = request(&path, &Request::Status, Duration::from_secs(1)).unwrap_err();
        assert!(matches!(e, ClientError::NoFrontEnd { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "no front end at {} (is `ndx lb run` running?)",
                path.display()
            )
        );
    }

    #[test]
    fn a_silent_front_end_times_out() {
        let dir = std::env::temp_dir().join(format!("ndx-lb-silent-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lb.sock");
        let _ = std::fs::remove_file(&path);
        // Listening, never answering: the connection is queued, the answer never comes.
        let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let e = request(&path, &Request::Status, Duration::from_millis(50)).unwrap_err();
        assert!(matches!(e, ClientError::Timeout { .. }), "{e:?}");
        assert!(e.to_string().contains("within 50 ms"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
