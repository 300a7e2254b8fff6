//! `okb inspect FILE`: decodes a packed move-record file (`format = "packed"`) into a
//! table, or JSON with `--json`, so the bits can be checked by eye or by a script.

use std::io::Write;
use std::path::PathBuf;

use miette::{IntoDiagnostic, WrapErr, miette};
use serde_json::json;

use crate::export::packed::{MoveRecord, from_bytes};

/// Arguments of `okb inspect`.
#[derive(Debug, Clone, clap::Args)]
pub struct InspectArgs {
    /// A packed move-record file (written by `[exports.X] format = "packed"` or
    /// `okb convert --format packed`).
    pub file: PathBuf,
    /// Print JSON: one object per entry with every field decoded.
    #[arg(long)]
    pub json: bool,
}

/// One entry as JSON: the raw bits, every field, and the derived values.
fn entry_json(key: u64, r: &MoveRecord) -> serde_json::Value {
    let (result, pct) = r.wdl_parts();
    json!({
        "key": format!("{key:016x}"),
        "record": format!("{:016x}", r.pack()),
        "uci": r.uci(),
        "from": r.from,
        "to": r.to,
        "promotion": r.promotion,
        "white_elo": r.white_elo(),
        "black_elo": r.black_elo(),
        "elo_diff_half": r.elo_diff_half,
        "black_stronger": r.black_stronger,
        "wdl": r.wdl,
        "wdl_result": result,
        "wdl_pct": pct,
        "count": r.count,
        "weight": r.weight,
    })
}

/// Runs `okb inspect`: prints the decoded entries on stdout.
pub fn run(args: &InspectArgs) -> miette::Result<()> {
    let bytes = std::fs::read(&args.file)
        .into_diagnostic()
        .wrap_err_with(|| format!("reading {}", args.file.display()))?;
    let entries = from_bytes(&bytes).map_err(|e| miette!("{}: {e}", args.file.display()))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        let list: Vec<serde_json::Value> = entries.iter().map(|(k, r)| entry_json(*k, r)).collect();
        serde_json::to_writer_pretty(&mut out, &list).into_diagnostic()?;
        writeln!(out).into_diagnostic()?;
    } else {
        writeln!(
            out,
            "{:<16}  {:<6} {:>9} {:>9} {:>10} {:>5} {:>6}",
            "polyglot key", "move", "white elo", "black elo", "result", "games", "weight"
        )
        .into_diagnostic()?;
        for (key, r) in &entries {
            let elo = |e: Option<i64>| e.map_or("-".to_string(), |v| v.to_string());
            let (result, pct) = r.wdl_parts();
            let games = if r.count == 4095 { "4095+".to_string() } else { r.count.to_string() };
            writeln!(
                out,
                "{key:016x}  {:<6} {:>9} {:>9} {:>10} {games:>5} {:>6}",
                r.uci(),
                elo(r.white_elo().map(i64::from)),
                elo(r.black_elo().map(i64::from)),
                format!("{result} {pct}%"),
                r.weight
            )
            .into_diagnostic()?;
        }
    }
    out.flush().into_diagnostic()?;
    eprintln!("{} entries", entries.len());
    Ok(())
}
