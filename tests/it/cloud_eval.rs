//! Cloud evaluations as a source (`kind = "lichess-cloud-eval"`) against real servers on
//! 127.0.0.1: `okb serve` answering `/api/cloud-eval` from a knowledge base's
//! evaluations, and the misbehaving proxy of `common::proxy` in front of it.

use crate::common;
use std::path::PathBuf;

use common::proxy::{Fault, Misbehaving};
use common::{Project, Run, Server, eval_columns, mini_sources};

/// Depths the dump fixture (depth 12) covers.
const DEPTHS: &str = "depth_branching = 10\ndepth_leaf = 10\ndepth_popular = 10";

const CSV: &str = "\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n";

/// The mini tree evaluated from the Stockfish dump fixture (no engine), to `max_ply`.
fn evaluated(max_ply: u32) -> Project {
    let dump = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/evals/stockfish-d12.jsonl");
    let p = Project::with_pipeline(&format!(
        "{}[sources.evals]\nkind = \"lichess-evals\"\npath = \"{}\"\n[engine]\npath = \"/nonexistent/stockfish\"\nmultipv = 3\nmax_ply = {max_ply}\n{DEPTHS}\nsources = [\"evals\"]\n{CSV}",
        mini_sources(),
        dump.display()
    ));
    p.make(&[]);
    p
}

/// A project asking `url` for cloud evaluations, with `engine` in its `[engine]` table.
fn asker(url: &str, engine: &str) -> Project {
    Project::with_pipeline(&format!(
        "{}[sources.cloud]\nkind = \"lichess-cloud-eval\"\nurl = \"{url}\"\ntoken_env = \"OKB_TEST_CLOUD_TOKEN\"\n\
         [sources.cloud.politeness]\nrate = 0\nwait_after_429 = 0.2\nbackoff = 0.05\nbackoff_cap = 0.2\nmax_attempts = 8\ntimeout = 1\n\
         [engine]\nmultipv = 3\nsources = [\"cloud\"]\n{engine}\n{CSV}",
        mini_sources()
    ))
}

fn line<'a>(run: &'a Run, step: &str) -> &'a str {
    run.stderr.lines().find(|l| l.contains(step)).unwrap_or_default()
}

#[test]
fn okb_serve_s_evaluations_come_back_through_the_api_and_replay_pinned_offline() {
    let served = evaluated(99);
    let server = Server::start(&served, &[], &[]);
    let p = asker(&server.base, &format!("path = \"/nonexistent/stockfish\"\n{DEPTHS}"));
    let run = p.make(&[]);
    assert!(
        line(&run, " cloud-eval:cloud (")
            .contains("17 positions: 17 evaluated, 0 unknown to the server, 17 asked, 0 replayed"),
        "{}",
        run.stderr
    );
    assert!(line(&run, " engine (").contains("17 from cloud (median depth 12)"), "{}", run.stderr);
    assert_eq!(eval_columns(&p), eval_columns(&served));
    // Pin the answers, stop the server: an offline make takes exactly them.
    let manifest = run.stderr.split("blake3 = \"").nth(1).unwrap()[..64].to_string();
    let pipeline = std::fs::read_to_string(p.path("pipeline.toml")).unwrap();
    let pinned = pipeline.replace(
        "token_env = \"OKB_TEST_CLOUD_TOKEN\"\n",
        &format!("token_env = \"OKB_TEST_CLOUD_TOKEN\"\nblake3 = \"{manifest}\"\n"),
    );
    std::fs::write(p.path("pipeline.toml"), pinned).unwrap();
    drop(server);
    let offline = p.make(&["--offline"]);
    assert!(
        line(&offline, " cloud-eval:cloud (").contains("0 asked, 17 replayed"),
        "{}",
        offline.stderr
    );
    assert_eq!(eval_columns(&p), eval_columns(&served));
}

