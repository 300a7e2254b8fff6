//! A Lichess explorer client pointed at `okb serve` works unchanged: the numbers are
//! computed as Lichess computes them (checked against python-chess reading the real
//! Lichess games), and the request a client sends (a bearer token) is accepted.

use crate::common;
use common::{Project, Server};
use serde_json::Value;

const GAMES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/corpus/lichess/lichess_db_standard_rated_2013-01.first5297.pgn"
);

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
    let run =
        std::process::Command::new("python3").args(["-c", FIRST_MOVES, GAMES]).output().unwrap();
    assert!(run.status.success(), "python-chess: {}", String::from_utf8_lossy(&run.stderr));
    let expected: Value = serde_json::from_slice(&run.stdout).unwrap();
    let (_p, server) = served();
    let client = reqwest::blocking::Client::new();
    let answer: Value = serde_json::from_str(
        &client.get(server.url("/lichess?moves=100")).send().unwrap().text().unwrap(),
    )
    .unwrap();
    let moves = answer["moves"].as_array().unwrap();
    assert!(moves.len() >= 15, "{answer}");
    for m in moves {
        let uci = m["uci"].as_str().unwrap();
        let games = m["white"].as_u64().unwrap()
            + m["draws"].as_u64().unwrap()
            + m["black"].as_u64().unwrap();
        assert_eq!(serde_json::json!([games, m["averageRating"]]), expected[uci], "{uci}");
    }
    // A move's opening is a name of the Lichess taxonomy (here fixtures/eco/mini.tsv) or
    // none, never a SCID or inherited name.
    let tsv = std::fs::read_to_string(common::fixture("mini.tsv")).unwrap();
    let lichess_names: Vec<&str> =
        tsv.lines().skip(1).filter_map(|l| l.split('\t').nth(1)).collect();
    let mut named = 0;
    for line in ["", "e2e4", "d2d4", "e2e4,c7c5", "d2d4,d7d5", "d2d4,d7d5,c2c4"] {
        let answer: Value = serde_json::from_str(
            &client
                .get(server.url(&format!("/lichess?play={line}&moves=100")))
                .send()
                .unwrap()
                .text()
                .unwrap(),
        )
        .unwrap();
        for m in answer["moves"].as_array().unwrap().iter().filter(|m| !m["opening"].is_null()) {
            named += 1;
            let name = m["opening"]["name"].as_str().unwrap();
            assert!(
                lichess_names.contains(&name),
                "after {line:?}, {}: {name:?} is not a Lichess name",
                m["san"]
            );
        }
    }
    assert!(named >= 3, "{named} named moves");
    // Clients send the token Lichess requires: it is accepted and changes nothing.
    let plain = client.get(server.url("/lichess?moves=5")).send().unwrap();
    let with_token =
        client.get(server.url("/lichess?moves=5")).bearer_auth("lip_anything").send().unwrap();
    assert_eq!(with_token.status(), 200);
    assert_eq!(plain.text().unwrap(), with_token.text().unwrap());
}

/// After 1. e4, per month (UTCDate's `YYYY-MM`): White wins, draws, Black wins, from
/// python-chess.
const MONTHS_AFTER_E4: &str = r#"
import json, sys, chess.pgn
months = {}
with open(sys.argv[1], encoding="utf-8") as f:
    while (g := chess.pgn.read_game(f)) is not None:
        moves = list(g.mainline_moves())
        result = g.headers.get("Result")
        if result not in ("1-0", "0-1", "1/2-1/2") or not moves or moves[0].uci() != "e2e4":
            continue
        m = months.setdefault(g.headers["UTCDate"][:7].replace(".", "-"), [0, 0, 0])
        m[("1-0", "1/2-1/2", "0-1").index(result)] += 1
print(json.dumps([{"month": k, "white": w, "draws": d, "black": b} for k, (w, d, b) in sorted(months.items())]))
"#;

