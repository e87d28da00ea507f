//! Configuration reload (issue 35), as root: while `ndx gen` fetches continuously on a
//! stable prefix through `ndx run` (AF_XDP), the configuration file is edited and applied
//! twice, once with `ndx reload` (a face, a route through it and a strategy added) and once
//! with SIGHUP (the strategy removed, a route's cost changed, a route added); then a change
//! that needs a restart (`router.shards`) is refused.
//!
//! Asserted: the fetch loses nothing (`ndx gen`: no timeout, no Nack), the configured face
//! keeps its id, the new state is in `ndx route list --json` and works (a fetch through the
//! new face), the refusal names the key, exits 1 and changes nothing, and `ndx reload`
//! exits 2 when no router answers.
//!
//! Without root (or BPF) the test prints `skipping: <reason>`; with `NDX_REQUIRE_ROOT_TESTS=1`
//! (CI) it fails instead.

mod support;
mod topo;

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;
use support::{Proc, skip, wait_for};
use topo::{Family, Line, NDX, Router, gen_report, ok, spawn_logged, total};

/// The generator's InterestLifetime (as in `churn.rs`: a loaded machine does not turn a
/// slow answer into a loss; an Interest lost in the router still times out in the run).
const LIFETIME_MS: u64 = 4000;

/// `ndx gen` on `prefix` for `secs` seconds or `count` Interests, from a fixed port.
fn gen_cmd(line: &Line, prefix: &str, secs: u64, count: Option<u64>) -> Command {
    let mut cmd = line.c.cmd(NDX);
    cmd.args(["gen", prefix, "-t", &line.router_target(), "-w", "32"])
        .args(["--bind", &line.endpoint(1, 1, 7001)])
        .args(["--lifetime-ms", &LIFETIME_MS.to_string()])
        .args(["-d", &secs.to_string()]);
    if let Some(c) = count {
        cmd.args(["-c", &c.to_string()]);
    }
    cmd
}

/// `ndx serve PREFIX` in the producer namespace on `port`.
fn serve(line: &Line, prefix: &str, port: u16) -> Proc {
    let log = line
        .scratch
        .path(&format!("serve-{}.log", prefix.replace('/', "_")));
    let mut cmd = line.p.cmd(NDX);
    cmd.args(["serve", prefix, "-n", "1000", "-b"])
        .arg(line.endpoint(2, 1, port));
    let p = spawn_logged(cmd, "ndx serve", &log);
    let up = wait_for(20, || {
        std::fs::read_to_string(&log).is_ok_and(|s| s.contains("answering"))
    });
    assert!(up, "ndx serve {prefix} did not start");
    p
}

/// `ndx reload` against `router` (more arguments in `args`).
fn ndx_reload(router: &Router, args: &[&str]) -> Output {
    Command::new(NDX)
        .arg("reload")
        .args(args)
        .arg("-s")
        .arg(&router.sock)
        .output()
        .expect("ndx reload runs")
}

/// The FIB entry of `prefix` in `ndx route list --json`.
fn fib_entry(router: &Router, prefix: &str) -> Option<Value> {
    router.routes()["routes"]
        .as_array()?
        .iter()
        .find(|r| r["prefix"] == prefix)
        .cloned()
}

fn face_id(router: &Router, name: &str) -> u64 {
    router
        .face("name", name)
        .unwrap_or_else(|| panic!("no face {name}: {}", router.status()["faces"]))["id"]
        .as_u64()
        .unwrap()
}

