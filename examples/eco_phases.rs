//! Times each part of a cold Phase 1 build in-process, without the build engine: the
//! taxonomy parses, merge, tree, structures, the CSV and eco.json renderings, the cache
//! encodings and the store write (best of `REPS` runs, default 5; `MERGE_ONLY=1` stops
//! after the merge, `STORE_ONLY=1` skips the export renderings, for profiling). `bench/run eco` measures the whole `okb make`; this
//! says where its time goes. Reads the taxonomies from `../shared/sources`.
//!
//!     cargo run --release --example eco_phases

#[global_allocator]
static A: mimalloc::MiMalloc = mimalloc::MiMalloc;
use okb::eco::{self, EcoFormat, merge::MergeInput};
use std::time::{Duration, Instant};

fn best<T>(n: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut out = None;
    for _ in 0..n {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed());
        out = Some(v);
    }
    (best, out.unwrap())
}

fn main() {
    let m = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/sources");
    let files = [
        (EcoFormat::LichessTsv, "lichess-chess-openings/a.tsv"),
        (EcoFormat::LichessTsv, "lichess-chess-openings/b.tsv"),
        (EcoFormat::LichessTsv, "lichess-chess-openings/c.tsv"),
        (EcoFormat::LichessTsv, "lichess-chess-openings/d.tsv"),
        (EcoFormat::LichessTsv, "lichess-chess-openings/e.tsv"),
        (EcoFormat::Scid, "scid/scid.eco"),
        (EcoFormat::PgnExtract, "pgn-extract/eco.pgn"),
    ];
    let bytes: Vec<_> =
        files.iter().map(|(f, p)| (*f, *p, std::fs::read(format!("{m}/{p}")).unwrap())).collect();
    let (t, parsed) = best(reps(), || {
        bytes.iter().map(|(f, p, b)| (*f, *p, eco::parse(*f, p, b))).collect::<Vec<_>>()
    });
    println!("parse all (serial) {t:?}");
    let inputs: Vec<MergeInput> =
        parsed.iter().map(|(f, p, s)| MergeInput { format: *f, file: p, parsed: s }).collect();
    let (t, sk) = best(reps(), || eco::merge(&inputs, true));
    println!("merge {t:?}");
    if std::env::var_os("MERGE_ONLY").is_some() {
        return;
    }
    let params = okb::tree::TreeParams::default();
    let (t, tree) = best(reps(), || okb::tree::build(&sk, None, &params));
    println!("tree {t:?}");
    let classifier = okb::structure::Classifier::default();
    let (t, tags) = best(reps(), || okb::structure::tag_tree(&tree, &classifier));
    println!("structures {t:?}");
    if std::env::var_os("STORE_ONLY").is_none() {
        let (t, _) = best(reps(), || okb::export::csv::render(&tree, None, Some(&tags), b','));
        println!("csv {t:?}");
        let (t, _) = best(reps(), || okb::export::eco_json::render_all(&sk, false));
        println!("eco_json {t:?}");
        let (t, _) = best(reps(), || postcard::to_stdvec(&sk).unwrap().len());
        println!("postcard eco {t:?}");
        let (t, _) = best(reps(), || postcard::to_stdvec(&tree).unwrap().len());
        println!("postcard tree {t:?}");
    }
    let dir = std::env::temp_dir().join(format!("okb-eco-phases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = &dir.join("okb.sqlite");
    let entries = &dir.join("entries.sqlite");
    let (t, _) = best(reps(), || okb::store::write::write_entries(&sk, entries).unwrap());
    println!("store entries (beside the tree) {t:?}");
    let (t, _) = best(reps(), || {
        let _ = std::fs::remove_file(p);
        okb::store::write::write(&tree, entries, None, Some(&tags), &[], p).unwrap()
    });
    println!("store {t:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn reps() -> usize {
    std::env::var("REPS").ok().and_then(|s| s.parse().ok()).unwrap_or(5)
}
