//! The pool's memory: the panel's figures, the checks of a grid against host memory when a
//! scene opens and when the panel restarts it, the restart itself.

use super::sim_tests::open;

/// The panel's memory figure counts every field of the state.
#[test]
fn a_nodes_state_bytes_are_its_fields() {
    let sim = open("[pool]\nnodes = 16\n");
    let s = &sim.solver.as_cpu().unwrap().surface;
    let f32s = s.height.len() + s.velocity.len() + s.accel.len();
    let pairs = s.offset.len() + s.velocity_h.len() + s.accel_h.len();
    let bytes = 4 * f32s + 8 * pairs + s.flags.len();
    assert_eq!(bytes, 16 * 16 * super::surface::BYTES_PER_NODE);
    use super::memory::{grid_bytes, Drawing, Solver};
    assert_eq!(s.bytes(), bytes as u64);
    assert_eq!(
        super::panel::grid_cost(8192, &grid_bytes(8192, Solver::Cpu, Drawing::HostCopy)),
        "8192² = 67.1 M nodes: 2.3 GiB of state, 3.6 GiB to draw them: 5.9 GiB of host memory"
    );
    assert_eq!(
        super::panel::grid_cost(8192, &grid_bytes(8192, Solver::Cuda, Drawing::Interop)),
        "8192² = 67.1 M nodes: 2.3 GiB of state, 2.6 GiB to draw them: 2.4 GiB of host \
         memory, 4.4 GiB of GPU memory"
    );
    assert_eq!(
        super::panel::grid_cost(8192, &grid_bytes(8192, Solver::Cuda, Drawing::HostCopy)),
        "8192² = 67.1 M nodes: 2.3 GiB of state, 4.4 GiB to draw them: 5.5 GiB of host \
         memory, 2.3 GiB of GPU memory"
    );
    assert_eq!(
        grid_bytes(16, Solver::Cpu, Drawing::Undrawn).state,
        bytes as u64
    );
}

/// A 64² pool on the CPU one step after a drop, and its surface then.
fn rippled() -> (super::PoolSim, super::surface::Surface) {
    use super::drops::{Drop, Target};
    use crate::sims::Sim;
    let mut sim = open("[pool]\nnodes = 64\n");
    sim.add_drop(Drop {
        position: [0.5, 0.5],
        radius: 0.1,
        amplitude: 0.01,
        target: Target::Height,
    });
    sim.step().unwrap();
    let before = sim.solver.as_cpu().unwrap().surface.clone();
    (sim, before)
}

/// A restart with a grid that does not fit in the memory available is refused before anything
/// is built, with a message naming the key and both figures, and the running grid goes on as it
/// was; a grid over 1 GiB is built only when asked for twice; one that fits restarts.
#[test]
fn a_grid_that_does_not_fit_is_refused_and_the_old_one_runs_on() {
    use crate::sims::Sim;
    let (mut sim, before) = rippled();
    sim.nodes_edit = 8192;
    let needed = super::memory::grid_bytes(
        8192,
        super::memory::Solver::Cpu,
        super::memory::Drawing::Undrawn,
    )
    .host;
    assert_eq!(needed, 8192 * 8192 * 37);
    let refused = sim.restart_within(Some(1 << 30)).unwrap_err().to_string();
    assert_eq!(
        refused,
        "refused: pool.nodes: 8192² nodes need about 2.3 GiB but only 1.0 GiB of host memory \
         is available (CPU backend); use fewer nodes"
    );
    assert_eq!(sim.refusal.as_deref(), Some(refused.as_str()));
    assert_eq!(sim.params().nodes, 64);
    assert_eq!(sim.solver.as_cpu().unwrap().surface, before);
    sim.step().unwrap();
    assert_eq!(sim.steps_taken(), 2 * u64::from(sim.params().substeps()));
    // Fits, but over 1 GiB: the first restart asks again and builds nothing.
    let asked = sim.restart_within(Some(u64::MAX)).unwrap_err().to_string();
    assert!(asked.contains("restart again"), "{asked}");
    assert_eq!((sim.confirming, sim.params().nodes), (Some(8192), 64));
    sim.nodes_edit = 32;
    sim.restart_within(Some(1 << 20)).unwrap();
    assert_eq!((sim.params().nodes, sim.refusal.as_deref()), (32, None));
    assert_eq!(sim.solver.as_cpu().unwrap().surface.height.len(), 32 * 32);
}