#[test]
fn reload_under_load_loses_nothing_and_refuses_a_restart() {
    if skip() {
        return;
    }
    let line = Line::new(Family::V4, 1, 1500);
    let _gen_producer = serve(&line, "/t/gen", 6363);
    let _extra_producer = serve(&line, "/extra", 7000);
    let base = line.config(1, &format!("udp://{}", line.producer_endpoint()), "");
    let router = line.start_router(&base);
    let file = line.scratch.path("ndx.toml");
    let producer = face_id(&router, "producer");
    // The consumer's face exists before the run.
    let g = gen_cmd(&line, "/t/gen", 10, Some(10)).output().unwrap();
    ok(&g, "ndx gen (warm-up)");

    // 1. `ndx reload`: a face to the second producer, a route through it, a strategy.
    let first = format!(
        "{base}[[face]]\nname = \"extra\"\nremote = \"udp://{}\"\n\
         [[route]]\nprefix = \"/extra\"\nface = \"extra\"\n\
         [[strategy]]\nprefix = \"/t\"\nstrategy = \"multicast\"\n",
        line.endpoint(2, 1, 7000)
    );
    // 2. SIGHUP: the strategy choice goes (best-route again), /extra costs 3, /t2 is added,
    // a fairness knob changes (the workers take it while forwarding).
    let second = line.config(
        1,
        &format!("udp://{}", line.producer_endpoint()),
        "[fairness]\nnack_rate = 5000",
    );
    let second = format!(
        "{second}[[face]]\nname = \"extra\"\nremote = \"udp://{}\"\n\
         [[route]]\nprefix = \"/extra\"\nface = \"extra\"\ncost = 3\n\
         [[route]]\nprefix = \"/t2\"\nface = \"producer\"\n",
        line.endpoint(2, 1, 7000)
    );
    let secs = 2 + 4 + LIFETIME_MS / 1000;
    let mut cmd = gen_cmd(&line, "/t/gen", secs, None);
    let (gen_out, reloaded, hup) = std::thread::scope(|s| {
        let generator = s.spawn(move || cmd.output().expect("ndx gen runs"));
        std::thread::sleep(Duration::from_secs(1));
        std::fs::write(&file, &first).unwrap();
        let reloaded = ndx_reload(&router, &["--json"]);
        std::thread::sleep(Duration::from_secs(1));
        std::fs::write(&file, &second).unwrap();
        let _ = Command::new("kill")
            .args(["-HUP", &router.proc.pid().to_string()])
            .status();
        let hup = wait_for(10, || {
            fib_entry(&router, "/t2").is_some() && router.log().contains("/t2 via producer")
        });
        (generator.join().expect("gen"), reloaded, hup)
    });

    // `ndx reload` applied and said what changed.
    ok(&reloaded, "ndx reload --json");
    let v: Value = serde_json::from_slice(&reloaded.stdout).expect("JSON");
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["changes"], 3, "{v}");
    assert_eq!(v["faces"]["added"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["routes"]["added"][0], "/extra via extra cost 0", "{v}");
    assert_eq!(v["strategies"]["set"][0], "/t multicast", "{v}");
    // SIGHUP applied (the router logs what changed).
    assert!(hup, "SIGHUP reload not seen:\n{}", router.log());
    let log = router.log();
    assert!(log.contains("reloaded"), "{log}");
    assert!(
        log.contains("route changed: /extra via extra cost 3"),
        "{log}"
    );
    assert!(log.contains("strategy removed: /t"), "{log}");
    assert!(log.contains("setting: fairness.nack_rate = 5000"), "{log}");

    // Nothing in flight was lost.
    ok(&gen_out, "ndx gen");
    let (sent, satisfied, nacks, timeouts) = gen_report(&gen_out);
    println!("{}", String::from_utf8_lossy(&gen_out.stdout));
    assert_eq!((nacks, timeouts), (0, 0), "exchanges lost on /t/gen");
    assert!(
        satisfied + 32 >= sent && satisfied > 0,
        "{sent} sent, {satisfied} answered"
    );
    let s = router.status();
    for c in ["drop_no_route", "drop_pit_full", "tx_ring_full"] {
        assert_eq!(total(&s, c), 0, "{c}: {}", s["counters"]);
    }

    // The new state, in `ndx route list --json`, and working.
    assert_eq!(
        face_id(&router, "producer"),
        producer,
        "unchanged face keeps its id"
    );
    let extra = face_id(&router, "extra");
    let e = fib_entry(&router, "/extra").expect("/extra routed");
    assert_eq!(e["nexthops"][0]["face"], extra, "{e}");
    assert_eq!(e["nexthops"][0]["cost"], 3, "{e}");
    assert_eq!(e["nexthops"][0]["origin"], "static", "{e}");
    assert_eq!(fib_entry(&router, "/t").unwrap()["strategy"], "best-route");
    assert_eq!(
        fib_entry(&router, "/t2").unwrap()["nexthops"][0]["face"],
        producer
    );
    let g = gen_cmd(&line, "/extra", 10, Some(20)).output().unwrap();
    ok(&g, "ndx gen /extra");
    let (_, satisfied, _, _) = gen_report(&g);
    assert_eq!(satisfied, 20, "{}", String::from_utf8_lossy(&g.stdout));

    // A change that needs a restart: refused by name, exit 1, nothing changed.
    let before = router.routes();
    let faces_before = topo::face_table(&router.status());
    let third = second
        .replace("shards = 1\n", "shards = 2\n")
        .replace("[[route]]\nprefix = \"/t2\"", "[[route]]\nprefix = \"/t3\"");
    std::fs::write(&file, &third).unwrap();
    let refused = ndx_reload(&router, &[]);
    let err = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(err.contains("router.shards"), "{err}");
    assert!(err.contains("restart"), "{err}");
    let refused = ndx_reload(&router, &["--json"]);
    assert_eq!(refused.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&refused.stdout).expect("JSON");
    assert_eq!(v["ok"], false);
    assert!(
        v["restart"]
            .as_array()
            .unwrap()
            .contains(&Value::from("router.shards")),
        "{v}"
    );
    assert_eq!(router.routes(), before, "a refused reload changes no route");
    assert_eq!(topo::face_table(&router.status()), faces_before);
    assert!(
        router.log().contains("router.shards"),
        "the refusal is logged"
    );

    // A bad file names its key; the router stays up.
    std::fs::write(&file, second.replace("face = \"extra\"", "face = \"extr\"")).unwrap();
    let bad = ndx_reload(&router, &[]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("no face named \"extr\""),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert_eq!(router.routes(), before);
    assert!(!router.exited());

    println!("{}", router.log());

    // No router: 2.
    let none = Command::new(NDX)
        .args(["reload", "-s"])
        .arg(line.scratch.path("nobody.sock"))
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2));
}
