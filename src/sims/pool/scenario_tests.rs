//! The pool's scenarios and land: the panel's scenarios set edges, motion and islands; painted
//! land lasts until a scenario without islands; the solver says which nodes' land changed.

use super::params::{Edges, Model};
use super::sim_tests::{count, open};
use super::surface::{FIXED, LOCK_H};
use super::tests::params;

/// The panel's scenarios set the edges, horizontal motion and islands they name, and the flags
/// follow at once.
#[test]
fn scenarios_set_edges_motion_and_islands() {
    use super::panel::Scenario;
    let mut sim = open("[pool]\nnodes = 32\n[surface]\nmodel = \"springs\"\n");
    let count = |sim: &super::PoolSim, flag: u8| {
        sim.solver.flags().iter().filter(|f| *f & flag != 0).count()
    };
    assert_eq!(sim.scenario(), Scenario::Pool);
    assert_eq!((count(&sim, FIXED), count(&sim, LOCK_H)), (0, 4 * 31));
    sim.set_scenario(Scenario::Shore).unwrap();
    assert_eq!(count(&sim, FIXED), 4 * 31);
    sim.set_scenario(Scenario::HeightField).unwrap();
    assert_eq!((count(&sim, FIXED), count(&sim, LOCK_H)), (0, 32 * 32));
    sim.set_scenario(Scenario::Islands).unwrap();
    assert_eq!(sim.scenario(), Scenario::Islands);
    let island = count(&sim, FIXED);
    assert!((40..80).contains(&island), "{island} island nodes");
    sim.set_scenario(Scenario::OpenSea).unwrap();
    assert_eq!(sim.scenario(), Scenario::OpenSea);
    assert_eq!(count(&sim, super::surface::OPEN), 4 * 31);
    assert_eq!(
        count(&sim, FIXED),
        island,
        "the island stays in the open sea"
    );
}

/// The scenarios round trip: Islands and back to Pool takes the island away again (the fixed
/// count returns to 0), the height field on the wave model switches to the springs with
/// horizontal motion off, and Pool gives the motion back.
#[test]
fn scenarios_round_trip_and_pool_takes_the_islands_away() {
    use super::panel::Scenario;
    let mut sim = open("[pool]\nnodes = 32\n");
    let edge = 4 * 31;
    assert_eq!((sim.scenario(), count(&sim, FIXED)), (Scenario::Pool, 0));
    for _ in 0..2 {
        sim.set_scenario(Scenario::Islands).unwrap();
        let island = count(&sim, FIXED);
        assert!((40..80).contains(&island), "{island} island nodes");
        sim.set_scenario(Scenario::Shore).unwrap();
        assert_eq!(
            count(&sim, FIXED),
            island + edge,
            "the island stays by the shore"
        );
        sim.set_scenario(Scenario::Pool).unwrap();
        assert_eq!(sim.scenario(), Scenario::Pool);
        assert_eq!(count(&sim, FIXED), 0, "Pool has no island");
    }
    assert_eq!(sim.params().model, Model::Wave);
    assert_eq!(
        count(&sim, LOCK_H),
        32 * 32,
        "the wave model moves only vertically"
    );
    sim.set_scenario(Scenario::HeightField).unwrap();
    assert_eq!(sim.scenario(), Scenario::HeightField);
    assert_eq!(sim.params().model, Model::Springs);
    assert!(!sim.params().horizontal);
    assert_eq!(count(&sim, LOCK_H), 32 * 32);
    sim.set_scenario(Scenario::Pool).unwrap();
    assert_eq!(sim.scenario(), Scenario::Pool);
    assert_eq!((count(&sim, FIXED), count(&sim, LOCK_H)), (0, edge));
}

/// The height field on a wave-model pool whose springs would need more than 4096 substeps a
/// frame is refused, naming the wave speed, and changes nothing.
#[test]
fn a_height_field_the_springs_cannot_run_is_refused() {
    use super::panel::Scenario;
    // h = 2/63 m, c = 30 m/s, dt = 1 s: 1891 substeps on the wave model, 4684 on the springs.
    let mut sim = open("[pool]\nnodes = 64\n[surface]\nwave_speed = 30\ndt = 1.0\n");
    let before = *sim.params();
    assert!(before.substeps() < 4096);
    let error = sim.set_scenario(Scenario::HeightField).unwrap_err();
    assert_eq!(error.key, "surface.wave_speed");
    assert!(error.message.contains("substeps"), "{}", error.message);
    assert_eq!(*sim.params(), before);
    assert_eq!(sim.scenario(), Scenario::Pool);
}

