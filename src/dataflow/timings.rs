//! How long each step took when it last ran, so that `okb status` can say what a make
//! would cost before it starts (a filter change that rebuilds a Lichess counts state is
//! hours of work, and the user should know that before typing `okb make`).
//!
//! The times are kept in the build cache (`timings.tsv`: a step id and milliseconds per
//! line), never in a build output: they are wall-clock values and differ between runs.
//! A lost or damaged file only loses the estimate.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// The file's name in the cache folder.
pub const FILE_NAME: &str = "timings.tsv";

/// The last run time of each step id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    last: BTreeMap<String, Duration>,
}

/// What a set of steps should take by the last runs' times.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    /// The sum of the known and the inferred times.
    pub total: Duration,
    /// Steps timed by their own last run.
    pub timed: usize,
    /// Steps never run, timed by the mean of their siblings' (the other files of their
    /// source: `state:lichess:2026-10` by the source's other months).
    pub inferred: usize,
    /// Steps with no time to go by.
    pub unknown: usize,
}

impl Timings {
    /// The timings kept in `cache` (none when the file is missing or unreadable).
    pub fn load(cache: &Path) -> Timings {
        let text = std::fs::read_to_string(cache.join(FILE_NAME)).unwrap_or_default();
        let parse = |line: &str| {
            let (id, ms) = line.rsplit_once('\t')?;
            Some((id.to_string(), Duration::from_millis(ms.parse().ok()?)))
        };
        Timings { last: text.lines().filter_map(parse).collect() }
    }

    /// Notes that step `id` ran for `elapsed`.
    pub fn note(&mut self, id: &str, elapsed: Duration) {
        self.last.insert(id.to_string(), elapsed);
    }

    /// Writes the timings into `cache` (atomically: a kill leaves the old file).
    pub fn save(&self, cache: &Path) -> std::io::Result<()> {
        let text: String =
            self.last.iter().map(|(id, t)| format!("{id}\t{}\n", t.as_millis())).collect();
        crate::files::write_atomic(&cache.join(FILE_NAME), text.as_bytes())
    }

    /// What running `ids` should take.
    pub fn estimate<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Estimate {
        let mut estimate = Estimate::default();
        for id in ids {
            if let Some(t) = self.last.get(id) {
                estimate.total += *t;
                estimate.timed += 1;
            } else if let Some(t) = self.sibling_mean(id) {
                estimate.total += t;
                estimate.inferred += 1;
            } else {
                estimate.unknown += 1;
            }
        }
        estimate
    }

    /// The mean time of the steps that share `id`'s family (all but its last `:` part).
    fn sibling_mean(&self, id: &str) -> Option<Duration> {
        let (family, _) = id.rsplit_once(':')?;
        let prefix = format!("{family}:");
        let times: Vec<Duration> = self
            .last
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| !k[prefix.len()..].contains(':'))
            .map(|(_, t)| *t)
            .collect();
        let n = u32::try_from(times.len()).ok().filter(|&n| n > 0)?;
        Some(times.iter().sum::<Duration>() / n)
    }
}

/// A duration as a person says it: `45 s`, `12 min`, `2 h 05 min`.
pub fn spoken(t: Duration) -> String {
    let s = t.as_secs_f64().round() as u64;
    match s {
        0..=89 => format!("{} s", s.max(1)),
        90..=5399 => format!("{} min", (s + 30) / 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600 + 30) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_timed_by_their_last_run_or_their_siblings_and_kept_across_loads() {
        let dir = tempfile::tempdir().unwrap();
        let mut timings = Timings::default();
        timings.note("state:lichess:2026-01", Duration::from_secs(60));
        timings.note("state:lichess:2026-02", Duration::from_secs(120));
        timings.note("tree", Duration::from_millis(2500));
        timings.save(dir.path()).unwrap();
        let loaded = Timings::load(dir.path());
        assert_eq!(loaded, timings);
        let estimate =
            loaded.estimate(["state:lichess:2026-02", "state:lichess:2026-03", "tree", "store"]);
        assert_eq!(
            estimate,
            Estimate {
                total: Duration::from_millis(120_000 + 90_000 + 2500),
                timed: 2,
                inferred: 1,
                unknown: 1,
            }
        );
        assert_eq!(Timings::load(&dir.path().join("missing")), Timings::default());
    }

    #[test]
    fn durations_are_said_in_the_unit_a_person_would_use() {
        let said: Vec<String> =
            [0, 45, 90, 754, 5400, 7500].map(|s| spoken(Duration::from_secs(s))).to_vec();
        assert_eq!(said, ["1 s", "45 s", "2 min", "13 min", "1 h 30 min", "2 h 05 min"]);
    }
}
