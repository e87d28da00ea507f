//! The `ndx` binary's own commands without a router or root: what it prints when its standard
//! output is a pipe closed early (`ndx ... | head`), against a stand-in control socket where
//! a router is needed; `ndx check` refusing what `ndx run` refuses, in the same words; the
//! `--json` forms of the read commands; the exit codes (0 ok, 1 bad input, 2 usage or I/O
//! error); the log filter and journald format; completions and man pages.

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
        &["face", "list", "--json"],
        &["route", "list"],
        &["route", "list", "--json"],
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
        (
            "metrics.toml",
            format!("{iface}[metrics]\nlisten = \"localhost:9363\"\n"),
            "metrics.listen: \"localhost:9363\": an IP address and port",
        ),
    ];
    for (file, text, why) in &cases {
        let (check, run) = check_and_run(&dir, file, text);
        let err = String::from_utf8_lossy(&check.stderr);
        // Bad input found: exit code 1 (2 is for usage and I/O errors).
        assert_eq!(check.status.code(), Some(1), "ndx check {file}: {err}");
        assert!(
            check.stdout.is_empty(),
            "ndx check {file} printed: {check:?}"
        );
        assert!(err.contains(why), "ndx check {file}: {err}");
        // `ndx run` refuses it while loading, before it needs root, in the same words.
        assert_eq!(run.status.code(), Some(1), "ndx run {file}: {run:?}");
        assert_eq!(String::from_utf8_lossy(&run.stderr), err, "ndx run {file}");
    }
    // The documented examples are fine (the router's, and the cluster's internal router).
    for example in [
        concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/ndx.toml"),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../configs/cluster/ir-ndx.toml"
        ),
    ] {
        let out = Command::new(NDX)
            .args(["check", "-c", example])
            .output()
            .expect("ndx runs");
        assert!(out.status.success(), "{example}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains(": ok: "));
    }
}

/// `ndx lb check` and `ndx lb run` refuse a bad front-end configuration with the key and the
/// reason (before needing root); the control commands say when no front end answers; a
/// refused change is exit code 1 with the front end's reason.
#[test]
fn lb_commands_explain_what_is_wrong() {
    let dir = Scratch::new("lb");
    let cases = [
        ("noif.toml", "[lb]\ninterfaces = []\n", "interfaces"),
        (
            "v6.toml",
            "[lb]\ninterfaces = [\"eth0\"]\n[[router]]\nname = \"a\"\naddress = \"fd00::1\"\nport = 6371\n",
            "IPv6",
        ),
        (
            "port.toml",
            "[lb]\ninterfaces = [\"eth0\"]\n[[router]]\nname = \"a\"\naddress = \"10.0.0.1\"\nport = 6363\n",
            "6363",
        ),
        (
            "table.toml",
            "[lb]\ninterfaces = [\"eth0\"]\ntable = 1000\n",
            "table",
        ),
        (
            "typo.toml",
            "[lb]\ninterfaces = [\"eth0\"]\nhahs = \"name\"\n",
            "hahs",
        ),
        (
            "drain.toml",
            "[lb]\ninterfaces = [\"eth0\"]\ndrain_ms = 0\n",
            "drain_ms",
        ),
        (
            "vip.toml",
            "[lb]\ninterfaces = [\"eth0\"]\naddresses = [\"10.0.0.1\"]\n[[router]]\nname = \"a\"\naddress = \"10.0.0.1\"\nport = 6371\n",
            "the front end's own",
        ),
    ];
    // An interface that does not exist: refused by `run` before anything is loaded.
    let p = dir.path("noiface.toml");
    std::fs::write(
        &p,
        format!(
            "[lb]\ninterfaces = [\"ndxnone0\"]\ncontrol_socket = \"{}\"\n",
            dir.path("x.sock").display()
        ),
    )
    .unwrap();
    let out = Command::new(NDX)
        .args(["lb", "run", "-c"])
        .arg(&p)
        .output()
        .expect("ndx runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("interface ndxnone0: no such interface"),
        "{err}"
    );
    for (file, text, why) in cases {
        let p = dir.path(file);
        std::fs::write(&p, text).unwrap();
        for cmd in ["check", "run"] {
            let out = Command::new(NDX)
                .args(["lb", cmd, "-c"])
                .arg(&p)
                .output()
                .expect("ndx runs");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "ndx lb {cmd} {file}: {err}");
            assert!(err.contains(why), "ndx lb {cmd} {file}: {err}");
        }
    }
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/lb.toml");
    let out = Command::new(NDX)
        .args(["lb", "check", "-c", example])
        .output()
        .expect("ndx runs");
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("3 router(s)"),
        "{out:?}"
    );

    let missing = dir.path("none.sock");
    let out = Command::new(NDX)
        .args(["lb", "status", "-s"])
        .arg(&missing)
        .output()
        .expect("ndx runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no front end"), "{err}");

    // A front end that refuses: the reason, exit code 1.
    let sock = dir.path("lb.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let server = std::thread::spawn(move || {
        use std::io::{BufRead, BufReader, Write};
        let (s, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(&s).read_line(&mut line).unwrap();
        let req: Value = serde_json::from_str(&line).unwrap();
        (&s).write_all(b"{\"ok\":false,\"error\":\"port 6372 is used by ir2\"}\n")
            .unwrap();
        req
    });
    let out = Command::new(NDX)
        .args(["lb", "add", "ir9", "10.3.9.2:6372", "--weight", "3", "-s"])
        .arg(&sock)
        .output()
        .expect("ndx runs");
    let req = server.join().unwrap();
    assert_eq!(
        req,
        json!({"op": "add", "router": {"name": "ir9", "address": "10.3.9.2", "port": 6372, "weight": 3}})
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("port 6372 is used by ir2"), "{err}");
}

