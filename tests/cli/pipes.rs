//! The binary with no arguments, and with a stdout nobody reads.

use super::*;
use std::io::BufRead as _;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::os::unix::process::ExitStatusExt as _;

/// With no arguments and no display, `fluidlab` renders the default scene, the PBF dam break
/// (it once took the first preset by name, ink's `dye`). Only its first line is read: the
/// child is then stopped, before the minutes the frames take.
#[test]
fn no_arguments_render_the_dam_break() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fluidlab"))
        .current_dir(dir.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        first.contains("rendering dam-break headless"),
        "first line: {first:?}"
    );
}

/// A stdout whose reader is gone (`fluidlab scenes | head -n1` after `head` exits) ends the
/// process by SIGPIPE, as any Unix filter, with no panic (it once panicked with a backtrace:
/// "failed printing to stdout: Broken pipe", status 101).
#[test]
fn a_closed_stdout_ends_the_process_quietly() {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just made and are owned here alone.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    for args in [&["scenes"][..], &["doctor"]] {
        let output = Command::new(env!("CARGO_BIN_EXE_fluidlab"))
            .args(args)
            .stdout(write.try_clone().unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(
            output.status.signal(),
            Some(libc::SIGPIPE),
            "{args:?}: {:?} {stderr}",
            output.status
        );
    }
}
