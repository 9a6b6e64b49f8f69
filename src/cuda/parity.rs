//! Comparing a CUDA backend's fields with the CPU solver's, for every kind's parity checks and
//! emulation tests: the largest difference of a field relative to its largest magnitude.

/// The largest difference of one field, relative to its largest magnitude on the CPU.
#[derive(Clone, Debug)]
pub struct Difference {
    /// The field's name.
    pub field: &'static str,
    /// max |other − cpu| / max |cpu| (0 when both are bit for bit equal or zero; infinite for a
    /// NaN on either side).
    pub relative: f32,
    /// Where (the index of the largest difference).
    pub at: usize,
}

/// `field`'s [`Difference`] between `cpu` and `other` (equal lengths).
pub fn relative(field: &'static str, cpu: &[f32], other: &[f32]) -> Difference {
    assert_eq!(cpu.len(), other.len(), "{field}: lengths");
    let scale = cpu.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    let (mut worst, mut at) = (0.0f32, 0);
    for (k, (a, b)) in cpu.iter().zip(other).enumerate() {
        let d = if a.to_bits() == b.to_bits() {
            0.0
        } else {
            (a - b).abs()
        };
        if d > worst || d.is_nan() {
            (worst, at) = (if d.is_nan() { f32::INFINITY } else { d }, k);
        }
    }
    Difference {
        field,
        relative: if worst == 0.0 {
            0.0
        } else {
            worst / scale.max(f32::MIN_POSITIVE)
        },
        at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_difference_is_relative_to_the_cpus_largest_value_and_a_nan_is_infinite() {
        let d = relative("h", &[2.0, -4.0, 1.0], &[2.0, -4.0, 1.5]);
        assert_eq!((d.relative, d.at), (0.125, 2));
        assert_eq!(relative("h", &[0.0, 0.0], &[0.0, 0.0]).relative, 0.0);
        let nan = relative("h", &[1.0, 1.0], &[1.0, f32::NAN]);
        assert_eq!((nan.relative, nan.at), (f32::INFINITY, 1));
    }
}
