//! Bad input gets a clear diagnostic naming the file, line or value; the build goes on.

use crate::common;
use common::{Project, mini_sources};

fn bad_tsv_project() -> Project {
    let tsv = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/eco/bad.tsv");
    Project::with_pipeline(&format!(
        "[sources.bad]\nkind = \"lichess-tsv\"\npath = \"{}\"\n\n[exports.csv]\nformat = \"csv\"\noutput = \"out/nodes.csv\"\n",
        tsv.display()
    ))
}

#[test]
fn broken_tsv_rows_are_skipped_with_file_line_and_text() {
    let p = bad_tsv_project();
    let run = p.make(&[]);
    for expected in [
        "bad:3: bad ECO code: \"B0X\"",
        "bad:4: expected 3 tab-separated columns (eco, name, pgn), found 2",
        "bad:5: move 3 (Ke3) is illegal",
        "bad:6: row is not valid UTF-8",
    ] {
        assert!(run.stderr.contains(expected), "missing {expected:?} in\n{}", run.stderr);
    }
    assert!(run.stderr.contains("4 warnings"), "{}", run.stderr);
    // The good row made it into the store.
    let q = p.okb(&["query", "moves", "1. e4 a6", "--json"]);
    assert!(q.stdout.contains("Good Row"), "{}", q.stdout);
}

#[test]
fn strict_turns_warnings_into_failure_but_keeps_the_build() {
    let p = bad_tsv_project();
    let run = p.okb(&["make", "--strict"]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert!(p.path("out/nodes.csv").exists());
    // Warnings of fresh steps still count.
    assert_eq!(p.okb(&["make", "--strict"]).status, 3);
}

#[test]
fn pipeline_errors_point_at_the_offending_line() {
    let p = Project::with_pipeline("[tree]\nmax_ply = 15\nmin_gamez = 3\n");
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("unknown field `min_gamez`"), "{}", run.stderr);
    assert!(run.stderr.contains("pipeline.toml:3:1"), "{}", run.stderr);

    let p = Project::with_pipeline(
        "[sources.x]\nkind = \"lichess-tsv\"\nblake3 = \"abc\"\npath = \"x.tsv\"\n",
    );
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("blake3 must be 64 lowercase hex digits"), "{}", run.stderr);
    assert!(run.stderr.contains("pipeline.toml:3:"), "{}", run.stderr);

    let p = Project::with_pipeline("[sources.x]\nkind = \"csv-of-doom\"\npath = \"x\"\n");
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("unknown variant `csv-of-doom`"), "{}", run.stderr);

    // A setting of another kind: the source's header, the setting and both kinds.
    let p = Project::with_pipeline(
        "[eco]\ninterpolate = true\n\n[sources.x]\nkind = \"lichess-tsv\"\npath = \"x.tsv\"\nmonths = [\"2013-01\"]\n",
    );
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1);
    let said = common::flat(&run.stderr);
    assert!(said.contains("source \"x\": kind \"lichess-tsv\" takes no `months` (a setting of kind \"lichess-db\")"), "{}", run.stderr);
    assert!(run.stderr.contains("pipeline.toml:4:1"), "{}", run.stderr);
}

#[test]
fn unknown_profile_lists_the_known_ones() {
    let p = Project::with_pipeline("[tree]\nmax_ply = 15\n\n[profile.quick.tree]\nmax_ply = 8\n");
    let run = p.okb(&["make", "--profile", "slow"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr.contains("no profile named \"slow\"") && run.stderr.contains("quick"),
        "{}",
        run.stderr
    );
    assert_eq!(p.okb(&["make", "--profile", "quick"]).status, 0);
}

#[test]
fn a_bad_fen_in_a_query_is_named() {
    let p = bad_tsv_project();
    p.make(&[]);
    let run = p.okb(&["query", "fen", "not/a/fen w - -", "--json"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("invalid FEN \"not/a/fen w - -\""), "{}", run.stderr);
    let run = p.okb(&["query", "moves", "1. e4 e5 2. Ke3", "--json"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("move 3 (Ke3)"), "{}", run.stderr);
}

#[test]
fn query_before_make_says_what_to_do() {
    let p = bad_tsv_project();
    let run = p.okb(&["query", "eco", "B00"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("run `okb make` first"), "{}", run.stderr);
}

#[test]
fn a_missing_local_source_names_the_file() {
    let p = Project::with_pipeline(
        "[sources.gone]\nkind = \"lichess-tsv\"\npath = \"nowhere/a.tsv\"\n",
    );
    let run = p.okb(&["make"]);
    assert_eq!(run.status, 1);
    assert!(run.stderr.contains("nowhere/a.tsv"), "{}", run.stderr);
}

/// A key of `[exports.<name>]` that its format does not have: another format's setting,
/// a typo, or any setting of a format that has none.
#[test]
fn a_setting_an_export_format_does_not_have_is_named_at_its_line() {
    let cases = [
        ("polyglot", "delimiter = \";\"", "delimiter", "takes `weights`"),
        ("polyglot", "weigths = \"games\"", "weigths", "takes `weights`"),
        ("packed", "pretty = false", "pretty", "takes no settings"),
    ];
    for (format, setting, key, takes) in cases {
        let p = Project::with_pipeline(&format!(
            "{}\n[exports.book]\nformat = \"{format}\"\noutput = \"build/x\"\n{setting}\n",
            mini_sources()
        ));
        for command in [&["make"][..], &["status"][..]] {
            let run = p.okb(command);
            assert_eq!(run.status, 1, "{command:?}");
            // Each on its own line, which miette does not wrap at 80 columns.
            let said = format!("export \"book\": format \"{format}\" has no setting `{key}`");
            assert!(run.stderr.contains(&said), "{said}\n{}", run.stderr);
            assert!(run.stderr.contains(takes), "{takes}\n{}", run.stderr);
            // miette points at the key's line: line 11 of the file.
            assert!(run.stderr.contains("pipeline.toml:11:"), "{}", run.stderr);
        }
        assert!(!p.path("build/x").exists());
    }
}

/// A setting's value its format refuses is named at its line.
#[test]
fn a_bad_export_setting_value_is_named_at_its_line() {
    let cases = [
        ("csv", "delimiter = \";;\"", "delimiter must be one ASCII character"),
        ("polyglot", "weights = \"gamez\"", "unknown variant `gamez`"),
    ];
    for (format, setting, why) in cases {
        let p = Project::with_pipeline(&format!(
            "{}\n[exports.x]\nformat = \"{format}\"\noutput = \"build/x\"\n{setting}\n",
            mini_sources()
        ));
        let run = p.okb(&["make"]);
        assert_eq!(run.status, 1);
        assert!(run.stderr.contains(why), "{}", run.stderr);
        assert!(run.stderr.contains("pipeline.toml:11:"), "{}", run.stderr);
    }
}

#[test]
fn an_export_of_a_format_no_step_plans_is_named_with_the_formats() {
    let p = Project::with_pipeline(&format!(
        "{}\n[exports.book]\nformat = \"csv-of-doom\"\noutput = \"build/x\"\n",
        mini_sources()
    ));
    for command in [&["make"][..], &["status"][..]] {
        let run = p.okb(command);
        assert_eq!(run.status, 1, "{command:?}");
        assert!(
            run.stderr.contains("export \"book\": no export has format \"csv-of-doom\""),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.contains("[exports.book]") && run.stderr.contains("pipeline.toml:8:"),
            "{}",
            run.stderr
        );
        assert!(
            run.stderr.contains("the formats are eco-json, csv, polyglot, pgn"),
            "{}",
            run.stderr
        );
    }
    assert!(!p.path("build/x").exists());
}
