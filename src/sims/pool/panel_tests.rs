//! The pool's panel and scene files held to their limits: edits a scene file would refuse, an
//! unknown key named with its section, the springs' stiffness up to the lattice's limit.

use super::sim_tests::open;

/// The panel's stiffness k/m is held to the scene file's limit: 1e12 on 256² springs (about
/// 47,600 substeps a frame) is refused naming `springs.stiffness` and the most this lattice
/// takes, leaving the wave speed as it was; just under the limit is taken. Any other edit
/// out of range is put back, naming its key.
#[test]
fn the_panel_refuses_edits_a_scene_file_would() {
    let mut sim = open("[surface]\nmodel = \"springs\"\n");
    let before = *sim.params();
    let most = before.most_stiffness();
    let error = sim.set_stiffness(1e12).unwrap_err();
    assert_eq!(error.key, "springs.stiffness");
    assert!(error.message.contains("at most"), "{}", error.message);
    assert_eq!(*sim.params(), before);
    sim.set_stiffness(0.999 * most).unwrap();
    let taken = *sim.params();
    assert!((taken.stiffness() / most - 0.999).abs() < 1e-3);
    assert!(
        (4000..=4096).contains(&taken.substeps()),
        "{}",
        taken.substeps()
    );
    assert!(sim.set_stiffness(1.001 * most).is_err());
    assert!(sim.set_stiffness(f32::NAN).is_err());
    assert!(sim.set_stiffness(-1.0).is_err());
    assert_eq!(*sim.params(), taken);
    let good = *sim.params();
    sim.scene.params.damping = -1.0;
    assert_eq!(sim.check_edit(good).unwrap_err().key, "surface.damping");
    assert_eq!(*sim.params(), good);
    sim.scene.params.tension = 1.0;
    assert_eq!(sim.check_edit(good).unwrap_err().key, "springs.tension");
    assert_eq!(*sim.params(), good);
    sim.scene.params.damping = 0.1;
    sim.check_edit(good).unwrap();
    assert_eq!(sim.params().damping, 0.1);
}

/// An unknown key is named with its section: `surface.dampingg`, `drop[1].radus` (the second
/// `[[drop]]`), a top-level one by itself.
#[test]
fn an_unknown_key_is_named_with_its_section() {
    use super::scene::PoolScene;
    use crate::scene::Source;
    let error = |text: &str| {
        let source = Source::parse(text, "bad2", "bad2.toml").unwrap();
        PoolScene::from_source(&source).unwrap_err().to_string()
    };
    let surface =
        error("kind = \"pool\"\n[pool]\nnodes = 32\n[surface]\ndamping = 0.1\ndampingg = 0.3\n");
    assert!(
        surface.starts_with("bad2.toml:6: surface.dampingg: unknown field `dampingg`"),
        "{surface}"
    );
    let drop = error(
        "kind = \"pool\"\n[[drop]]\ntime = 0.0\nposition = [1.0, 1.0]\n[[drop]]\ntime = 1.0\n\
         position = [1.0, 1.0]\nradus = 0.1\n",
    );
    assert!(
        drop.starts_with("bad2.toml:8: drop[1].radus: unknown field `radus`"),
        "{drop}"
    );
    let outline = error(
        "kind = \"pool\"\n[[island]]\noutline = [\n  [0.3, 1.4],\n  [0.6, 1.5],\n  [0.7, 1.75],\n]\n\
         radiuss = 0.1\n",
    );
    assert!(
        outline.starts_with("bad2.toml:8: island[0].radiuss: "),
        "{outline}"
    );
    let top = error("kind = \"pool\"\nnodess = 3\n[pool]\nnodes = 32\n");
    assert!(
        top.starts_with("bad2.toml:2: nodess: unknown field `nodess`"),
        "{top}"
    );
}

/// `springs.stiffness` is taken up to the lattice's limit ([`PoolParams::most_stiffness`]: a
/// wave speed of 1000 m/s or 4096 substeps per frame, whichever comes first) and refused just
/// beyond it, naming the stiffness, on either model and at either frame time.
#[test]
fn stiffness_is_taken_up_to_the_lattices_limit_and_refused_naming_itself_beyond() {
    use super::scene::PoolScene;
    use crate::scene::Source;
    let scene = |model: &str, dt: f32, k: f32| {
        let text = format!(
            "kind = \"pool\"\n[surface]\nmodel = \"{model}\"\ndt = {dt}\n[springs]\n\
             stiffness = {k:e}\n"
        );
        PoolScene::from_source(&Source::parse(&text, "test", "test.toml").unwrap())
    };
    for (model, dt) in [
        ("wave", 1.0 / 60.0),
        ("springs", 1.0 / 60.0),
        ("springs", 0.001),
    ] {
        let mut params = scene(model, dt, 1.0).unwrap().params;
        let most = params.most_stiffness();
        let accepted = scene(model, dt, 0.999 * most).unwrap();
        assert!(accepted.params.substeps() <= 4096, "{model} {dt}");
        assert!(accepted.params.wave_speed <= 1000.0, "{model} {dt}");
        // Within 1 % of the limit, one bound or the other is nearly reached.
        params.wave_speed = params.wave_speed_of(most);
        assert!(
            params.wave_speed > 990.0 || params.substeps() > 4050,
            "{model} {dt}: {} m/s, {} substeps",
            params.wave_speed,
            params.substeps()
        );
        let error = scene(model, dt, 1.001 * most).unwrap_err().to_string();
        assert!(
            error.starts_with("test.toml:6: springs.stiffness: ") && error.contains("at most"),
            "{model} {dt}: {error}"
        );
    }
    // Beyond 1e12, the key's own range.
    let error = scene("wave", 1.0 / 60.0, 2e12).unwrap_err().to_string();
    assert!(
        error.starts_with("test.toml:6: springs.stiffness: must be in (0, 1e12]"),
        "{error}"
    );
}

/// `springs.stiffness` sets the wave speed, so a scene that also writes `surface.wave_speed`
/// is refused naming both, at the stiffness's line. The old code took the stiffness silently:
/// `wave_speed = 1` with `stiffness = 1000` ran at c = 0.143 m/s.
#[test]
fn stiffness_and_wave_speed_together_are_refused() {
    use super::scene::PoolScene;
    use crate::scene::Source;
    let text = "kind = \"pool\"\n[surface]\nwave_speed = 1.0\n[springs]\nstiffness = 1000.0\n";
    let error = PoolScene::from_source(&Source::parse(text, "test", "test.toml").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("test.toml:5: springs.stiffness: ")
            && error.contains("surface.wave_speed = 1 sets it too"),
        "{error}"
    );
    // Either alone is taken.
    for text in [
        "kind = \"pool\"\n[surface]\nwave_speed = 1.0\n",
        "kind = \"pool\"\n[springs]\nstiffness = 1000.0\n",
    ] {
        PoolScene::from_source(&Source::parse(text, "test", "test.toml").unwrap()).unwrap();
    }
}
