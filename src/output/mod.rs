//! What a run writes, for every kind: frames as tables (CSV, PLY) or as fields (NumPy `.npy`),
//! per-frame statistics (JSON lines) and plots. Every file is written to a temporary name and renamed, so an interrupted
//! run leaves only whole files.

mod export;
mod npy;
pub mod plot;
mod stats;

pub use export::{
    frame_files, frame_part_path, frame_path, is_frame_name, is_render_frame_name,
    prepare_frame_directory, remove_frames, remove_stale_frames, write_frame, Column, FrameFormat,
    FrameNames, Table,
};
pub use npy::{grid_path, npy_header, write_grids, write_npy, Grid};
pub use stats::StatsWriter;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Component, Path, PathBuf};

/// `.NAME.partial` beside `path`: where a file is written before it is renamed into place.
pub fn partial_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.partial"))
}

/// `path` made absolute with symbolic links, `.` and `..` resolved, also where it does not exist
/// yet (the part that exists is canonicalised, the rest appended), so two spellings of one
/// place compare equal before either is created.
pub fn resolved(path: &Path) -> std::io::Result<PathBuf> {
    let mut resolved = PathBuf::new();
    let mut exists = true;
    for component in std::path::absolute(path)?.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop();
            }
            other => {
                resolved.push(other);
                if exists {
                    match resolved.canonicalize() {
                        Ok(canonical) => resolved = canonical,
                        Err(_) => exists = false,
                    }
                }
            }
        }
    }
    Ok(resolved)
}

/// Checks before a run that `path` (a file to write, or a directory to make and fill) can be
/// written, so that a run is not wasted on an output found unwritable at its first write: the
/// nearest of `path`'s folders that exists (itself, for a directory that exists) must be a
/// directory this process can create a file in (a probe, made and removed). The error names
/// `flag` with the path as given.
pub fn check_writable(flag: &str, path: &Path, is_directory: bool) -> anyhow::Result<()> {
    let shown = path.display();
    let mut folder = if is_directory && path.is_dir() {
        Some(path)
    } else {
        path.parent()
    };
    while let Some(dir) = folder {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if dir.exists() {
            if !dir.is_dir() {
                anyhow::bail!("{flag} {shown}: {} is not a directory", dir.display());
            }
            let probe = dir.join(format!(".fluidlab-probe-{}", std::process::id()));
            return match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&probe)
            {
                Ok(_) => {
                    let _ = std::fs::remove_file(&probe);
                    Ok(())
                }
                Err(error) => {
                    anyhow::bail!("{flag} {shown}: cannot write in {}: {error}", dir.display())
                }
            };
        }
        folder = dir.parent();
    }
    Ok(())
}

/// Writes `path` through a temporary file in the same directory and renames it into place.
/// The temporary is made new (a stale file of its name is removed first; a link there is
/// removed, never followed, so nothing outside the directory is written).
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let temporary = partial_path(path);
    match std::fs::remove_file(&temporary) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(error),
        _ => {}
    }
    let result = (|| {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        let mut writer = BufWriter::new(file);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Spellings through `.`, `..` and a symbolic link resolve to one path, existing or not.
    /// A link (or a stale file) at the temporary's name is replaced, never written through:
    /// the file it points to, outside the directory, keeps its contents.
    #[test]
    fn a_link_at_the_temporarys_name_is_not_followed() {
        let directory = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("precious.txt");
        std::fs::write(&target, "keep").unwrap();
        let path = directory.path().join("frame_0000.png");
        std::os::unix::fs::symlink(&target, partial_path(&path)).unwrap();
        write_atomically(&path, |out| out.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert!(std::fs::symlink_metadata(partial_path(&path)).is_err());
    }

    #[test]
    fn spellings_of_one_place_resolve_to_one_path() {
        let directory = tempfile::tempdir().unwrap();
        let root = directory.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("out"), root.join("link")).unwrap();
        let expected = root.join("out/new/frame_00000.csv");
        for spelling in [
            "out/new/frame_00000.csv",
            "./out/../out/new/frame_00000.csv",
            "link/new/frame_00000.csv",
            "out/new/./sub/../frame_00000.csv",
        ] {
            assert_eq!(
                resolved(&root.join(spelling)).unwrap(),
                expected,
                "{spelling}"
            );
        }
        assert_eq!(resolved(&root.join("link")).unwrap(), root.join("out"));
    }
}
