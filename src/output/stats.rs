//! Per-frame statistics, one JSON object per line.

use crate::sim::Snapshot;
use glam::Vec3A;
use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Summary statistics of one frame.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FrameStats {
    /// Steps (frames of `dt`) taken.
    pub step: u64,
    /// Simulated time, seconds.
    pub time: f64,
    /// Particle count.
    pub particles: usize,
    /// Mean of |ρ/ρ₀ − 1| (the density of the last constraint iteration).
    pub density_error_mean: f64,
    /// Maximum of |ρ/ρ₀ − 1|.
    pub density_error_max: f64,
    /// ½ m Σ |v|², joules.
    pub kinetic_energy: f64,
    /// Mean particle position, metres.
    pub center_of_mass: [f64; 3],
    /// Lower corner of the particles' bounding box.
    pub bbox_min: [f32; 3],
    /// Upper corner of the particles' bounding box.
    pub bbox_max: [f32; 3],
    /// Mean neighbours within h per particle (itself excluded).
    pub neighbors_mean: f64,
    /// Most neighbours any particle has.
    pub neighbors_max: u32,
    /// Wall time of one step, milliseconds (mean since the previous record).
    pub step_ms: f64,
}

impl FrameStats {
    /// Statistics of `snapshot` at `step` / `time`.
    pub fn measure(snapshot: &Snapshot, step: u64, time: f64, step_ms: f64) -> Self {
        let n = snapshot.positions.len();
        let mut error_sum = 0.0f64;
        let mut error_max = 0.0f64;
        for &density in &snapshot.densities {
            let error = (density as f64 / snapshot.rest_density as f64 - 1.0).abs();
            error_sum += error;
            error_max = error_max.max(error);
        }
        let mut speed_squared = 0.0f64;
        for v in &snapshot.velocities {
            speed_squared += v.length_squared() as f64;
        }
        let mut sum = [0.0f64; 3];
        let (mut lo, mut hi) = (Vec3A::splat(f32::INFINITY), Vec3A::splat(f32::NEG_INFINITY));
        for p in &snapshot.positions {
            for (s, c) in sum.iter_mut().zip(p.to_array()) {
                *s += c as f64;
            }
            lo = lo.min(*p);
            hi = hi.max(*p);
        }
        let count = n.max(1) as f64;
        let neighbors: u64 = snapshot.neighbor_counts.iter().map(|&c| c as u64).sum();
        FrameStats {
            step,
            time,
            particles: n,
            density_error_mean: error_sum / count,
            density_error_max: error_max,
            kinetic_energy: 0.5 * snapshot.particle_mass as f64 * speed_squared,
            center_of_mass: sum.map(|s| s / count),
            bbox_min: if n == 0 { [0.0; 3] } else { lo.to_array() },
            bbox_max: if n == 0 { [0.0; 3] } else { hi.to_array() },
            neighbors_mean: neighbors as f64 / count,
            neighbors_max: snapshot.neighbor_counts.iter().copied().max().unwrap_or(0),
            step_ms,
        }
    }
}

/// Appends [`FrameStats`] as JSON lines, each written whole and flushed.
pub struct StatsWriter {
    out: BufWriter<File>,
}

impl StatsWriter {
    /// Creates (truncates) `path`.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self {
            out: BufWriter::new(File::create(path)?),
        })
    }

    /// Writes one line and flushes it.
    pub fn write(&mut self, stats: &FrameStats) -> std::io::Result<()> {
        let mut line = serde_json::to_string(stats).map_err(std::io::Error::other)?;
        line.push('\n');
        self.out.write_all(line.as_bytes())?;
        self.out.flush()
    }
}
