//! ndx as the host's forwarder, as root with real NDN software: local applications on ndx's
//! app socket (python-ndn, ndnd's tools, ndx's own tools), NFD management (python-ndn's
//! management client), bad management input, connection churn, and the interop fixes found
//! with real peers (IP-fragmented UDP, long names).
//!
//! The peers are the scripts in `tests/peers/` (see its README) on python-ndn
//! (`$NDX_PYTHON`, else `/opt/ndx-interop/venv/bin/python`) and ndnd (`$NDX_NDND`, else
//! `/opt/ndx-interop/go/ndnd`); a missing tool prints `skipping: <reason>`, and fails under
//! `NDX_REQUIRE_ROOT_TESTS=1` (CI).

mod peers;
mod support;
mod topo;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use peers::{
    assert_ok_saying, describe, first_line, line, ndnd_line, ndnd_tool, peer, py_line,
    pyndn_udp_producer, run_peer, spawn_script, stdout, unix,
};
use serde_json::Value;
use support::{Netns, Proc, stdout_lines, wait_for};
use topo::{Line, Router, total};

/// A python-ndn producer on the router's app socket serving `file` under `prefix`; returns
/// once it printed `ready` (its registration answered 200).
fn app_producer(line: &Line, py: &str, prefix: &str, file: &Path, extra: &[&str]) -> Proc {
    let mut args = vec![prefix, "--file", file.to_str().expect("UTF-8 path")];
    args.extend_from_slice(extra);
    let mut p = spawn_script(
        &line.r,
        py,
        &peer("app_producer.py"),
        &unix(&line.app_socket()),
        &args,
    );
    let ready = first_line(
        &mut p,
        30,
        "the python-ndn producer did not register within 30 s",
    );
    assert!(ready.starts_with("ready "), "producer said: {ready}");
    p
}