#[test]
fn games_say_rated_or_casual_and_history_counts_each_month() {
    let run = std::process::Command::new("python3")
        .args(["-c", MONTHS_AFTER_E4, GAMES])
        .output()
        .unwrap();
    assert!(run.status.success(), "python-chess: {}", String::from_utf8_lossy(&run.stderr));
    let months: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert!(months.as_array().unwrap().len() >= 2, "{months}");
    // The real (rated) games, and one casual game of a later month that opens 1. d4.
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"{GAMES}\", \"games/*.pgn\"]\n[tree]\nmax_ply = 4\nmin_games = 5\n[explorer]\n",
        common::mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    let casual = "[Event \"Casual Blitz game\"]\n[Site \"https://lichess.org/casual01\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"0-1\"]\n\
                  [UTCDate \"2013.03.02\"]\n[UTCTime \"10:00:00\"]\n[WhiteElo \"1500\"]\n[BlackElo \"1500\"]\n[TimeControl \"300+0\"]\n\n1. d4 d5 0-1\n";
    std::fs::write(p.path("games/casual.pgn"), casual).unwrap();
    p.make(&[]);
    let server = Server::start(&p, &[], &[]);
    let client = reqwest::blocking::Client::new();
    let get = |path: &str| -> Value {
        serde_json::from_str(&client.get(server.url(path)).send().unwrap().text().unwrap()).unwrap()
    };

    // Every referenced game says its mode, as Lichess's do.
    let start = get("/lichess?recentGames=8&topGames=4");
    let games: Vec<&Value> = start["topGames"]
        .as_array()
        .unwrap()
        .iter()
        .chain(start["recentGames"].as_array().unwrap())
        .collect();
    assert!(games.len() >= 8, "{start}");
    for g in &games {
        let expected = if g["id"] == "casual01" { "casual" } else { "rated" };
        assert_eq!(g["mode"], expected, "{g}");
    }
    assert_eq!(start["recentGames"][0]["id"], "casual01", "the latest game: {start}");

    // history: the months python-chess counts, in order; since pads with empty months.
    let answer = get("/lichess?play=e2e4&history=true");
    assert_eq!(answer["history"], months, "{answer}");
    let first = months[0]["month"].as_str().unwrap();
    let (year, month) = first.split_once('-').unwrap();
    let before = if month == "01" {
        format!("{}-12", year.parse::<u32>().unwrap() - 1)
    } else {
        format!("{year}-{:02}", month.parse::<u32>().unwrap() - 1)
    };
    let padded = get(&format!("/lichess?play=e2e4&history=true&since={before}"));
    let history = padded["history"].as_array().unwrap();
    assert_eq!(
        history[0],
        serde_json::json!({"month": before, "white": 0, "draws": 0, "black": 0}),
        "{padded}"
    );
    assert_eq!(&history[1..], months.as_array().unwrap().as_slice());
    // Without history=true there is none, as on Lichess.
    assert!(get("/lichess?play=e2e4").get("history").is_none());
}

/// Two games, built with the explorer index: a Lichess game of a known month, and an
/// over-the-board game whose Date gives only the year.
fn two_games() -> (Project, Server) {
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [\"games/*.pgn\"]\n[tree]\nmax_ply = 4\nmin_games = 1\n[explorer]\n",
        common::mini_sources()
    ));
    std::fs::create_dir_all(p.path("games")).unwrap();
    let games = "[Event \"Rated Blitz game\"]\n[Site \"https://lichess.org/known001\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n\
                 [UTCDate \"2013.01.05\"]\n[UTCTime \"10:00:00\"]\n[WhiteElo \"1500\"]\n[BlackElo \"1500\"]\n[TimeControl \"300+0\"]\n\n1. e4 e5 2. Nf3 1-0\n\n\
                 [Event \"Olympiad\"]\n[Site \"Somewhere\"]\n[Date \"1999.??.??\"]\n[White \"Master, A\"]\n[Black \"Master, B\"]\n[Result \"1/2-1/2\"]\n\
                 [WhiteElo \"2700\"]\n[BlackElo \"2690\"]\n\n1. e4 c5 2. Nf3 1/2-1/2\n";
    std::fs::write(p.path("games/two.pgn"), games).unwrap();
    p.make(&[]);
    let server = Server::start(&p, &[], &[]);
    (p, server)
}

/// GETs `path` on `server`: the status and the body.
fn fetch(server: &Server, path: &str) -> (u16, String) {
    let response = reqwest::blocking::get(server.url(path)).unwrap();
    (response.status().as_u16(), response.text().unwrap())
}

