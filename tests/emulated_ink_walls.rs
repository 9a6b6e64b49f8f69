//! The ink's moving walls (`stir`'s disc) run by the CUDA host code on the emulated driver
//! (tests/support/emulated_driver.rs; tests/emulated_driver.rs holds the driver's own checks and
//! the other kinds'): the disc follows the CPU, adds no wait or copy back, sends only its rows,
//! and frames never read the host mirror through a copy. Needs what the emulated driver needs
//! (a C++20 compiler and cuda.h, scripts/setup.sh).

#[allow(dead_code)]
#[path = "support/emulated_driver.rs"]
mod emulated_driver;

use emulated_driver::{root, succeeds, Driver, Flavour};
use std::path::Path;
use std::process::Command;

/// The `stir` preset (a scripted disc moved through the ink: a moving wall whose cells change
/// from substep to substep) simulated by the CUDA host code on the emulated driver —
/// `CudaInk::set_walls`' row uploads, the host mirror's counts — follows the CPU step by step:
/// kinetic energy, fastest speed, the divergence left after the projection and the pressure's
/// residual.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn a_disc_moved_through_the_ink_follows_the_cpu_on_the_emulated_driver() {
    let driver = emulated_driver::build(Flavour::Plain);
    let dir = tempfile::tempdir().unwrap();
    let cpu = follows_the_cpu(&driver, dir.path(), "stir");
    // The disc has moved and stirred the fluid by the end (0.64 m/s at step 20, 0.98 at 39).
    let last = cpu.last().unwrap();
    assert!(last["max_speed"].as_f64().unwrap() > 0.5, "{last}");
}

