//! The particles kind's CUDA path: its kernels built and complete, their parameter records'
//! sizes, register use, parity with the CPU on a GPU, and the command line without one. Tests
//! that need what a machine may lack are marked ignored with the reason where build.rs did not
//! find it (docs/testing.md, "Skipped tests"). Without a GPU the kernels' math is checked by
//! the emulation (`src/sims/particles/cuda/emulation.rs`, its tests in `stages_emulation.rs`);
//! `fluidlab doctor` runs the GPU checks where there is no cargo.

#[path = "support/kinds.rs"]
mod kinds;
#[path = "support/ptxas.rs"]
mod ptxas;
use fluidlab::cuda::ptx::{self, ModuleSource};
use fluidlab::sims::particles::cuda::kernels::{self, BasinStep, BodyStep, EmitStep, FountainStep};
use fluidlab::sims::particles::cuda::{parity, self_collide_check, stats};

fn module() -> &'static ModuleSource {
    ptx::module_source(kernels::MODULE).expect("kernels/particles.cu is a module")
}

/// Every kernel the host launches is defined in particles.cu and an entry point of the PTX,
/// and the PTX has no other.
#[test]
fn every_particles_kernel_the_host_launches_is_in_the_module() {
    kinds::assert_module_holds_exactly(module(), "particles.cu", kernels::NAMES);
}

/// The kernel names of `text`: each `launch(` call's first string literal, the arguments before
/// it only identifiers (`m.launch("surface"`, `Self::launch(m, s, "volume"` over several lines);
/// with `kernels` true instead the name after each `extern "C" __global__` (past its
/// `void __launch_bounds__(…)`).
fn kernel_names(text: &str, kernels: bool) -> Vec<String> {
    let name = |rest: &str| -> Option<String> {
        let n: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        (!n.is_empty()).then_some(n)
    };
    let mut names = Vec::new();
    if kernels {
        for piece in text.split("extern \"C\" __global__").skip(1) {
            let head = piece.split('(').next().unwrap_or("");
            let after = if head.contains("__launch_bounds__") {
                piece.split_once(')').map_or("", |(_, rest)| rest)
            } else {
                piece.strip_prefix(" void").unwrap_or(piece)
            };
            names.extend(name(after.trim_start()));
        }
    } else {
        for piece in text.split("launch(").skip(1) {
            let Some((args, rest)) = piece.split_once('"') else {
                continue;
            };
            let plain = args
                .chars()
                .all(|c| c.is_alphanumeric() || "_, \n".contains(c));
            if plain {
                names.extend(name(rest));
            }
        }
    }
    names
}

/// The particles kernels launched by name in src/sims/particles/cuda/*.rs (`launch`'s string
/// literals) and defined in kernels/particles*.cu* (`extern "C" __global__`) that `names` lacks.
fn not_looked_up(names: &[&str]) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |dir: &str, keep: &dyn Fn(&str) -> bool| -> String {
        let mut found: Vec<_> = std::fs::read_dir(root.join(dir))
            .expect(dir)
            .map(|e| e.expect(dir).path())
            .filter(|p| keep(&p.file_name().unwrap().to_string_lossy()))
            .collect();
        found.sort();
        found
            .iter()
            .map(|p| std::fs::read_to_string(p).expect("source"))
            .collect()
    };
    let launched = kernel_names(
        &read("src/sims/particles/cuda", &|f| f.ends_with(".rs")),
        false,
    );
    let defined = kernel_names(
        &read("kernels", &|f| {
            f.starts_with("particles") && f.contains(".cu")
        }),
        true,
    );
    // The scans find them all (so a scan that finds nothing cannot pass).
    for known in [
        "emit",
        "collide_scan",
        "body_points",
        "xpbd_solve",
        "reduce_finish",
    ] {
        assert!(
            launched.iter().any(|n| n == known),
            "{known} not found launched"
        );
        assert!(
            defined.iter().any(|n| n == known),
            "{known} not found defined"
        );
    }
    let mut missing: Vec<_> = launched
        .into_iter()
        .chain(defined)
        .filter(|n| !names.contains(&n.as_str()))
        .collect();
    missing.sort();
    missing.dedup();
    missing
}

