//! The `ndx` binary's own commands without a router or root: what it prints when its standard
//! output is a pipe closed early (`ndx ... | head`), against a stand-in control socket where
//! a router is needed; `ndx check` refusing what `ndx run` refuses, in the same words.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixListener;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

const NDX: &str = env!("CARGO_BIN_EXE_ndx");

/// A scratch directory of this test process, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!("ndx-cli-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }

    fn path(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Reads the start of `child`'s standard output (a few hundred bytes, less than one line of
/// `--json`), closes the pipe, and returns what was read and how the child ended (its
/// standard error included).
fn read_a_little_then_close(mut child: Child) -> (String, Output) {
    let mut first = vec![0u8; 256];
    {
        let mut stdout = child.stdout.take().expect("stdout piped");
        let n = stdout.read(&mut first).unwrap();
        first.truncate(n);
        // Dropped here: the read end is closed while ndx still has output to write.
    }
    let first = String::from_utf8_lossy(&first).into_owned();
    (first, child.wait_with_output().expect("ndx finishes"))
}

/// Asserts `ndx` ended quietly after its reader went away: no panic, nothing on stderr,
/// status 0.
fn assert_quiet(what: &str, first: &str, out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!first.is_empty(), "{what}: printed nothing ({err})");
    assert!(!err.contains("panicked"), "{what} panicked: {err}");
    assert!(err.is_empty(), "{what}: {err}");
    assert_eq!(out.status.code(), Some(0), "{what}: {err}");
}

#[test]
fn dissect_into_a_closed_pipe_exits_quietly() {
    let dir = Scratch::new("dissect");
    // 20,000 Interests in hex, one a line: megabytes of TLV trees, far more than a pipe holds.
    let input = dir.path("many.hex");
    // Interest /a/b, Nonce 01020304, InterestLifetime 3 ms.
    let line = "0511 0706080161080162 0a0401020304 0c0103\n".replace(' ', "");
    std::fs::write(&input, line.repeat(20_000)).unwrap();
    for mode in [&[][..], &["--summary"], &["--json"]] {
        let child = Command::new(NDX)
            .arg("dissect")
            .args(mode)
            .arg(&input)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ndx runs");
        let (first, out) = read_a_little_then_close(child);
        assert_quiet(&format!("ndx dissect {mode:?}"), &first, &out);
    }
}

/// A stand-in for a router's control socket: answers every request with `answer(cmd)`.
fn fake_router(sock: PathBuf, answer: fn(&str) -> Value) {
    let listener = UnixListener::bind(sock).unwrap();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { break };
            let mut req = String::new();
            if BufReader::new(&conn).read_line(&mut req).is_err() {
                continue;
            }
            let cmd = serde_json::from_str::<Value>(&req).unwrap_or_default()["cmd"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            let _ = writeln!(conn, "{}", answer(&cmd));
        }
    });
}

/// 3,000 faces and as many routes: every listing is several times what a pipe holds.
fn big_answer(_cmd: &str) -> Value {
    let faces: Vec<Value> = (1..=3_000)
        .map(|i| {
            json!({"id": i, "name": format!("face-{i}"), "remote": format!("udp://10.0.0.1:{i}"),
                   "origin": "command", "resolved": true})
        })
        .collect();
    let routes: Vec<Value> = (1..=3_000)
        .map(|i| {
            json!({"prefix": format!("/p/{i}"), "strategy": "best-route",
                   "nexthops": [{"face": i, "cost": 0}]})
        })
        .collect();
    json!({"ok": true, "counters": {"rx_frames": 1}, "shards": [{"rx_frames": 1}],
           "faces": faces, "routes": routes, "xdp": {}})
}

#[test]
fn control_commands_into_a_closed_pipe_exit_quietly() {
    let dir = Scratch::new("ctl");
    let sock = dir.path("ndx.sock");
    fake_router(sock.clone(), big_answer);
    for args in [
        &["status"][..],
        &["status", "--json"],
        &["face", "list"],
        &["route", "list"],
    ] {
        let child = Command::new(NDX)
            .args(args)
            .arg("-s")
            .arg(&sock)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ndx runs");
        let (first, out) = read_a_little_then_close(child);
        assert_quiet(&format!("ndx {args:?}"), &first, &out);
    }
}

/// `ndx check -c FILE` and `ndx run -c FILE` on `text`.
fn check_and_run(dir: &Scratch, file: &str, text: &str) -> (Output, Output) {
    let path = dir.path(file);
    std::fs::write(&path, text).unwrap();
    let run = |cmd: &str| {
        Command::new(NDX)
            .args([cmd, "-c"])
            .arg(&path)
            .output()
            .expect("ndx runs")
    };
    (run("check"), run("run"))
}

#[test]
fn check_refuses_what_run_refuses_with_the_same_message() {
    let dir = Scratch::new("check");
    let iface = "[[interface]]\nname = \"eth0\"\n";
    let face =
        |name: &str, remote: &str| format!("[[face]]\nname = \"{name}\"\nremote = \"{remote}\"\n");
    let cases = [
        (
            "none.toml",
            "[router]\nshards = 1\n".to_owned(),
            "interface: no [[interface]] in the configuration: ndx needs at least one to attach to",
        ),
        (
            "twice.toml",
            format!(
                "{iface}{}{}",
                face("a", "udp://192.0.2.1"),
                face("b", "udp://192.0.2.1:6363")
            ),
            "face[1].remote: udp://192.0.2.1:6363 is already face \"a\"",
        ),
        (
            "app.toml",
            format!("{iface}[app]\nmode = \"rw\"\n"),
            "app.mode: \"rw\": octal permission bits",
        ),
    ];
    for (file, text, why) in &cases {
        let (check, run) = check_and_run(&dir, file, text);
        let err = String::from_utf8_lossy(&check.stderr);
        assert_eq!(check.status.code(), Some(2), "ndx check {file}: {err}");
        assert!(
            check.stdout.is_empty(),
            "ndx check {file} printed: {check:?}"
        );
        assert!(err.contains(why), "ndx check {file}: {err}");
        // `ndx run` refuses it while loading, before it needs root, in the same words.
        assert_eq!(run.status.code(), Some(2), "ndx run {file}: {run:?}");
        assert_eq!(String::from_utf8_lossy(&run.stderr), err, "ndx run {file}");
    }
    // The documented example is fine.
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/ndx.toml");
    let out = Command::new(NDX)
        .args(["check", "-c", example])
        .output()
        .expect("ndx runs");
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains(": ok: "));
}
