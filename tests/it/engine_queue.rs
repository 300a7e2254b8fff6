//! Engine annotation elsewhere, without Spark: `okb engine queue` → `okb engine annotate`
//! (in parts) → `okb engine import` → `okb make` starts no engine and exports the bytes a
//! local make does; import refuses results of another engine or other settings, and
//! damaged or truncated files, naming them. Real Stockfish at depth 8.

use crate::common;
use common::{Project, flat, mini_sources};

/// The mini taxonomies and two game files, engine at depth 8 on the first 6 plies, with
/// the exports that carry evaluations.
fn pipeline(engine: &str) -> String {
    let games = ["openings.pgn", "api.pgn"]
        .map(|g| format!("\"{}/fixtures/games/{g}\"", env!("CARGO_MANIFEST_DIR")));
    format!(
        "{}[sources.games]\nkind = \"pgn\"\npaths = [{}]\n[tree]\nmax_ply = 8\nmin_games = 1\n\
         [engine]\nengines = 2\nmax_ply = 6\ndepth_branching = 8\ndepth_leaf = 8\ndepth_popular = 8\n{engine}\n\
         [exports.pgn]\nformat = \"pgn\"\noutput = \"out/pgn\"\n[exports.iq]\nformat = \"openingiq\"\noutput = \"out/iq\"\n\
         [exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n",
        mini_sources(),
        games.join(", ")
    )
}

fn ok(p: &Project, args: &[&str]) -> common::Run {
    let run = p.okb(args);
    assert_eq!(run.status, 0, "okb {args:?} failed:\n{}", run.stderr);
    run
}

/// Runs okb, asserts it fails with status 1 and that its error (lines joined) says `says`.
fn refused(p: &Project, args: &[&str], says: &str) {
    let run = p.okb(args);
    let text = flat(&run.stderr);
    assert_eq!(run.status, 1, "okb {args:?}:\n{text}");
    assert!(text.contains(says), "okb {args:?} does not say {says:?}:\n{text}");
}

fn engine_line(run: &common::Run) -> String {
    run.stderr.lines().find(|l| l.contains(" engine (")).unwrap_or_default().to_string()
}

/// Queues the project's searches and annotates them in `parts` parts; returns the files.
fn queue_and_annotate(p: &Project, parts: usize) -> Vec<String> {
    let queued = ok(p, &["engine", "queue", "-o", "queue.okbq"]);
    assert!(
        queued.stderr.contains("Building engine-queue") && queued.stderr.contains("0 cached"),
        "{}",
        queued.stderr
    );
    (1..=parts)
        .map(|k| {
            let out = format!("part-{k}.okbr");
            ok(
                p,
                &[
                    "engine",
                    "annotate",
                    "--part",
                    &format!("{k}/{parts}"),
                    "-j",
                    "1",
                    "-o",
                    &out,
                    "queue.okbq",
                ],
            );
            out
        })
        .collect()
}

#[test]
fn queue_annotate_import_then_make_starts_no_engine_and_exports_a_local_makes_bytes() {
    let local = Project::with_pipeline(&pipeline(""));
    let reference = local.make(&[]);
    assert!(engine_line(&reference).contains("0 cached"), "{}", reference.stderr);

    let p = Project::with_pipeline(&pipeline(""));
    let parts = queue_and_annotate(&p, 3);
    let mut import = vec!["engine", "import"];
    import.extend(parts.iter().map(String::as_str));
    let imported = ok(&p, &import);
    assert!(imported.stderr.contains("Imported part-3.okbr"), "{}", imported.stderr);
    let made = p.make(&[]);
    let line = engine_line(&made);
    assert!(line.contains(" 0 analysed") && line.contains("0 engines started"), "{}", made.stderr);
    common::assert_same_outputs(&local, &p, &["out/nodes.csv", "out/pgn", "out/iq"]);
    let again = ok(&p, &["engine", "queue", "-o", "empty.okbq"]);
    assert!(again.stderr.contains("0 queued"), "{}", again.stderr);
}