/// The RIB's routes for `prefix` as (face, origin) pairs, from `ndx route list`'s JSON.
fn rib_routes(router: &Router, prefix: &str) -> Vec<(u64, String)> {
    let v = router_routes(router);
    v["rib"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["prefix"] == prefix)
        .flat_map(|e| e["routes"].as_array().cloned().unwrap_or_default())
        .map(|r| {
            (
                r["face"].as_u64().unwrap_or(0),
                r["origin"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

fn router_routes(router: &Router) -> Value {
    router.routes()
}

fn app_faces(router: &Router) -> usize {
    router.status()["faces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["origin"] == "app")
        .count()
}

/// The id of the configured UDP face named `producer`, as text.
fn producer_face_id(router: &Router) -> String {
    router
        .face("name", "producer")
        .map(|f| f["id"].to_string())
        .expect("the producer face")
}

/// The entry for `prefix` in table `table` (`routes`: the FIB, `rib`: the RIB) of
/// `ndx route list`'s JSON.
fn route_entry(router: &Router, table: &str, prefix: &str) -> Value {
    router.routes()[table]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prefix"] == prefix)
        .unwrap_or_else(|| panic!("{prefix} in {table}"))
        .clone()
}

/// Runs `signed_command.py` in `ns` on `transport`: the status code it printed (`None` when it
/// printed none) and a description of the run.
fn signed_command(ns: &Netns, py: &str, transport: &str, args: &[&str]) -> (Option<u32>, String) {
    let o = run_peer(ns, py, "signed_command.py", transport, args);
    let code = stdout(&o)
        .strip_prefix("code ")
        .and_then(|r| r.split_whitespace().next()?.parse::<u32>().ok());
    (code, describe(&o))
}

/// Runs `fetch.py --one ARGS` in `ns`, to completion.
fn fetch_one(ns: &Netns, py: &str, transport: &str, args: &[&str]) -> Output {
    let mut a = vec!["--one"];
    a.extend_from_slice(args);
    run_peer(ns, py, "fetch.py", transport, &a)
}

#[test]
fn python_ndn_producer_on_the_app_socket_is_fetched_over_udp_and_its_route_goes_with_it() {
    let Some((py, line)) = py_line() else { return };
    let (file, data) = line.content("obj", 300_000, 7);
    let router = line.start_udp_router("");
    let producer = app_producer(&line, &py, "/app/py", &file, &[]);
    let routes = rib_routes(&router, "/app/py");
    assert_eq!(routes.len(), 1, "one route: {routes:?}");
    assert_eq!(routes[0].1, "app");
    assert_eq!(app_faces(&router), 1);

    // A consumer in another namespace, over UDP: 8000-byte segments reach it in NDNLPv2
    // fragments (ndx get reassembles them).
    let out = line.scratch.path("got");
    let o = line.get("/app/py", &out, &[]);
    assert!(o.status.success(), "ndx get: {}", describe(&o));
    assert_eq!(std::fs::read(&out).unwrap(), data, "bytes differ");

    // The producer disconnects: its face and route go, and the next Interest is Nacked.
    let _ = producer.stop("TERM");
    let gone = wait_for(10, || {
        rib_routes(&router, "/app/py").is_empty() && app_faces(&router) == 0
    });
    assert!(gone, "route or face left: {}", router_routes(&router));
    let to = format!("udp://{}", line.router_target());
    let o = fetch_one(&line.c, &py, &to, &["/app/py/x", "--timeout", "20"]);
    assert!(
        stdout(&o).contains("nack") && stdout(&o).contains("NoRoute"),
        "{}",
        describe(&o)
    );
    let st = router.status();
    assert!(total(&st, "drop_no_route") >= 1);
}

#[test]
fn ndnd_put_registers_on_the_app_socket_and_ndnd_cat_fetches_through_it() {
    let Some((bin, line)) = ndnd_line() else {
        return;
    };
    let (file, data) = line.content("obj", 400_000, 11);
    let router = line.start_udp_router("");
    let transport = unix(&line.app_socket());
    // ndnd's producer reads the object from its standard input.
    let mut cmd = line.r.cmd(&bin);
    cmd.args(["put", "--expose", "/app/ndnd"])
        .env("NDN_CLIENT_TRANSPORT", &transport)
        .stdin(std::fs::File::open(&file).unwrap());
    let put = Proc::spawn(cmd, "ndnd put");
    let registered = wait_for(20, || !rib_routes(&router, "/app/ndnd").is_empty());
    assert!(
        registered,
        "ndnd put did not register: {}",
        router_routes(&router)
    );
    let o = ndnd_tool(&line.r, &bin, &transport, &["cat", "/app/ndnd"]);
    assert!(o.status.success(), "ndnd cat: {}", describe(&o));
    assert!(
        o.stdout == data,
        "ndnd cat got {} bytes, not the object",
        o.stdout.len()
    );
    drop(put);
    assert!(wait_for(10, || app_faces(&router) == 0), "app faces left");
}

/// Runs `mgmt.py` against the router's app socket.
fn mgmt(line: &Line, py: &str, args: &[&str]) -> Output {
    let mut a = vec!["-v"];
    a.extend_from_slice(args);
    run_peer(&line.r, py, "mgmt.py", &unix(&line.app_socket()), &a)
}

/// The first `code N` of a mgmt.py answer.
fn code(o: &Output) -> u32 {
    stdout(o)
        .lines()
        .find_map(|l| {
            l.strip_prefix("code ")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no status code: {}", describe(o)))
}

/// JSON lines of a dataset.
fn dataset(o: &Output) -> Vec<Value> {
    assert!(o.status.success(), "{}", describe(o));
    stdout(o)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn python_ndn_management_client_lists_and_sets_and_bad_input_gets_nfd_codes() {
    let Some((py, line)) = py_line() else { return };
    let router = line.start_udp_router("");

    // Datasets: faces (the configured UDP face, the management face, this client's own app
    // face), FIB (the config's /t and /localhost/nfd), strategies, general status, CS.
    let faces = dataset(&mgmt(&line, &py, &["faces"]));
    let uris: Vec<&str> = faces.iter().filter_map(|f| f["uri"].as_str()).collect();
    assert!(
        uris.contains(&format!("udp4://{}", line.producer_endpoint()).as_str()),
        "{uris:?}"
    );
    assert!(uris.contains(&"internal://"), "{uris:?}");
    assert!(uris.iter().any(|u| u.starts_with("fd://")), "{uris:?}");
    let fib = dataset(&mgmt(&line, &py, &["fib"]));
    let prefixes: Vec<&str> = fib.iter().filter_map(|e| e["name"].as_str()).collect();
    assert!(
        prefixes.contains(&"/t") && prefixes.contains(&"/localhost/nfd"),
        "{prefixes:?}"
    );
    let rib = dataset(&mgmt(&line, &py, &["rib"]));
    let t = rib
        .iter()
        .find(|e| e["name"] == "/t")
        .expect("/t in the RIB");
    assert_eq!(t["routes"][0]["origin"], 255, "static origin: {t}");
    let general = dataset(&mgmt(&line, &py, &["status"]));
    assert!(
        general[0]["nfd_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("ndx"))
    );
    assert!(general[0]["n_fib_entries"].as_u64() >= Some(2));
    let cs = dataset(&mgmt(&line, &py, &["cs"]));
    assert!(cs[0]["capacity"].as_u64() > Some(0), "{}", cs[0]);

    // Set and list a strategy, then unset it.
    let o = mgmt(
        &line,
        &py,
        &["--expect", "200", "set-strategy", "/t", "multicast"],
    );
    assert!(o.status.success(), "{}", describe(&o));
    let strategies = dataset(&mgmt(&line, &py, &["strategies"]));
    let t = strategies
        .iter()
        .find(|s| s["name"] == "/t")
        .expect("/t's choice");
    assert!(
        t["strategy"]
            .as_str()
            .is_some_and(|s| s.contains("multicast")),
        "{t}"
    );
    assert_eq!(
        route_entry(&router, "routes", "/t")["strategy"],
        "multicast"
    );
    assert_eq!(
        code(&mgmt(
            &line,
            &py,
            &["set-strategy", "/t", "/localhost/nfd/strategy/ncc"]
        )),
        404
    );
    assert_eq!(code(&mgmt(&line, &py, &["unset-strategy", "/t"])), 200);
    assert_eq!(code(&mgmt(&line, &py, &["unset-strategy", "/"])), 400);

    // Register with a route's every parameter (on the configured UDP face: a route on the
    // client's own face would go with the client), see it in the RIB, let it expire.
    let producer = producer_face_id(&router);
    let o = mgmt(
        &line,
        &py,
        &[
            "register",
            "/r",
            "--face-id",
            &producer,
            "--origin",
            "128",
            "--cost",
            "7",
            "--flags",
            "2",
            "--expires",
            "1500",
        ],
    );
    assert_eq!(code(&o), 200, "{}", describe(&o));
    let r = route_entry(&router, "rib", "/r");
    assert_eq!(r["routes"][0]["origin"], "nlsr");
    assert_eq!(r["routes"][0]["cost"], 7);
    assert_eq!(r["routes"][0]["capture"], true);
    assert!(
        wait_for(10, || rib_routes(&router, "/r").is_empty()),
        "/r did not expire"
    );
    // Register on a face that does not exist: 410.
    assert_eq!(
        code(&mgmt(&line, &py, &["register", "/r", "--face-id", "99999"])),
        410
    );
    // faces/create and faces/destroy of a UDP face.
    let uri = control_uri("udp4://10.0.2.9:6363");
    let create = || mgmt(&line, &py, &["raw-command", "faces", "create", &uri]);
    let o = create();
    assert_eq!(code(&o), 200, "{}", describe(&o));
    assert!(router.face("remote", "udp://10.0.2.9:6363").is_some());
    let o = create();
    assert_eq!(code(&o), 409, "{}", describe(&o));

    // Bad input: malformed ControlParameters, an empty one, a missing one, an unknown verb.
    for hex in ["6805", "68", "0700", ""] {
        let o = mgmt(&line, &py, &["raw-command", "rib", "register", hex]);
        assert_eq!(code(&o), 400, "ControlParameters {hex:?}: {}", describe(&o));
    }
    let o = mgmt(
        &line,
        &py,
        &["raw-command", "rib", "register", "--no-params"],
    );
    assert_eq!(code(&o), 400, "{}", describe(&o));
    let o = mgmt(&line, &py, &["unknown-verb"]);
    assert_eq!(code(&o), 501, "{}", describe(&o));
    let o = mgmt(&line, &py, &["unknown-verb", "--module", "frobnicate"]);
    assert_eq!(code(&o), 501, "{}", describe(&o));
    assert!(router.status()["host"]["mgmt_commands_refused"].as_u64() >= Some(7));

    // /localhost/nfd from a UDP face: dropped in the shard and counted, never answered.
    let before = total(&router.status(), "drop_scope");
    let to = format!("udp://{}", line.router_target());
    let o = fetch_one(
        &line.c,
        &py,
        &to,
        &[
            "/localhost/nfd/faces/list",
            "--can-be-prefix",
            "--lifetime",
            "500",
            "--retries",
            "0",
        ],
    );
    assert!(stdout(&o).contains("timeout"), "{}", describe(&o));
    let st = router.settle(|s| total(s, "drop_scope") > before);
    assert!(total(&st, "drop_scope") > before);
}

/// python-ndn's `pynfdc` CLI (next to its python) on the router's app socket.
fn pynfdc(line: &Line, py: &str, args: &[&str]) -> Output {
    let bin = Path::new(py).with_file_name("pynfdc");
    line.r
        .cmd(bin)
        .args(args)
        .env("NDN_CLIENT_TRANSPORT", unix(&line.app_socket()))
        .stdin(Stdio::null())
        .output()
        .expect("pynfdc runs")
}

#[test]
fn pynfdc_lists_faces_routes_and_strategies_and_sets_a_strategy() {
    let Some((py, line)) = py_line() else { return };
    let router = line.start_udp_router("");
    let o = pynfdc(&line, &py, &["face"]);
    assert!(o.status.success(), "{}", describe(&o));
    let faces = stdout(&o);
    assert!(
        faces.contains(&line.producer_endpoint()) && faces.contains("internal://"),
        "{faces}"
    );
    let o = pynfdc(&line, &py, &["route"]);
    assert_ok_saying(&o, "/t");
    let o = pynfdc(&line, &py, &["ss", "/t", "multicast"]);
    assert_ok_saying(&o, "200");
    let o = pynfdc(&line, &py, &["strategy"]);
    assert!(o.status.success(), "{}", describe(&o));
    // Each prefix, then its strategy on the next line.
    assert!(
        stdout(&o).contains("/t\n\t/localhost/nfd/strategy/multicast"),
        "{}",
        describe(&o)
    );
    assert_eq!(
        route_entry(&router, "routes", "/t")["strategy"],
        "multicast"
    );
    let o = pynfdc(&line, &py, &["status"]);
    assert_ok_saying(&o, "ndx");
    // A face by id (faces/query with a FaceQueryFilter).
    let o = pynfdc(&line, &py, &["face", "1"]);
    assert_ok_saying(&o, &line.producer_endpoint());
    // Create a face and a route through it, then remove both.
    let o = pynfdc(&line, &py, &["nf", "udp4://10.0.2.9:6363"]);
    assert_ok_saying(&o, "200");
    let id = router
        .face("remote", "udp://10.0.2.9:6363")
        .map(|f| f["id"].to_string())
        .expect("the new face");
    let o = pynfdc(&line, &py, &["nr", "/n", &id]);
    assert_ok_saying(&o, "200");
    // pynfdc sends no Origin: NFD's default, app.
    assert_eq!(
        rib_routes(&router, "/n"),
        vec![(id.parse().unwrap(), "app".to_owned())]
    );
    let o = pynfdc(&line, &py, &["rf", &id]);
    assert_ok_saying(&o, "200");
    assert!(
        rib_routes(&router, "/n").is_empty(),
        "the face's route went with it"
    );
}

/// A ControlParameters with just a Uri, as hex.
fn control_uri(uri: &str) -> String {
    let mut v = vec![0x72, uri.len() as u8];
    v.extend_from_slice(uri.as_bytes());
    let mut p = vec![0x68, v.len() as u8];
    p.extend(v);
    p.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_thousand_app_connections_come_and_go_and_the_tables_are_as_before() {
    let Some((py, line)) = py_line() else { return };
    let router = line.start_udp_router("");
    let faces_before = topo::face_table(&router.status());
    let routes_before = router.routes();
    let o = run_peer(
        &line.r,
        &py,
        "churn.py",
        &unix(&line.app_socket()),
        &["-n", "1000", "--register-every", "10", "--timeout", "240"],
    );
    assert!(o.status.success(), "{}", describe(&o));
    assert!(stdout(&o).contains("registered 100 0"), "{}", describe(&o));
    assert!(stdout(&o).contains("done 1000"), "{}", describe(&o));
    let back = wait_for(20, || {
        topo::face_table(&router.status()) == faces_before && router.routes() == routes_before
    });
    assert!(
        back,
        "faces {} routes {}",
        router.status()["faces"],
        router.routes()
    );
    let host = router.status()["host"].clone();
    assert!(host["app_accepted"].as_u64() >= Some(1000), "{host}");
    assert_eq!(host["app_faces"], 0);
}

#[test]
fn ip_fragmented_udp_from_a_python_ndn_producer_crosses_ndx() {
    let Some((py, line)) = py_line() else { return };
    let (file, data) = line.content("obj", 120_000, 5);
    let router = line.start_udp_router("");
    let (_producer, local, _) = pyndn_udp_producer(&line, &py, "/ipfrag", &file, 8000);
    // Its prefix registration (dropped: /localhost from a UDP face) made ndx create an
    // on-demand face for it; route to that face.
    assert!(wait_for(10, || router.try_ctl(&["route", "add", "/ipfrag", &local])));
    let before = router.status();
    let out = line.scratch.path("got");
    let o = line.get("/ipfrag", &out, &[]);
    assert!(o.status.success(), "ndx get: {}", describe(&o));
    assert_eq!(std::fs::read(&out).unwrap(), data, "bytes differ");
    // Every 8000-byte segment came as IP fragments, reassembled by the kernel and received
    // on the host thread's UDP socket, on the producer's face.
    let st = router.status();
    let host = &st["host"];
    let kernel =
        host["udp_kernel_rx"].as_u64().unwrap() - before["host"]["udp_kernel_rx"].as_u64().unwrap();
    assert!(kernel >= 15, "{kernel} datagrams from the kernel: {host}");
    assert!(total(&st, "host_in") >= 15);
}

#[test]
fn a_3_kb_name_interest_from_python_ndn_over_udp_is_answered_through_ndx() {
    let Some((py, line)) = py_line() else { return };
    let (file, _) = line.content("obj", 1000, 3);
    // python-ndn over UDP neither fragments nor reassembles NDNLPv2: with IP fragmentation
    // (NFD's way) the 3 KB Data goes back to it in IP fragments.
    let router = line.start_udp_router("[udp]\nfragmentation = \"ip\"\n");
    let _producer = app_producer(&line, &py, "/big", &file, &["--answer-any"]);
    let to = format!("udp://{}", line.router_target());
    let o = fetch_one(
        &line.c,
        &py,
        &to,
        &["/big/name", "--pad-to", "3000", "--timeout", "30"],
    );
    let out = stdout(&o);
    assert!(
        o.status.success() && out.starts_with("data /big/name"),
        "{}\nrouter: {}",
        describe(&o),
        router.status()
    );
    let host = router.status()["host"].clone();
    // The Interest came in IP fragments (the kernel socket), the Data left in them.
    assert!(host["udp_kernel_rx"].as_u64() >= Some(1), "{host}");
    assert!(host["udp_kernel_tx"].as_u64() >= Some(1), "{host}");
}

#[test]
fn a_command_key_requires_hmac_signed_commands_and_localhop_registers_remote_faces() {
    let Some((py, line)) = py_line() else { return };
    let key = line.scratch.path("command.key");
    std::fs::write(&key, "an ndx test key, 32 bytes long!!\n").unwrap();
    let wrong = line.scratch.path("wrong.key");
    std::fs::write(&wrong, "not the key at all, but as long\n").unwrap();
    let router = line.start_udp_router(&format!(
        "[app]\nsocket = \"{}\"\nlocalhop = true\ncommand_key = \"{}\"\n",
        line.app_socket().display(),
        key.display()
    ));
    let app = unix(&line.app_socket());
    // `rib register --name NAME ARGS...`, signed as ARGS say.
    let register = |ns: &Netns, transport: &str, name: &str, args: &[&str]| {
        let mut a = vec!["rib", "register", "--name", name];
        a.extend_from_slice(args);
        signed_command(ns, &py, transport, &a)
    };
    let key_arg = key.display().to_string();
    let wrong_arg = wrong.display().to_string();
    // Unsigned (DigestSha256) or under another key: 403. Under the key: 200.
    let (c, o) = register(&line.r, &app, "/k", &[]);
    assert_eq!(c, Some(403), "{o}");
    let (c, o) = register(&line.r, &app, "/k", &["--hmac-key-file", &wrong_arg]);
    assert_eq!(c, Some(403), "{o}");
    let producer = producer_face_id(&router);
    let (c, o) = register(
        &line.r,
        &app,
        "/k",
        &["--face-id", &producer, "--hmac-key-file", &key_arg],
    );
    assert_eq!(c, Some(200), "{o}");
    assert_eq!(rib_routes(&router, "/k").len(), 1);

    // /localhop from a remote face (the consumer, over UDP): registers the prefix on that
    // face; /localhost from it gets nothing.
    let udp = format!("udp://{}", line.router_target());
    let (c, o) = register(
        &line.c,
        &udp,
        "/hop",
        &["--scope", "localhop", "--hmac-key-file", &key_arg],
    );
    assert_eq!(c, Some(200), "{o}");
    let routes = rib_routes(&router, "/hop");
    assert_eq!(routes.len(), 1, "{routes:?}");
    let face = router.face("id", routes[0].0).expect("the face");
    assert!(
        face["remote"]
            .as_str()
            .is_some_and(|r| r.starts_with("udp://10.0.1.1:")),
        "{face}"
    );
    let (c, o) = register(
        &line.c,
        &udp,
        "/hop2",
        &["--hmac-key-file", &key_arg, "--timeout", "5"],
    );
    assert_eq!(c, None, "{o}");
    assert!(rib_routes(&router, "/hop2").is_empty());
}

#[test]
fn ndx_tools_attach_to_ndx_as_apps() {
    let Some(line) = line() else { return };
    let (file, data) = line.content("obj", 500_000, 13);
    // The shard sleeps when idle and the host thread wakes it (idle = "park").
    let router = line.start_udp_router("idle = \"park\"");
    let app = unix(&line.app_socket());
    // `ndx put` registers through ndx's app socket; a consumer on the UDP side fetches it,
    // and `ndx get` on the app socket too.
    let log = line.scratch.path("put.log");
    let mut cmd = line.r.cmd(topo::NDX);
    cmd.args(["put", "/app/ndx", "-i"])
        .arg(&file)
        .args(["--forwarder", &app]);
    let _put = topo::spawn_logged(cmd, "ndx put", &log);
    assert!(
        wait_for(20, || !rib_routes(&router, "/app/ndx").is_empty()),
        "ndx put did not register: {}",
        topo::read(&log)
    );
    let out = line.scratch.path("got-udp");
    let o = line.get("/app/ndx", &out, &[]);
    assert!(o.status.success(), "ndx get over UDP: {}", describe(&o));
    assert_eq!(std::fs::read(&out).unwrap(), data);
    let out = line.scratch.path("got-app");
    let o = line
        .r
        .cmd(topo::NDX)
        .args(["get", "/app/ndx", "-t", &app, "--no-progress", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "ndx get on the app socket: {}",
        describe(&o)
    );
    assert_eq!(std::fs::read(&out).unwrap(), data);

    // `ndx serve` and `ndx gen` both on the app socket: every Interest answered.
    let log = line.scratch.path("serve.log");
    let mut cmd = line.r.cmd(topo::NDX);
    cmd.args(["serve", "/app/gen", "-n", "1000", "--forwarder", &app]);
    let _serve = topo::spawn_logged(cmd, "ndx serve", &log);
    assert!(wait_for(20, || !rib_routes(&router, "/app/gen").is_empty()));
    let o = line
        .r
        .cmd(topo::NDX)
        .args([
            "gen", "/app/gen", "-t", &app, "-c", "2000", "-w", "32", "-d", "30",
        ])
        .output()
        .unwrap();
    let s = stdout(&o);
    assert!(
        o.status.success() && s.contains("(2000 Interests satisfied), 0 Nacks, 0 timeouts"),
        "{}",
        describe(&o)
    );
    let host = router.status()["host"].clone();
    assert!(host["app_rx"].as_u64() >= Some(4000), "{host}");
    assert_eq!(host["app_queue_dropped"], 0);
}

#[test]
fn face_event_notifications_follow_app_connections() {
    let Some((py, line)) = py_line() else { return };
    let _router = line.start_udp_router("");
    let app = unix(&line.app_socket());
    // A new subscriber gets the latest notification while it is fresh: its own face's.
    let o = fetch_one(
        &line.r,
        &py,
        &app,
        &[
            "/localhost/nfd/faces/events",
            "--can-be-prefix",
            "--must-be-fresh",
        ],
    );
    let name = stdout(&o)
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let seq: u64 = name
        .rsplit_once("/seq=")
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or_else(|| panic!("no sequence number: {}", describe(&o)));
    // Ask for two further: the asker's own connection is the next; the one after waits until
    // another app connects.
    let want = format!("/localhost/nfd/faces/events/seq={}", seq + 2);
    let mut waiting = spawn_script(
        &line.r,
        &py,
        &peer("fetch.py"),
        &app,
        &[
            "--one",
            &want,
            "--lifetime",
            "10000",
            "--retries",
            "0",
            "--timeout",
            "30",
        ],
    );
    let lines = stdout_lines(&mut waiting);
    std::thread::sleep(Duration::from_millis(1500));
    let o = run_peer(&line.r, &py, "churn.py", &app, &["-n", "1"]);
    assert!(o.status.success(), "{}", describe(&o));
    let got = lines
        .recv_timeout(Duration::from_secs(20))
        .expect("no notification for the new connection");
    assert!(got.starts_with(&format!("data {want} ")), "{got}");
}

#[test]
fn faces_update_turns_local_fields_on_for_the_requesting_app_face_only() {
    let Some((py, line)) = py_line() else { return };
    let router = line.start_udp_router("");
    let app = unix(&line.app_socket());
    // `faces update ARGS...` from this app's face.
    let update = |args: &[&str]| {
        let mut a = vec!["faces", "update"];
        a.extend_from_slice(args);
        signed_command(&line.r, &py, &app, &a)
    };
    // On the requesting face (no FaceId): 200.
    let (c, o) = update(&["--flags", "1", "--mask", "1"]);
    assert_eq!(c, Some(200), "{o}");
    // Local fields on a UDP face: 409. Flags without Mask: 409. No such face: 410.
    let producer = producer_face_id(&router);
    let (c, o) = update(&["--face-id", &producer, "--flags", "1", "--mask", "1"]);
    assert_eq!(c, Some(409), "{o}");
    let (c, o) = update(&["--flags", "1"]);
    assert_eq!(c, Some(409), "{o}");
    let (c, o) = update(&["--face-id", "99999", "--flags", "1", "--mask", "1"]);
    assert_eq!(c, Some(410), "{o}");
    // While the app that asked stays connected, its face has local fields; another app's
    // face and the UDP face do not.
    let mut held = spawn_script(
        &line.r,
        &py,
        &peer("signed_command.py"),
        &app,
        &[
            "faces", "update", "--flags", "1", "--mask", "1", "--hold", "20",
        ],
    );
    let answer = first_line(&mut held, 20, "no answer to faces/update");
    assert!(answer.starts_with("code 200"), "{answer}");
    let apps: Vec<Value> = router.status()["faces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["origin"] == "app")
        .cloned()
        .collect();
    assert_eq!(apps.len(), 1, "{apps:?}");
    assert_eq!(apps[0]["local_fields"], true, "{apps:?}");
    assert_eq!(
        router.face("name", "producer").expect("producer")["local_fields"],
        false
    );
}
