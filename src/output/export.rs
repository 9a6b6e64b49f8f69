//! Particle frames: CSV (`id,x,y,z,vx,vy,vz,density`) or binary little-endian PLY with the
//! same properties, one row per particle in id order.

use super::write_atomically;
use crate::sims::pbf::Snapshot;
use std::io::Write;
use std::path::{Path, PathBuf};

/// File format of exported frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum FrameFormat {
    /// Text, one header line then one line per particle.
    #[default]
    Csv,
    /// Binary little-endian PLY: a vertex element with id, x, y, z, vx, vy, vz, density.
    Ply,
}

impl FrameFormat {
    /// File extension.
    pub fn extension(self) -> &'static str {
        match self {
            FrameFormat::Csv => "csv",
            FrameFormat::Ply => "ply",
        }
    }
}

/// Writes `snapshot` as `DIR/frame_{step:05}.{ext}` atomically; returns the path.
pub fn write_frame(
    directory: &Path,
    step: u64,
    time: f64,
    snapshot: &Snapshot,
    format: FrameFormat,
) -> std::io::Result<PathBuf> {
    let path = directory.join(format!("frame_{step:05}.{}", format.extension()));
    write_atomically(&path, |out| match format {
        FrameFormat::Csv => write_csv(out, snapshot),
        FrameFormat::Ply => write_ply(out, step, time, snapshot),
    })?;
    Ok(path)
}

fn write_csv(out: &mut impl Write, s: &Snapshot) -> std::io::Result<()> {
    writeln!(out, "id,x,y,z,vx,vy,vz,density")?;
    for id in 0..s.positions.len() {
        let (x, v) = (s.positions[id], s.velocities[id]);
        writeln!(
            out,
            "{id},{},{},{},{},{},{},{}",
            x.x, x.y, x.z, v.x, v.y, v.z, s.densities[id]
        )?;
    }
    Ok(())
}

fn write_ply(out: &mut impl Write, step: u64, time: f64, s: &Snapshot) -> std::io::Result<()> {
    write!(
        out,
        "ply\nformat binary_little_endian 1.0\ncomment fluidlab step {step} time {time}\nelement vertex {}\n\
         property uint id\nproperty float x\nproperty float y\nproperty float z\n\
         property float vx\nproperty float vy\nproperty float vz\nproperty float density\nend_header\n",
        s.positions.len()
    )?;
    for id in 0..s.positions.len() {
        let (x, v) = (s.positions[id], s.velocities[id]);
        out.write_all(&(id as u32).to_le_bytes())?;
        for value in [x.x, x.y, x.z, v.x, v.y, v.z, s.densities[id]] {
            out.write_all(&value.to_le_bytes())?;
        }
    }
    Ok(())
}