#[test]
fn import_refuses_results_of_other_settings_or_another_engine_naming_file_and_field() {
    let p = Project::with_pipeline(&pipeline(""));
    let parts = queue_and_annotate(&p, 1);
    std::fs::write(p.path("pipeline.toml"), pipeline("multipv = 2")).unwrap();
    refused(
        &p,
        &["engine", "import", &parts[0]],
        "part-1.okbr: made with multipv = 3, but the pipeline's [engine] has multipv = 2",
    );

    // Another binary (Stockfish with one byte appended: it runs, but it is not the same
    // engine): annotate refuses it against the queue, and import refuses its results.
    let other = p.path("stockfish-other");
    let mut bytes = std::fs::read("/usr/games/stockfish")
        .expect("Stockfish in /usr/games (apt-get install stockfish)");
    bytes.push(0);
    std::fs::write(&other, bytes).unwrap();
    std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let args =
        ["engine", "annotate", "--engine", other.to_str().unwrap(), "-o", "x.okbr", "queue.okbq"];
    refused(&p, &args, "queue.okbq asks for the engine binary with BLAKE3");
    std::fs::write(p.path("pipeline.toml"), pipeline(&format!("path = \"{}\"", other.display())))
        .unwrap();
    refused(&p, &["engine", "import", &parts[0]], "part-1.okbr: made with binary_blake3 = ");

    // Nothing was imported: with the original settings every position is still queued.
    std::fs::write(p.path("pipeline.toml"), pipeline("")).unwrap();
    let queued = ok(&p, &["engine", "queue", "-o", "queue.okbq"]);
    assert!(queued.stderr.contains(" 0 cached"), "{}", queued.stderr);
}

#[test]
fn damaged_truncated_or_foreign_files_are_errors_naming_them_and_nothing_is_imported() {
    let p = Project::with_pipeline(&pipeline(""));
    let parts = queue_and_annotate(&p, 2);
    let bytes = p.read(&parts[1]);
    std::fs::write(p.path("cut.okbr"), &bytes[..bytes.len() / 2]).unwrap();
    refused(&p, &["engine", "import", &parts[0], "cut.okbr"], "cut.okbr: damaged or truncated");
    refused(&p, &["engine", "import", "queue.okbq"], "queue.okbq: not an okb engine results file");
    refused(
        &p,
        &["engine", "annotate", "-o", "x.okbr", &parts[0]],
        "part-1.okbr: not an okb engine queue file",
    );
    // The good file given with the cut one was not imported either.
    let queued = ok(&p, &["engine", "queue", "-o", "queue.okbq"]);
    assert!(queued.stderr.contains(" 0 cached"), "{}", queued.stderr);
}

#[test]
fn settings_that_tie_a_result_to_its_run_cannot_be_queued() {
    let p = Project::with_pipeline(&pipeline("tt_locality = true"));
    refused(
        &p,
        &["engine", "queue", "-o", "queue.okbq"],
        "tt_locality = true lets a result depend on",
    );
    assert!(!p.path("queue.okbq").exists());
}

#[test]
fn positions_the_engine_failed_travel_in_the_results_and_are_left_for_make() {
    let crash = format!("{}/fixtures/engines/crash.py", env!("CARGO_MANIFEST_DIR"));
    // The engine's first two plies only: every search starts (and kills) a Python process.
    let engine = format!("path = \"{crash}\"\nmax_attempts = 1\nmax_consecutive_failures = 1000");
    let p = Project::with_pipeline(&pipeline(&engine).replace("max_ply = 6", "max_ply = 1"));
    ok(&p, &["engine", "queue", "-o", "queue.okbq"]);
    let annotated =
        ok(&p, &["engine", "annotate", "--engine", &crash, "-o", "crashed.okbr", "queue.okbq"]);
    assert!(
        annotated.stderr.contains(" 0 analysed") && annotated.stderr.contains("warning"),
        "{}",
        annotated.stderr
    );
    let imported = ok(&p, &["engine", "import", "crashed.okbr"]);
    assert!(
        imported.stderr.contains("(0 results, ")
            && imported.stderr.contains("failed positions left for `okb make`"),
        "{}",
        imported.stderr
    );
}
