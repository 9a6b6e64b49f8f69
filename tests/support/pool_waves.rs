//! The pool render tests' waves: three trains 15 to 31 cm long, 4 mm high (their caustics are
//! lines on the floor), as the renderer's texels (height in the second lane).

/// The waves on a grid of `nodes` a side over a pool `size` m wide.
pub fn waves(nodes: usize, size: f32) -> Vec<[f32; 4]> {
    let h = size / (nodes - 1) as f32;
    let mut texels = Vec::with_capacity(nodes * nodes);
    for j in 0..nodes {
        for i in 0..nodes {
            let (x, z) = (i as f32 * h, j as f32 * h);
            let mut u = 0.0;
            for (k, (length, angle)) in [(0.15f32, 0.3f32), (0.22, 1.9), (0.31, 4.0)]
                .into_iter()
                .enumerate()
            {
                let phase = (x * angle.cos() + z * angle.sin()) / length;
                u += 0.004 * (std::f32::consts::TAU * phase + k as f32).sin();
            }
            texels.push([0.0, u, 0.0, 0.0]);
        }
    }
    texels
}