/// A restart whose grid cannot be built leaves the running one as it was, water and time and
/// all: nothing is rebuilt after the failure (before, the old grid was built again at rest,
/// which on CUDA also needed the old grid's memory twice and hid the error under its own).
#[test]
fn a_restart_that_fails_leaves_the_running_water_as_it_was() {
    use crate::sims::Sim;
    let (mut sim, before) = rippled();
    assert!(before.height.iter().any(|&u| u.abs() > 1e-3));
    sim.nodes_edit = super::params::MIN_NODES - 1;
    let error = sim.restart_within(Some(u64::MAX)).unwrap_err().to_string();
    assert!(error.contains("pool.nodes"), "{error}");
    assert_eq!(sim.nodes_edit, 64);
    assert_eq!(sim.solver.as_cpu().unwrap().surface, before);
    assert_eq!(sim.steps_taken(), u64::from(sim.params().substeps()));
}

/// A scene opened drawn is checked against host memory with what drawing takes on its
/// backend (`memory::drawn_bytes`), and refused with the file, the key and both figures.
/// Before, only the state (37 bytes a node) was checked, on every backend: a drawn 1024² CPU
/// pool (37 MiB of state, 117 MiB with its texels and GL objects) opened with 48 MiB
/// available. Undrawn, the same grid opens.
#[test]
fn a_drawn_scene_is_checked_with_what_drawing_takes() {
    use super::memory::{grid_bytes, Drawing, Solver};
    let text = "kind = \"pool\"\n[pool]\nnodes = 1024\n";
    let source = crate::scene::Source::parse(text, "big", "scenes/big.toml").expect("a kind");
    let options = |drawn| crate::sims::OpenOptions {
        backend: crate::sims::Backend::Cpu,
        drawn,
        ..Default::default()
    };
    let available = 48 << 20;
    let state = grid_bytes(1024, Solver::Cpu, Drawing::Undrawn).host;
    let drawn = grid_bytes(1024, Solver::Cpu, Drawing::HostCopy).host;
    assert!(state < available && drawn > available, "{state} {drawn}");
    let error = super::PoolSim::open_within(&source, &options(true), Some(available))
        .err()
        .expect("refused")
        .to_string();
    assert_eq!(
        error,
        "scenes/big.toml:3: pool.nodes: 1024² nodes need about 117.6 MiB but only 48.0 MiB of \
         host memory is available (CPU backend, drawn); use fewer nodes"
    );
    let sim = super::PoolSim::open_within(&source, &options(false), Some(available)).unwrap();
    assert_eq!(sim.params().nodes, 1024);
}

/// A drawn CUDA scene opened before the drawing path is known (the viewer opens its scene
/// before its GL context exists) is checked against host memory with interop's figure, the path
/// CUDA takes where it can: an 8192² CUDA grid (`pool.cuda_nodes`) with 4 GiB available
/// passes (2.4 GiB: the flags and the state's copy a start builds). It was checked with the
/// path through the host (6.1 GiB) and refused, although it opens and runs by interop; the
/// check before both (2.3 GiB of state) opened it. The path known to go through the host is
/// still counted so.
#[test]
fn a_cuda_scene_that_fits_by_interop_opens_before_the_path_is_known() {
    use super::memory::{drawn_bytes, Solver};
    let text = "kind = \"pool\"\n[pool]\nnodes = 1024\ncuda_nodes = 8192\n";
    let source = crate::scene::Source::parse(text, "big", "scenes/big.toml").expect("a kind");
    let mut scene = super::scene::PoolScene::from_source(&source).expect("the scene");
    let options = crate::sims::OpenOptions {
        backend: crate::sims::Backend::Cuda,
        drawn: true,
        ..Default::default()
    };
    let available = 4 << 30;
    let (interop, fits) = super::sim::host_check(&source, &options, Some(8192), Some(available));
    assert_eq!(interop, None, "no GL context here");
    scene.params.nodes = 8192;
    fits(Solver::Cuda, &scene).expect("fits by interop");
    let through_host = drawn_bytes(8192, Solver::Cuda, true, Some(false)).host;
    assert!(through_host > available, "{through_host}");
    let error = super::sim::host_check(&source, &options, Some(8192), Some(2 << 30)).1(
        Solver::Cuda,
        &scene,
    )
    .expect_err("2 GiB is too little")
    .to_string();
    assert!(
        error.contains("pool.cuda_nodes") && error.contains("(CUDA backend, drawn)"),
        "{error}"
    );
}

