#!/usr/bin/env python3
"""Drive a running `fluidlab view` window with real X input (XTEST), for audits by hand.

Needs python-xlib (`python3 -m venv .venv-audit && .venv-audit/bin/pip install python-xlib`,
the venv kept out of git) and an X server without a window manager, e.g. `Xvfb :7 -screen 0
1280x800x24 &`. Every command acts on the first top-level window whose title starts with
`fluidlab`; coordinates are the window's own pixels.

    DISPLAY=:7 fluidlab view pool &
    DISPLAY=:7 scripts/viewer-drive.py wait-window
    DISPLAY=:7 scripts/viewer-drive.py key h shot /tmp/help.png
    DISPLAY=:7 scripts/viewer-drive.py drag 700 400 800 420 shot /tmp/drag.png
    DISPLAY=:7 scripts/viewer-drive.py click 60 120 type 'scenes/x.toml' key Return

Commands (any number, run in order):
    wait-window [SECONDS]        wait until the window is mapped, then focus it
    focus                        give the window the keyboard focus again
    key NAME                     press and release a key (X keysym name: h, space, F1, Tab,
                                 BackSpace, Escape, Return, Left, plus, minus, ...)
    hold NAME SECONDS            hold a key down
    type TEXT                    type TEXT (letters, digits, / . - _ and space)
    move X Y                     move the pointer
    click X Y [BUTTON]           press and release a button (1 left, 2 middle, 3 right)
    drag X0 Y0 X1 Y1 [BUTTON]    press at (X0, Y0), move there in 20 steps, release
    wheel X Y N                  N wheel notches at (X, Y), up when N > 0
    resize W H                   resize the window (ConfigureWindow, no window manager needed)
    close                        ask the window to close (WM_DELETE_WINDOW)
    shot FILE.png                capture the window to a PNG
    wait-file FILE [SECONDS]     wait until FILE exists and stops growing
    frames N                     wait for N redraws' worth of time (0.1 s each; the viewer
                                 redraws continuously, so events get handled)
"""

import os
import struct
import sys
import time
import zlib

from Xlib import X, XK, display, protocol
from Xlib.ext import xtest

SHIFTED = {"/": "slash", ".": "period", "-": "minus", "_": "underscore", " ": "space",
           ":": "colon", "+": "plus", "=": "equal"}


def find_window(d):
    def walk(window):
        for child in window.query_tree().children:
            name = child.get_wm_name()
            if isinstance(name, bytes):
                name = name.decode("utf-8", "replace")
            if name and name.startswith("fluidlab"):
                return child
            found = walk(child)
            if found:
                return found
        return None

    return walk(d.screen().root)


def origin(d, window):
    """The window's top-left corner in root coordinates."""
    coords = window.translate_coords(d.screen().root, 0, 0)
    return -coords.x, -coords.y


def write_png(path, width, height, rgb):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\0" + rgb[y * width * 3:(y + 1) * width * 3] for y in range(height))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(rows, 6)))
        f.write(chunk(b"IEND", b""))