/// The statistics of 30 frames of `scene` on CUDA (on `driver`) against the CPU's, step by
/// step: kinetic energy, fastest speed and the divergence left after the projection. Returns
/// the CPU's.
fn follows_the_cpu(driver: &Driver, dir: &Path, scene: &str) -> Vec<serde_json::Value> {
    let stats = |backend: &str| -> Vec<serde_json::Value> {
        let file = dir.join(format!("{backend}.jsonl"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
        command
            .args(["simulate", scene, "--steps", "30", "--backend", backend])
            .arg("--stats")
            .arg(&file);
        succeeds(command, driver);
        std::fs::read_to_string(&file)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    };
    let (cpu, cuda) = (stats("cpu"), stats("cuda"));
    assert_eq!(cpu.len(), cuda.len());
    let value = |line: &serde_json::Value, key: &str| line[key].as_f64().unwrap();
    for (a, b) in cpu.iter().zip(&cuda) {
        // The divergence after the projection is ~1e-4 of the one before it, where the two
        // solvers' rounding differs by ~1e-3 of it (stir, step 24: 1.4643e-4 and 1.4627e-4
        // 1/s): it is compared to 1e-3 of itself or 1e-6 of the divergence before, the larger.
        let floor = 1e-3 * value(a, "divergence_before");
        for (key, tolerance, floor) in [
            ("kinetic_energy", 1e-5, 1e-6),
            ("max_speed", 1e-5, 1e-6),
            ("divergence_after", 1e-3, floor),
            // The residual after the multigrid's V-cycles is single precision's rounding of
            // the pressure equation (stir, step 27: 7.850e-5 and 7.866e-5, 2.0e-3 apart): 5e-3.
            // Its count is CudaInk::upload's; counting every cell instead is 1.1e-2 off
            // (step 13: 2.672e-2 on the CPU, 2.642e-2 on CUDA).
            ("residual", 5e-3, 1e-6),
        ] {
            let (x, y) = (value(a, key), value(b, key));
            assert!(
                (x - y).abs() <= tolerance * x.abs().max(floor),
                "{scene}, step {}: {key} {x} on the CPU, {y} on CUDA",
                value(a, "step")
            );
        }
    }
    cpu
}

/// A disc moving through the ink costs the CUDA host code no wait and no copy back: the frames
/// in which the `stir` preset's disc moves (its cells change every substep, 0.2 s on) wait and
/// read back exactly what frames before it moves do (the frame's one synchronisation and its
/// statistics). Fails when `CudaInk::set_walls` reads the rows' velocities back to close them
/// on the host (two synchronisations and ~25 kB more per substep).
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn a_moving_disc_adds_no_wait_and_no_copy_back_on_the_emulated_driver() {
    let driver = emulated_driver::build(Flavour::Plain);
    let dir = tempfile::tempdir().unwrap();
    // (waits, bytes copied back, close_walls launches) of a run of `steps` frames.
    let run = |steps: u32| -> (usize, usize, usize) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
        command
            .args(["simulate", "stir", "--backend", "cuda", "--steps"])
            .arg(steps.to_string())
            .arg("--stats")
            .arg(dir.path().join(format!("{steps}.jsonl")))
            .env("FLUIDLAB_EMULATED_TRACE", "1");
        let (_, stderr) = succeeds(command, &driver);
        let calls: Vec<&str> = stderr
            .lines()
            .filter_map(|line| line.strip_prefix("emulated CUDA driver: cu"))
            .collect();
        let closed = stderr
            .matches("emulated CUDA driver: kernel `close_walls`")
            .count();
        let waits = calls.iter().filter(|c| c.contains("Synchronize")).count();
        let bytes = calls
            .iter()
            .filter(|c| c.starts_with("MemcpyDtoH"))
            .map(|c| c.split(' ').nth(1).unwrap().parse::<usize>().unwrap())
            .sum();
        (waits, bytes, closed)
    };
    let window = |from: u32, to: u32| {
        let (a, b) = (run(from), run(to));
        (a.0.abs_diff(b.0), a.1.abs_diff(b.1), a.2.abs_diff(b.2))
    };
    // Frames 5–8: the stripes laid, the disc at rest; frames 21–24: the disc moving.
    let (resting, moving) = (window(4, 8), window(20, 24));
    // The windows are what they say: besides the obstacles' mirror after every projection (one
    // close_walls a substep), the disc's rows are closed on the GPU only while it moves.
    assert!(
        moving.2 >= resting.2 + 4,
        "close_walls launches in 4 frames: {} moving, {} at rest",
        moving.2,
        resting.2
    );
    assert_eq!(
        (moving.0, moving.1),
        (resting.0, resting.1),
        "4 frames moving, then 4 at rest: (waits, bytes back)"
    );
    assert!(resting.0 <= 8, "{} waits in 4 frames", resting.0);
}

/// Frames of the `stir` preset exported on CUDA while its disc moves (from 0.2 s: frames 13 to
/// 24; every one read back through `Sim::frame`, its pictures through `with_state`, as the
/// host-copy fallback reads them) never read the host mirror through a copy: no read is made
/// while `InkSolver::flow`'s guard is alive (the mirror's copy counter stays 0; its first copy
/// logs `MIRROR_COPIED`). Fails when a frame holds the guard across its read-back.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn exported_frames_never_read_the_ink_mirror_through_a_copy_on_the_emulated_driver() {
    let driver = emulated_driver::build(Flavour::Plain);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("frames");
    let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
    command
        .args(["simulate", "stir", "--backend", "cuda", "--steps", "24"])
        .args(["--every", "3", "--pictures", "--export"])
        .arg(&out);
    let (stdout, stderr) = succeeds(command, &driver);
    assert!(stdout.contains("pictures"), "{stdout}");
    let frames = std::fs::read_dir(&out).unwrap().count();
    assert!(frames >= 8, "{frames} files exported");
    assert!(
        !stderr.contains(fluidlab::sims::ink::cuda::MIRROR_COPIED),
        "a frame read the mirror through a copy:\n{stderr}"
    );
}

/// Bytes copied to the GPU (`cuMemcpyHtoD*` in the emulated driver's trace) by frames 21–24 of
/// `scene` on CUDA: the `stir` preset's disc moving (from 0.2 s), one substep a frame, its
/// cells changing every substep ([`copies_in_frames_21_to_24`]).
fn sent_while_the_disc_moves(driver: &Driver, scene: &str) -> usize {
    copies_in_frames_21_to_24(driver, scene)[0].1
}

/// The `stir` preset with Jacobi pressure instead of its multigrid, written into `dir`.
fn stir_with_jacobi(dir: &Path) -> String {
    let preset = std::fs::read_to_string(root().join("scenes/ink/stir.toml")).unwrap();
    let replaced = preset.replace(
        "pressure_solver = \"multigrid\"",
        "pressure_solver = \"jacobi\"",
    );
    assert_ne!(replaced, preset, "the preset names its pressure solver");
    let jacobi = dir.join("stir-jacobi.toml");
    std::fs::write(&jacobi, replaced).unwrap();
    jacobi.to_str().unwrap().to_owned()
}

