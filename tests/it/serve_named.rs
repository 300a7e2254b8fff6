//! A store over `okb serve --in-memory-nodes` answers search, structures, the player
//! collections, named openings' files, the explorer past the counted plies and the
//! OpenAPI document from its named positions, with the bytes a server holding the whole
//! graph gives, whether it reads them in one pass over the store file or from the named
//! summary a store with node answers keeps: a real `okb make` over the whole Lichess and
//! SCID taxonomies, games, a player collection and evaluations writes the store, and two
//! servers over it, one holding the graph and one told to hold none of it, are asked the
//! same questions.

use crate::common;

use common::{Project, Server};
use reqwest::blocking::Client;

/// The five Lichess files and SCID's taxonomy, two fixture game files at
/// `min_games = 1`, Kasparov's games as a player collection, and the evaluation dump
/// fixture for the first ply; with `answers`, its store keeps node answers and the named
/// summary (`[store] answers_above = 0`).
fn project(answers: bool) -> Project {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let fixture = |path: &str| root.join("fixtures").join(path).display().to_string();
    let p = common::whole_taxonomy_project(&format!(
        "[sources.games]\nkind = \"pgn\"\npaths = [\"{}\", \"{}\"]\n\
         [sources.kasparov]\nkind = \"pgn\"\npaths = [\"{}\"]\nplayers = [\"Kasparov, Gary\"]\n\
         [sources.evals]\nkind = \"lichess-evals\"\npath = \"{}\"\n\
         [engine]\npath = \"/nonexistent/stockfish\"\nmultipv = 3\nmax_ply = 1\n\
         depth_branching = 10\ndepth_leaf = 10\ndepth_popular = 10\nsources = [\"evals\"]\n\
         [tree]\nmax_ply = 12\nmin_games = 1\n[store]\npath = \"build/okb.sqlite\"\n{}",
        fixture("games/api.pgn"),
        fixture("games/openings.pgn"),
        common::masters_file("Kasparov.pgn.zst").display(),
        fixture("evals/stockfish-d12.jsonl"),
        if answers { "answers_above = 0\n" } else { "" },
    ));
    p.make(&[]);
    p
}

/// `text` as a URL's path segment or query value: every byte but ASCII letters and
/// digits percent-encoded.
fn encode(text: &str) -> String {
    text.bytes()
        .map(
            |b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            },
        )
        .collect()
}

/// What a server answered: status, the headers that describe the body, and the body.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

fn ask(client: &Client, server: &Server, path: &str) -> Answer {
    let response = client.get(server.url(path)).send().unwrap();
    let headers = ["content-type", "etag", "cache-control"]
        .iter()
        .map(|h| {
            let value = response.headers().get(*h).map(|v| v.to_str().unwrap().to_string());
            (h.to_string(), value.unwrap_or_default())
        })
        .collect();
    Answer { status: response.status().as_u16(), headers, body: response.text().unwrap() }
}

/// The questions asked of both servers: every structure, named openings' files, search
/// queries (words, prefixes, typos, run-together names), the player collection from
/// several positions, and the explorer where its counts end.
fn questions(p: &Project) -> Vec<String> {
    let store = okb::store::read::Store::open(&p.path("build/okb.sqlite")).unwrap();
    let graph = store.graph().unwrap();
    let mut paths = vec!["/openapi.json".to_string()];
    for s in store.structures().unwrap() {
        paths.push(format!("/structure/{}/openings", encode(&s.name)));
    }
    paths.push("/structure/no-such-structure/openings".into());
    let named = okb::export::named::of_graph(&graph);
    for n in named.iter().step_by(97) {
        paths.push(format!("/opening/{}/tree?max_depth=2", n.stem));
    }
    let queries = [
        "sicilian",
        "najdorf",
        "ruy",
        "ruy lopez",
        "sicillian",
        "carokann",
        "caro-kann",
        "queen's gambit",
        "kings indian",
        "king",
        "gambit",
        "defense",
        "attack",
        "variation",
        "french winawer",
        "e4",
        "b",
        "dragon",
        "zz",
        "nimzo",
        "london",
        "scandi",
        "grunfeld",
        "Grünfeld",
        "benko gambit accepted",
        "italian",
        "two knights",
        "vienna",
        "english",
    ];
    for q in queries {
        for limit in ["", "&limit=1", "&limit=100"] {
            paths.push(format!("/opening/search?q={}{limit}", encode(q)));
        }
    }
    let lines = ["", "e2e4", "e2e4,c7c5", "d2d4,g8f6,c2c4,g7g6", "g1f3", "e2e4,e7e5,g1f3,b8c6"];
    for (line, color) in lines.iter().flat_map(|l| [(l, "white"), (l, "black")]) {
        let play = if line.is_empty() { String::new() } else { format!("&play={line}") };
        paths.push(format!("/player?player=Kasparov,%20Gary&color={color}{play}"));
        paths.push(format!(
            "/player?player=kasparov&color={color}{play}&since=1990-01&recentGames=8"
        ));
    }
    paths.push("/player?player=Nobody&color=white".into());
    // No explorer index: no game to give.
    paths.push("/masters/pgn/none".into());
    // Past the counted plies (okbBeyondDepth), outside the tree, and in it.
    for play in [
        "e2e4,e7e5,g1f3,b8c6,f1b5,a7a6,b5a4,g8f6,e1g1,f8e7,f1e1,b7b5,a4b3,d7d6",
        "a2a3,a7a6,b2b3,b7b6,c2c3",
        "e2e4,c7c5",
    ] {
        paths.push(format!("/masters?play={play}"));
        paths.push(format!("/lichess?play={play}"));
    }
    paths
}