/// Land painted with the brush is the user's: it survives the panel's other edits (edges,
/// model), erased land stays water when the flags are recomputed, and a scenario without
/// islands (Pool, height field) takes painted land away with the scene's.
#[test]
fn painted_land_survives_edits_until_a_scenario_without_islands() {
    use super::panel::Scenario;
    use super::sim::Tool;
    use crate::gfx::camera::Camera;
    use crate::sims::Sim;
    let mut sim = open(
        "[pool]\nnodes = 64\n[drops]\nradius = 0.1\n[[island]]\ncenter = [1.5, 1.5]\n\
         radius = 0.2\n",
    );
    let island = count(&sim, FIXED);
    assert!(island > 100, "{island}");
    let camera = |x: f32, z: f32| Camera {
        target: glam::Vec3::new(x, 0.0, z),
        yaw: 0.4,
        pitch: 0.7,
        distance: 3.0,
    };
    // Paint a spot at (0.6, 0.6), erase the island's middle.
    sim.tool = Tool::PaintIsland;
    sim.draw_camera(camera(0.6, 0.6));
    assert!(sim.pointer([320.0, 240.0], [640, 480], true));
    let painted = count(&sim, FIXED) - island;
    assert!(painted > 20, "{painted} nodes painted");
    sim.tool = Tool::EraseIsland;
    sim.draw_camera(camera(1.5, 1.5));
    assert!(sim.pointer([320.0, 240.0], [640, 480], true));
    let after = count(&sim, FIXED);
    assert!(after < island + painted - 20, "{after}: nothing erased");
    for scenario in [Scenario::Shore, Scenario::OpenSea, Scenario::Islands] {
        sim.set_scenario(scenario).unwrap();
        let edges = if scenario == Scenario::Shore {
            4 * 63
        } else {
            0
        };
        assert_eq!(count(&sim, FIXED), after + edges, "{scenario:?}");
        assert_eq!(sim.scenario(), scenario);
    }
    sim.set_scenario(Scenario::Pool).unwrap();
    assert_eq!(count(&sim, FIXED), 0);
    sim.set_scenario(Scenario::OpenSea).unwrap();
    assert_eq!(count(&sim, FIXED), 0, "the painted land came back");
}

/// The renderer is told again only the nodes whose flags changed: a new solver, a rebuild or
/// the flags set again are all of them; a painted node is its box; painting a node with the
/// flags it has is no change. (The old code counted every `set_island_node` call, repaints
/// included: 1 change for the repaint below, and the renderer recomputed its whole land.)
#[test]
fn the_solver_says_which_nodes_land_changed_at() {
    use super::solver::{LandChange, PoolSolver};
    let walls = params(Model::Wave, Edges::Pool, 24);
    let mut solver = PoolSolver::cpu(&walls, |_, _| false);
    assert_eq!(
        solver.take_land_change(),
        Some(LandChange::All),
        "a new solver"
    );
    assert_eq!(solver.take_land_change(), None);
    solver.set_island_node(&walls, 5, 7, true);
    solver.set_island_node(&walls, 9, 6, true);
    assert_eq!(
        solver.take_land_change(),
        Some(LandChange::Nodes([[5, 6], [9, 7]]))
    );
    solver.set_island_node(&walls, 5, 7, true);
    assert_eq!(solver.take_land_change(), None, "a node painted again");
    solver.set_island_node(&walls, 5, 7, false);
    assert_eq!(
        solver.take_land_change(),
        Some(LandChange::Nodes([[5, 7], [5, 7]]))
    );
    solver.set_island_node(&walls, 3, 3, false);
    assert_eq!(solver.take_land_change(), None, "water erased");
    solver.set_flags(&walls, |x, _| x < 0.2);
    assert_eq!(solver.take_land_change(), Some(LandChange::All));
}