/// A disc moving through the ink sends only its rows' solid bytes and its own record: the open
/// masks, the stencil and the closed faces' fixed velocities of those rows are derived on the
/// GPU (`wall_rows`). Over four frames of the `stir` preset's moving disc with Jacobi pressure
/// (nothing else is sent then), at most 1.25 bytes a cell of 40 rows of 256 cells a substep.
/// Fails when the host sends the rows' masks, stencil and fixed velocities (12 bytes a cell:
/// 99 744 bytes a substep, 398 976 in the four frames; now 8 724 a substep, the 34 rows'
/// solid bytes — the disc's rows found from its old and new places, one row either side — and
/// the disc's 20). And the multigrid's masks follow by rows: with the preset's
/// multigrid pressure the bytes exceed Jacobi's (the same disc, the same flow rows sent) by
/// less than a tenth of a whole hierarchy per frame. Fails when the hierarchy's masks are
/// sent whole when cells change (2 × 43 680 bytes a substep at 256 × 128: the measured excess
/// was 87 552 bytes a frame; by rows 6 656), or when a level's block is joined to the next
/// level's across the rest of the level (4 KiB or less apart: 16 128). One test, so the
/// Jacobi runs are not repeated.
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn a_moving_disc_sends_only_its_solid_rows_on_the_emulated_driver() {
    let driver = emulated_driver::build(Flavour::Plain);
    let dir = tempfile::tempdir().unwrap();
    let (multigrid, jacobi) = (
        sent_while_the_disc_moves(&driver, "stir"),
        sent_while_the_disc_moves(&driver, &stir_with_jacobi(dir.path())),
    );
    println!("4 frames moving: {multigrid} bytes sent with multigrid, {jacobi} with Jacobi");
    // The rows are sent at all: at least the solid bytes of 25 of the rows the disc covers
    // (2 × 0.12 m / 7.8 mm = 30.7) a substep.
    assert!(
        jacobi >= 4 * 25 * 256,
        "{jacobi} bytes: the disc's rows were not sent"
    );
    assert!(
        jacobi <= 4 * 40 * 256 * 5 / 4,
        "{jacobi} bytes in 4 frames: more than 1.25 bytes a cell of 40 rows a substep"
    );
    let hierarchy: i64 = 2 * (256 * 128 + 128 * 64 + 64 * 32 + 32 * 16 + 16 * 8 + 8 * 4);
    let excess = multigrid as i64 - jacobi as i64;
    assert!(
        excess < 4 * hierarchy / 10,
        "the multigrid's masks: {excess} bytes in 4 frames (a whole hierarchy: {hierarchy})"
    );
}

/// Copies to the GPU and within it (`cuMemcpyHtoD*`, `cuMemcpyDtoD*` in the emulated driver's
/// trace: (calls, bytes) each) by frames 21–24 of `scene` on CUDA, one substep a frame (the
/// runs of 24 and 20 frames, differenced). Copies within the GPU of [`PRESSURE_COPY`] bytes
/// are left out: the multigrid's pressure copied to the flow's (with an outflow side), not
/// masks.
fn copies_in_frames_21_to_24(driver: &Driver, scene: &str) -> [(usize, usize); 2] {
    let dir = tempfile::tempdir().unwrap();
    let copies = |steps: u32| -> [(usize, usize); 2] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
        command
            .args(["simulate", scene, "--backend", "cuda", "--steps"])
            .arg(steps.to_string())
            .arg("--stats")
            .arg(dir.path().join(format!("{steps}.jsonl")))
            .env("FLUIDLAB_EMULATED_TRACE", "1");
        let (_, stderr) = succeeds(command, driver);
        ["cuMemcpyHtoD", "cuMemcpyDtoD"].map(|call| {
            let sizes: Vec<usize> = stderr
                .lines()
                .filter_map(|line| line.strip_prefix("emulated CUDA driver: "))
                .filter_map(|line| line.strip_prefix(call))
                .map(|c| c.split(' ').nth(1).unwrap().parse::<usize>().unwrap())
                .filter(|&bytes| call == "cuMemcpyHtoD" || bytes != PRESSURE_COPY)
                .collect();
            (sizes.len(), sizes.iter().sum())
        })
    };
    let (before, after) = (copies(20), copies(24));
    [0, 1].map(|k| (after[k].0 - before[k].0, after[k].1 - before[k].1))
}

