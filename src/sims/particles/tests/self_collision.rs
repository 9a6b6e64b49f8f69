//! `self_collide` (`self_collide.rs`): a folded cloth's layers stay apart on the ground, a
//! cloth draped on the sphere does not pass through itself, a resting fold does not jitter,
//! the stage's pushes and velocities are what each integrator then sees, the sorted cells find
//! what a search over every pair finds, and a bad `thickness` is named.

use super::*;
use crate::sims::particles::self_collide::{self, Contacts};
use crate::sims::Backend;

/// A 16 × 16 cloth of 1 m (spacing s = 1/15 m, h = s by default) lying at y = 0.4 m folded
/// in half (`orientation = "folded"`: its top layer 2h over the bottom one, round a crease),
/// under `integrator`, with or without `self_collision`.
fn folded(integrator: Integrator, on: bool) -> ParticlesSim {
    ParticlesSim::with_scene(scene(&format!(
        "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 16\nsize = 1.0\nbend = 0.05\n\
         pins = \"none\"\norientation = \"folded\"\nstart = [-0.5, 0.4, -0.5]\n\
         integrator = \"{}\"\nself_collision = {on}\n[world]\nfriction = 0.2\n",
        integrator.name()
    )))
}

/// Of the folded cloth, the lowest node of the top layer (rows 11–15, past the crease), m.
fn top_layer_lowest(b: &Body) -> f32 {
    (11 * 16..256)
        .map(|k| b.position[k].y)
        .fold(f32::MAX, f32::min)
}

/// Pairs of nodes sharing no spring closer than `distance` (every pair: small bodies only).
fn close_pairs(b: &Body, distance: f32) -> usize {
    let linked = |k: usize, j: usize| {
        b.links[b.node_start[k] as usize..b.node_start[k + 1] as usize]
            .iter()
            .any(|l| l.other as usize == j)
    };
    (0..b.len())
        .flat_map(|k| (k + 1..b.len()).map(move |j| (k, j)))
        .filter(|&(k, j)| b.position[k].distance(b.position[j]) < distance && !linked(k, j))
        .count()
}

