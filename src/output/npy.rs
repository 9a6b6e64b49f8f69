//! Frames as fields: one NumPy `.npy` file (format version 1.0, little-endian `float32`) per
//! named 2D grid of a frame, `frame_STEP_NAME.npy`. A kind turns its state into [`Grid`]s; this
//! module only writes them. `numpy.load` reads them as they are.

use super::export::frame_part_path;
use super::write_atomically;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A named 2D field of a frame: `ny` rows of `nx` points, each of `components` values,
/// row-major with x fastest and the components innermost. Row 0 is the bottom of the domain
/// (the smallest y), so `array[j, i]` is point (i, j) and `imshow(array, origin="lower")`
/// shows it upright.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// The field's name: the file's suffix (lower case, digits and `_`).
    pub name: &'static str,
    /// Points along x (columns).
    pub nx: usize,
    /// Points along y (rows).
    pub ny: usize,
    /// Values per point (1: a scalar field, 2: a vector, 3: a colour).
    pub components: usize,
    /// `ny × nx × components` values.
    pub data: Vec<f32>,
}

impl Grid {
    /// A grid of `data`; panics when its length is not `ny × nx × components` (a bug in the
    /// kind that builds it, not an input error).
    pub fn new(
        name: &'static str,
        nx: usize,
        ny: usize,
        components: usize,
        data: Vec<f32>,
    ) -> Grid {
        assert_eq!(
            data.len(),
            nx * ny * components,
            "grid {name}: {} values for {ny} × {nx} × {components}",
            data.len()
        );
        Grid {
            name,
            nx,
            ny,
            components,
            data,
        }
    }

    /// The array's shape: `(ny, nx)` for a scalar field, else `(ny, nx, components)`.
    pub fn shape(&self) -> Vec<usize> {
        if self.components == 1 {
            vec![self.ny, self.nx]
        } else {
            vec![self.ny, self.nx, self.components]
        }
    }
}

/// The `.npy` header of a little-endian `float32` C-order array of `shape`: the magic string,
/// version 1.0, the header's length, and the header dictionary padded with spaces and ended by
/// a newline so that the data starts at a multiple of 64 bytes.
pub fn npy_header(shape: &[usize]) -> Vec<u8> {
    let dimensions: Vec<String> = shape.iter().map(usize::to_string).collect();
    let shape = match dimensions.len() {
        1 => format!("({},)", dimensions[0]),
        _ => format!("({})", dimensions.join(", ")),
    };
    let mut dictionary = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    // magic (6) + version (2) + length (2) + dictionary + '\n'.
    let unpadded = 10 + dictionary.len() + 1;
    dictionary.extend(std::iter::repeat_n(
        ' ',
        unpadded.next_multiple_of(64) - unpadded,
    ));
    dictionary.push('\n');
    let length = u16::try_from(dictionary.len()).expect("an npy header of a few dimensions");
    let mut header = Vec::with_capacity(10 + dictionary.len());
    header.extend_from_slice(b"\x93NUMPY\x01\x00");
    header.extend_from_slice(&length.to_le_bytes());
    header.extend_from_slice(dictionary.as_bytes());
    header
}

/// Writes `data` as an `.npy` array of `shape` (whose product is `data.len()`).
pub fn write_npy(out: &mut impl Write, shape: &[usize], data: &[f32]) -> std::io::Result<()> {
    assert_eq!(shape.iter().product::<usize>(), data.len(), "npy shape");
    out.write_all(&npy_header(shape))?;
    if cfg!(target_endian = "little") {
        out.write_all(bytemuck::cast_slice(data))
    } else {
        for value in data {
            out.write_all(&value.to_le_bytes())?;
        }
        Ok(())
    }
}

/// `DIR/frame_{step:05}_{name}.npy`: where [`write_grids`] writes a step's grid.
pub fn grid_path(directory: &Path, step: u64, name: &str) -> PathBuf {
    frame_part_path(directory, step, name, "npy")
}

/// Writes each of `grids` as [`grid_path`], each file atomically; returns the paths.
pub fn write_grids(directory: &Path, step: u64, grids: &[Grid]) -> std::io::Result<Vec<PathBuf>> {
    grids
        .iter()
        .map(|grid| {
            let path = grid_path(directory, step, grid.name);
            write_atomically(&path, |out| write_npy(out, &grid.shape(), &grid.data))?;
            Ok(path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header is numpy's own for these shapes: the dictionary numpy writes, padded so the
    /// data starts at a multiple of 64 bytes, with the length field saying where.
    #[test]
    fn npy_headers_are_numpys_and_aligned_to_64_bytes() {
        for (shape, text) in [
            (&[24usize, 33][..], "(24, 33)"),
            (&[24, 32, 2], "(24, 32, 2)"),
            (&[5], "(5,)"),
            (&[], "()"),
        ] {
            let header = npy_header(shape);
            assert_eq!(&header[..8], b"\x93NUMPY\x01\x00");
            let length = u16::from_le_bytes([header[8], header[9]]) as usize;
            assert_eq!(header.len(), 10 + length, "{shape:?}");
            assert_eq!(header.len() % 64, 0, "{shape:?}");
            let dictionary = std::str::from_utf8(&header[10..]).unwrap();
            let expected = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {text}, }}");
            assert_eq!(dictionary.trim_end_matches([' ', '\n']), expected);
            assert!(dictionary.ends_with(" \n") || dictionary.ends_with("}\n"));
            assert_eq!(dictionary.matches('\n').count(), 1);
        }
    }

    /// A grid is written as its header, then its values in little-endian order, under its
    /// frame's name; nothing temporary is left.
    #[test]
    fn a_grid_is_written_as_its_header_and_little_endian_values() {
        let directory = tempfile::tempdir().unwrap();
        let grid = Grid::new(
            "velocity",
            3,
            2,
            2,
            (0..12).map(|k| k as f32 - 2.5).collect(),
        );
        assert_eq!(grid.shape(), [2, 3, 2]);
        let paths = write_grids(directory.path(), 7, std::slice::from_ref(&grid)).unwrap();
        assert_eq!(paths, [directory.path().join("frame_00007_velocity.npy")]);
        let bytes = std::fs::read(&paths[0]).unwrap();
        let header = npy_header(&[2, 3, 2]);
        assert_eq!(&bytes[..header.len()], &header[..]);
        let values: Vec<f32> = bytes[header.len()..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(values, grid.data);
        assert_eq!(std::fs::read_dir(directory.path()).unwrap().count(), 1);
    }

    #[test]
    #[should_panic(expected = "grid u: 5 values for 2 × 3 × 1")]
    fn a_grid_of_the_wrong_length_is_a_bug() {
        Grid::new("u", 3, 2, 1, vec![0.0; 5]);
    }
}