/// Every kernel the host launches by name and every `extern "C" __global__` kernel of
/// kernels/particles*.cu* is in `kernels::NAMES`, which `Module::load` looks up: a kernel left
/// out there fails its first launch on a GPU ("was not looked up when module particles was
/// loaded"), which nothing else on the CPU sees (the emulation calls the kernels directly, and
/// the PTX check above only runs where build.rs made PTX). The NAMES before the volume term's
/// fix lacked `volume`, `volume_gather` and `xpbd_volume`: the test checks that the scan names
/// exactly those three for that list.
#[test]
fn every_particles_kernel_launched_or_defined_is_looked_up() {
    assert_eq!(
        not_looked_up(kernels::NAMES),
        Vec::<String>::new(),
        "not in kernels::NAMES"
    );
    let before: Vec<_> = kernels::NAMES
        .iter()
        .copied()
        .filter(|n| !["volume", "volume_gather", "xpbd_volume"].contains(n))
        .collect();
    assert_eq!(
        not_looked_up(&before),
        ["volume", "volume_gather", "xpbd_volume"]
    );
}

/// The integer value of `#define name value` in `source` (decimal or hex, an optional `u`;
/// a trailing `//` comment dropped).
fn define(source: &str, name: &str) -> u32 {
    let mut found = source.lines().filter_map(|line| {
        let rest = line.trim().strip_prefix("#define ")?.strip_prefix(name)?;
        rest.starts_with([' ', '\t'])
            .then(|| rest.split("//").next().unwrap().trim())
    });
    let text = found.next().unwrap_or_else(|| panic!("no #define {name}"));
    assert!(found.next().is_none(), "#define {name} twice");
    let digits = text.trim_end_matches(['u', 'U']);
    let value = match digits.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => digits.parse(),
    };
    value.unwrap_or_else(|_| panic!("#define {name} {text}: not an integer"))
}

/// The host's copies of the kernels' constants (kernels.rs, stats.rs) are the `#define`s of
/// particles.cu and particles_stats.cuh: the block, the scans' threads, the sort's tile and
/// digits, `reduce_nodes`' quantities and maxima (the box `end_frame` reads), `body_stats'`
/// quantities and its one maximum (the strain).
#[test]
fn the_hosts_constants_are_the_kernels_defines() {
    let source = module().nvrtc_source();
    let define = |name| define(&source, name);
    assert_eq!(define("PARTICLES_BLOCK"), kernels::BLOCK);
    assert_eq!(define("SCAN_THREADS"), kernels::SCAN_THREADS);
    assert_eq!(define("RADIX"), kernels::RADIX);
    assert!(source.contains("#define SORT_TILE (PARTICLES_BLOCK * SORT_ITEMS)"));
    assert_eq!(
        define("PARTICLES_BLOCK") * define("SORT_ITEMS"),
        kernels::SORT_TILE
    );
    assert_eq!(define("NODES_QUANTITIES"), kernels::NODES_QUANTITIES);
    assert_eq!(define("NODES_MAX_MASK"), kernels::NODES_MAX_MASK);
    // The box's six maxima after the count: the mask has the bits 1..NODES_QUANTITIES.
    assert_eq!(define("NODES_BOX"), 1);
    assert_eq!(
        kernels::NODES_MAX_MASK,
        ((1 << kernels::NODES_QUANTITIES) - 1) & !1
    );
    assert_eq!(
        define("BODY_QUANTITIES") as usize,
        stats::BODY_FIGURES.len()
    );
    let strain = stats::BODY_FIGURES.iter().position(|f| *f == "max_strain");
    assert_eq!(Some(define("BODY_STRAIN") as usize), strain);
    // self_collide's state slots (cuda/self_collide.rs reads the builds and the overflow).
    assert_eq!(define("SC_STATE") as usize, kernels::SC_STATE);
    assert_eq!(define("SC_BUILDS") as usize, kernels::SC_BUILDS);
    assert_eq!(define("SC_NEEDED") as usize, kernels::SC_NEEDED);
    assert_eq!(define("SC_OVERFLOW") as usize, kernels::SC_OVERFLOW);
    assert_eq!(define("SC_LARGEST") as usize, kernels::SC_LARGEST);
}

