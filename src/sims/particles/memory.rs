//! What a fountain's droplets take in host memory, checked when a scene opens on the CPU, so a
//! scene whose `max_particles` (up to 2²⁶) cannot fit is refused naming the key before it runs,
//! instead of the allocator aborting the program once the droplets have grown that far.

use super::scene::{ParticlesScene, Which};
use crate::host::format_bytes;
use crate::scene::{Invalid, SceneError, Source};

/// Host bytes a live droplet takes at the peak of a `simulate` or `bench` run on the CPU: its
/// state (position, velocity, age, hits, tag: 33 bytes) with the room its vectors grow into,
/// the sort's keys and order, and a frame's read-back. Measured as the peak resident size over
/// the droplets alive: 2·10⁶ of them took 211 MB, 4·10⁶ 427 MB (106–108 bytes each).
pub const BYTES_PER_DROPLET: u64 = 112;

/// What drawing adds per droplet (`render`, the viewer): the renderer's vertex buffers and the
/// droplets' copy for them; on Mesa's llvmpipe, whose buffers lie in host memory, a render of
/// 2·10⁶ droplets peaked at 444 MB, 222 bytes each.
pub const DRAWN_BYTES_PER_DROPLET: u64 = 112;

/// Most droplets the fountain can hold at once: `max_particles`, or what it emits over a
/// lifetime and one frame when that is fewer.
pub fn most_alive(scene: &ParticlesScene) -> u64 {
    let f = &scene.fountain;
    let emitted = (f.rate as f64 * (f.lifetime as f64 + scene.dt as f64)).ceil();
    (f.max_particles as u64).min(emitted.max(0.0) as u64)
}

/// Checks that the fountain's droplets fit in `available` bytes of host memory (`None`: not
/// known, no check); the error names `fountain.max_particles` at its line (`bench
/// --particles`: the flag), with the need, the count and what is available.
pub fn check_host(
    source: &Source,
    scene: &ParticlesScene,
    drawn: bool,
    rescaled: bool,
    available: Option<u64>,
) -> Result<(), SceneError> {
    let Some(available) = available else {
        return Ok(());
    };
    if scene.which != Which::Fountain {
        return Ok(());
    }
    let alive = most_alive(scene);
    let each = BYTES_PER_DROPLET + if drawn { DRAWN_BYTES_PER_DROPLET } else { 0 };
    let needed = alive.saturating_mul(each);
    if needed <= available {
        return Ok(());
    }
    let invalid = Invalid::new(
        "fountain.max_particles",
        format!(
            "{alive} droplets alive (max_particles {}, rate × lifetime {:.0}) need about {} \
             ({each} bytes each) but only {} of host memory is available; lower max_particles, \
             the rate or the lifetime",
            scene.fountain.max_particles,
            scene.fountain.rate as f64 * scene.fountain.lifetime as f64,
            format_bytes(needed),
            format_bytes(available)
        ),
    );
    Err(source.error_after_parse(invalid, rescaled))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fountain-1m preset holds at most its 2·10⁶ `max_particles`: 224 MB to simulate,
    /// twice that drawn; refused under that, at the key's line in a file, and named by the
    /// flag when `--particles` set the size. A cloth needs no check.
    #[test]
    fn a_fountain_beyond_the_memory_is_refused_at_max_particles() {
        let text = "kind = \"particles\"\nscene = \"fountain\"\n[fountain]\nrate = 1e6\n\
                    max_particles = 2000000\n";
        let source = Source::parse(text, "big", "big.toml").unwrap();
        let scene = ParticlesScene::from_source(&source).unwrap();
        assert_eq!(most_alive(&scene), 2_000_000);
        let need = 2_000_000 * BYTES_PER_DROPLET;
        check_host(&source, &scene, false, false, Some(need)).unwrap();
        check_host(&source, &scene, false, false, None).unwrap();
        let error = check_host(&source, &scene, true, false, Some(need))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("big.toml:5: fountain.max_particles: 2000000 droplets alive")
                && error.contains("need about 427.2 MiB (224 bytes each)"),
            "{error}"
        );
        let error = check_host(&source, &scene, false, true, Some(1 << 20))
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("scene big: --particles: "), "{error}");
        // Fewer emitted over a lifetime than max_particles: the emission bounds it.
        let source = Source::parse(
            "kind = \"particles\"\nscene = \"fountain\"\n[fountain]\nrate = 100\n",
            "small",
            "small.toml",
        )
        .unwrap();
        let scene = ParticlesScene::from_source(&source).unwrap();
        assert_eq!(most_alive(&scene), 402);
        let cloth =
            Source::parse("kind = \"particles\"\nscene = \"cloth\"\n", "c", "c.toml").unwrap();
        let scene = ParticlesScene::from_source(&cloth).unwrap();
        check_host(&cloth, &scene, true, false, Some(0)).unwrap();
    }
}