/// Lichess's explorer keeps `/master` and `/master/pgn/{id}` as aliases of the masters
/// endpoints, and clients use them (berserk's `get_otb_master_game` asks for the latter).
#[test]
fn the_master_paths_are_aliases_of_the_masters_paths() {
    let (_p, server) = two_games();
    for (alias, path) in
        [("/master", "/masters"), ("/master?play=e2e4&topGames=1", "/masters?play=e2e4&topGames=1")]
    {
        let (status, body) = fetch(&server, alias);
        assert_eq!((status, body), fetch(&server, path), "{alias}");
        assert_eq!(status, 200, "{alias}");
    }
    let masters: Value = serde_json::from_str(&fetch(&server, "/masters").1).unwrap();
    let ids: Vec<&str> =
        masters["topGames"].as_array().unwrap().iter().map(|g| g["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2, "{masters}");
    for id in ids {
        let (status, pgn) = fetch(&server, &format!("/master/pgn/{id}"));
        assert_eq!(status, 200, "/master/pgn/{id}: {pgn}");
        assert!(pgn.contains("1. e4"), "{pgn}");
        assert_eq!((status, pgn), fetch(&server, &format!("/masters/pgn/{id}")));
    }
    assert_eq!(fetch(&server, "/master/pgn/nosuchid").0, 404);
}

/// Booleans are spelled as Lichess's explorer reads them: berserk sends Python's `True`.
#[test]
fn booleans_are_read_in_every_spelling_lichess_accepts() {
    let (_p, server) = two_games();
    let (status, with) = fetch(&server, "/lichess?history=true");
    assert_eq!(status, 200, "{with}");
    assert!(serde_json::from_str::<Value>(&with).unwrap()["history"].is_array(), "{with}");
    let without = fetch(&server, "/lichess").1;
    for yes in ["True", "on", "1", "yes"] {
        assert_eq!(
            fetch(&server, &format!("/lichess?history={yes}")),
            (200, with.clone()),
            "history={yes}"
        );
    }
    for no in ["false", "False", "off", "0", "no"] {
        assert_eq!(
            fetch(&server, &format!("/lichess?history={no}")),
            (200, without.clone()),
            "history={no}"
        );
    }
    for bad in ["TRUE", "maybe", ""] {
        let (status, body) = fetch(&server, &format!("/lichess?history={bad}"));
        assert_eq!(status, 400, "history={bad}: {body}");
        assert!(body.contains("history must be one of true, True, on, 1, yes"), "{body}");
    }
}

/// A top game of unknown month says `"month": null`, as Lichess's explorer writes it
/// (clients read `game["month"]`), on both endpoints.
#[test]
fn a_game_of_unknown_month_says_month_null() {
    let (_p, server) = two_games();
    for path in ["/masters?play=e2e4", "/lichess?play=e2e4&topGames=4&recentGames=4"] {
        let answer: Value = serde_json::from_str(&fetch(&server, path).1).unwrap();
        let games: Vec<&Value> = ["topGames", "recentGames"]
            .iter()
            .filter_map(|k| answer[k].as_array())
            .flatten()
            .collect();
        let month = |year: u64| {
            games
                .iter()
                .find(|g| g["year"] == year)
                .map(|g| g.as_object().unwrap().get("month").cloned())
        };
        assert_eq!(month(1999), Some(Some(Value::Null)), "{path}: {answer}");
        assert_eq!(month(2013), Some(Some(Value::from("2013-01"))), "{path}: {answer}");
    }
}

/// Lichess's rule for an explorer answer's `opening`, in python-chess over the Lichess
/// taxonomy files (argv[1:]): the name of the position asked, else of the last position
/// along `play` (from `fen`, or the start) that a row's line ends on, else null. Cases:
/// every line of the rows cut at plies 0 to 4, each ply-3 cut with one more move no row
/// plays there, and each ply-4 cut asked as its ply-2 position's FEN and two moves.
const LICHESS_OPENINGS: &str = r#"
import json, sys, chess
named, lines = {}, set()
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        next(f)
        for row in f:
            eco, name, pgn = row.rstrip("\n").split("\t")[:3]
            board, ucis = chess.Board(), []
            for token in pgn.split():
                if not token.endswith("."):
                    ucis.append(board.push_san(token).uci())
            named[board.epd()] = {"eco": eco, "name": name}
            for cut in range(0, min(4, len(ucis)) + 1):
                lines.add(tuple(ucis[:cut]))
def name(board, play):
    opening = named.get(board.epd())
    for uci in play:
        board.push_uci(uci)
        opening = named.get(board.epd(), opening)
    return opening
cases = []
for line in sorted(lines):
    cases.append({"play": ",".join(line), "opening": name(chess.Board(), line)})
    if len(line) == 3:
        board = chess.Board()
        for uci in line:
            board.push_uci(uci)
        played = {l[3] for l in lines if len(l) == 4 and l[:3] == line}
        other = next((m.uci() for m in sorted(board.legal_moves, key=lambda m: m.uci()) if m.uci() not in played), None)
        if other:
            cases.append({"play": ",".join(line + (other,)), "opening": name(chess.Board(), line + (other,))})
    if len(line) == 4:
        board = chess.Board()
        for uci in line[:2]:
            board.push_uci(uci)
        cases.append({"fen": board.fen(), "play": ",".join(line[2:]), "opening": name(board.copy(), line[2:])})
print(json.dumps(cases))
"#;

/// The top-level `opening` is the one Lichess's explorer gives: the Lichess taxonomy's own
/// name of the position, else of the last named position along `play`, else null (the
/// start position: null), never an inherited or SCID name.
#[test]
fn the_position_s_opening_is_named_by_lichess_s_rule() {
    let tsvs: Vec<String> = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|f| {
            common::shared_sources()
                .join(format!("lichess-chess-openings/{f}.tsv"))
                .display()
                .to_string()
        })
        .collect();
    let run = std::process::Command::new("python3")
        .arg("-c")
        .arg(LICHESS_OPENINGS)
        .args(&tsvs)
        .output()
        .unwrap();
    assert!(run.status.success(), "python-chess: {}", String::from_utf8_lossy(&run.stderr));
    let cases: Vec<Value> = serde_json::from_slice(&run.stdout).unwrap();
    assert!(cases.len() > 1000, "{} cases", cases.len());
    // The real taxonomies (Lichess's, SCID's, pgn-extract's), no games.
    let p = Project::full();
    p.make(&[]);
    let server = Server::start(&p, &[], &[]);
    let client = reqwest::blocking::Client::new();
    let mut wrong = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let mut query = vec![("play", case["play"].as_str().unwrap()), ("moves", "0")];
        if let Some(fen) = case["fen"].as_str() {
            query.push(("fen", fen));
        }
        // Both endpoints name positions alike: each case on one of them.
        let endpoint = if i % 2 == 0 { "/masters" } else { "/lichess" };
        let answer: Value = serde_json::from_str(
            &client.get(server.url(endpoint)).query(&query).send().unwrap().text().unwrap(),
        )
        .unwrap();
        if answer["opening"] != case["opening"] {
            wrong.push(format!(
                "{endpoint} {query:?}: {} (Lichess: {})",
                answer["opening"], case["opening"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{} of {} differ:\n{}", wrong.len(), cases.len(), wrong.join("\n"));
    // The two the issue saw: the start position, and 1. d4 Nf6 2. c4 e6 (no row ends there).
    let start: Value = serde_json::from_str(&fetch(&server, "/masters").1).unwrap();
    assert!(start["opening"].is_null(), "{start}");
    let indian: Value =
        serde_json::from_str(&fetch(&server, "/lichess?play=d2d4,g8f6,c2c4,e7e6").1).unwrap();
    assert_eq!(
        indian["opening"],
        serde_json::json!({"eco": "A50", "name": "Indian Defense: Normal Variation"}),
        "{indian}"
    );
}

/// A position deeper than the knowledge base counted answers zero counts, as Lichess's
/// shape has it, and says why (issue 44, item 7); a shallow position does not.
#[test]
fn a_position_deeper_than_the_knowledge_base_says_so() {
    let (_p, server) = served();
    // The Sicilian's sixth ply: the tree counts to ply 4.
    for endpoint in ["/masters", "/lichess"] {
        let (status, body) =
            fetch(&server, &format!("{endpoint}?play=e2e4,c7c5,g1f3,d7d6,d2d4,c5d4"));
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            (&answer["white"], &answer["draws"], &answer["black"]),
            (&0.into(), &0.into(), &0.into())
        );
        assert_eq!(answer["moves"], serde_json::json!([]), "{body}");
        assert_eq!(
            answer["okbBeyondDepth"],
            serde_json::json!({"ply": 6, "countedToPly": 4}),
            "{body}"
        );
        // Within the counted plies, zero or not, nothing is added.
        for play in ["e2e4,c7c5", "b1a3,b8a6,a3b1,a6b8"] {
            let (_, body) = fetch(&server, &format!("{endpoint}?play={play}"));
            let answer: Value = serde_json::from_str(&body).unwrap();
            assert!(answer.get("okbBeyondDepth").is_none(), "{play}: {body}");
        }
    }
}
