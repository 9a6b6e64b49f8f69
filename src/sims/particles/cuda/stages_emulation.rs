//! Every particles stage through the emulation (`emulation.rs`) against the CPU (`parity.rs`):
//! bit for bit without FMA contraction, within the derived bound with it, and a mutated
//! kernel caught.

use super::drawing_emulation::{colour_factor, drawing_stages, water_stage, SURFACE_FACTOR};
use super::emulation::{compile, emulate_body, emulate_fountain};
use super::parity::{
    self, body_cases, body_cpu, body_stages, compare_body, compare_fountain, fountain_case,
    fountain_cpu, FountainStage, CONTRACTED_BOUND,
};
use crate::sims::particles::body::Body;
use crate::sims::particles::dynamics::Integrator;
use crate::sims::particles::render::RenderSettings;
use crate::sims::particles::scene::Which;
use glam::Vec3;
use std::path::Path;

/// Every fountain stage and every body stage through the emulation `program` against the CPU:
/// (case, stage, difference).
/// `exact_order`: the sort's order must be the CPU's (without contraction the keys are).
/// Each result carries the factor its contracted bound gets ([`parity::strain_factor`] for the
/// pulls, ×10 for XPBD's sweeps and the basin's substeps, which compound theirs).
fn all_stages(program: &Path, exact_order: bool) -> Vec<(String, parity::Difference, f32)> {
    let mut results = Vec::new();
    let (mut f, air, dt, eye, forward) = fountain_case(1500.0, 200);
    assert!(f.len() > 500, "{} particles", f.len());
    let mut landings = Vec::new();
    for stage in FountainStage::ALL {
        let (input, cpu, next, drops) =
            fountain_cpu(&f, stage, (&air, dt, eye, forward), &landings);
        if stage == FountainStage::Collide {
            assert!(
                drops.len() > 3 && next.len() < f.len(),
                "{} landings",
                drops.len()
            );
        }
        let other = emulate_fountain(program, &f, stage, &input);
        let mut d = compare_fountain(&cpu, &other, exact_order);
        if stage == FountainStage::Sort
            && !parity::order_is_back_to_front(&other.order, &f.position, eye, forward, 1e-5)
        {
            d.bitwise = false;
            d.worst = f32::INFINITY;
            d.field = "order not back to front".into();
        }
        let compounding = if stage == FountainStage::Basin {
            10.0
        } else {
            1.0
        };
        results.push((format!("fountain {stage:?}"), d, compounding));
        if stage == FountainStage::Collide {
            landings = drops;
        }
        f = next;
        if stage == FountainStage::Basin {
            assert!(f.surface.height.iter().any(|&u| u != 0.0), "a still basin");
            results.push((
                "fountain water".into(),
                water_stage(program, &f, &input),
                1.0,
            ));
        }
    }
    for (name, case) in body_cases(30) {
        for stage in body_stages(case.integrator) {
            let (input, cpu) = body_cpu(&case, stage);
            let (other, stats) = emulate_body(program, &case, stage, &input);
            let mut d = compare_body(&cpu, &other);
            // `reduce_nodes` ran (the slot starts at −1) and counted no non-finite node.
            if stage == parity::BodyStage::Collide && stats[2] != 0.0 {
                d.worst = f32::INFINITY;
                d.field = format!("non-finite nodes {}", stats[2]);
            }
            let factor = match stage {
                parity::BodyStage::Springs | parity::BodyStage::Volume => {
                    parity::strain_factor(&case.body)
                }
                parity::BodyStage::Xpbd => 10.0 * parity::strain_factor(&case.body),
                _ => 1.0,
            };
            results.push((format!("{name} {stage:?}"), d, factor));
        }
        let which = if name.starts_with("jelly") {
            Which::Jelly
        } else {
            Which::Cloth
        };
        for (stage, d) in drawing_stages(program, &name, &case, which) {
            let factor = if stage.ends_with("surface") {
                SURFACE_FACTOR
            } else {
                colour_factor(&case.body, &RenderSettings::default())
            };
            results.push((stage, d, factor));
        }
    }
    let case = friction_case();
    let (input, cpu) = body_cpu(&case, parity::BodyStage::Collide);
    let (other, _) = emulate_body(program, &case, parity::BodyStage::Collide, &input);
    results.push(("friction Collide".into(), compare_body(&cpu, &other), 1.0));
    results
}

