//! The trees `okb serve` answers from disk on a store too large to hold in memory (the
//! ECO tree below a code, an opening's OpeningIQ file) are the bytes the in-memory graph
//! gives: a real `okb make` over the whole Lichess and SCID taxonomies and real games
//! writes the store, and every code's tree and every named opening's file is compared,
//! at several depths and game thresholds. Its store keeps its node answers one row per
//! position (`[store] answers_above = 0`), and each is the answer the tables give.

use crate::common;

use common::Project;
use okb::serve::{disk::Disk, eco_tree};
use okb::store::graph::Piece;

/// The five Lichess files and SCID's taxonomy, with two fixture game files at
/// `min_games = 1`, so that nodes carry game counts and transpositions.
fn project() -> Project {
    let fixture = |name: &str| {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/games")
            .join(name)
            .display()
            .to_string()
    };
    let p = common::whole_taxonomy_project(&format!(
        "[sources.games]\nkind = \"pgn\"\npaths = [\"{}\", \"{}\"]\n\
         [tree]\nmax_ply = 12\nmin_games = 1\n\
         [store]\npath = \"build/okb.sqlite\"\nanswers_above = 0\n",
        fixture("api.pgn"),
        fixture("openings.pgn")
    ));
    p.make(&[]);
    p
}

/// The [`project`] built: the project, its store's whole graph, and lookups on its store.
fn built() -> (Project, okb::graph::Graph, Disk) {
    let p = project();
    let path = p.path("build/okb.sqlite");
    let graph = okb::store::read::Store::open(&path).unwrap().graph().unwrap();
    let disk = Disk::open(&path, 1, 0).unwrap();
    (p, graph, disk)
}

/// The piece of the store below `root_id`, which must be there and small enough.
fn piece(disk: &Disk, root_id: &str, depth: u32, min_games: u64) -> okb::graph::Graph {
    match disk.piece(root_id, depth, min_games).unwrap() {
        Piece::Read(graph) => graph,
        other => panic!("{root_id} to depth {depth}: {other:?}"),
    }
}

#[test]
fn trees_read_from_disk_are_the_in_memory_answers() {
    let (_p, graph, disk) = built();

    // Every ECO and SCID code of the taxonomies: the same root, the same tree.
    let mut codes: Vec<String> = graph
        .nodes
        .iter()
        .filter_map(|n| n.entry.as_ref())
        .flat_map(|e| std::iter::once(e.eco.clone()).chain(e.scid.clone()))
        .collect();
    codes.sort();
    codes.dedup();
    assert!(codes.len() > 1000, "{} codes", codes.len());
    let mut compared = 0;
    for (i, code) in codes.iter().enumerate() {
        let root = eco_tree::root_of(&graph, code).unwrap();
        let root_id = disk.eco_root(code).unwrap().unwrap();
        assert_eq!(root_id, graph.node(root).node_id, "root of {code}");
        // Deep trees at a few codes (near the start they hold most of the tree), shallow
        // at every fifth.
        let depths: &[u32] = match i {
            _ if i % 211 == 0 => &[0, 1, 4, 8],
            _ if i % 5 == 0 => &[2],
            _ => &[],
        };
        for &depth in depths {
            for min_games in [0, 3] {
                let memory = eco_tree::tree(&graph, root, depth, min_games);
                let read = piece(&disk, &root_id, depth, min_games);
                let disk_tree = eco_tree::tree(&read, read.root, depth, min_games);
                assert_eq!(json(&disk_tree), json(&memory), "{code} depth {depth} min {min_games}");
                compared += 1;
            }
        }
    }
    assert!(disk.eco_root("A00z9").unwrap().is_none());

    // Every named opening's OpeningIQ file, found by its stem as the server finds it.
    let named = okb::export::named::of_graph(&graph);
    assert!(named.len() > 3000, "{} named openings", named.len());
    for (i, opening) in named.iter().enumerate() {
        let id = disk.stem(&opening.stem).unwrap().unwrap();
        assert_eq!(id, graph.node(opening.node).node_id, "stem {}", opening.stem);
        let depths: &[u32] = match i {
            _ if i % 211 == 0 => &[0, 2, 5, 8],
            _ if i % 5 == 0 => &[3],
            _ => &[],
        };
        for &depth in depths {
            let memory = okb::export::openingiq::opening_file(&graph, opening.node, depth);
            let read = piece(&disk, &id, depth, 0);
            let file = okb::export::openingiq::opening_file(&read, read.root, depth);
            assert_eq!(json(&file), json(&memory), "{} depth {depth}", opening.stem);
            compared += 1;
        }
    }
    assert!(disk.stem("no-such-opening").unwrap().is_none());
    assert!(matches!(disk.piece("no-such-node", 3, 0).unwrap(), Piece::Missing));
    assert!(compared > 1500, "{compared} answers compared");
}

