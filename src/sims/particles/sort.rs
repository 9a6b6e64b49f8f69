//! `sort`: particles back to front for alpha blending — a least-significant-digit radix sort
//! (four 8-bit passes, stable) of their view depths as order-preserving integer keys, the
//! sort a GPU runs.

use glam::Vec3;

/// An f32 as a u32 that orders as the floats do (negatives flipped whole, positives by sign).
pub fn order_key(value: f32) -> u32 {
    let bits = value.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// Indices of `keys` in ascending order (stable), by four 8-bit counting passes.
pub fn radix_sort(keys: &[u32]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    let mut next = vec![0u32; keys.len()];
    for pass in 0..4 {
        let shift = 8 * pass;
        let mut count = [0usize; 257];
        for &k in &order {
            count[((keys[k as usize] >> shift) & 0xff) as usize + 1] += 1;
        }
        for d in 0..256 {
            count[d + 1] += count[d];
        }
        for &k in &order {
            let digit = ((keys[k as usize] >> shift) & 0xff) as usize;
            next[count[digit]] = k;
            count[digit] += 1;
        }
        std::mem::swap(&mut order, &mut next);
    }
    order
}

/// The drawing order of `positions` seen from `eye` looking along `forward`: farthest first.
pub fn back_to_front(positions: &[Vec3], eye: Vec3, forward: Vec3) -> Vec<u32> {
    let keys: Vec<u32> = positions
        .iter()
        .map(|p| order_key(-(*p - eye).dot(forward)))
        .collect();
    radix_sort(&keys)
}
