//! How long engine work will take: the seconds a search costs at each depth on this
//! machine, learned from the runs so far, so `okb status` and a make that stops at its
//! budget can say "14,812 positions left (≈ 9 h)".
//!
//! Stockfish's time per search grows by a roughly constant factor per ply (measured on
//! opening positions with MultiPV 3: ×1.4–1.5 from depth 10 to 18), so one number, the
//! seconds of a depth-10 search, calibrates every depth. Each finished run updates it
//! from its own wall time; before any run, a figure measured on a 2-core machine is used.

use std::time::Duration;

/// Growth of a search's time per extra ply of depth.
pub const GROWTH_PER_PLY: f64 = 1.45;

/// Seconds of one depth-10, MultiPV-3 search on the 2-core machine okb is developed on,
/// used until a run on this machine has calibrated its own: Stockfish 15.1's CPU time per
/// search over a sample of 202 of the shipped pipeline's engine positions (0.102 s; CPU
/// time, so other load on the machine does not inflate it). The guide's design estimate
/// (docs/phases.md)
/// is this figure through `okb status --profile design`.
pub const DEFAULT_SECONDS_AT_10: f64 = 0.10;

/// The relative cost of a search at `depth` (1.0 at depth 10).
pub fn cost(depth: u32) -> f64 {
    GROWTH_PER_PLY.powi(depth as i32 - 10)
}

/// Wall time of searches at `depths` run on `engines` engines in parallel, given the
/// seconds of a depth-10 search.
pub fn wall_time(
    depths: impl IntoIterator<Item = u32>,
    seconds_at_10: f64,
    engines: usize,
) -> Duration {
    let work: f64 = depths.into_iter().map(cost).sum::<f64>() * seconds_at_10;
    Duration::from_secs_f64(work / engines.max(1) as f64)
}

/// The seconds of a depth-10 search implied by a run: `searches` searches whose depths
/// average `mean_cost` (see [`cost`]) took `wall` on `engines` engines. `None` when the
/// run is too short to say (under a second, or nothing searched).
pub fn calibrate(searches: usize, mean_cost: f64, wall: Duration, engines: usize) -> Option<f64> {
    if searches == 0 || wall < Duration::from_secs(1) || mean_cost <= 0.0 {
        return None;
    }
    Some(wall.as_secs_f64() * engines.max(1) as f64 / searches as f64 / mean_cost)
}

/// A duration as people say it: "40 s", "12 min", "3.5 h".
pub fn human(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs < 90.0 {
        format!("{:.0} s", secs.max(1.0))
    } else if secs < 90.0 * 60.0 {
        format!("{:.0} min", secs / 60.0)
    } else if secs < 48.0 * 3600.0 {
        format!("{:.1} h", secs / 3600.0)
    } else {
        format!("{:.1} days", secs / 86400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deeper_searches_cost_more_and_calibration_inverts_the_model() {
        assert_eq!(cost(10), 1.0);
        assert!((cost(12) - 1.45 * 1.45).abs() < 1e-9);
        let depths = [10, 12, 12, 14];
        let mean = depths.iter().map(|&d| cost(d)).sum::<f64>() / depths.len() as f64;
        let wall = wall_time(depths, 0.5, 2);
        let back = calibrate(depths.len(), mean, wall, 2).unwrap();
        assert!((back - 0.5).abs() < 1e-6, "{back}");
        assert_eq!(calibrate(0, 1.0, Duration::from_secs(5), 2), None);
        assert_eq!(calibrate(10, 1.0, Duration::from_millis(200), 2), None);
    }

    #[test]
    fn durations_read_like_speech() {
        assert_eq!(human(Duration::from_secs(40)), "40 s");
        assert_eq!(human(Duration::from_secs(12 * 60)), "12 min");
        assert_eq!(human(Duration::from_secs(9 * 3600)), "9.0 h");
        assert_eq!(human(Duration::from_secs(3 * 86400)), "3.0 days");
    }
}