#[test]
fn faults_are_waited_out_a_404_is_an_answer_and_nothing_is_asked_twice() {
    let served = evaluated(2);
    let server = Server::start(&served, &[], &[]);
    let slow = Fault::Slow(std::time::Duration::from_millis(1500));
    let script = vec![
        Fault::Pass,
        Fault::Status(429, None),
        Fault::Status(500, None),
        Fault::Truncated,
        Fault::Invalid,
        Fault::Drop,
        slow,
    ];
    let bad = Misbehaving::start(&server.base, script, None);
    // Positions deeper than ply 2 are unknown to the server: Stockfish searches them.
    let p = asker(&bad.base, "depth_branching = 6\ndepth_leaf = 6\ndepth_popular = 6");
    let run = p.make(&[]);
    let cloud = line(&run, " cloud-eval:cloud (");
    let (asked, known) = (17, 7);
    assert!(
        cloud.contains(&format!(
            "{asked} positions: {known} evaluated, {} unknown to the server, {asked} asked",
            asked - known
        )),
        "{}",
        run.stderr
    );
    assert!(
        line(&run, " engine (").contains(&format!(
            "{known} from cloud (median depth 12), 0 cached, {} analysed",
            asked - known
        )),
        "{}",
        run.stderr
    );
    let paths = bad.paths();
    assert_eq!(
        paths.len(),
        asked + 6,
        "six faults (the slow answer outlasts the 1 s timeout), each retried once: {paths:#?}"
    );
    // A make that lost its build cache replays the journal: the server is not asked again.
    std::fs::remove_dir_all(p.path("cache")).unwrap();
    let again = p.make(&[]);
    assert!(
        line(&again, " cloud-eval:cloud (").contains(&format!("0 asked, {asked} replayed")),
        "{}",
        again.stderr
    );
    assert_eq!(bad.paths().len(), asked + 6);
}

#[test]
fn a_refused_token_stops_and_names_the_variable() {
    let served = evaluated(2);
    let server = Server::start(&served, &[], &[]);
    let bad = Misbehaving::start(&server.base, vec![Fault::Pass, Fault::Status(401, None)], None);
    let p = asker(&bad.base, &format!("path = \"/nonexistent/stockfish\"\n{DEPTHS}"));
    let run = p.okb(&["make"]);
    assert_ne!(run.status, 0);
    assert!(
        run.stderr.contains("401") && run.stderr.contains("OKB_TEST_CLOUD_TOKEN"),
        "{}",
        run.stderr
    );
}

/// A client that knows only `/openapi.json` can reach an evaluation: the `fen`
/// parameter's examples are positions the knowledge base evaluated, the start position
/// first, and each is answered with its lines.
#[test]
fn the_openapi_document_offers_positions_that_have_an_evaluation() {
    let served = evaluated(2);
    let server = Server::start(&served, &[], &[]);
    let client = reqwest::blocking::Client::new();
    let doc: serde_json::Value = serde_json::from_str(
        &client.get(server.url("/openapi.json")).send().unwrap().text().unwrap(),
    )
    .unwrap();
    let parameters = doc["paths"]["/api/cloud-eval"]["get"]["parameters"].as_array().unwrap();
    let fen = parameters.iter().find(|p| p["name"] == "fen").unwrap();
    let examples = fen["examples"].as_object().unwrap_or_else(|| panic!("no examples: {fen}"));
    assert_eq!(examples.len(), 3, "{fen}");
    assert_eq!(
        examples["evaluated1"]["value"], "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "{fen}"
    );
    for (name, example) in examples {
        let value = example["value"].as_str().unwrap();
        let response =
            client.get(server.url("/api/cloud-eval")).query(&[("fen", value)]).send().unwrap();
        assert_eq!(response.status().as_u16(), 200, "{name}: {value}");
        let answer: serde_json::Value = serde_json::from_str(&response.text().unwrap()).unwrap();
        assert!(
            !answer["pvs"][0]["moves"].as_str().unwrap_or_default().is_empty(),
            "{name}: {answer}"
        );
    }
}