/// `self_collide`'s kernels take what the host passes (src/sims/particles/cuda/self_collide.rs):
/// a pointer to its substep's record (`SelfStep`, 9 four-byte fields, in device memory) first
/// where it takes one, then arrays; the
/// scans their state, a count and an array (the chunks' passes and the sums too); the drift's
/// sums `reduce_finish`, as the frame's end.
#[test]
#[cfg_attr(
    not(fluidlab_nvcc),
    ignore = "needs nvcc's PTX (scripts/setup.sh installs nvcc)"
)]
fn self_collides_kernels_take_what_the_host_passes() {
    assert_eq!(std::mem::size_of::<kernels::SelfStep>(), 9 * 4);
    let ptx = module().ptx.expect("the PTX build.rs made");
    let types = |kernel: &str| kinds::parameter_types(ptx, kernel);
    for (kernel, arrays) in [
        ("self_collide_drift", 3),
        ("self_collide_widest", 4),
        ("self_collide_decide", 3),
        ("self_collide_clear", 3),
        ("self_collide_cells", 5),
        ("self_collide_scatter", 5),
        ("self_collide_order", 3),
        ("self_collide_count", 7),
        ("self_collide_lists", 8),
        ("self_collide_touching", 9),
        ("self_collide_gather", 14),
        ("self_collide_apply", 5),
    ] {
        assert_eq!(
            types(kernel),
            vec![".u64".to_string(); 1 + arrays],
            "{kernel}"
        );
    }
    assert_eq!(types("self_collide_scan"), [".u64", ".u32", ".u64"]);
    for kernel in ["self_collide_chunk_sums", "self_collide_chunk_scan"] {
        assert_eq!(types(kernel), [".u64", ".u32", ".u64", ".u64"], "{kernel}");
    }
}

/// The records have their C structs' sizes (42, 10, 4 and 27 four-byte fields); every stage
/// kernel takes a pointer to its records (in device memory: `frame_graph.rs`), the frame's
/// end (`reduce_fountain`) the basin's record by value, as the PTX declares them.
#[test]
fn the_particles_records_have_the_kernels_sizes() {
    assert_eq!(std::mem::size_of::<FountainStep>(), 42 * 4);
    assert_eq!(std::mem::size_of::<BasinStep>(), 10 * 4);
    assert_eq!(std::mem::size_of::<EmitStep>(), 4 * 4);
    assert_eq!(std::mem::size_of::<BodyStep>(), 27 * 4);
    if let Some(ptx) = module().ptx {
        let first = |kernel: &str| kinds::first_parameter(ptx, kernel);
        assert!(
            first("reduce_fountain").contains("[40]"),
            "{}",
            first("reduce_fountain")
        );
        let types = |kernel: &str| kinds::parameter_types(ptx, kernel);
        for kernel in [
            "emit",
            "advance",
            "collide",
            "collide_compact",
            "basin_splash",
            "basin_forces",
            "basin_integrate",
            "sort_keys",
            "springs",
            "wind",
            "integrate",
            "xpbd_solve",
            "collide_nodes",
        ] {
            assert_eq!(types(kernel)[0], ".u64", "{kernel}");
        }
    }
}

