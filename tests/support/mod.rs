//! What several test binaries share (each includes it with `mod support;`).

use std::path::Path;

/// Reads a `.npy` file strictly by the format's specification, version 1.0: the magic string,
/// a header whose dictionary says little-endian float32 in C order and ends in a newline at a
/// multiple of 64 bytes, then exactly the shape's values. Returns (shape, values).
pub fn read_npy(path: &Path) -> (Vec<usize>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
    let length = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let start = 10 + length;
    assert_eq!(start % 64, 0, "{}: data at {start}", path.display());
    let header = std::str::from_utf8(&bytes[10..start]).unwrap();
    assert!(header.ends_with('\n'), "{header:?}");
    let dictionary = header.trim_end();
    assert!(
        dictionary.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (")
            && dictionary.ends_with("), }"),
        "{dictionary:?}"
    );
    let shape: Vec<usize> = dictionary
        .split_once("'shape': (")
        .and_then(|(_, rest)| rest.split_once(')'))
        .unwrap()
        .0
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().unwrap())
        .collect();
    let values: Vec<f32> = bytes[start..]
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().expect("whole float32 values")))
        .collect();
    assert_eq!(values.len(), shape.iter().product::<usize>(), "{shape:?}");
    (shape, values)
}
