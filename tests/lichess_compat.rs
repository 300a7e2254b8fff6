//! A Lichess explorer client pointed at `okb serve` works unchanged: the numbers are
//! computed as Lichess computes them (checked against python-chess reading the real
//! Lichess games), and the request a client sends (a bearer token) is accepted.

mod common;

use common::{Project, Server};
use serde_json::Value;

const GAMES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn");

/// The first 5,297 games of Lichess's January 2013 dump, built and served.
fn served() -> (Project, Server) {
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"{GAMES}\"]\n[tree]\nmax_ply = 4\nmin_games = 5\n[explorer]\n",
        common::mini_sources()
    ));
    p.make(&[]);
    let server = Server::start(&p, &[], &[]);
    (p, server)
}

/// Per first move (UCI): games and the mover's average rating, truncated, from python-chess.
const FIRST_MOVES: &str = r#"
import json, sys, chess.pgn
sums = {}
with open(sys.argv[1], encoding="utf-8") as f:
    while (g := chess.pgn.read_game(f)) is not None:
        moves = list(g.mainline_moves())
        if g.headers.get("Result") not in ("1-0", "0-1", "1/2-1/2") or not moves:
            continue
        s = sums.setdefault(moves[0].uci(), [0, 0, 0])
        s[0] += 1
        elo = g.headers.get("WhiteElo", "")
        if elo.isdigit() and int(elo) > 0:
            s[1] += int(elo); s[2] += 1
print(json.dumps({m: [n, total // rated if rated else 0] for m, (n, total, rated) in sums.items()}))
"#;

#[test]
fn numbers_and_requests_are_as_lichess_has_them() {
    let run = std::process::Command::new("python3").args(["-c", FIRST_MOVES, GAMES]).output().unwrap();
    assert!(run.status.success(), "python-chess: {}", String::from_utf8_lossy(&run.stderr));
    let expected: Value = serde_json::from_slice(&run.stdout).unwrap();
    let (_p, server) = served();
    let client = reqwest::blocking::Client::new();
    let answer: Value = serde_json::from_str(&client.get(server.url("/lichess?moves=100")).send().unwrap().text().unwrap()).unwrap();
    let moves = answer["moves"].as_array().unwrap();
    assert!(moves.len() >= 15, "{answer}");
    for m in moves {
        let uci = m["uci"].as_str().unwrap();
        let games = m["white"].as_u64().unwrap() + m["draws"].as_u64().unwrap() + m["black"].as_u64().unwrap();
        assert_eq!(serde_json::json!([games, m["averageRating"]]), expected[uci], "{uci}");
    }
    // A move's opening is a name of the Lichess taxonomy (here fixtures/eco/mini.tsv) or
    // none, never a SCID or inherited name.
    let tsv = std::fs::read_to_string(common::fixture("mini.tsv")).unwrap();
    let lichess_names: Vec<&str> = tsv.lines().skip(1).filter_map(|l| l.split('\t').nth(1)).collect();
    let mut named = 0;
    for line in ["", "e2e4", "d2d4", "e2e4,c7c5", "d2d4,d7d5", "d2d4,d7d5,c2c4"] {
        let answer: Value = serde_json::from_str(&client.get(server.url(&format!("/lichess?play={line}&moves=100"))).send().unwrap().text().unwrap()).unwrap();
        for m in answer["moves"].as_array().unwrap().iter().filter(|m| !m["opening"].is_null()) {
            named += 1;
            let name = m["opening"]["name"].as_str().unwrap();
            assert!(lichess_names.contains(&name), "after {line:?}, {}: {name:?} is not a Lichess name", m["san"]);
        }
    }
    assert!(named >= 3, "{named} named moves");
    // Clients send the token Lichess requires: it is accepted and changes nothing.
    let plain = client.get(server.url("/lichess?moves=5")).send().unwrap();
    let with_token = client.get(server.url("/lichess?moves=5")).bearer_auth("lip_anything").send().unwrap();
    assert_eq!(with_token.status(), 200);
    assert_eq!(plain.text().unwrap(), with_token.text().unwrap());
}
