//! A virtual X server for the windowed tests (tests/window.rs, tests/viewer_gl.rs): Xvfb from
//! scripts/setup.sh; the tests fail, not skip, without it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The scene the windowed tests open: a small block of water (1 000 particles).
pub const BLOCK_SCENE: &str = r#"
    [container]
    min = [0.0, 0.0, 0.0]
    max = [1.0, 1.0, 1.0]
    [[fluid]]
    shape = "box"
    min = [0.3, 0.0, 0.3]
    max = [0.7, 0.4, 0.7]
    [params]
    spacing = 0.04
"#;

/// A virtual X server on a free display number, killed when dropped.
pub struct Xvfb {
    child: Child,
    /// The display name, ":N".
    pub display: String,
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

/// Starts Xvfb on a free display and waits for its socket.
pub fn start_xvfb() -> Xvfb {
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
