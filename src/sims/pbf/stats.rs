//! PBF's statistics of one frame: density error, compression, energy, extent, neighbours.

use super::Snapshot;
use glam::Vec3A;
use serde::Serialize;

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
    /// Mean of max(ρ/ρ₀ − 1, 0): the compression the density constraint removes.
    pub compression_mean: f64,
    /// Largest ρ/ρ₀ − 1 of any particle.
    pub compression_max: f64,
    /// Mean ρ/ρ₀ − 1 of the bottom layer (particles within two spacings of the lowest one,
    /// measured along gravity): where a resting fluid is most compressed. Null without gravity.
    pub bottom_compression: Option<f64>,
    /// Height of the free surface along −g (metres, the coordinate along the up direction):
    /// the median over columns two spacings wide of the highest particle, plus the particle
    /// radius. Null without gravity.
    pub surface_height: Option<f64>,
    /// Constraint iterations per solver step in the last frame.
    pub solve_iterations: f64,
    /// The mean compression at the last constraint iteration of the frame's last step.
    pub solve_compression: f64,
    /// The coarse correction's residual relative to its right-hand side, last step.
    pub coarse_residual: f64,
    /// Wall time of one step, milliseconds (mean since the previous record).
    pub step_ms: f64,
}

impl FrameStats {
    /// Statistics of `snapshot` at `step` / `time`.
    pub fn measure(snapshot: &Snapshot, step: u64, time: f64, step_ms: f64) -> Self {
        let n = snapshot.positions.len();
        let mut error_sum = 0.0f64;
        let mut error_max = 0.0f64;
        let mut compression_sum = 0.0f64;
        let mut compression_max = f64::NEG_INFINITY;
        for &density in &snapshot.densities {
            let relative = density as f64 / snapshot.rest_density as f64 - 1.0;
            error_sum += relative.abs();
            error_max = error_max.max(relative.abs());
            compression_sum += relative.max(0.0);
            compression_max = compression_max.max(relative);
        }
        if snapshot.densities.is_empty() {
            compression_max = 0.0;
        }
        let layers = Layers::measure(snapshot);
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
            compression_mean: compression_sum / count,
            compression_max,
            bottom_compression: layers.as_ref().map(|l| l.bottom_compression),
            surface_height: layers.as_ref().map(|l| l.surface_height),
            solve_iterations: snapshot.solve.iterations as f64,
            solve_compression: snapshot.solve.compression as f64,
            coarse_residual: snapshot.solve.coarse_residual as f64,
            step_ms,
        }
    }

    /// Incompressibility first (what the statistics panel shows rather than asks belief in),
    /// then error, energy, neighbours and extent: the summary after a run and the viewer's
    /// statistics panel.
    pub fn lines(&self) -> Vec<String> {
        let last = self;
        let c = last.center_of_mass;
        let mut lines = vec![format!(
            "iterations {:.1} per step, compression {:.3} % mean, {:.2} % max",
            last.solve_iterations,
            100.0 * last.compression_mean,
            100.0 * last.compression_max
        )];
        if let (Some(bottom), Some(surface)) = (last.bottom_compression, last.surface_height) {
            lines.push(format!(
                "bottom layer ρ/ρ₀ − 1 {:+.3} %, surface height {surface:.4} m",
                100.0 * bottom
            ));
        }
        lines.push(format!(
            "density error mean {:.2}% max {:.2}%, kinetic energy {:.4} J, {:.1} neighbours per particle (max {})",
            100.0 * last.density_error_mean,
            100.0 * last.density_error_max,
            last.kinetic_energy,
            last.neighbors_mean,
            last.neighbors_max
        ));
        lines.push(format!(
            "centre of mass [{:.3}, {:.3}, {:.3}], bounds {:?}–{:?}",
            c[0], c[1], c[2], last.bbox_min, last.bbox_max
        ));
        lines
    }
}

/// Heights along −g: the bottom layer's compression and the free surface.
struct Layers {
    bottom_compression: f64,
    surface_height: f64,
}

impl Layers {
    fn measure(snapshot: &Snapshot) -> Option<Layers> {
        let gravity = Vec3A::from(snapshot.gravity);
        if gravity.length_squared() == 0.0 || snapshot.positions.is_empty() {
            return None;
        }
        let up = -gravity.normalize();
        let (across, along) = crate::sims::pbf::boundary::orthonormal_basis(up);
        let spacing = snapshot.spacing.max(f32::MIN_POSITIVE);
        let heights: Vec<f32> = snapshot.positions.iter().map(|p| p.dot(up)).collect();
        let lowest = heights.iter().copied().fold(f32::INFINITY, f32::min);
        let (mut sum, mut count) = (0.0f64, 0usize);
        for (height, density) in heights.iter().zip(&snapshot.densities) {
            if *height <= lowest + 2.0 * spacing {
                sum += *density as f64 / snapshot.rest_density as f64 - 1.0;
                count += 1;
            }
        }
        let mut tops: std::collections::HashMap<(i64, i64), f32> = Default::default();
        let column = 2.0 * spacing;
        for (p, &height) in snapshot.positions.iter().zip(&heights) {
            let key = (
                (p.dot(across) / column).floor() as i64,
                (p.dot(along) / column).floor() as i64,
            );
            let top = tops.entry(key).or_insert(f32::NEG_INFINITY);
            *top = top.max(height);
        }
        let mut tops: Vec<f32> = tops.into_values().collect();
        tops.sort_by(f32::total_cmp);
        Some(Layers {
            bottom_compression: sum / count.max(1) as f64,
            surface_height: (tops[tops.len() / 2] + 0.5 * spacing) as f64,
        })
    }
}
