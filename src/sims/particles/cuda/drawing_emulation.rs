//! The drawing kernels through the emulation (`emulation.rs`): `water`, `surface` and
//! `body_points` against the CPU's builders, and the factors of their contracted bounds.

use super::emulation::{run, Drawing};
use super::kernels::{BasinStep, BodyStep, FountainStep, Topology};
use super::parity::{self, BodyCase, FountainInput};
use crate::sims::particles::body::Body;
use crate::sims::particles::fountain::Fountain;
use crate::sims::particles::render::{nodes, surface, water, RenderSettings, Skin};
use crate::sims::particles::scene::Which;
use std::path::Path;

/// The contracted bound's factor for `surface`: positions and texture coordinates are copies;
/// a normal's components are crosses a·b − c·d whose contraction errs by a few roundings of
/// |a||b|, which normalising scales by |a||b|/|a × b| = 1/sin θ of the triangle (√2 for the
/// lattice's right triangles; 4 allows a deformed one down to 14°).
pub(super) const SURFACE_FACTOR: f32 = 4.0;
/// The contracted bound's factor for `body_points` on `body` drawn with `settings`, derived:
/// a spring's stretch l − l₀ cancels (contraction moves l by a few roundings, ε·l per
/// rounding, [`ROUNDINGS_OF_L`]; that is ε/strain of the stretch, twice that of its energy
/// ½k(l − l₀)²), the log scale turns a relative error of the energy into 1/(decades·ln 10) of
/// the ramp, and the ramp turns that into colour with a slope of at most 2·0.75 (0.75 the
/// largest step of a component between two of its colours): 3·ROUNDINGS_OF_L·ε/(decades·ln 10
/// ·strain). Only strains above the ramp's floor count (below it the level clamps to
/// blue-grey): ½k(strain·l₀)² = red·10^−decades, strain = √(2·red·10^−decades/k)/l₀, the
/// least over the springs. Against the contracted bound (128 roundings): 26 for the 12² cloths
/// (least strain drawn 3.1·10⁻⁴; measured 7.5–8.2·10⁻⁵, 11 × the bound), 25 for the jelly
/// (`cargo test --release --lib contracted_particles -- --nocapture`). A node's ½mv² has no
/// cancellation.
pub(super) fn colour_factor(body: &Body, settings: &RenderSettings) -> f32 {
    let (red, decades) = (nodes::red_energy(body, settings), settings.decades());
    let floor = 2.0 * red * 10f32.powf(-decades);
    let least_strain = body
        .springs
        .iter()
        .map(|s| (floor / s.stiffness).sqrt() / s.rest)
        .fold(f32::INFINITY, f32::min);
    let colour_error = 3.0 * ROUNDINGS_OF_L / (decades * std::f32::consts::LN_10 * least_strain);
    colour_error / 128.0
}

/// Roundings a contracted l = |a − b| may differ by (the dot product's skipped roundings and
/// the square root's; a few, with margin).
const ROUNDINGS_OF_L: f32 = 4.0;

/// The drawing stages' numbers in particles.cpp.
const SURFACE: u32 = 20;
const BODY_POINTS: u32 = 21;
const WATER: u32 = 22;

/// The `water` kernel through the emulation `program` on `f`'s basin against the CPU's
/// builder (`render::water::vertices`). `input`: any stage's input of `f` (the records).
pub(super) fn water_stage(
    program: &Path,
    f: &Fountain,
    input: &FountainInput,
) -> parity::Difference {
    let drawing = Drawing {
        skin: None,
        scales: vec![
            f.surface.h,
            f.params.basin,
            f.params.level,
            water::RIPPLE_GAIN,
        ],
    };
    let out = run(
        program,
        WATER,
        (&input.step, &input.basin.0, &BodyStep::default()),
        [f.len() as u32, 0, 0, 0, 0, 0, 0, 0],
        Some((f, input)),
        None,
        Some(&drawing),
    );
    let mut cpu = Vec::new();
    water::vertices(f, &mut cpu);
    let mut d = parity::Difference::start();
    d.add("water vertices", bytemuck::cast_slice(&cpu), &out.vertices);
    d
}

/// The drawing kernels (`surface`, `body_points`) through the emulation `program` on `case`'s
/// body (its skin as scene `which` lays it out) against the CPU's builders
/// (`render::surface::vertices`, `render::nodes::body_points`): (stage, difference), the
/// difference of the normals' and colours' fields.
pub(super) fn drawing_stages(
    program: &Path,
    name: &str,
    case: &BodyCase,
    which: Which,
) -> Vec<(String, parity::Difference)> {
    let topology = Topology::of(&case.body);
    let settings = RenderSettings::default();
    let skin = Skin::of(&case.body, which);
    let drawing = Drawing {
        skin: Some(&skin),
        scales: vec![
            case.body.mass,
            nodes::red_energy(&case.body, &settings),
            settings.decades(),
        ],
    };
    let step = BodyStep::new(
        &case.body,
        &case.surroundings,
        case.integrator,
        case.dt,
        case.damping,
    );
    let run_stage = |stage| {
        run(
            program,
            stage,
            (&FountainStep::default(), &BasinStep::default(), &step),
            [case.body.len() as u32, 0, 0, 0, 0, 0, 0, 0],
            None,
            Some((case, &topology)),
            Some(&drawing),
        )
    };
    let (mut normals, mut vertices) = (Vec::new(), Vec::new());
    surface::vertices(&skin, &case.body, &mut normals, &mut vertices);
    let out = run_stage(SURFACE);
    let mut surface = parity::Difference::start();
    surface.add(
        "skin vertices",
        bytemuck::cast_slice(&vertices),
        &out.vertices,
    );
    let (mut points, mut lines) = (Vec::new(), Vec::new());
    nodes::body_points(&case.body, &settings, &mut points, &mut lines);
    let out = run_stage(BODY_POINTS);
    let mut colours = parity::Difference::start();
    colours.add("node points", bytemuck::cast_slice(&points), &out.points);
    colours.add("spring lines", bytemuck::cast_slice(&lines), &out.lines);
    vec![
        (format!("{name} surface"), surface),
        (format!("{name} body_points"), colours),
    ]
}