/// The folded cloth dropped 0.4 m onto the ground keeps its layers apart with `self_collide`:
/// 3 s on, under Verlet, Euler and XPBD, the top layer's lowest node is 0.865–0.866 h above the ground
/// (asserted ≥ 0.7 h; h = 0.067 m) and no two nodes sharing no spring are closer than h/2.
/// Without the stage (the old code) the top layer falls through the bottom one onto the
/// ground: its lowest node at 0.000 h and 50 (Verlet), 62 (Euler) or 48 (XPBD) pairs closer than
/// h/2 (asserted ≥ 20).
#[test]
fn a_folded_cloth_keeps_its_layers_apart_on_the_ground() {
    let mut wrong = Vec::new();
    for integrator in Integrator::ALL {
        for on in [true, false] {
            let mut sim = folded(integrator, on);
            let h = sim.scene.body.thickness;
            for _ in 0..180 {
                sim.step().unwrap();
            }
            let b = body(&mut sim);
            let (low, close) = (top_layer_lowest(b), close_pairs(b, 0.5 * h));
            println!(
                "{integrator:?} self-collision {on}: top layer's lowest {:.3} h, {close} pairs < h/2",
                low / h
            );
            if on && (low < 0.7 * h || close > 0) {
                wrong.push(format!("{integrator:?}: lowest {low} m, {close} pairs"));
            }
            if !on && (low > 0.1 * h || close < 20) {
                wrong.push(format!(
                    "{integrator:?} without: lowest {low} m, {close} pairs"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:?}");
}

/// `cloth-fold.toml`'s scene at 24 × 24 nodes: a 2 m cloth folded in half dropped from 1.6 m
/// onto the sphere (r = 0.6 m) and left 4 s: with `self_collide` no two nodes sharing no
/// spring are closer than h/2 (0 pairs); without it (the old code) the top layer falls
/// through the bottom one where they drape over the sphere: 73 such pairs (asserted ≥ 20).
/// (With the per-substep friction before Coulomb's, 0.865 h; 48, 48, 55 and 103 pairs.)
#[test]
fn a_folded_cloth_dropped_on_the_sphere_does_not_pass_through_itself() {
    let mut counts = Vec::new();
    for on in [true, false] {
        let mut sim = ParticlesSim::with_scene(scene(&format!(
            "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 24\nsize = 2.0\n\
             bend = 0.05\nsubsteps = 30\npins = \"none\"\norientation = \"folded\"\n\
             start = [-1.0, 1.6, -0.5]\nself_collision = {on}\n[world]\n\
             sphere_center = [0.0, 0.6, 0.0]\nsphere_radius = 0.6\nfriction = 0.2\n"
        )));
        let h = sim.scene.body.thickness;
        for _ in 0..240 {
            sim.step().unwrap();
        }
        counts.push(close_pairs(body(&mut sim), 0.5 * h));
    }
    println!(
        "pairs closer than h/2: with {}, without {}",
        counts[0], counts[1]
    );
    assert_eq!(counts[0], 0);
    assert!(counts[1] >= 20, "{counts:?}");
}

/// A folded cloth at rest on the ground settles: its kinetic energy falls (largest over the
/// 2nd, 4th, 6th, 8th second: 1.0·10⁻², 5.2·10⁻⁴, 1.1·10⁻⁴, 4.1·10⁻⁵ J on the Coulomb floor,
/// μ = 0.2; with the per-substep friction before it, which took a fifth of every touching
/// node's sliding each substep, 1.8·10⁻³, 1.6·10⁻⁴, 3.0·10⁻⁵, 1.9·10⁻⁵ J, and 1.1·10⁻³,
/// 1.3·10⁻⁴, 3.0·10⁻⁵, 1.8·10⁻⁵ J without the stage): under 10⁻² J over the
/// 3rd second (1.8·10⁻³) and 5·10⁻⁵ J over the 8th (the cloth's 0.2/s damping; the stage's velocity
/// changes only take energy out, and its pushes carry `previous` along). A mutant whose push
/// leaves `previous` behind (Verlet then reads the push as velocity) holds 0.081 J over the
/// 3rd second.
#[test]
fn a_resting_fold_does_not_jitter() {
    let mut sim = folded(Integrator::Verlet, true);
    let mut most = [0.0f64; 8];
    for m in &mut most {
        for _ in 0..60 {
            sim.step().unwrap();
            *m = m.max(body(&mut sim).energy(GRAVITY).0);
        }
    }
    println!("largest kinetic energy each second: {most:?} J");
    assert!(most[2] < 1e-2 && most[7] < 5e-5, "{most:?}");
}

/// Two free nodes sharing no spring, `gap` apart along x, moving towards each other at 1 m/s
/// each (and both at 0.5 m/s along z), `previous` and `velocity` agreeing as every integrator
/// leaves them.
fn pair(gap: f32, dt: f32) -> Body {
    let x = [
        Vec3::new(-0.5 * gap, 1.0, 0.0),
        Vec3::new(0.5 * gap, 1.0, 0.0),
    ];
    let mut b = Body::new(x.to_vec(), 0.1, Vec::new(), Vec::new());
    b.velocity = vec![Vec3::new(1.0, 0.0, 0.5), Vec3::new(-1.0, 0.0, 0.5)];
    for k in 0..2 {
        b.previous[k] = b.position[k] - b.velocity[k] * dt;
    }
    b
}

/// One `self_collide` on two nodes 0.02 m apart (h = 0.05 m, friction 0.3): each is pushed
/// 0.015 m out, to h apart; their approach (±1 m/s along x) is gone and their common sliding
/// velocity (0.5 m/s along z) kept (no relative sliding to lose); `previous` = x − v·dt, so
/// one more step without forces moves each node by v·dt under Verlet, Euler and XPBD alike
/// (the push is not turned into velocity: with `previous` left where it was, Verlet's next
/// step would carry each node a further 0.015 m + 1 m/s·dt apart). A pinned node is not moved
/// and the other takes the whole push; nodes sharing a spring are left alone.
#[test]
fn the_push_is_what_every_integrator_then_sees() {
    let (h, dt) = (0.05, 1e-3);
    let mut b = pair(0.02, dt);
    self_collide::self_collide(&mut b, h, 0.3, dt);
    assert!(
        (b.position[1].x - b.position[0].x - h).abs() < 1e-6,
        "{:?}",
        b.position
    );
    for k in 0..2 {
        assert!(
            (b.velocity[k] - Vec3::new(0.0, 0.0, 0.5)).length() < 1e-6,
            "{:?}",
            b.velocity
        );
        assert!((b.previous[k] - (b.position[k] - b.velocity[k] * dt)).length() < 1e-7);
    }
    for integrator in Integrator::ALL {
        let mut next = b.clone();
        next.force = vec![Vec3::ZERO; 2];
        if integrator.explicit() {
            dynamics::integrate(&mut next, integrator, dt, dt, 0.0);
        } else {
            dynamics::xpbd(&mut next, dt, 0.0, 1);
        }
        for k in 0..2 {
            let moved = next.position[k] - b.position[k];
            assert!(
                (moved - Vec3::new(0.0, 0.0, 0.5 * dt)).length() < 1e-6,
                "{integrator:?} {moved}"
            );
        }
    }
    let mut pinned = pair(0.02, dt);
    pinned.pinned[0] = true;
    let still = pinned.position[0];
    self_collide::self_collide(&mut pinned, h, 0.3, dt);
    assert_eq!(pinned.position[0], still);
    assert!((pinned.position[1].x - still.x - h).abs() < 1e-6);
    let spring = crate::sims::particles::body::Spring {
        a: 0,
        b: 1,
        rest: 0.02,
        stiffness: 1.0,
    };
    let mut linked = pair(0.02, dt);
    linked = Body::new(
        linked.position.clone(),
        0.1,
        vec![(spring, SpringKind::Structural)],
        Vec::new(),
    );
    let before = linked.clone();
    self_collide::self_collide(&mut linked, h, 0.3, dt);
    assert_eq!(linked.position, before.position);
}

/// Two unlinked nodes at one point (h = 0.05 m) are pushed apart to h in one `self_collide`:
/// at rest (the same `previous` too) along y, the higher index up by h, the lower staying
/// (`stacked_nodes_on_the_ground_part_upward`); having crossed (moving at
/// ±1 m/s along x, so they met this substep) back out along x, each to the side it came from.
/// The old code (d = 0: no direction, no contact) left both 0 apart.
#[test]
fn coincident_nodes_are_pushed_apart() {
    let (h, dt) = (0.05, 1e-3);
    let at = Vec3::new(0.3, 1.0, -0.2);
    let mut b = Body::new(vec![at, at], 0.1, Vec::new(), Vec::new());
    self_collide::self_collide(&mut b, h, 0.3, dt);
    let apart = b.position[1] - b.position[0];
    println!("at rest: {apart}");
    assert!(apart.length() >= 0.9 * h, "{apart}");
    assert!((apart - Vec3::new(0.0, h, 0.0)).length() < 1e-6, "{apart}");
    let mut crossed = Body::new(vec![at, at], 0.1, Vec::new(), Vec::new());
    crossed.velocity = vec![Vec3::new(1.0, 0.0, 0.0), Vec3::new(-1.0, 0.0, 0.0)];
    for k in 0..2 {
        crossed.previous[k] = at - crossed.velocity[k] * dt;
    }
    self_collide::self_collide(&mut crossed, h, 0.3, dt);
    let apart = crossed.position[1] - crossed.position[0];
    println!("crossed: {apart}");
    assert!((apart - Vec3::new(h, 0.0, 0.0)).length() < 1e-6, "{apart}");
}

/// Stacked nodes (one point, one `previous`) lying on the ground (y = 0, h = 0.05 m) are
/// parted upward: the higher index rises h, the lower stays on the ground (the old code sent
/// it to −h/2 = −0.025 m, under the ground, for a substep); against a pinned node the free one
/// rises h whatever its index (the old code: node 0 under pinned node 1 went to −h = −0.05 m).
#[test]
fn stacked_nodes_on_the_ground_part_upward() {
    let (h, dt) = (0.05, 1e-3);
    let at = Vec3::new(0.3, 0.0, -0.2);
    let mut b = Body::new(vec![at, at], 0.1, Vec::new(), Vec::new());
    self_collide::self_collide(&mut b, h, 0.3, dt);
    println!("free: {:?}", b.position);
    assert_eq!(b.position[0], at);
    assert!((b.position[1] - (at + Vec3::new(0.0, h, 0.0))).length() < 1e-6);
    let mut pinned = Body::new(vec![at, at], 0.1, Vec::new(), Vec::new());
    pinned.pinned[1] = true;
    self_collide::self_collide(&mut pinned, h, 0.3, dt);
    println!("under a pinned node: {:?}", pinned.position);
    assert_eq!(pinned.position[1], at);
    assert!((pinned.position[0] - (at + Vec3::new(0.0, h, 0.0))).length() < 1e-6);
    assert!(pinned
        .position
        .iter()
        .chain(&b.position)
        .all(|x| x.y >= 0.0));
}

/// The jelly takes `self_collision` (`[jelly]`, as the cloth): at rest its lattice has no
/// unlinked pair within a spacing h (the nearest are √5 h apart), so one `self_collide` leaves
/// a 6³ jelly bit for bit; crushed to a tenth of its height (nodes of a column three and four
/// layers apart then 0.3 h and 0.4 h apart, sharing no spring: 5 pairs in each of 36 columns)
/// it pushes them apart: the unlinked pairs closer than h/2 go from 180 to 0 in one stage
/// (asserted ≤ 18), and the momentum stays 0.
#[test]
fn a_crushed_jelly_is_pushed_apart_and_one_at_rest_is_left_alone() {
    let s = scene("kind = \"particles\"\nscene = \"jelly\"\n[jelly]\nself_collision = true\n");
    assert!(s.body.self_collision);
    let (n, size) = (6, 0.5);
    let h = size / (n - 1) as f32;
    let mut b = Body::jelly(n, size, Vec3::ZERO, 0.1, [300.0, 150.0, 50.0]);
    let rest = b.clone();
    self_collide::self_collide(&mut b, h, 0.3, 1e-3);
    assert_eq!(b.position, rest.position);
    assert_eq!(b.velocity, rest.velocity);
    for p in b.position.iter_mut().chain(b.previous.iter_mut()) {
        p.y *= 0.1;
    }
    let before = close_pairs(&b, 0.5 * h);
    self_collide::self_collide(&mut b, h, 0.3, 1e-3);
    let after = close_pairs(&b, 0.5 * h);
    let momentum: Vec3 = b.velocity.iter().sum();
    println!("pairs closer than h/2: {before} -> {after}, momentum {momentum}");
    assert!(before == 180 && after * 10 <= before, "{before} -> {after}");
    assert!(momentum.length() < 1e-5, "{momentum}");
}

/// The lists find every contact a search over every pair finds, once: a 12 × 12 cloth
/// crumpled at random (seed 3: each node anywhere in a cube of 5 spacings) and gathered with
/// the lists and with a plain double loop (each pair weighted 1/max(c_k, c_j), c counted by
/// the double loop too) give the same positions and velocities (to float rounding of the sums'
/// order). The total momentum is kept (friction and all: every pair's impulses are equal and
/// opposite; each node's own mean, the old 1/c_k, did not keep it).
#[test]
fn the_sorted_cells_find_what_every_pair_finds() {
    let mut b = Body::cloth(12, 1.0, Vec3::ZERO, Vec3::Z, 0.1, [100.0, 50.0, 5.0]);
    let mut rng = Rng::new(3);
    let s = 1.0 / 11.0;
    for p in &mut b.position {
        *p = Vec3::new(rng.unit(), rng.unit(), rng.unit()) * (5.0 * s);
    }
    for v in &mut b.velocity {
        *v = Vec3::new(rng.unit() - 0.5, rng.unit() - 0.5, rng.unit() - 0.5);
    }
    let (h, friction, dt) = (s, 0.3, 1e-3);
    let contact = |k: usize, j: usize| {
        let linked = b.links[b.node_start[k] as usize..b.node_start[k + 1] as usize]
            .iter()
            .any(|l| l.other as usize == j);
        j != k && b.position[k].distance(b.position[j]) < h && !linked
    };
    let c: Vec<u32> = (0..b.len())
        .map(|k| (0..b.len()).filter(|&j| contact(k, j)).count() as u32)
        .collect();
    let mut cells = Contacts::default();
    self_collide::build(&mut cells, &b, h * (1.0 + self_collide::SKIN));
    let (mut contacts, mut momentum) = (0, Vec3::ZERO);
    for k in 0..b.len() {
        assert_eq!(
            self_collide::touching(&b, cells.of(k), k, h),
            c[k],
            "node {k}"
        );
        let got = self_collide::gather(&b, (cells.of(k), &c), k, h, (friction, dt));
        momentum += got.1 - b.velocity[k];
        let (mut push, mut change) = (Vec3::ZERO, Vec3::ZERO);
        for j in (0..b.len()).filter(|&j| contact(k, j)) {
            let d = b.position[k] - b.position[j];
            let w = 0.5 / c[k].max(c[j]) as f32;
            let n = d.normalize();
            push += n * (w * (h - d.length()));
            let r = b.velocity[k] - b.velocity[j];
            let along = r.dot(n);
            let slip = dynamics::coulomb(r - n * along, (-along).max(0.0), friction) * w;
            change -= n * (along.min(0.0) * w) + slip;
            push -= slip * dt;
        }
        contacts += c[k];
        let want = (b.position[k] + push, b.velocity[k] + change);
        assert!(
            (got.0 - want.0).length() < 1e-6 && (got.1 - want.1).length() < 1e-5,
            "node {k}: {got:?} {want:?}"
        );
    }
    assert!(contacts > 100, "{contacts} contacts: crumple it more");
    assert!(momentum.length() < 1e-4, "momentum changed by {momentum}");
}

/// A node falling at 1 m/s onto four unlinked nodes (the corners of a 0.1 m square, h = 0.1
/// m, friction 0) in one `self_collide`: the total momentum stays −0.1 kg·m/s (mass 0.1 kg
/// each) and the kinetic energy does not rise. The old weighting (each node its own mean,
/// 1/c_k) gave −0.150 kg·m/s (+50 %) and 0.0500 → 0.0514 J.
#[test]
fn a_node_landing_on_four_keeps_the_momentum() {
    let (h, dt) = (0.1, 1e-3);
    let mut x = vec![Vec3::new(0.0, 0.05, 0.0)];
    for (a, c) in [(-1.0, -1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, 1.0)] {
        x.push(Vec3::new(0.05 * a, 0.0, 0.05 * c));
    }
    let mut b = Body::new(x, 0.1, Vec::new(), Vec::new());
    b.velocity[0] = Vec3::new(0.0, -1.0, 0.0);
    for k in 0..b.len() {
        b.previous[k] = b.position[k] - b.velocity[k] * dt;
    }
    let energy = |b: &Body| {
        b.velocity
            .iter()
            .map(|v| 0.5 * 0.1 * v.length_squared())
            .sum::<f32>()
    };
    let (before, momentum) = (energy(&b), b.velocity.iter().sum::<Vec3>() * 0.1);
    self_collide::self_collide(&mut b, h, 0.0, dt);
    let after = b.velocity.iter().sum::<Vec3>() * 0.1;
    println!(
        "momentum {momentum} -> {after}, energy {before} -> {}",
        energy(&b)
    );
    assert!((after - momentum).length() < 1e-6, "{momentum} -> {after}");
    assert!(energy(&b) <= before + 1e-7, "{before} -> {}", energy(&b));
}

/// A node gone NaN does not spread to the nodes near the origin: a 12 × 12 cloth crumpled into
/// a cube of 5 spacings at the origin with node 0 at NaN keeps every other node finite through
/// one `self_collide`. The old cell mapping (NaN to cell 0, and a NaN distance passing the
/// `d² ≥ h²` test) made its cell's nodes contacts of it: 31 nodes went NaN.
#[test]
fn a_nan_node_is_no_contact() {
    let mut b = Body::cloth(12, 1.0, Vec3::ZERO, Vec3::Z, 0.1, [100.0, 50.0, 5.0]);
    let mut rng = Rng::new(3);
    let s = 1.0 / 11.0;
    for p in &mut b.position {
        *p = Vec3::new(rng.unit(), rng.unit(), rng.unit()) * (5.0 * s);
    }
    b.position[0] = Vec3::NAN;
    self_collide::self_collide(&mut b, s, 0.3, 1e-3);
    let spread = (1..b.len())
        .filter(|&k| !b.position[k].is_finite() || !b.velocity[k].is_finite())
        .count();
    assert_eq!(spread, 0, "{spread} nodes went NaN");
}

/// `self_collision` keeps no body off the CUDA backend (`self_collide` has its kernels,
/// `cuda/self_collide.rs`): `--backend cuda` starts the CUDA solver where there is a GPU (or
/// the emulated driver), and where there is none it is refused for that alone (the reason
/// names the driver, not the key); `--backend auto` says nothing of `self_collide` either way,
/// and the body steps. The old code refused the key on every machine: "--backend cuda cannot
/// run scene …: cloth.self_collision: `self_collide` runs on the CPU only so far (no CUDA
/// kernel yet)", and `auto` ran on the CPU with that note.
#[test]
fn self_collision_keeps_no_body_off_cuda() {
    let mut sim = folded(Integrator::Verlet, true);
    match sim.choose_backend(Backend::Cuda, 0) {
        Ok(()) => assert!(sim.cuda.is_some()),
        Err(error) => {
            let error = format!("{error:#}");
            assert!(
                error.contains("cannot run on this machine") && !error.contains("self_collision"),
                "{error}"
            );
        }
    }
    sim.choose_backend(Backend::Auto, 0).unwrap();
    assert!(
        !sim.backend_note.contains("self_collide"),
        "{}",
        sim.backend_note
    );
    sim.step().unwrap();
}

/// `self_collision` is off and `thickness` the spacing unless written; a thickness of 0, past
/// the body's size, NaN or infinite is named with the file, line, key and value.
#[test]
fn a_bad_thickness_is_named_by_file_key_and_value() {
    let text = "kind = \"particles\"\nscene = \"cloth\"\n[cloth]\nn = 11\nsize = 1.0\n";
    let s = scene(text);
    assert!(!s.body.self_collision);
    assert_eq!(s.body.thickness, 0.1);
    let s = scene(&format!("{text}self_collision = true\nthickness = 0.12\n"));
    assert!(s.body.self_collision);
    assert_eq!(s.body.thickness, 0.12);
    for (value, shown) in [("0.0", "0"), ("1.5", "1.5"), ("nan", "NaN"), ("inf", "inf")] {
        assert_eq!(
            error(&format!("{text}thickness = {value}\n")),
            format!(
                "test.toml:6: cloth.thickness: must be in (0, 1] m (the body's size), got {shown}"
            )
        );
    }
    // With self-collision on: 0.75–1.4 spacings (0.1 m here); the old code took 0.2 m (2
    // spacings: a flat cloth at rest pushing itself apart once its shear is 0) and 0.04 m.
    for value in ["0.2", "0.04"] {
        let got = error(&format!(
            "{text}self_collision = true\nthickness = {value}\n"
        ));
        assert!(
            got.starts_with("test.toml:7: cloth.thickness: must be 0.75–1.4 spacings")
                && got.contains(value),
            "{got}"
        );
    }
}

/// The lists hold every pair that comes within h while they are kept: a 16 × 16 cloth (h the
/// spacing) folds its half past the middle row shut in one frame (180° about the crease in
/// 1/60 s, 40 substeps: its edge moves at 94 m/s, 0.6 h a substep: 21 builds) while the whole
/// cloth falls at 5 m/s and turns; before each substep's stage the lists (kept or rebuilt as
/// the stage does) must hold every pair sharing no spring closer than h, found by a search over
/// every pair (736 over the frame). The mutant "never rebuild after the first build" misses
/// all 736 (the first at substep 34). ("Rebuild at a drift of s, not s/2" missed 32 with a
/// skin of h/2; with the skin h it misses none here: the bound has slack.)
#[test]
fn the_lists_miss_no_pair_of_a_fast_fold() {
    let n = 16;
    let mut b = Body::cloth(n, 1.0, Vec3::ZERO, Vec3::Z, 0.1, [100.0, 50.0, 5.0]);
    let h = 1.0 / (n - 1) as f32;
    let flat = b.position.clone();
    let crease = flat[n * (n / 2)].z - 0.5 * h;
    let substeps = 40;
    let (mut builds, mut pairs, mut missed) = (0, 0, Vec::new());
    let mut contacts = Contacts::default();
    for step in 0..=substeps {
        let t = step as f32 / substeps as f32;
        let angle = std::f32::consts::PI * t;
        let (sin, cos) = angle.sin_cos();
        let fall = Vec3::new(0.1, -5.0, 0.2) * (t / 60.0);
        let (turn_sin, turn_cos) = (0.3 * t).sin_cos();
        for (p, f) in b.position.iter_mut().zip(&flat) {
            let mut q = *f;
            if q.z > crease {
                // Turn about the line z = crease, y = 0, folding up and over onto the rest.
                let (r, y) = (q.z - crease, q.y);
                q.z = crease + r * cos - y * sin;
                q.y = r * sin + y * cos + 0.3 * h * t;
            }
            // The whole cloth falls and turns about y (distances unchanged).
            q = Vec3::new(
                q.x * turn_cos - q.z * turn_sin,
                q.y,
                q.x * turn_sin + q.z * turn_cos,
            );
            *p = q + fall;
        }
        if !self_collide::current(&contacts, &b, h) {
            self_collide::build(&mut contacts, &b, h * (1.0 + self_collide::SKIN));
            builds += 1;
        }
        for k in 0..b.len() {
            let list = contacts.of(k);
            for j in 0..b.len() {
                let linked = b.links[b.node_start[k] as usize..b.node_start[k + 1] as usize]
                    .iter()
                    .any(|l| l.other as usize == j);
                if j == k || linked || b.position[k].distance(b.position[j]) >= h {
                    continue;
                }
                pairs += 1;
                if !list.contains(&(j as u32)) {
                    missed.push((step, k, j));
                }
            }
        }
    }
    println!(
        "{builds} builds, {pairs} pairs within h over the frame, {} missed",
        missed.len()
    );
    assert!(
        missed.is_empty(),
        "{} missed, first {:?}",
        missed.len(),
        missed.first()
    );
    assert!(pairs > 500, "{pairs} pairs: fold it closer");
    assert!(builds > 1, "{builds} builds");
}
