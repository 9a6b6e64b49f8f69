//! Runs of the ink on the emulated driver for the CUDA-graph tests (tests/emulated_ink_graphs.rs,
//! tests/emulated_ink_replay.rs): a scene simulated with the driver's trace read back (kernels,
//! captures, graph launches) and its last frame's fields, and the presets on small grids.

// Each test file that includes it uses part of it.
#![allow(dead_code)]

use super::emulated_driver::{build, root, succeeds, Driver, Flavour};
use std::path::Path;
use std::process::Command;

/// What a run on the emulated driver did: the kernels in the order they ran, the captures, the
/// graph launches, the kernels run as graph nodes, and the exported fields of its last frame.
pub struct Run {
    pub kernels: Vec<String>,
    pub captures: usize,
    pub graph_launches: usize,
    pub graph_nodes: usize,
    pub fields: Vec<(String, Vec<u8>)>,
}

/// `frames` frames of the scene file `scene` on CUDA with `environment`, its last frame's
/// fields exported as npy.
pub fn run(
    driver: &Driver,
    scene: &Path,
    frames: u32,
    name: &str,
    environment: &[(&str, &str)],
) -> Run {
    let out = scene.with_file_name(name);
    let mut command = Command::new(env!("CARGO_BIN_EXE_fluidlab"));
    command
        .arg("simulate")
        .arg(scene)
        .args(["--backend", "cuda", "--steps"])
        .arg(frames.to_string())
        .arg("--every")
        .arg(frames.to_string())
        .args(["--format", "npy", "--export"])
        .arg(&out)
        .envs(environment.iter().copied())
        .env("FLUIDLAB_EMULATED_TRACE", "1");
    let (_, stderr) = succeeds(command, driver);
    let kernels = stderr
        .lines()
        .filter_map(|line| line.strip_prefix("emulated CUDA driver: kernel `"))
        .map(|rest| rest.split('`').next().unwrap_or_default().to_string())
        .collect();
    let mut fields: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    fields.sort();
    assert!(
        fields.iter().any(|(name, _)| name.ends_with("_u.npy")),
        "{name}: no u field exported: {:?}",
        fields.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    Run {
        kernels,
        captures: stderr
            .matches("emulated CUDA driver: cuStreamBeginCapture")
            .count(),
        graph_launches: stderr
            .matches("emulated CUDA driver: cuGraphLaunch")
            .count(),
        graph_nodes: stderr.matches("(graph node)").count(),
        fields,
    }
}

/// The preset `name` on a small grid (`cells`), with `edits` (text replaced) applied, written
/// into `dir`.
pub fn small_preset(
    dir: &Path,
    name: &str,
    cells: (&str, &str),
    edits: &[(&str, &str)],
) -> std::path::PathBuf {
    let mut text = std::fs::read_to_string(root().join(format!("scenes/ink/{name}.toml"))).unwrap();
    assert!(text.contains(cells.0), "{name}: {}", cells.0);
    text = text.replace(cells.0, cells.1);
    for (from, to) in edits {
        assert!(text.contains(from), "{name}: {from}");
        text = text.replace(from, to);
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs the test `test` of the calling test binary again, in a process of its own on the plain
/// emulated driver with `child` set (so the test runs its child part there), asserts that it
/// passed, and prints the child's line that starts with `marker` (its counts).
pub fn in_child(test: &str, child: &str, marker: &str) {
    let driver = build(Flavour::Plain);
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(child, "1");
    let (stdout, _) = succeeds(command, &driver);
    assert!(stdout.contains("1 passed"), "{stdout}");
    if let Some(at) = stdout.find(marker) {
        println!("{}", stdout[at..].lines().next().unwrap_or_default());
    }
}

/// Two CUDA ink solvers of `params` with obstacles where `solid`, stage timing off: one with
/// CUDA graphs, one with every kernel launched by itself (`FLUIDLAB_CUDA_GRAPHS` 1 and 0 when
/// each is made), for the graphs-against-launches comparisons.
pub fn graphed_and_plain(
    params: &fluidlab::sims::ink::params::InkParams,
    solid: &dyn Fn(f32, f32) -> bool,
) -> (
    fluidlab::sims::ink::cuda::CudaInk,
    fluidlab::sims::ink::cuda::CudaInk,
) {
    let solver = |graphs: &str| {
        std::env::set_var("FLUIDLAB_CUDA_GRAPHS", graphs);
        let mut cuda =
            fluidlab::sims::ink::cuda::CudaInk::new_on(0, params.clone(), solid).unwrap();
        cuda.set_stage_timing(false);
        cuda
    };
    (solver("1"), solver("0"))
}

/// Asserts that `a` and `b` hold the same fields (u, v, p, the ink, the curl, the divergence)
/// to the bit, and the same masks.
pub fn same_bits(
    a: &fluidlab::sims::ink::cuda::Fields,
    b: &fluidlab::sims::ink::cuda::Fields,
    what: &str,
) {
    let bits = |f: &[f32]| f.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let fields = [
        ("u", &a.flow.u.data, &b.flow.u.data),
        ("v", &a.flow.v.data, &b.flow.v.data),
        ("p", &a.flow.p.data, &b.flow.p.data),
        ("curl", &a.curl.data, &b.curl.data),
        ("divergence", &a.divergence.data, &b.divergence.data),
    ];
    for (name, x, y) in fields {
        assert!(bits(x) == bits(y), "{what}: {name} differs");
    }
    for (k, (x, y)) in a.ink.channels.iter().zip(&b.ink.channels).enumerate() {
        assert!(bits(&x.data) == bits(&y.data), "{what}: ink {k} differs");
    }
    assert!(
        a.flow.solid() == b.flow.solid(),
        "{what}: other solid cells"
    );
    assert_eq!(
        a.flow.fixed(),
        b.flow.fixed(),
        "{what}: other fixed velocities"
    );
}