/// Unlinked nodes that `collide` finds in the ground or the sphere (μ = 0.4, dt = 1/480 s), one
/// per regime of Coulomb friction: held (static: sliding 0.1 m/s pressed by 1 m/s), sliding
/// (kinetic: 1.1 m/s pressed by 1), leaving (not pressed), each on the ground and on the sphere,
/// and a pinned node in the ground: the cloth and jelly cases rarely hold a node still.
fn friction_case() -> parity::BodyCase {
    let (centre, r) = (Vec3::new(0.0, 0.5, 0.0), 0.3);
    let n = Vec3::new(0.6, 0.8, 0.0);
    let t = Vec3::new(0.8, -0.6, 0.0);
    let inside = centre + n * (r - 0.002);
    let nodes = [
        (Vec3::new(0.1, -0.001, 0.2), Vec3::new(0.06, -1.0, 0.08)),
        (Vec3::new(0.3, -0.002, 0.1), Vec3::new(1.0, -1.0, 0.5)),
        (Vec3::new(0.5, -0.001, 0.0), Vec3::new(1.0, 1.0, 0.0)),
        (inside, t * 0.1 - n),
        (inside + t * 0.01, t * 1.1 - n + Vec3::Z * 0.2),
        (inside - t * 0.01, t + n * 0.5),
        (Vec3::new(-0.2, -0.003, 0.0), Vec3::new(1.0, -1.0, 0.0)),
    ];
    let mut body = Body::new(
        nodes.iter().map(|p| p.0).collect(),
        0.01,
        Vec::new(),
        Vec::new(),
    );
    let dt = 1.0 / 480.0;
    for (k, (x, v)) in nodes.iter().enumerate() {
        body.velocity[k] = *v;
        body.previous[k] = *x - *v * dt;
    }
    body.pinned[6] = true;
    let mut surroundings = body_cases(0)[0].1.surroundings;
    surroundings.sphere = Some((centre, r));
    surroundings.friction = 0.4;
    parity::BodyCase {
        body,
        surroundings,
        integrator: Integrator::Verlet,
        dt: (dt, dt),
        damping: 0.0,
        iterations: 1,
    }
}

/// Without FMA contraction the kernels do the CPU's operations in the CPU's order: every stage
/// of the fountain (emission, flight, the cube, the compaction's order, the landings, the
/// splashes and the basin's substeps, the sort's order) and of the cloth under each integrator
/// and the jelly agrees bit for bit.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn every_particles_stage_matches_the_cpu_bit_for_bit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), false, None);
    let results = all_stages(&program, true);
    let failed: Vec<_> = results.iter().filter(|(_, d, _)| !d.bitwise).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(results.len(), 5 + 1 + 5 * 5 + 5 * 2 + 1);
}

/// With FMA contraction (as nvcc compiles) every stage stays within [`CONTRACTED_BOUND`] of
/// the CPU (times the stage's factor, see `all_stages`), and the sort is still a back-to-front
/// permutation.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn contracted_particles_stages_stay_within_the_derived_bound() {
    let dir = tempfile::tempdir().expect("temp dir");
    let program = compile(&dir.path().join("particles"), true, None);
    let mut over = Vec::new();
    for (name, d, factor) in all_stages(&program, false) {
        let bound = CONTRACTED_BOUND * factor;
        println!(
            "{name}: worst {:.2e} in {} (bound {bound:.1e})",
            d.worst, d.field
        );
        if d.worst > bound {
            over.push(format!("{name}: {d:?} over {bound:e}"));
        }
    }
    assert!(over.is_empty(), "{over:#?}");
}

