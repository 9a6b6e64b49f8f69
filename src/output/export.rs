//! Frames as tables: CSV (a header line, then one line per row) or binary little-endian PLY
//! (one `vertex` element whose properties are the columns). A kind turns its state into a
//! [`Table`]; this module only writes it. It also names every file a frame writes, the tables
//! and the parts of a frame (`frame_STEP_NAME.npy` fields, `frame_STEP_NAME.png` pictures).

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
    /// NumPy: one float32 `.npy` file per field of the frame, `frame_STEP_NAME.npy` (kinds on
    /// a grid: ink).
    Npy,
}

impl FrameFormat {
    /// File extension.
    pub fn extension(self) -> &'static str {
        match self {
            FrameFormat::Csv => "csv",
            FrameFormat::Ply => "ply",
            FrameFormat::Npy => "npy",
        }
    }

    /// Whether a frame in this format is one table file ([`write_frame`]) rather than one
    /// file per field ([`super::write_grids`]).
    pub fn is_table(self) -> bool {
        !matches!(self, FrameFormat::Npy)
    }
}

/// Extensions of the files that hold one part of a frame: a field, a picture.
const PART_EXTENSIONS: [&str; 2] = ["npy", "png"];

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

/// `DIR/frame_{step:05}.{ext}`: where [`write_frame`] writes a step's table.
pub fn frame_path(directory: &Path, step: u64, format: FrameFormat) -> PathBuf {
    directory.join(format!("frame_{step:05}.{}", format.extension()))
}

/// `DIR/frame_{step:05}_{part}.{extension}`: where one part of a step's frame goes (a field,
/// `npy`; a picture, `png`).
pub fn frame_part_path(directory: &Path, step: u64, part: &str, extension: &str) -> PathBuf {
    directory.join(format!("frame_{step:05}_{part}.{extension}"))
}

/// Whether a run writes a file of this name for some step — a table ([`frame_path`]) or a
/// part ([`frame_part_path`] with a name of lower-case letters, digits and `_`, and an
/// extension of [`PART_EXTENSIONS`]) — or uses it as the temporary file of one
/// (`.NAME.partial`).
pub fn is_frame_name(name: &str) -> bool {
    let name = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(".partial"))
        .unwrap_or(name);
    let Some(rest) = name.strip_prefix("frame_") else {
        return false;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (digits, tail) = rest.split_at(digits);
    let Ok(step) = digits.parse::<u64>() else {
        return false;
    };
    if format!("{step:05}") != digits {
        return false;
    }
    if let Some(extension) = tail.strip_prefix('.') {
        return <FrameFormat as clap::ValueEnum>::value_variants()
            .iter()
            .any(|format| format.is_table() && format.extension() == extension);
    }
    let part = tail
        .strip_prefix('_')
        .and_then(|part| part.rsplit_once('.'));
    part.is_some_and(|(part, extension)| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && PART_EXTENSIONS.contains(&extension)
    })
}

/// Whose frames a directory listing looks for: `simulate`'s exports ([`is_frame_name`]) or
/// `render`'s pictures ([`is_render_frame_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameNames {
    /// `frame_NNNNN.csv`, `.ply`, `frame_NNNNN_NAME.npy`, `.png`.
    Export,
    /// `frame_NNNN.png`.
    Render,
}

impl FrameNames {
    /// What writes these frames, as messages name it.
    fn writer(self) -> &'static str {
        match self {
            FrameNames::Export => "run",
            FrameNames::Render => "render",
        }
    }

    fn matches(self, name: &str) -> bool {
        match self {
            FrameNames::Export => is_frame_name(name),
            FrameNames::Render => is_render_frame_name(name),
        }
    }
}

/// Whether `render` writes a picture of this name for some frame, `frame_NNNN.png` (four
/// digits or, from frame 10 000, as many as the number has), or uses it as the temporary file
/// of one (`.NAME.partial`).
pub fn is_render_frame_name(name: &str) -> bool {
    let name = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(".partial"))
        .unwrap_or(name);
    name.strip_prefix("frame_")
        .and_then(|rest| rest.strip_suffix(".png"))
        .is_some_and(|digits| {
            digits.bytes().all(|b| b.is_ascii_digit())
                && digits
                    .parse::<u64>()
                    .is_ok_and(|frame| format!("{frame:04}") == digits)
        })
}

/// The names in `directory` a run uses for frames (`names`), sorted: the temporary ones
/// (`.NAME.partial`) when `temporary`, else the complete ones.
fn frame_names(
    directory: &Path,
    names: FrameNames,
    temporary: bool,
) -> std::io::Result<Vec<String>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(directory)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') == temporary && names.matches(&name) {
            found.push(name);
        }
    }
    found.sort();
    Ok(found)
}

/// The entries of `directory` named as complete frames of `names`, sorted by name: what an
/// earlier run wrote there (files, or links and directories a frame would replace or collide
/// with).
pub fn frame_files(directory: &Path, names: FrameNames) -> std::io::Result<Vec<String>> {
    frame_names(directory, names, false)
}

/// Removes the complete frames of `names` in `directory` (what `--overwrite` asks): files, or
/// links (never what they point to). An entry of a frame's name that is a directory is
/// refused, naming it, before anything is removed. Returns how many went.
pub fn remove_frames(directory: &Path, names: FrameNames) -> std::io::Result<usize> {
    let frames = frame_files(directory, names)?;
    for name in &frames {
        let path = directory.join(name);
        if std::fs::symlink_metadata(&path)?.is_dir() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is a directory, not a frame file", path.display()),
            ));
        }
    }
    for name in &frames {
        std::fs::remove_file(directory.join(name))?;
    }
    Ok(frames.len())
}