/// Runs `ndx args...` to completion.
fn ndx(args: &[&str]) -> Output {
    Command::new(NDX).args(args).output().expect("ndx runs")
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {out:?}"))
}

#[test]
fn check_json_prints_the_parsed_configuration_or_why_not() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/ndx.toml");
    let out = ndx(&["check", "--json", "-c", example]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v = stdout_json(&out);
    assert_eq!(v["ok"], json!(true));
    assert_eq!(v["file"], json!(example));
    assert_eq!(v["shards"], json!(1));
    assert_eq!(v["interfaces"][0]["name"], json!("eth0"));
    assert_eq!(v["interfaces"][0]["xdp_mode"], json!("auto"));
    assert_eq!(v["faces"][0]["name"], json!("upstream"));
    assert_eq!(v["faces"][0]["kind"], json!("udp"));
    assert_eq!(v["faces"][0]["remote"], json!("udp://192.0.2.1:6363"));
    assert_eq!(v["routes"][0]["prefix"], json!("/example"));
    assert_eq!(v["routes"][0]["face"], json!("upstream"));
    assert_eq!(v["dispatch"]["mode"], json!("content"));
    for key in [
        "control_socket",
        "dispatch_table",
        "frames",
        "keep_frames",
        "huge_pages",
        "udp_ports",
        "strategies",
        "l2",
    ] {
        assert!(v.get(key).is_some(), "no {key}: {v}");
    }

    let dir = Scratch::new("checkjson");
    let bad = dir.path("bad.toml");
    std::fs::write(&bad, "[router]\nshards = 1\n").unwrap();
    let out = ndx(&["check", "--json", "-c", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = stdout_json(&out);
    assert_eq!(v["ok"], json!(false));
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("no [[interface]]")),
        "{v}"
    );
    // A file that cannot be read is an I/O error, not bad input: 2, and no JSON.
    let missing = dir.path("missing.toml");
    let out = ndx(&["check", "--json", "-c", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");

    let lb = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/lb.toml");
    let out = ndx(&["lb", "check", "--json", "-c", lb]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v = stdout_json(&out);
    assert_eq!(v["ok"], json!(true));
    assert_eq!(v["interfaces"], json!(["eth0", "eth1"]));
    assert_eq!(v["hash"], json!("name"));
    assert_eq!(
        v["routers"][0],
        json!({"name": "ir1", "address": "10.3.1.2", "port": 6371, "weight": 1})
    );
    assert_eq!(v["routers"].as_array().map(Vec::len), Some(3));
    let bad = dir.path("lbbad.toml");
    std::fs::write(&bad, "[lb]\ninterfaces = []\n").unwrap();
    let out = ndx(&["lb", "check", "--json", "-c", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(stdout_json(&out)["ok"], json!(false));
}

/// A router that refuses every change and lists two faces.
fn picky_answer(cmd: &str) -> Value {
    match cmd {
        "faces" => json!({"ok": true, "faces": [
            {"id": 1, "name": "a", "remote": "udp://10.0.0.1:6363", "origin": "config"},
            {"id": 2, "name": "b", "remote": "udp://10.0.0.2:6363", "origin": "command"}]}),
        _ => json!({"ok": false, "error": "no face \"nope\""}),
    }
}

#[test]
fn face_list_json_and_the_exit_codes_of_control_commands() {
    let dir = Scratch::new("codes");
    let sock = dir.path("ndx.sock");
    fake_router(sock.clone(), picky_answer);
    let s = sock.to_str().unwrap();

    let out = ndx(&["face", "list", "--json", "-s", s]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v = stdout_json(&out);
    assert_eq!(v["faces"][1]["name"], json!("b"));
    assert_eq!(v["faces"][0]["remote"], json!("udp://10.0.0.1:6363"));

    // The router refused: bad input, 1, with its reason.
    let out = ndx(&["route", "add", "/x", "nope", "-s", s]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no face \"nope\""));

    // No router at the socket: 2, and the hint.
    let missing = dir.path("none.sock");
    let out = ndx(&["status", "-s", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("is `ndx run` running"));

    // Usage errors: 2.
    assert_eq!(ndx(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(ndx(&["check"]).status.code(), Some(2));

    // The codes are in --help.
    let help = ndx(&["--help"]);
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(
        text.contains("Exit status:") && text.contains("1  bad input found"),
        "{text}"
    );
}

#[test]
fn log_filters_are_checked_and_journald_gets_priorities() {
    let dir = Scratch::new("log");
    // A bad --log-level or RUST_LOG is a usage error naming the culprit.
    let out = ndx(&["--log-level", "deubg", "check", "-c", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--log-level \"deubg\""));
    let out = Command::new(NDX)
        .args(["check", "-c", "/nonexistent"])
        .env("RUST_LOG", "ndx=loud")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("RUST_LOG \"ndx=loud\""));
    // --log-level wins over a bad RUST_LOG (which is then not read).
    let out = Command::new(NDX)
        .args(["--log-level", "warn", "check", "-c", "/nonexistent"])
        .env("RUST_LOG", "ndx=loud")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("ndx: /nonexistent: "),
        "{out:?}"
    );

    // Standard error is the stream JOURNAL_STREAM names: priority prefixes, no "ndx: ".
    let log = dir.path("journal");
    std::fs::write(&log, "").unwrap();
    let meta = std::fs::metadata(&log).unwrap();
    let stream = {
        use std::os::unix::fs::MetadataExt;
        format!("{}:{}", meta.dev(), meta.ino())
    };
    let journal = |stream: &str| {
        let f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let st = Command::new(NDX)
            .args(["run", "-c", "/nonexistent/ndx.toml"])
            .env("JOURNAL_STREAM", stream)
            .stderr(f)
            .status()
            .unwrap();
        assert_eq!(st.code(), Some(2));
        std::fs::read_to_string(&log).unwrap()
    };
    assert_eq!(
        journal(&stream),
        "<3>/nonexistent/ndx.toml: No such file or directory (os error 2)\n"
    );
    // Another stream (a child whose stderr was redirected): plain lines.
    std::fs::write(&log, "").unwrap();
    assert_eq!(
        journal("1:1"),
        "ndx: /nonexistent/ndx.toml: No such file or directory (os error 2)\n"
    );
}

/// The subcommands `ndx --help` lists.
fn subcommands() -> Vec<String> {
    let help = ndx(&["--help"]);
    let text = String::from_utf8_lossy(&help.stdout).into_owned();
    let list = text
        .split("Commands:\n")
        .nth(1)
        .and_then(|t| t.split("\n\n").next())
        .expect("a Commands: section")
        .to_owned();
    let names: Vec<String> = list
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|n| n != "help")
        .collect();
    assert!(names.len() >= 10, "{names:?}");
    names
}

#[test]
fn completions_and_man_pages_name_every_subcommand() {
    let names = subcommands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = ndx(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {out:?}");
        let script = String::from_utf8_lossy(&out.stdout);
        for n in &names {
            assert!(script.contains(n.as_str()), "{shell} completion lacks {n}");
        }
        assert!(script.contains("log-level"), "{shell}: no --log-level");
    }
    let bash = String::from_utf8_lossy(&ndx(&["completions", "bash"]).stdout).into_owned();
    // The nested subcommands too (their option lists are keyed by the full path).
    assert!(bash.contains("ndx__face__add") || bash.contains("ndx__subcmd__face__subcmd__add"));
    assert_eq!(ndx(&["completions", "tcsh"]).status.code(), Some(2));

    let dir = Scratch::new("man");
    let out = ndx(&["man", dir.0.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let top = std::fs::read_to_string(dir.path("ndx.1")).unwrap();
    assert!(
        top.starts_with(".ie \\n(.g .ds Aq") || top.contains(".TH ndx 1"),
        "{top}"
    );
    assert!(top.contains(".SH \"EXIT STATUS\"") && top.contains(".SH ENVIRONMENT"));
    for n in &names {
        let page = dir.path(&format!("ndx-{n}.1"));
        assert!(page.exists(), "no page for {n}");
        assert!(
            top.contains(&format!("ndx\\-{n}(1)")),
            "ndx.1 does not list {n}"
        );
    }
    for nested in ["ndx-face-add.1", "ndx-route-list.1", "ndx-lb-status.1"] {
        assert!(dir.path(nested).exists(), "no {nested}");
    }
    // Every page renders without a warning where groff is installed.
    let groff_here = Command::new("groff").arg("--version").output().is_ok();
    if groff_here {
        let mut pages: Vec<_> = std::fs::read_dir(&dir.0)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        pages.sort();
        for p in pages {
            let out = Command::new("groff")
                .args(["-man", "-Tutf8", "-ww", "-P-cbou"])
                .arg(&p)
                .output()
                .unwrap();
            assert!(out.status.success(), "{}: {out:?}", p.display());
            assert!(
                out.stderr.is_empty(),
                "{}: {}",
                p.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("EXIT STATUS"), "{}", p.display());
        }
    }
}

#[test]
fn reload_exit_codes_say_applied_refused_or_unreachable() {
    let dir = Scratch::new("reload");
    let (good, bad) = (dir.path("good.sock"), dir.path("bad.sock"));
    fake_router(good.clone(), |_| {
        json!({"ok": true, "file": "/etc/ndx/ndx.toml", "changes": 2,
               "faces": {"added": ["up2 udp://10.0.0.9:6363 (face 7)"], "removed": [], "changed": []},
               "routes": {"added": ["/x via up2 cost 0"], "removed": [], "changed": []},
               "strategies": {"set": [], "removed": []}, "settings": [], "warnings": []})
    });
    fake_router(bad.clone(), |_| {
        json!({"ok": false, "error": "reload refused, nothing changed: f: router.shards changed",
               "restart": ["router.shards"]})
    });
    let run = |sock: &PathBuf, json: bool| {
        let mut c = Command::new(NDX);
        c.args(["reload", "-c", "ndx.toml", "-s"]).arg(sock);
        if json {
            c.arg("--json");
        }
        c.output().expect("ndx reload runs")
    };
    let out = run(&good, false);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text.contains("2 change(s): faces +1 -0 ~0, routes +1 -0 ~0"),
        "{text}"
    );
    assert!(text.contains("route added: /x via up2 cost 0"), "{text}");
    let out = run(&bad, false);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("router.shards changed"));
    let out = run(&bad, true);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["restart"][0], "router.shards");
    let out = run(&dir.path("nobody.sock"), false);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot reach ndx"));
}
