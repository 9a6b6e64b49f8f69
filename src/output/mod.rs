//! What a run writes, for every kind: frames as tables (CSV, PLY), per-frame statistics (JSON
//! lines) and plots. Every file is written to a temporary name and renamed, so an interrupted
//! run leaves only whole files.

mod export;
pub mod plot;
mod stats;

pub use export::{write_frame, Column, FrameFormat, Table};
pub use stats::StatsWriter;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// `.NAME.partial` beside `path`: where a file is written before it is renamed into place.
pub fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.partial"))
}

/// Writes `path` through a temporary file in the same directory and renames it into place.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let temporary = partial_path(path);
    let result = (|| {
        let mut writer = BufWriter::new(File::create(&temporary)?);
        write(&mut writer)?;
        writer.flush()?;
        drop(writer);
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}
