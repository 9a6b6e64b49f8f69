//! The ink scene file: its sections parse, and bad values name the file, line and key.

use super::*;

fn parse(text: &str) -> Result<InkScene, SceneError> {
    let source = Source::parse(text, "test", "test.toml").expect("a kind");
    InkScene::from_source(&source)
}

/// The box's sides parse into the boundary, and bad values name the file, line and key.
#[test]
fn boundary_sides_parse_and_bad_ones_are_named() {
    let scene = parse(
        "kind = \"ink\"\n[boundary]\nwalls = \"no-slip\"\nleft = \"inflow\"\n\
         right = \"outflow\"\ninflow_speed = 2.5\n",
    )
    .unwrap();
    let b = scene.params.boundary;
    assert_eq!(b.walls, Walls::NoSlip);
    assert_eq!(
        b.sides,
        [
            SideKind::Inflow,
            SideKind::Outflow,
            SideKind::Wall,
            SideKind::Wall
        ]
    );
    assert_eq!(b.inflow_speed, 2.5);
    let error = parse("kind = \"ink\"\n[boundary]\nleft = \"inflow\"\ninflow_speed = -2\n")
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "test.toml:4: boundary.inflow_speed: must be in [0, 1000] m/s, got -2"
    );
    let error = parse("kind = \"ink\"\n[boundary]\nleft = \"open\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        error.starts_with("test.toml:3: boundary.left: unknown variant `open`"),
        "{error}"
    );
}

/// `grid.cuda_cells` is the grid on CUDA; it keeps `grid.cells`' aspect.
#[test]
fn cuda_cells_keep_the_aspect() {
    let grid = |cuda: &str| {
        parse(&format!(
            "kind = \"ink\"\n[grid]\ncells = [128, 64]\ncuda_cells = {cuda}\n"
        ))
    };
    assert_eq!(grid("[1024, 512]").unwrap().cuda_cells, Some([1024, 512]));
    let error = grid("[1024, 1024]").unwrap_err().to_string();
    assert_eq!(
        error,
        "test.toml:4: grid.cuda_cells: must be 8 to 4096 cells each (with the ink grid at \
         most 4096) in grid.cells' aspect 128:64, got [1024, 1024]"
    );
    assert!(grid("[8192, 4096]").is_err());
}

/// Bad values in the arrays of tables (`[[obstacle]]`, `[[stroke]]`, `[[splat]]`) name the
/// file, the line of the value and the key with its index.
#[test]
fn bad_obstacles_strokes_and_splats_name_their_line_and_key() {
    let error = |tail: &str| {
        let head = "kind = \"ink\"\n[grid]\ncells = [64, 32]\nwidth = 2.0\n";
        parse(&format!("{head}{tail}")).unwrap_err().to_string()
    };
    assert_eq!(
        error(
            "[[obstacle]]\ncenter = [0.5, 0.5]\nradius = 0.1\n\
             [[obstacle]]\ncenter = [1.0, 0.5]\nradius = -0.1\n"
        ),
        "test.toml:10: obstacle[1].radius: must be in (0, 2] m, got -0.1"
    );
    assert_eq!(
        error("[[stroke]]\nduration = 0.1\npath = [[0.5, 0.5], [2.5, 0.5]]\nradius = 0.02\n"),
        "test.toml:7: stroke[0].path: [2.5, 0.5] lies outside the domain [0, 2] × [0, 1] m"
    );
    assert_eq!(
        error(
            "[[splat]]\ntime = 0.5\nposition = [1.0, 0.5]\nradius = 0.05\nink = [1.0, -2.0, 0.0]\n"
        ),
        "test.toml:9: splat[0].ink: must be finite, at least 0 and at most 1e6 in size, got -2"
    );
}
