//! Windowed smoke test under Xvfb: `fluidlab view` opens, renders 5 frames, saves a screenshot
//! and exits 0. Needs Xvfb and Mesa (scripts/setup.sh installs both); fails, not skips, without.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A virtual X server on a free display number, killed when dropped.
struct Xvfb {
    child: Child,
    display: String,
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn find_in_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
}

fn start_xvfb() -> Xvfb {
    let xvfb = find_in_path("Xvfb")
        .expect("Xvfb is not installed: run scripts/setup.sh (Debian package xvfb)");
    // A display number no other X server holds (lock file and socket both absent).
    let number = (90..400)
        .find(|n| {
            !Path::new(&format!("/tmp/.X{n}-lock")).exists()
                && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
        })
        .expect("no free X display number between 90 and 400");
    let child = Command::new(xvfb)
        .args([
            &format!(":{number}"),
            "-screen",
            "0",
            "1280x800x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb starts");
    let server = Xvfb {
        child,
        display: format!(":{number}"),
    };
    // Readiness is the socket appearing; the generous bound only guards against a hang.
    let socket = PathBuf::from(format!("/tmp/.X11-unix/X{number}"));
    let started = Instant::now();
    while !socket.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "Xvfb did not create {}",
            socket.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

#[test]
fn the_viewer_renders_frames_saves_a_screenshot_and_exits_cleanly() {
    let xvfb = start_xvfb();
    let directory = tempfile::tempdir().expect("temporary directory");
    let scene = directory.path().join("block.toml");
    std::fs::write(
        &scene,
        r#"
        [container]
        min = [0.0, 0.0, 0.0]
        max = [1.0, 1.0, 1.0]
        [[fluid]]
        shape = "box"
        min = [0.3, 0.0, 0.3]
        max = [0.7, 0.4, 0.7]
        [params]
        spacing = 0.04
        "#,
    )
    .expect("scene file");
    let screenshot = directory.path().join("shot.png");
    let output = Command::new(env!("CARGO_BIN_EXE_fluidlab"))
        .arg("view")
        .arg(&scene)
        .args([
            "--backend",
            "cpu",
            "--exit-after-frames",
            "5",
            "--screenshot",
        ])
        .arg(&screenshot)
        .env("DISPLAY", &xvfb.display)
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("fluidlab runs");
    assert!(
        output.status.success(),
        "fluidlab view failed ({}):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let image = image::open(&screenshot)
        .expect("the screenshot is a readable PNG")
        .to_rgba8();
    assert!(
        image.width() > 100 && image.height() > 100,
        "{:?}",
        image.dimensions()
    );
    // The sky fills the top-left corner; the fluid, container and floor must differ from it.
    let corner = *image.get_pixel(2, 2);
    let different = image
        .pixels()
        .filter(|p| (0..3).any(|c| p[c].abs_diff(corner[c]) > 24))
        .count();
    let total = (image.width() * image.height()) as usize;
    assert!(
        different * 5 > total,
        "only {different} of {total} pixels differ from the sky"
    );
}