/// The kernels whose parameters changed with the renderer's interop take what the host
/// passes (src/sims/particles/cuda/stages.rs, gl.rs): `emit` its two records and five arrays
/// (the tags last), `collide_compact` its two records and thirteen arrays (the
/// tags in and out), `surface` a count and seven arrays, `body_points` two counts, the node mass, the
/// energy drawn red and its decades, and eight arrays, `water` a count, four constants and two arrays.
#[test]
#[cfg_attr(
    not(fluidlab_nvcc),
    ignore = "needs nvcc's PTX (scripts/setup.sh installs nvcc)"
)]
fn the_drawing_and_tag_kernels_take_what_the_host_passes() {
    let ptx = module().ptx.expect("the PTX build.rs made");
    let types = |kernel: &str| kinds::parameter_types(ptx, kernel);
    let pointers = |n: usize| vec![".u64".to_string(); n];
    let emit = types("emit");
    assert_eq!(emit, pointers(7), "{emit:?}");
    let compact = types("collide_compact");
    assert_eq!(compact.len(), 15, "{compact:?}");
    assert_eq!(compact[2..], pointers(13)[..]);
    let surface = types("surface");
    assert_eq!(surface[0], ".u32");
    assert_eq!(surface[1..], pointers(7)[..]);
    let points = types("body_points");
    assert_eq!(points[..5], [".u32", ".u32", ".f32", ".f32", ".f32"]);
    assert_eq!(points[5..], pointers(8)[..]);
    let water = types("water");
    assert_eq!(water[..5], [".u32", ".f32", ".f32", ".f32", ".f32"]);
    assert_eq!(water[5..], pointers(2)[..]);
}

/// The statistics kernels take what the host passes (src/sims/particles/cuda/stats.rs,
/// stages.rs): `body_stats` the node count, the node mass, gravity's three components, six
/// arrays (positions, velocities, the links' rows, other ends, rest lengths and stiffnesses),
/// the jelly's side and volume modulus, and two arrays (the cells' rest volumes, the partials); `reduce_nodes` the node count, the positions and the partials (one per block:
/// the non-finite count; no velocities); `reduce_fountain` the basin's record, the counts
/// (the alive among them), the heights, the particles' positions and velocities and the
/// partials (three per block); `reduce_finish` the partials, three counts (blocks, quantities per block, the
/// maxima's mask), the output and its first slot.
#[test]
#[cfg_attr(
    not(fluidlab_nvcc),
    ignore = "needs nvcc's PTX (scripts/setup.sh installs nvcc)"
)]
fn the_statistics_kernels_take_what_the_host_passes() {
    let ptx = module().ptx.expect("the PTX build.rs made");
    let types = |kernel: &str| kinds::parameter_types(ptx, kernel);
    let pointers = |n: usize| vec![".u64".to_string(); n];
    let stats = types("body_stats");
    assert_eq!(
        stats[..5],
        [".u32", ".f32", ".f32", ".f32", ".f32"],
        "{stats:?}"
    );
    assert_eq!(stats[5..11], pointers(6)[..], "{stats:?}");
    assert_eq!(stats[11..13], [".u32", ".f32"], "{stats:?}");
    assert_eq!(stats[13..], pointers(2)[..], "{stats:?}");
    let nodes = types("reduce_nodes");
    assert_eq!(nodes.len(), 3, "{nodes:?}");
    assert_eq!(nodes[0], ".u32", "{nodes:?}");
    assert_eq!(nodes[1..], pointers(2)[..], "{nodes:?}");
    let fountain = types("reduce_fountain");
    assert_eq!(fountain.len(), 6, "{fountain:?}");
    assert!(fountain[0].contains("[40]"), "{fountain:?}");
    assert_eq!(fountain[1..], pointers(5)[..], "{fountain:?}");
    let finish = types("reduce_finish");
    assert_eq!(
        finish,
        [".u64", ".u32", ".u32", ".u32", ".u64", ".u32"],
        "{finish:?}"
    );
}

/// XPBD's kernels take what the host passes (src/sims/particles/cuda/stages.rs): they solve for
/// the substep's displacements in their own array, so `xpbd_predict` takes the body's record
/// (a pointer to its substep's) and six arrays (position, previous, velocity, force, pins, displacement), `xpbd_solve` the
/// record, the colour's first spring and count and nine arrays (the colouring, the springs'
/// ends, rest lengths and stiffnesses, the pins, λ, previous, displacement), `xpbd_velocity`
/// the record and four arrays (previous, displacement, velocity, position).
#[test]
#[cfg_attr(
    not(fluidlab_nvcc),
    ignore = "needs nvcc's PTX (scripts/setup.sh installs nvcc)"
)]
fn the_xpbd_kernels_take_what_the_host_passes() {
    let ptx = module().ptx.expect("the PTX build.rs made");
    let types = |kernel: &str| kinds::parameter_types(ptx, kernel);
    let pointers = |n: usize| vec![".u64".to_string(); n];
    for (kernel, counts, arrays) in [
        ("xpbd_predict", 0, 6),
        ("xpbd_solve", 2, 9),
        ("xpbd_velocity", 0, 4),
    ] {
        let t = types(kernel);
        assert_eq!(t.len(), 1 + counts + arrays, "{kernel}: {t:?}");
        assert_eq!(t[0], ".u64", "{kernel}: a pointer to the record: {t:?}");
        assert_eq!(
            t[1..1 + counts],
            vec![".u32".to_string(); counts][..],
            "{kernel}"
        );
        assert_eq!(t[1 + counts..], pointers(arrays)[..], "{kernel}: {t:?}");
    }
}