/// Bytes of the multigrid's pressure copied to the flow's at 256 × 128 (f32 a cell): no
/// mask copy is as long (a byte a cell of at most the finest level).
const PRESSURE_COPY: usize = 4 * 256 * 128;

/// Four discs moving at once through a 256 × 128 box at heights 0.12, 0.37, 0.62 and 0.87 m
/// (radius 0.05 m: 13 rows each, 19 rows apart), with `solver` pressure, written into `dir`.
fn four_discs(dir: &Path, solver: &str) -> String {
    let mut scene = format!(
        "kind = \"ink\"\ndescription = \"four discs\"\n[grid]\ncells = [256, 128]\nwidth = 2.0\n\
         [params]\ndt = 0.0166667\niterations = 2\npressure_solver = \"{solver}\"\n"
    );
    for y in [0.12, 0.37, 0.62, 0.87] {
        scene += &format!(
            "[[obstacle]]\ncenter = [0.3, {y}]\nradius = 0.05\nvelocity = [0.6, 0.0]\n\
             start = 0.2\nduration = 2.0\n"
        );
    }
    let file = dir.join(format!("four-discs-{solver}.toml"));
    std::fs::write(&file, scene).unwrap();
    file.to_str().unwrap().to_owned()
}

/// Scattered moving walls keep the multigrid's copies few: four discs moving at once, far
/// apart, change cells in four groups of rows a substep; the multigrid's masks follow by each
/// level's cells joined across the groups (`GpuMultigrid::update_cells`), so the copies the
/// multigrid adds to Jacobi's (which sends the same flow rows) over four frames are at most 6
/// a substep (the finest level's stencil and solid bytes on the device, the coarser levels' from
/// the host, the levels' records), and the bytes it sends from the host under a third of a
/// whole hierarchy a substep. Fails when each group is coarsened and copied on its own (two
/// copies a level a group, 4 × 2 × 6 a substep: 208 in the 4), or when the masks are sent
/// whole each substep (4 × 87 552 bytes). And the scene follows the CPU, step by step (the
/// joined copies carry the right rows: a block's last rows left out, the pressure differs).
#[test]
#[cfg_attr(
    not(fluidlab_emulated_driver),
    ignore = "needs a C++20 compiler and cuda.h (build.rs found one missing; scripts/setup.sh installs cuda.h)"
)]
fn scattered_moving_discs_copy_each_multigrid_level_once_on_the_emulated_driver() {
    let driver = emulated_driver::build(Flavour::Plain);
    let dir = tempfile::tempdir().unwrap();
    let multigrid = four_discs(dir.path(), "multigrid");
    let [mg_up, mg_within] = copies_in_frames_21_to_24(&driver, &multigrid);
    let [jacobi_up, jacobi_within] =
        copies_in_frames_21_to_24(&driver, &four_discs(dir.path(), "jacobi"));
    let calls = (mg_up.0 + mg_within.0) - (jacobi_up.0 + jacobi_within.0);
    let sent = mg_up.1 - jacobi_up.1;
    println!(
        "4 frames of 4 discs moving: multigrid {mg_up:?} to the GPU, {mg_within:?} within; \
         Jacobi {jacobi_up:?}, {jacobi_within:?} (calls, bytes): the multigrid's masks {calls} \
         copies, {sent} bytes sent"
    );
    // The discs' rows are sent at all: Jacobi's flow rows, 4 discs × 13 rows × 256 a substep.
    assert!(jacobi_up.1 >= 4 * 4 * 13 * 256, "{jacobi_up:?}");
    assert!(calls >= 4, "{calls} copies: the masks did not follow");
    assert!(
        calls <= 4 * 6,
        "{calls} copies of the multigrid's masks in 4 substeps"
    );
    let hierarchy = 2 * (256 * 128 + 128 * 64 + 64 * 32 + 32 * 16 + 16 * 8 + 8 * 4);
    assert!(
        sent <= 4 * hierarchy / 3,
        "{sent} bytes of the multigrid's masks sent in 4 substeps (a whole hierarchy: {hierarchy})"
    );
    follows_the_cpu(&driver, dir.path(), &multigrid);
}