#[test]
fn a_store_over_the_in_memory_limit_answers_from_its_named_positions_as_in_memory() {
    let p = project(false);
    let path = p.path("build/okb.sqlite");
    let store = okb::store::read::Store::open(&path).unwrap();
    assert!(store.named_summary().unwrap().is_none(), "no summary without node answers");
    answers_as_in_memory(&p);
}

/// A store with node answers keeps the tally of its nodes as its named summary: the
/// server builds its named positions from it, without reading every node, and answers as
/// the server holding the graph does.
#[test]
fn a_store_with_a_named_summary_answers_from_it_as_in_memory() {
    use okb::serve::named::{Named, TallyFrom};
    let p = project(true);
    let (path, store, repertoires) = opened(&p);
    let (_, from) = Named::load(&store, &path, &repertoires).unwrap();
    assert_eq!(from, TallyFrom::Summary);
    // The summary is the bytes a pass over every node gives.
    let kept = store.named_summary().unwrap().unwrap();
    assert_eq!(kept.summary(), store.named_tally().unwrap().summary());
    // Each node answer the store step wrote, its children's names and evaluations taken
    // from the records it held, is the answer the tables give.
    let dictionary = store.answers_dictionary().unwrap().expect("node answers");
    let mut evaluated_children = 0;
    for node in store.graph().unwrap().nodes {
        let pos = okb::position::parse_fen(&node.fen).unwrap();
        let tables = store.node_by_position(&okb::position::epd(&pos)).unwrap().unwrap();
        let blob = store.answer(okb::position::key(&pos)).unwrap().unwrap();
        let row = String::from_utf8(dictionary.answer(&blob, "okb.sqlite").unwrap()).unwrap();
        assert_eq!(row, serde_json::to_string(&tables).unwrap(), "{}", node.fen);
        evaluated_children += tables.children.iter().filter(|c| c.stockfish_eval.is_some()).count();
    }
    assert!(evaluated_children > 0, "no answer shows an evaluated child");
    answers_as_in_memory(&p);
}

/// `p`'s store: its path, opened, and the repertoires beside it.
fn opened(
    p: &Project,
) -> (std::path::PathBuf, okb::store::read::Store, okb::serve::repertoire::Repertoires) {
    let path = p.path("build/okb.sqlite");
    let store = okb::store::read::Store::open(&path).unwrap();
    let repertoires = okb::serve::repertoire::Repertoires::load(&path).unwrap();
    (path, store, repertoires)
}

/// Two servers of `p`'s store, one holding the whole graph and one none of it, give the
/// same answer to every question.
fn answers_as_in_memory(p: &Project) {
    let whole = Server::start(p, &[], &[]);
    let named = Server::start(p, &["--in-memory-nodes", "0"], &[]);
    let client = Client::new();
    let paths = questions(p);
    let mut found = 0;
    for path in &paths {
        let (a, b) = (ask(&client, &whole, path), ask(&client, &named, path));
        assert_eq!(a, b, "{path}");
        assert!(a.status == 200 || a.status == 404, "{path}: {a:?}");
        found += usize::from(a.status == 200 && a.body.len() > 100);
    }
    assert!(found > paths.len() * 3 / 4, "{found} of {} answers carry content", paths.len());
    // The questions reach what the named positions hold.
    let openapi: serde_json::Value =
        serde_json::from_str(&ask(&client, &named, "/openapi.json").body).unwrap();
    let text = openapi.to_string();
    for example in ["Kasparov, Gary", "Carlsbad", "A00-amar-opening", "evaluated1"] {
        assert!(text.contains(example), "{example} in the examples: {text:.2000}");
    }
    let beyond = ask(&client, &named, &paths.iter().find(|p| p.contains("d7d6")).unwrap()[..]);
    assert!(beyond.body.contains("okbBeyondDepth"), "{}", beyond.body);
}