/// NVRTC compiles the embedded source for the H200 and its PTX holds every kernel.
#[test]
#[cfg_attr(
    not(fluidlab_nvrtc),
    ignore = "needs libnvrtc on the library path (build.rs found none)"
)]
fn nvrtc_compiles_the_particles_kernels() {
    kinds::assert_nvrtc_compiles(module(), "particles.cu", kernels::NAMES);
}

/// No particles kernel spills registers on the H200's architecture, and none but `emit` needs
/// a stack frame (cosf/sinf's reduction of huge arguments keeps 32 bytes there, a path its
/// angles below 2π never take). The volume kernels' loops over a cell's 8 corners are unrolled
/// (`#pragma unroll`): without it their corner arrays went to local memory, a 224-byte frame in
/// `xpbd_volume` and 96 in `volume_gather`.
#[test]
#[cfg_attr(
    not(fluidlab_ptxas),
    ignore = "needs nvcc's PTX and ptxas (scripts/setup.sh installs them)"
)]
fn no_particles_kernel_spills_registers_on_sm_90() {
    let source = module().ptx.expect("the PTX build.rs made");
    ptxas::assert_no_spills("particles", source, kernels::NAMES.len(), &[("emit", 32)]);
}

/// Every stage on the GPU, from the CPU's state, agrees with the CPU stage within
/// parity::GPU_TOLERANCE; the GPU's sort is a back-to-front permutation.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn particles_stages_on_the_gpu_match_the_cpu() {
    let _gpu = kinds::gpu();
    let (passed, detail) = parity::gpu_check(fluidlab::cuda::DEFAULT_DEVICE).expect("runs");
    println!("{detail}");
    assert!(passed, "{detail}");
}

/// `self_collide` on the GPU: 24 substeps of a folded cloth landing on itself against the
/// CPU's (`self_collide_check.rs`, the doctor's "particles self-collision" line).
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn self_collide_on_the_gpu_matches_the_cpu() {
    let _gpu = kinds::gpu();
    let (passed, detail) =
        self_collide_check::gpu_check(fluidlab::cuda::DEFAULT_DEVICE).expect("runs");
    println!("{detail}");
    assert!(passed, "{detail}");
}

/// A body's statistics panel figures reduced on the GPU (`body_stats`) are the CPU's of the
/// same state: the largest strain to the bit, each sum within its order's allowance
/// (stats::sum_allowance), for the cloths under each integrator, a 48² cloth and the jelly.
#[test]
#[cfg_attr(not(fluidlab_cuda), ignore = "needs a CUDA GPU (build.rs found none)")]
fn body_statistics_on_the_gpu_match_the_cpu() {
    let _gpu = kinds::gpu();
    let (passed, detail) = stats::gpu_check(fluidlab::cuda::DEFAULT_DEVICE).expect("runs");
    println!("{detail}");
    assert!(passed, "{detail}");
}

/// Without a GPU, `--backend cuda` on a particles scene fails in one sentence; `auto` runs on
/// the CPU and says why.
#[test]
#[cfg_attr(
    fluidlab_cuda,
    ignore = "needs a machine without CUDA: this one has a GPU (build.rs found it)"
)]
fn particles_on_cuda_without_a_gpu_fails_in_one_sentence_and_auto_says_why() {
    kinds::assert_cuda_refused_and_auto_says_why(&[
        "bench", "cloth", "--steps", "1", "--warmup", "0",
    ]);
}