/// The first frame drawn that finds the frames going through the host checks host memory
/// again with that path's figure, before the host copy's buffers are built: a 1024² CUDA grid
/// opened before the path was known was counted as interop (39.0 MiB: the flags, the
/// renderer's land nodes and the state's copy), which fits in 48 MiB; through the host it takes 110.6 MiB (the texels, the GL objects
/// llvmpipe keeps there), and the frame is refused with the open check's words (file, key,
/// both figures) after what happened. Before, nothing checked it again and the frame built
/// the texels. The path is left unknown on a refusal (the next frame refuses too), and learnt
/// once the grid fits; interop, or a path already known, checks nothing.
#[test]
fn the_first_frame_through_the_host_checks_host_memory_again() {
    use super::memory::{drawn_bytes, Solver};
    let text = "kind = \"pool\"\n[pool]\nnodes = 1024\n";
    let source = crate::scene::Source::parse(text, "big", "scenes/big.toml").expect("a kind");
    let options = crate::sims::OpenOptions {
        backend: crate::sims::Backend::Cpu,
        ..Default::default()
    };
    let mut sim = super::PoolSim::open_within(&source, &options, None).unwrap();
    let available = 48 << 20;
    let opened = drawn_bytes(1024, Solver::Cuda, true, None).host;
    let through_host = drawn_bytes(1024, Solver::Cuda, true, Some(false)).host;
    assert_eq!(opened, 39 * 1024 * 1024);
    assert!(
        opened < available && through_host > available,
        "{through_host}"
    );
    let error = sim
        .check_path(Solver::Cuda, Some(available))
        .expect_err("refused through the host");
    assert_eq!(
        format!("{error:#}"),
        "the first frame drawn goes through the host (no CUDA–GL interop with this GL \
         context), which takes more host memory than the check when the scene opened counted \
         (interop's): scenes/big.toml:3: pool.nodes: 1024² nodes need about 110.6 MiB but only \
         48.0 MiB of host memory is available (CUDA backend, drawn); use fewer nodes"
    );
    sim.check_path(Solver::Cuda, Some(through_host)).unwrap();
    // This grid's own figure (CPU, 117.6 MiB) through `learn_path`: refused and the path left
    // unknown, then learnt where it fits; known, it is not checked again.
    assert!(sim.learn_path(false, || Some(available)).is_err());
    assert_eq!(sim.interop, None);
    sim.learn_path(false, || Some(1 << 30)).unwrap();
    assert_eq!(sim.interop, Some(false));
    sim.learn_path(false, || Some(1 << 20)).unwrap();
    sim.interop = None;
    sim.learn_path(true, || Some(1 << 20)).unwrap();
    assert_eq!(sim.interop, Some(true));
}

/// A panel restart with a grid over the GL's largest texture is refused before anything is
/// built, naming `pool.nodes` and the limit (1024, given to `attach_gl_within` in place of
/// llvmpipe's 16384: a grid over that would take 9.9 GiB), and the running grid goes on as it
/// was; a grid at the limit restarts.
#[test]
fn a_restart_over_the_gls_largest_texture_is_refused() {
    use crate::gfx::headless::Headless;
    use crate::gfx::timing::PassClock;
    use crate::sims::Sim;
    let headless = Headless::new(32, 32).expect("headless OpenGL");
    let (mut sim, before) = rippled();
    sim.attach_gl_within(headless.gl(), PassClock::Finish, Some(1024))
        .expect("attach");
    sim.nodes_edit = 1025;
    let refused = sim.restart_within(Some(u64::MAX)).unwrap_err().to_string();
    assert_eq!(
        refused,
        "refused: pool.nodes: 1025² nodes need a 1025×1025 surface texture but this GL's \
         textures are at most 1024×1024 (GL_MAX_TEXTURE_SIZE); use fewer nodes"
    );
    assert_eq!(sim.refusal.as_deref(), Some(refused.as_str()));
    assert_eq!(sim.params().nodes, 64);
    assert_eq!(sim.solver.as_cpu().unwrap().surface, before);
    sim.nodes_edit = 1024;
    sim.restart_within(Some(u64::MAX)).unwrap();
    assert_eq!((sim.params().nodes, sim.refusal.as_deref()), (1024, None));
    sim.release_gl();
}

/// Attaching GL to a grid over the GL's largest texture is refused with the file and key
/// before anything else is done: the far taps are left to be chosen and no note is given
/// (before, the renderer's choice and its note were set, then the grid was refused).
#[test]
fn attaching_gl_over_the_largest_texture_changes_nothing() {
    use crate::gfx::headless::Headless;
    use crate::gfx::timing::PassClock;
    let headless = Headless::new(32, 32).expect("headless OpenGL");
    let mut sim = open("[pool]\nnodes = 64\n");
    let error = sim
        .attach_gl_within(headless.gl(), PassClock::Finish, Some(32))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(
            "pool.nodes: 64² nodes need a 64×64 surface texture but this GL's textures are at \
             most 32×32 (GL_MAX_TEXTURE_SIZE); use fewer nodes"
        ),
        "{error}"
    );
    assert_eq!(
        (sim.scene.look.far_taps, sim.gl_note.as_deref()),
        (None, None)
    );
    // Within the limit, the renderer's choice.
    sim.attach_gl_within(headless.gl(), PassClock::Finish, Some(64))
        .expect("attach");
    assert!(sim.scene.look.far_taps.is_some() && sim.gl_note.is_some());
    crate::sims::Sim::release_gl(&mut sim);
}
