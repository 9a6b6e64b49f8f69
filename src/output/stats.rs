//! Per-frame statistics, one JSON object per line, written whole.

use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Appends rows (any `Serialize`, e.g. a kind's frame statistics) as JSON lines, each written whole and flushed.
///
/// Like every file `output/` writes, the file appears whole: lines go to `.NAME.partial` beside
/// it (flushed line by line, so a run can be followed there), which is renamed to `NAME` when
/// the writer is finished or dropped — also when the run stops with an error or on Ctrl-C, so
/// the lines recorded until then are kept. A file already at `NAME` stays untouched until then.
pub struct StatsWriter {
    out: Option<BufWriter<File>>,
    temporary: PathBuf,
    path: PathBuf,
}

impl StatsWriter {
    /// Starts `.NAME.partial` beside `path`.
    pub fn create(path: &Path) -> std::io::Result<Self> {
        let temporary = super::partial_path(path);
        Ok(Self {
            out: Some(BufWriter::new(File::create(&temporary)?)),
            temporary,
            path: path.to_path_buf(),
        })
    }

    /// Writes one line and flushes it.
    pub fn write(&mut self, row: &impl Serialize) -> std::io::Result<()> {
        let mut line = serde_json::to_string(row).map_err(std::io::Error::other)?;
        line.push('\n');
        let out = self.out.as_mut().expect("a writer is open until finished");
        out.write_all(line.as_bytes())?;
        out.flush()
    }

    /// Closes the file and renames it into place.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.close()
    }

    fn close(&mut self) -> std::io::Result<()> {
        match self.out.take() {
            Some(mut out) => {
                out.flush()?;
                drop(out);
                std::fs::rename(&self.temporary, &self.path)
            }
            None => Ok(()),
        }
    }
}

impl Drop for StatsWriter {
    fn drop(&mut self) {
        // Early returns (a failed step, Ctrl-C) keep what was recorded.
        let _ = self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats() -> serde_json::Value {
        serde_json::json!({ "step": 0, "time": 0.0 })
    }

    /// The stats file appears whole: lines go to `.NAME.partial` until the writer finishes, and
    /// an old file at NAME is untouched until then; a writer dropped early (a failed run) still
    /// puts its lines in place.
    #[test]
    fn the_stats_file_appears_when_the_writer_finishes_or_is_dropped() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("stats.jsonl");
        std::fs::write(&path, "old\n").unwrap();
        let mut writer = StatsWriter::create(&path).unwrap();
        writer.write(&stats()).unwrap();
        writer.write(&stats()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old\n");
        let partial = directory.path().join(".stats.jsonl.partial");
        assert_eq!(
            std::fs::read_to_string(&partial).unwrap().lines().count(),
            2
        );
        writer.finish().unwrap();
        assert!(!partial.exists());
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);

        let mut dropped = StatsWriter::create(&path).unwrap();
        dropped.write(&stats()).unwrap();
        drop(dropped);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 1);
        assert!(text.starts_with("{\"step\":0"), "{text}");
    }
}
