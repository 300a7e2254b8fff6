//! `okb serve` switching to a new build: a real `okb make` replaces the store under a
//! running server while clients read over real HTTP on 127.0.0.1.

use crate::common;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use common::{Project, mini_sources};
use reqwest::blocking::Client;
use serde_json::Value;

/// The mini taxonomy with the fixture games at `min_games`: a lower count keeps more of
/// the games' moves, so the start position's answer differs between the builds.
fn pipeline(min_games: u32) -> String {
    let games = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/games/api.pgn");
    format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"{}\"]\n[tree]\nmax_ply = 10\nmin_games = {min_games}\n",
        mini_sources(),
        games.display()
    )
}

/// `okb serve` on port 0, its stderr into a file of the project (read back by [`log`]).
struct Serving {
    child: std::process::Child,
    base: String,
    log: std::path::PathBuf,
}

impl Serving {
    fn start(p: &Project) -> Serving {
        let log = p.path("serve.log");
        let file = std::fs::File::create(&log).unwrap();
        let mut cmd = p.command(&["serve", "--addr", "127.0.0.1:0"]);
        let child = cmd
            .stderr(file)
            .stdout(std::process::Stdio::null())
            .stdin(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut serving = Serving { child, base: String::new(), log };
        for _ in 0..600 {
            if let Some(at) = serving.log().find("http://") {
                serving.base = serving.log()[at..].split_whitespace().next().unwrap().to_string();
                return serving;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("okb serve printed no address:\n{}", serving.log());
    }

    fn log(&self) -> String {
        let mut text = String::new();
        std::fs::File::open(&self.log).unwrap().read_to_string(&mut text).unwrap();
        text
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One answer: the status, the `ETag` and the body.
type Seen = (u16, String, String);

fn fetch(client: &Client, url: &str, json: bool) -> Seen {
    let mut request = client.get(url);
    if json {
        request = request.header("accept", "application/json");
    }
    let response = request.send().unwrap();
    let status = response.status().as_u16();
    let etag =
        response.headers().get("etag").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    (status, etag, response.text().unwrap())
}

const START: &str = "/node/fen/rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR_w_KQkq_-_0_1";

#[test]
fn a_new_build_is_served_without_restart_and_no_answer_mixes_two_builds() {
    let p = Project::with_pipeline(&pipeline(1));
    p.make(&[]);
    let server = Serving::start(&p);
    let client = Client::new();
    let url = |path: &str| format!("{}{path}", server.base);
    let before = (fetch(&client, &url(START), false), fetch(&client, &url("/"), true));
    assert_eq!(before.0.0, 200, "{}", before.0.2);
    let first: Value = serde_json::from_str(&before.1.2).unwrap();
    assert_eq!(first["build"], 1);

    // Readers ask for the start position and the metadata, as fast as they can, while a
    // make writes the next build.
    let stop = Arc::new(AtomicBool::new(false));
    let seen: Arc<Mutex<Vec<(Seen, Seen)>>> = Arc::default();
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (stop, seen, base) = (stop.clone(), seen.clone(), server.base.clone());
            std::thread::spawn(move || {
                let client = Client::new();
                while !stop.load(Ordering::Relaxed) {
                    let pair = (
                        fetch(&client, &format!("{base}{START}"), false),
                        fetch(&client, &format!("{base}/"), true),
                    );
                    seen.lock().unwrap().push(pair);
                }
            })
        })
        .collect();
    std::fs::write(p.path("pipeline.toml"), pipeline(2)).unwrap();
    p.make(&[]);
    let mut after = None;
    for _ in 0..400 {
        let metadata = fetch(&client, &url("/"), true);
        if serde_json::from_str::<Value>(&metadata.2).unwrap()["build"] == 2 {
            after = Some((fetch(&client, &url(START), false), metadata));
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Let the readers see the new build too before they stop.
    std::thread::sleep(std::time::Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    readers.into_iter().for_each(|r| r.join().unwrap());
    let after =
        after.unwrap_or_else(|| panic!("build 2 never served; the server said:\n{}", server.log()));

    assert_ne!(
        before.0.2, after.0.2,
        "the builds answer the start position alike: the test shows nothing"
    );
    assert_ne!(before.0.1, after.0.1, "the builds have the same ETag");
    let seen = seen.lock().unwrap();
    for (node, metadata) in seen.iter() {
        assert_eq!((node.0, metadata.0), (200, 200), "{} / {}", node.2, metadata.2);
        // Each answer is one build's whole: its ETag goes with its body.
        assert!(node == &before.0 || node == &after.0, "an answer of neither build: {node:?}");
        assert!(
            metadata == &before.1 || metadata == &after.1,
            "metadata of neither build: {metadata:?}"
        );
    }
    assert!(seen.iter().any(|(node, _)| node == &before.0), "no reader saw the first build");
    assert!(seen.iter().any(|(node, _)| node == &after.0), "no reader saw the second build");
    let log = server.log();
    assert!(log.contains("Switched to build 2 of"), "{log}");
}