class Driver:
    def __init__(self):
        self.d = display.Display()
        self.window = None

    def win(self):
        if self.window is None:
            self.window = find_window(self.d)
            if self.window is None:
                sys.exit("no fluidlab window")
        return self.window

    def sync(self, pause=0.05):
        self.d.sync()
        time.sleep(pause)

    def keycode(self, name):
        sym = XK.string_to_keysym(name)
        if sym == 0 and len(name) == 1:
            sym = XK.string_to_keysym(SHIFTED.get(name, name))
        if sym == 0:
            sys.exit(f"unknown key {name!r}")
        code = self.d.keysym_to_keycode(sym)
        shift = self.d.keycode_to_keysym(code, 0) != sym
        return code, shift

    def key(self, name, hold=0.05):
        code, shift = self.keycode(name)
        shift_code = self.d.keysym_to_keycode(XK.XK_Shift_L)
        if shift:
            xtest.fake_input(self.d, X.KeyPress, shift_code)
        xtest.fake_input(self.d, X.KeyPress, code)
        self.sync(hold)
        xtest.fake_input(self.d, X.KeyRelease, code)
        if shift:
            xtest.fake_input(self.d, X.KeyRelease, shift_code)
        self.sync(0.1)

    def move(self, x, y):
        ox, oy = origin(self.d, self.win())
        xtest.fake_input(self.d, X.MotionNotify, x=ox + x, y=oy + y)
        self.sync(0.03)

    def click(self, x, y, button=1):
        self.move(x, y)
        self.sync(0.1)
        xtest.fake_input(self.d, X.ButtonPress, button)
        self.sync(0.15)
        xtest.fake_input(self.d, X.ButtonRelease, button)
        self.sync(0.15)

    def drag(self, x0, y0, x1, y1, button=1):
        self.move(x0, y0)
        self.sync(0.1)
        xtest.fake_input(self.d, X.ButtonPress, button)
        self.sync(0.1)
        for i in range(1, 21):
            self.move(x0 + (x1 - x0) * i // 20, y0 + (y1 - y0) * i // 20)
            self.sync(0.05)
        xtest.fake_input(self.d, X.ButtonRelease, button)
        self.sync(0.15)

    def wheel(self, x, y, n):
        self.move(x, y)
        button = 4 if n > 0 else 5
        for _ in range(abs(n)):
            xtest.fake_input(self.d, X.ButtonPress, button)
            xtest.fake_input(self.d, X.ButtonRelease, button)
            self.sync(0.05)

    def shot(self, path):
        w = self.win()
        geometry = w.get_geometry()
        image = w.get_image(0, 0, geometry.width, geometry.height, X.ZPixmap, 0xFFFFFFFF)
        data = image.data
        rgb = bytearray(geometry.width * geometry.height * 3)
        rgb[0::3] = data[2::4]
        rgb[1::3] = data[1::4]
        rgb[2::3] = data[0::4]
        write_png(path, geometry.width, geometry.height, bytes(rgb))
        print(f"{path}: {geometry.width}x{geometry.height}")

    def close(self):
        w = self.win()
        protocols = self.d.intern_atom("WM_PROTOCOLS")
        delete = self.d.intern_atom("WM_DELETE_WINDOW")
        event = protocol.event.ClientMessage(window=w, client_type=protocols,
                                             data=(32, [delete, X.CurrentTime, 0, 0, 0]))
        w.send_event(event)
        self.sync()


def wait_for(condition, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.1)
    sys.exit(f"timed out after {seconds} s waiting for {what}")


def main(args):
    driver = Driver()
    i = 0

    def take(n):
        nonlocal i
        values = args[i:i + n]
        i += n
        return values

    while i < len(args):
        command = args[i]
        i += 1
        if command == "wait-window":
            seconds = float(args[i]) if i < len(args) and args[i][0].isdigit() else 30
            if i < len(args) and args[i][0].isdigit():
                i += 1
            wait_for(lambda: find_window(driver.d) is not None, seconds, "the window")
            driver.window = find_window(driver.d)
            # No window manager: give the window the keyboard focus as one would (winit
            # takes keys only after a FocusIn).
            driver.window.set_input_focus(X.RevertToParent, X.CurrentTime)
            driver.sync(0.3)
        elif command == "focus":
            driver.win().set_input_focus(X.RevertToParent, X.CurrentTime)
            driver.sync(0.3)
        elif command == "key":
            driver.key(*take(1))
        elif command == "hold":
            name, seconds = take(2)
            driver.key(name, float(seconds))
        elif command == "type":
            for ch in take(1)[0]:
                driver.key(ch, 0.02)
        elif command == "move":
            driver.move(*map(int, take(2)))
        elif command == "click":
            x, y = map(int, take(2))
            button = int(take(1)[0]) if i < len(args) and args[i].isdigit() else 1
            driver.click(x, y, button)
        elif command == "drag":
            coords = list(map(int, take(4)))
            button = int(take(1)[0]) if i < len(args) and args[i].isdigit() else 1
            driver.drag(*coords, button)
        elif command == "wheel":
            driver.wheel(*map(int, take(3)))
        elif command == "resize":
            w, h = map(int, take(2))
            driver.win().configure(width=w, height=h)
            driver.sync(0.3)
        elif command == "close":
            driver.close()
        elif command == "shot":
            driver.shot(take(1)[0])
        elif command == "wait-file":
            path = take(1)[0]
            seconds = float(take(1)[0]) if i < len(args) and args[i][0].isdigit() else 30

            def whole():
                if not os.path.exists(path):
                    return False
                size = os.path.getsize(path)
                time.sleep(0.2)
                return size > 0 and os.path.getsize(path) == size

            wait_for(whole, seconds, path)
            print(f"{path} appeared")
        elif command == "frames":
            time.sleep(0.1 * int(take(1)[0]))
        else:
            sys.exit(f"unknown command {command!r}\n{__doc__}")


if __name__ == "__main__":
    main(sys.argv[1:])