/// `/masters` and `/lichess` on a large store without an explorer index answer from the
/// node and its moves read from disk: every node's answer is the in-memory one.
#[test]
fn explorer_answers_read_from_disk_are_the_in_memory_answers() {
    use okb::serve::masters;
    let (_p, graph, disk) = built();
    let query = |recent_games| masters::Query {
        filter: masters::Filter::default(),
        moves: masters::DEFAULT_MOVES,
        top_games: 0,
        recent_games,
        history: false,
    };
    let mut with_moves = 0;
    for (index, node) in graph.nodes.iter().enumerate() {
        let pos = okb::position::parse_fen(&node.fen).unwrap();
        let read = disk.node(&pos).unwrap().unwrap();
        assert_eq!(read.node_id, node.node_id);
        let opening = masters::move_opening(&read);
        assert_eq!(opening, masters::move_opening(node));
        let piece = piece(&disk, &read.node_id, 1, 0);
        for q in [query(None), query(Some(4))] {
            let memory = masters::answer(&graph, None, Some(index as u32), opening.clone(), &q);
            let disk_answer = masters::answer(&piece, None, Some(piece.root), opening.clone(), &q);
            assert_eq!(json(&disk_answer), json(&memory), "{}", node.fen);
        }
        with_moves += usize::from(!node.children.is_empty());
    }
    assert!(with_moves > 1000, "{with_moves} nodes with moves");
}

/// A store over `[store] answers_above` nodes keeps each node's `GET /node/fen` answer in
/// one row: each is the answer the tables give, the server reads it, a position not in
/// the store has none, and the rows do not depend on how many threads wrote them.
#[test]
fn node_answers_kept_one_row_per_position_are_the_answers_the_tables_give() {
    let (p, graph, disk) = built();
    let path = p.path("build/okb.sqlite");
    let store = okb::store::read::Store::open(&path).unwrap();
    let dictionary = store.answers_dictionary().unwrap().expect("node answers");
    // The node count is recorded with the answers, so a server does not count the rows.
    let recorded = store.meta().unwrap().get("nodes").cloned();
    assert_eq!(recorded, Some(graph.nodes.len().to_string()));
    assert_eq!(store.node_count().unwrap(), graph.nodes.len() as u64);
    for (i, node) in graph.nodes.iter().enumerate() {
        let pos = okb::position::parse_fen(&node.fen).unwrap();
        let tables = store.node_by_position(&okb::position::epd(&pos)).unwrap().unwrap();
        let blob = store.answer(okb::position::key(&pos)).unwrap().unwrap();
        let row = dictionary.answer(&blob, "okb.sqlite").unwrap();
        assert_eq!(
            String::from_utf8(row.clone()).unwrap(),
            String::from_utf8(json(&tables)).unwrap()
        );
        if i % 7 == 0 {
            // Read from the file, then from the cache, which keeps the row compressed.
            assert_eq!(disk.node_json(&pos).unwrap().unwrap(), row, "{}", node.fen);
            assert_eq!(disk.node_json(&pos).unwrap().unwrap(), row, "{} cached", node.fen);
        }
    }
    // The writer's pass over consecutive ids reads each node as a lookup by its id does,
    // transpositions included.
    let mut ids = Vec::new();
    store
        .each_node_id(|id| {
            ids.push(id);
            true
        })
        .unwrap();
    let mut transposed = 0;
    for batch in ids.chunks(100) {
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        let one_by_one = store.nodes_by_id(&refs).unwrap();
        transposed += one_by_one.iter().filter(|n| !n.transpositions.is_empty()).count();
        let range = store.nodes_in_id_range(&batch[0], batch.last().unwrap()).unwrap();
        assert!(
            json(&range) == json(&one_by_one),
            "nodes {} to {}",
            batch[0],
            batch.last().unwrap()
        );
    }
    assert!(transposed > 0, "the fixture has transpositions");
    let absent = okb::position::parse_fen("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1").unwrap();
    assert!(store.answer(okb::position::key(&absent)).unwrap().is_none());
    assert!(disk.node_json(&absent).unwrap().is_none());

    let part = |threads: usize| {
        let file = p.path(&format!("answers-{threads}.sqlite"));
        let rows = okb::store::answers_part::write_part(&path, &file, threads).unwrap();
        assert_eq!(rows, graph.nodes.len());
        std::fs::read(file).unwrap()
    };
    let one = part(1);
    assert!(one == part(3), "the rows written by 1 and by 3 threads differ");
    // Children's own columns given by the writer where it knows them, and read from their
    // rows where it does not, give the same rows.
    let facts = |id: &str| {
        let child = graph.node(graph.find_id(id)?);
        (child.ply % 2 == 0).then(|| okb::store::read::ChildFacts {
            opening_name: child.opening_name.clone(),
            variation_name: child.variation_name.clone(),
            stockfish_eval: child.engine.as_ref().map(|e| i64::from(e.eval)),
            is_dubious: child.engine.as_ref().map(|e| e.is_dubious),
        })
    };
    let file = p.path("answers-facts.sqlite");
    okb::store::answers_part::write_part_with(&path, &file, 2, Some(&facts)).unwrap();
    assert!(std::fs::read(file).unwrap() == one, "the rows written with facts differ");
}

/// A piece over its limit is refused, not read whole: the start position's tree to the
/// tree's full depth holds every node.
#[test]
fn a_piece_over_its_limit_is_refused() {
    let p = project();
    let path = p.path("build/okb.sqlite");
    let store = okb::store::read::Store::open(&path).unwrap();
    let graph = store.graph().unwrap();
    let start = graph.node(graph.root).node_id.clone();
    let cut =
        |limit| okb::store::graph::Cut { root_id: &start, max_depth: 40, min_games: 0, limit };
    assert!(matches!(store.piece(cut(1000)).unwrap(), Piece::TooLarge));
    match store.piece(cut(graph.nodes.len())).unwrap() {
        Piece::Read(read) => assert_eq!(read.nodes.len(), graph.nodes.len()),
        other => panic!("{other:?}"),
    }
}

/// An answer's bytes, serialized as the server serializes answers.
fn json(value: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_vec(value).unwrap()
}