/// The named positions do not depend on the order the nodes are read in (a large store
/// is read in its table's order, or its named summary): every tie is broken by position
/// identity, and the summary's bytes are the same whatever the order.
#[test]
fn the_named_positions_do_not_depend_on_the_order_nodes_are_read_in() {
    use okb::graph::tally::NamedTally;
    use okb::serve::named::{ExplorerExamples, Named};
    let p = project(true);
    let (path, store, repertoires) = opened(&p);
    let mut nodes = store.graph().unwrap().nodes;
    let tally = |nodes: &[okb::graph::Node]| -> NamedTally {
        let mut tally = NamedTally::default();
        nodes.iter().for_each(|n| tally.add(n));
        tally
    };
    let build = |tally: NamedTally| -> Named {
        let explorer = ExplorerExamples { served: false, game_ids: Vec::new() };
        Named::from_tally(tally, &store, &path, &repertoires, explorer).unwrap()
    };
    let summary = tally(&nodes).summary();
    let sorted = build(tally(&nodes));
    let scanned = Named::scan(&store, &path, &repertoires).unwrap();
    let (kept, _) = Named::load(&store, &path, &repertoires).unwrap();
    nodes.reverse();
    assert_eq!(tally(&nodes).summary(), summary);
    let reversed = build(tally(&nodes));
    // Every seventh node first, then the rest: another order again.
    let (sevenths, rest): (Vec<_>, Vec<_>) =
        nodes.into_iter().enumerate().partition(|(i, _)| i % 7 == 0);
    let mixed: Vec<okb::graph::Node> = sevenths.into_iter().chain(rest).map(|(_, n)| n).collect();
    assert_eq!(tally(&mixed).summary(), summary);
    assert_eq!(store.named_summary().unwrap().unwrap().summary(), summary);
    let mixed = build(tally(&mixed));
    let names: Vec<String> = store.structures().unwrap().into_iter().map(|s| s.name).collect();
    for other in [&scanned, &kept, &reversed, &mixed] {
        assert_eq!(sorted.openapi(), other.openapi());
        for name in &names {
            assert_eq!(sorted.structure(name), other.structure(name), "{name}");
        }
        for q in ["sicilian", "gambit", "defense", "attack", "variation", "indian"] {
            assert_eq!(sorted.search(q, 100), other.search(q, 100), "{q}");
        }
    }
    assert!(names.len() >= 5 && sorted.search("gambit", 100).len() == 100);
}