/// A kernel with one operation changed is caught: the first hit's cut applied as a bounce,
/// a spring's rest length shortened, a cell's volume gradient with a cross product turned
/// over, XPBD's volume constraint at half the corners' inverse mass, Coulomb friction's static
/// branch keeping half the sliding, its kinetic branch removing half its bound, `collide_nodes`
/// not undoing the removed sliding as displacement, the sort front to back, a sort tile past
/// the keys writing 12345 (or nothing) for its histogram, a
/// survivor's tag taken from the wrong particle, a skin normal gathered from a neighbouring
/// triangle, a water normal's one-sided difference, a node coloured by the next node's kinetic
/// energy, a spring by the next spring's stiffness.
#[test]
#[cfg_attr(
    not(fluidlab_cxx20),
    ignore = "needs a C++20 compiler (build.rs found none)"
)]
fn a_mutated_particles_kernel_is_caught() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mutations = [
        (
            "particles_fountain.cuh",
            "v.y = fall * p.cut;",
            "v.y = fall * p.bounce;",
            "fountain Collide",
        ),
        (
            "particles_bodies.cuh",
            "(len - link_rest[l])",
            "(len - 0.9f * link_rest[l])",
            "Springs",
        ),
        (
            "particles_bodies.cuh",
            "else if (steps[s] == 2u) term = cross(d, a);",
            "else if (steps[s] == 2u) term = cross(a, d);",
            "Volume",
        ),
        (
            "particles_bodies.cuh",
            "w[corner] = pinned[at] ? 0.0f : b.inverse_mass;",
            "w[corner] = pinned[at] ? 0.0f : 0.5f * b.inverse_mass;",
            "jelly (xpbd) Xpbd",
        ),
        (
            "particles_fountain.cuh",
            "keys[k] = order_key(-dot(",
            "keys[k] = order_key(dot(",
            "fountain Sort",
        ),
        // A sort tile past the keys (the emulation launches two, as a graph's reach does):
        // its histogram not zeros, or not written at all.
        (
            "particles_fountain.cuh",
            "hist[t * tiles + tile] = 0;",
            "hist[t * tiles + tile] = 12345u;",
            "fountain Sort",
        ),
        (
            "particles_fountain.cuh",
            "hist[t * tiles + tile] = 0;",
            "",
            "fountain Sort",
        ),
        (
            "particles_fountain.cuh",
            "out_tag[to] = tag[k];",
            "out_tag[to] = tag[to];",
            "fountain Collide",
        ),
        (
            "particles_bodies.cuh",
            "if (speed <= bound) return sliding;",
            "if (speed <= bound) return mul(sliding, 0.5f);",
            "friction Collide",
        ),
        (
            "particles_bodies.cuh",
            "return mul(sliding, bound / speed);",
            "return mul(sliding, 0.5f * bound / speed);",
            "friction Collide",
        ),
        (
            "particles_bodies.cuh",
            "x = sub(x, mul(removed, b.dt));",
            "",
            "friction Collide",
        ),
        (
            "particles_drawing.cuh",
            "unsigned t = vertex_triangles[l];",
            "unsigned t = vertex_triangles[l] ^ 1u;",
            "surface",
        ),
        (
            "particles_drawing.cuh",
            "float dz = height[up * n + i] - height[down * n + i];",
            "float dz = height[up * n + i] - height[j * n + i];",
            "fountain water",
        ),
        (
            "particles_drawing.cuh",
            "vec3 v = load3(velocity, t);",
            "vec3 v = load3(velocity, (t + 1) % nodes);",
            "body_points",
        ),
        (
            "particles_drawing.cuh",
            "0.5f * spring_stiffness[s] * stretch",
            "0.5f * spring_stiffness[(s + 1) % springs] * stretch",
            "body_points",
        ),
    ];
    for (k, (file, from, to, stage)) in mutations.into_iter().enumerate() {
        let program = compile(
            &dir.path().join(format!("mutant{k}")),
            false,
            Some((file, from, to)),
        );
        let results = all_stages(&program, true);
        let caught = results
            .iter()
            .any(|(name, d, _)| name.contains(stage) && !d.bitwise);
        assert!(caught, "`{to}` was not caught: {results:#?}");
    }
}