/// Makes `directory` ready for a run's frames of `names`: creates it, removes the temporary
/// files a stopped run left there and, with `overwrite`, an earlier run's frames
/// ([`remove_frames`]), saying what went on stderr unless `quiet`.
pub fn prepare_frame_directory(
    directory: &Path,
    names: FrameNames,
    overwrite: bool,
    quiet: bool,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let (shown, writer) = (directory.display(), names.writer());
    std::fs::create_dir_all(directory)
        .with_context(|| format!("cannot create the directory {shown}"))?;
    let removed = remove_stale_frames(directory, names)
        .with_context(|| format!("cannot clear stale frames from {shown}"))?;
    if removed > 0 && !quiet {
        eprintln!("removed {removed} temporary frame file(s) a stopped {writer} left in {shown}");
    }
    if overwrite {
        let removed = remove_frames(directory, names)
            .with_context(|| format!("--overwrite: cannot remove the earlier frames in {shown}"))?;
        if removed > 0 && !quiet {
            eprintln!(
                "--overwrite: removed {removed} frame file(s) of an earlier {writer} from {shown}"
            );
        }
    }
    Ok(())
}

/// Removes the temporary frame files of `names` (`.frame_NNNNN.csv.partial`, `.ply.partial`,
/// `.frame_NNNNN_NAME.npy.partial`, `.png.partial`; `.frame_NNNN.png.partial`) a run that was
/// killed mid-write left in `directory`, and nothing else; returns how many.
pub fn remove_stale_frames(directory: &Path, names: FrameNames) -> std::io::Result<usize> {
    let mut removed = 0;
    for name in frame_names(directory, names, true)? {
        let path = directory.join(name);
        if std::fs::symlink_metadata(&path)?.is_file() {
            std::fs::remove_file(path)?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Writes `table` as [`frame_path`] atomically; returns the path. A frame in
/// [`FrameFormat::Npy`] is no table: it is refused (`InvalidInput`), [`super::write_grids`]
/// writes it.
pub fn write_frame(
    directory: &Path,
    step: u64,
    time: f64,
    table: &Table,
    format: FrameFormat,
) -> std::io::Result<PathBuf> {
    if !format.is_table() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} frames are fields, not tables", format.extension()),
        ));
    }
    let path = frame_path(directory, step, format);
    write_atomically(&path, |out| match format {
        FrameFormat::Csv => write_csv(out, table),
        FrameFormat::Ply => write_ply(out, step, time, table),
        FrameFormat::Npy => unreachable!("refused above"),
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
        let error = write_frame(directory.path(), 3, 0.05, &table, FrameFormat::Npy).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        assert!(!directory.path().join("frame_00003.npy").exists());
    }

    /// Frame names are exactly what a run writes (five digits at least; a csv or ply table, or
    /// a named npy field or png picture) and their temporaries; nothing else is one.
    #[test]
    fn frame_names_are_the_ones_a_run_writes() {
        for name in [
            "frame_00000.csv",
            "frame_00012.ply",
            "frame_123456.csv",
            ".frame_00003.csv.partial",
            ".frame_00003.ply.partial",
            "frame_00000_u.npy",
            "frame_00042_divergence.npy",
            "frame_123456_ink.png",
            "frame_00001_flow_map2.png",
            ".frame_00003_pressure.npy.partial",
            ".frame_00003_ink.png.partial",
        ] {
            assert!(is_frame_name(name), "{name}");
        }
        assert!(is_frame_name(
            frame_part_path(Path::new(""), 7, "curl", "npy")
                .to_str()
                .unwrap()
        ));
        for name in [
            "frame_0.csv",
            "frame_012345.csv",
            "frame_00000.png",
            "frame_00000.npy",
            "frame_00000_.npy",
            "frame_00000_u.csv",
            "frame_00000_u.txt",
            "frame_00000_U.npy",
            "frame_00000_a.b.npy",
            "frame_0_u.npy",
            "frame_012345_u.npy",
            "frame_00000u.npy",
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

    /// `render`'s pictures are `frame_NNNN.png`; an export's names are not its, nor its theirs.
    #[test]
    fn render_frame_names_are_the_ones_a_render_writes() {
        for name in [
            "frame_0000.png",
            "frame_0059.png",
            "frame_12345.png",
            ".frame_0003.png.partial",
        ] {
            assert!(is_render_frame_name(name), "{name}");
            assert!(!is_frame_name(name), "{name}");
        }
        for name in [
            "frame_000.png",
            "frame_00000.png",
            "frame_01234.png",
            "frame_0000.csv",
            "frame_0000_ink.png",
            "frame_-001.png",
            "frame_+001.png",
            "frame_0000.png.partial",
            "xframe_0000.png",
            "frame_00000_ink.png",
        ] {
            assert!(!is_render_frame_name(name), "{name}");
        }
    }

    /// Only the temporary files of frames go; whole frames and other files stay.
    #[test]
    fn stale_frame_temporaries_are_removed_and_nothing_else() {
        let directory = tempfile::tempdir().unwrap();
        let names = [
            ".frame_00007.csv.partial",
            ".frame_00001.ply.partial",
            ".frame_00002_ink.npy.partial",
            ".frame_00002_flow.png.partial",
            "frame_00000.csv",
            ".stats.jsonl.partial",
            ".notes.partial",
            "notes.txt",
        ];
        for name in names {
            std::fs::write(directory.path().join(name), "x").unwrap();
        }
        assert_eq!(
            remove_stale_frames(directory.path(), FrameNames::Export).unwrap(),
            4
        );
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
