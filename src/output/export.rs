//! Frames as tables: CSV (a header line, then one line per row) or binary little-endian PLY
//! (one `vertex` element whose properties are the columns). A kind turns its state into a
//! [`Table`]; this module only writes it.

use super::write_atomically;
use std::io::Write;
use std::path::{Path, PathBuf};

/// File format of exported frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum FrameFormat {
    /// Text, one header line then one line per row.
    #[default]
    Csv,
    /// Binary little-endian PLY: a vertex element with one property per column.
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

/// One column of a [`Table`].
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Unsigned integers (ids), PLY `uint`.
    U32(Vec<u32>),
    /// Reals, PLY `float`.
    F32(Vec<f32>),
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::U32(values) => values.len(),
            Column::F32(values) => values.len(),
        }
    }
}

/// Named columns of equal length: one row per element (particle, cell, vertex).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// `(name, values)` in file order.
    pub columns: Vec<(&'static str, Column)>,
}

impl Table {
    /// Rows: the length of the first column (every column has it, [`Table::push`] checks).
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |(_, column)| column.len())
    }

    /// Appends a column; panics when its length differs from the others' (a bug in the
    /// kind that builds the table, not an input error).
    pub fn push(&mut self, name: &'static str, column: Column) -> &mut Self {
        assert!(
            self.columns.is_empty() || column.len() == self.rows(),
            "column {name} has {} rows, the table {}",
            column.len(),
            self.rows()
        );
        self.columns.push((name, column));
        self
    }
}

/// `DIR/frame_{step:05}.{ext}`: where [`write_frame`] writes a step.
pub fn frame_path(directory: &Path, step: u64, format: FrameFormat) -> PathBuf {
    directory.join(format!("frame_{step:05}.{}", format.extension()))
}

/// Whether [`write_frame`] writes a file of this name, for some step and format, or uses it
/// as the temporary file of one (`.NAME.partial`).
pub fn is_frame_name(name: &str) -> bool {
    let name = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(".partial"))
        .unwrap_or(name);
    let step = name
        .strip_prefix("frame_")
        .and_then(|rest| rest.split_once('.'))
        .and_then(|(digits, _)| digits.parse::<u64>().ok());
    step.is_some_and(|step| {
        <FrameFormat as clap::ValueEnum>::value_variants()
            .iter()
            .any(|&format| frame_path(Path::new(""), step, format) == Path::new(name))
    })
}

/// Removes the temporary frame files (`.frame_NNNNN.csv.partial`, `.ply.partial`) a run that
/// was killed mid-write left in `directory`, and nothing else; returns how many.
pub fn remove_stale_frames(directory: &Path) -> std::io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(directory)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && is_frame_name(&name) && entry.file_type()?.is_file() {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Writes `table` as [`frame_path`] atomically; returns the path.
pub fn write_frame(
    directory: &Path,
    step: u64,
    time: f64,
    table: &Table,
    format: FrameFormat,
) -> std::io::Result<PathBuf> {
    let path = frame_path(directory, step, format);
    write_atomically(&path, |out| match format {
        FrameFormat::Csv => write_csv(out, table),
        FrameFormat::Ply => write_ply(out, step, time, table),
    })?;
    Ok(path)
}

fn write_csv(out: &mut impl Write, table: &Table) -> std::io::Result<()> {
    let names: Vec<&str> = table.columns.iter().map(|(name, _)| *name).collect();
    writeln!(out, "{}", names.join(","))?;
    for row in 0..table.rows() {
        for (k, (_, column)) in table.columns.iter().enumerate() {
            if k > 0 {
                out.write_all(b",")?;
            }
            match column {
                Column::U32(values) => write!(out, "{}", values[row])?,
                Column::F32(values) => write!(out, "{}", values[row])?,
            }
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn write_ply(out: &mut impl Write, step: u64, time: f64, table: &Table) -> std::io::Result<()> {
    write!(
        out,
        "ply\nformat binary_little_endian 1.0\ncomment fluidlab step {step} time {time}\nelement vertex {}\n",
        table.rows()
    )?;
    for (name, column) in &table.columns {
        let kind = match column {
            Column::U32(_) => "uint",
            Column::F32(_) => "float",
        };
        writeln!(out, "property {kind} {name}")?;
    }
    out.write_all(b"end_header\n")?;
    for row in 0..table.rows() {
        for (_, column) in &table.columns {
            match column {
                Column::U32(values) => out.write_all(&values[row].to_le_bytes())?,
                Column::F32(values) => out.write_all(&values[row].to_le_bytes())?,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_writes_the_same_rows_as_csv_and_ply() {
        let directory = tempfile::tempdir().unwrap();
        let mut table = Table::default();
        table
            .push("id", Column::U32(vec![0, 1]))
            .push("x", Column::F32(vec![0.5, -1.25]));
        let csv = write_frame(directory.path(), 3, 0.05, &table, FrameFormat::Csv).unwrap();
        assert_eq!(
            std::fs::read_to_string(&csv).unwrap(),
            "id,x\n0,0.5\n1,-1.25\n"
        );
        let ply = write_frame(directory.path(), 3, 0.05, &table, FrameFormat::Ply).unwrap();
        let bytes = std::fs::read(&ply).unwrap();
        let header_end = bytes
            .windows(11)
            .position(|w| w == b"end_header\n")
            .unwrap()
            + 11;
        let header = std::str::from_utf8(&bytes[..header_end]).unwrap();
        assert!(header.contains("element vertex 2\nproperty uint id\nproperty float x\n"));
        assert_eq!(bytes.len() - header_end, 2 * 8);
        assert_eq!(
            &bytes[header_end + 12..header_end + 16],
            &(-1.25f32).to_le_bytes()
        );
    }

    /// Frame names are exactly what `write_frame` writes (five digits at least, csv or ply)
    /// and their temporaries; nothing else is one.
    #[test]
    fn frame_names_are_the_ones_write_frame_writes() {
        for name in [
            "frame_00000.csv",
            "frame_00012.ply",
            "frame_123456.csv",
            ".frame_00003.csv.partial",
            ".frame_00003.ply.partial",
        ] {
            assert!(is_frame_name(name), "{name}");
        }
        for name in [
            "frame_0.csv",
            "frame_012345.csv",
            "frame_00000.png",
            "frame_-0001.csv",
            "frame_0000a.csv",
            "stats.jsonl",
            ".stats.jsonl.partial",
            "frame_00000.csv.partial",
            "xframe_00000.csv",
        ] {
            assert!(!is_frame_name(name), "{name}");
        }
    }

    /// Only the temporary files of frames go; whole frames and other files stay.
    #[test]
    fn stale_frame_temporaries_are_removed_and_nothing_else() {
        let directory = tempfile::tempdir().unwrap();
        let names = [
            ".frame_00007.csv.partial",
            ".frame_00001.ply.partial",
            "frame_00000.csv",
            ".stats.jsonl.partial",
            ".notes.partial",
            "notes.txt",
        ];
        for name in names {
            std::fs::write(directory.path().join(name), "x").unwrap();
        }
        assert_eq!(remove_stale_frames(directory.path()).unwrap(), 2);
        let mut left: Vec<String> = std::fs::read_dir(directory.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                ".notes.partial",
                ".stats.jsonl.partial",
                "frame_00000.csv",
                "notes.txt"
            ]
        );
    }
}