/// Three masters files (years) and a Lichess month (speeds, ratings, months) with the
/// explorer index: a store served from disk answers every filter, its game references
/// and their PGN as the server holding the graph and the whole index in memory does.
#[test]
fn a_store_over_the_in_memory_limit_answers_its_explorer_index_from_disk_as_in_memory() {
    let shared = |rel: &str| {
        format!("{:?}", common::masters_file("").join("../..").join(rel).display().to_string())
    };
    let files: Vec<String> = [
        "masters/Alburt.pgn.zst",
        "masters/Ashley.pgn.zst",
        "lichess/lichess_db_standard_rated_2013-01.first5297.pgn",
    ]
    .iter()
    .map(|f| shared(&format!("corpus/{f}")))
    .collect();
    let p = Project::with_pipeline(&format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [{}]\n[tree]\nmax_ply = 8\nmin_games = 3\n[explorer]\n",
        common::mini_sources(),
        files.join(", ")
    ));
    p.make(&[]);
    let whole = Server::start(&p, &[], &[]);
    let disk = Server::start(&p, &["--in-memory-nodes", "0"], &[]);
    let client = Client::new();
    let masters = [
        "",
        "&since=1990&until=1999",
        "&since=2000",
        "&until=1979",
        "&topGames=3",
        "&moves=2&topGames=0",
    ];
    let lichess = [
        "",
        "&speeds=blitz",
        "&speeds=bullet,classical&ratings=1600,1800",
        "&ratings=2200,2500",
        "&since=2013-01&until=2013-01&history=true",
        "&history=true",
        "&recentGames=8&topGames=4",
        "&recentGames=0&topGames=0",
        "&until=2012-12",
    ];
    let lines = [
        "",
        "e2e4",
        "d2d4",
        "e2e4,c7c5",
        "e2e4,e7e5,g1f3",
        "d2d4,g8f6,c2c4",
        "a2a3,h7h6,h2h3",
        "g2g4,e7e5,f2f3",
    ];
    let mut paths = vec!["/openapi.json".to_string(), "/masters/pgn/nosuchid".to_string()];
    for line in lines {
        paths.extend(masters.iter().map(|f| format!("/masters?play={line}{f}")));
        paths.extend(lichess.iter().map(|f| format!("/lichess?play={line}{f}")));
    }
    let mut ids = std::collections::BTreeSet::new();
    let mut with_games = 0;
    for path in &paths {
        let (a, b) = (ask(&client, &whole, path), ask(&client, &disk, path));
        assert_eq!(a, b, "{path}");
        assert!(a.status == 200 || path.contains("nosuchid"), "{path}: {a:?}");
        if a.status != 200 || !a.headers[0].1.contains("json") {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
        let listed = ["topGames", "recentGames"]
            .iter()
            .flat_map(|k| v[k].as_array().cloned().unwrap_or_default());
        let singles = v["moves"].as_array().into_iter().flatten().map(|m| m["game"].clone());
        let before = ids.len();
        ids.extend(listed.chain(singles).filter_map(|g| g["id"].as_str().map(str::to_string)));
        with_games += usize::from(ids.len() > before);
    }
    assert!(with_games > 20, "{with_games} answers named new games");
    assert!(ids.len() > 50, "{} game ids", ids.len());
    for id in &ids {
        let path = format!("/masters/pgn/{id}");
        let (a, b) = (ask(&client, &whole, &path), ask(&client, &disk, &path));
        assert_eq!(a, b, "{path}");
        assert_eq!(a.status, 200, "{path}: {a:?}");
        assert!(a.body.contains("[White "), "{path}: {}", a.body);
    }
}

/// Node answers that another okb wrote in another form are not served as this okb's: the
/// server says so and answers from the tables, as this okb does. The same emptied table
/// under this okb's form is trusted (the position is then not found), which shows the
/// answers were asked.
#[test]
fn node_answers_of_another_form_are_left_to_the_tables() {
    use std::io::BufRead;
    let p = project(true);
    let path = p.path("build/okb.sqlite");
    let store = okb::store::read::Store::open(&path).unwrap();
    let ours = okb::store::read::answer_format();
    assert_eq!(store.answers_format().unwrap().as_deref(), Some(ours));
    let graph = store.graph().unwrap();
    let fen = graph.nodes.iter().find(|n| n.children.len() > 2 && n.ply > 0).unwrap().fen.clone();
    drop(store);
    let asked = format!("/node/fen/{}", encode(&fen));
    let client = Client::new();
    let expected = ask(&client, &Server::start(&p, &["--in-memory-nodes", "0"], &[]), &asked);
    assert_eq!(expected.status, 200);
    let set_form = |form: &str| {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute("DELETE FROM node_answers", []).unwrap();
        conn.execute("UPDATE meta SET value = ?1 WHERE key = 'answers_format'", [form]).unwrap();
    };
    set_form("another form");
    let mut child = p
        .command(&["serve", "--addr", "127.0.0.1:0", "--in-memory-nodes", "0"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let base =
        lines.by_ref().map_while(Result::ok).find_map(|l| common::served_address(&l)).unwrap();
    let answer = client.get(format!("{base}{asked}")).send().unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.text().unwrap(), expected.body, "the tables answer as the node answers did");
    let _ = child.kill();
    let said: String = lines.map_while(Result::ok).collect::<Vec<_>>().join("\n");
    let _ = child.wait();
    assert!(said.contains("Ignoring the node answers of") && said.contains("okb make"), "{said}");
    set_form(ours);
    let trusted = ask(&client, &Server::start(&p, &["--in-memory-nodes", "0"], &[]), &asked);
    assert_eq!(trusted.status, 404, "{}", trusted.body);
}
